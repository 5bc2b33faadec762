"""Virtual threads run one after another on the CPU.

A virtual thread (``T.thread_binding(n, "vthread.x")``, ``T.launch_thread("vthread", n)``) is
no hardware thread: TVM's lowering expands it on every target (InjectVirtualThread), running
the ``n`` copies of the body without any synchronisation between them, and every buffer
allocated under it private to a copy. A loop over the virtual thread's values does the same
here: a serial loop, whose body's allocations are per iteration (allocation placement puts
each at the body). Programs whose result depends on the interleaving of the virtual threads
race in TVM too. A binding of a tag inside a binding of the same tag is that same thread (TVM
unifies them, UnifyThreadBinding): its variable is the outer one's, and it is no loop. GPU
threads (``threadIdx``, ``blockIdx``) are not touched: the build refuses
them (:mod:`lowering.cpu.support`).
"""

from __future__ import annotations

import dataclasses

from irbuilder.ir import (
    AttrStmt,
    Cast,
    For,
    ForKind,
    IntImm,
    IterVar,
    PrimExpr,
    PrimFunc,
    Span,
    Stmt,
    Var,
    structural_equal,
)
from irbuilder.ir.expr_text import expr_text
from irbuilder.ir.functor import StmtExprMutator

from ..analysis.substitute import substitute
from .support import UnsupportedConstructError

__all__ = ["serialize_virtual_threads"]


def _virtual(tag: str) -> bool:
    return tag.startswith("vthread") or tag == "cthread"


class _Serialize(StmtExprMutator):
    def __init__(self, func: PrimFunc) -> None:
        self.func = func
        self.open: dict[str, tuple[Var, PrimExpr]] = {}  # tag -> the enclosing thread's var

    def _thread(self, tag: str, var: Var, extent: PrimExpr, body: Stmt,
                span: Span | None) -> Stmt:
        outer = self.open.get(tag)
        if outer is not None:
            # the same tag inside its own thread is that thread (TVM unifies the bindings)
            outer_var, outer_extent = outer
            if not structural_equal(extent, outer_extent):
                raise UnsupportedConstructError(
                    f"a {tag} binding of extent {expr_text(extent)} inside one of extent "
                    f"{expr_text(outer_extent)}",
                    span, self.func.name)
            replacement: PrimExpr = outer_var
            if outer_var.dtype != var.dtype:
                replacement = Cast(var.dtype, outer_var)
            return self.visit_stmt(substitute(body, {var: replacement}))
        self.open[tag] = (var, extent)
        try:
            new_body = self.visit_stmt(body)
        finally:
            del self.open[tag]
        return For(var, IntImm(var.dtype, 0), extent.astype(var.dtype), ForKind.SERIAL, new_body,
                   span=span)

    def visit_for_(self, node: For) -> Stmt:
        binding = node.thread_binding
        if node.kind is ForKind.THREAD_BINDING and binding is not None and _virtual(
                binding.thread_tag):
            loop = self._thread(binding.thread_tag, node.loop_var, node.extent, node.body,
                                node.span)
            if isinstance(loop, For) and loop.loop_var is node.loop_var:
                return dataclasses.replace(node, body=loop.body, kind=ForKind.SERIAL,
                                           thread_binding=None)
            return loop
        return self.generic_mutate(node)

    def visit_attr_stmt_(self, node: AttrStmt) -> Stmt:
        iter_var = node.node
        if (node.attr_key in ("virtual_thread", "thread_extent")
                and isinstance(iter_var, IterVar) and _virtual(iter_var.thread_tag)):
            return self._thread(iter_var.thread_tag, iter_var.var, node.value, node.body,
                                node.span)
        return self.generic_mutate(node)


def serialize_virtual_threads(func: PrimFunc) -> PrimFunc:
    """``func`` with every virtual thread a serial loop over its values."""
    return _Serialize(func).visit_func(func)
