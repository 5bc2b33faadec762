"""Virtual threads run one after another on the CPU.

A virtual thread (``T.thread_binding(n, "vthread.x")``, ``T.launch_thread("vthread", n)``) is
no hardware thread: TVM's lowering expands it on every target (InjectVirtualThread), running
the ``n`` copies of the body without any synchronisation between them, and every buffer
allocated under it private to a copy. A loop over the virtual thread's values does the same
here: a serial loop, whose body's allocations are per iteration (allocation placement puts
each at the body). Programs whose result depends on the interleaving of the virtual threads
race in TVM too. GPU threads (``threadIdx``, ``blockIdx``) are not touched: the build refuses
them (:mod:`lowering.cpu.support`).
"""

from __future__ import annotations

import dataclasses

from irbuilder.ir import AttrStmt, For, ForKind, IntImm, IterVar, PrimFunc, Stmt
from irbuilder.ir.functor import StmtExprMutator

__all__ = ["serialize_virtual_threads"]


def _virtual(tag: str) -> bool:
    return tag.startswith("vthread") or tag == "cthread"


class _Serialize(StmtExprMutator):
    def visit_for_(self, node: For) -> Stmt:
        new = self.generic_mutate(node)
        assert isinstance(new, For)
        binding = node.thread_binding
        if node.kind is ForKind.THREAD_BINDING and binding is not None and _virtual(
                binding.thread_tag):
            return dataclasses.replace(new, kind=ForKind.SERIAL, thread_binding=None)
        return new

    def visit_attr_stmt_(self, node: AttrStmt) -> Stmt:
        new = self.generic_mutate(node)
        assert isinstance(new, AttrStmt)
        iter_var = node.node
        if (node.attr_key in ("virtual_thread", "thread_extent")
                and isinstance(iter_var, IterVar) and _virtual(iter_var.thread_tag)):
            var = iter_var.var
            return For(var, IntImm(var.dtype, 0), new.value.astype(var.dtype), ForKind.SERIAL,
                       new.body, span=node.span)
        return new


def serialize_virtual_threads(func: PrimFunc) -> PrimFunc:
    """``func`` with every virtual thread a serial loop over its values."""
    return _Serialize().visit_func(func)
