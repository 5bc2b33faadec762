"""Build-time refusal of TVM constructs without meaning on the CPU backend.

TVM programs may use GPU thread launches (``T.launch_thread``, ``T.env_thread``), runtime
builtins (``T.call_packed``, ``T.tvm_storage_sync``, ``T.tvm_struct_get``, ``T.ptx_*``...)
and scalable vectors (``T.vscale``). They parse, print and compare structurally; building
such a function raises :class:`UnsupportedConstructError` naming the construct and pointing
at the statement that uses it (rather than an unrelated error from a later pass).
"""

from __future__ import annotations

from irbuilder.ir import AttrStmt, Call, CallKind, PrimFunc, Span, Stmt
from irbuilder.ir.functor import StmtExprVisitor
from irbuilder.tir.runtime import RUNTIME_BUILTINS
from irbuilder.tir.tvm_ops import CPU_BUILTINS, TVM_OPS

__all__ = ["UnsupportedConstructError", "check_cpu_support"]

_THREAD_ATTRS = {"thread_extent": "T.launch_thread", "virtual_thread": "T.launch_thread"}
_CPU_RUNTIME_BUILTINS = frozenset({"address_of", "type_annotation", "tvm_access_ptr"})
_SPELLING = {"tvm_call_packed": "T.call_packed", "tvm_call_cpacked": "T.call_cpacked"}


class UnsupportedConstructError(ValueError):
    """A construct the CPU backend cannot build; ``span`` locates its statement."""

    def __init__(self, construct: str, span: Span | None, func_name: str) -> None:
        self.construct = construct
        self.span = span
        message = f"{construct} is not supported by the CPU backend (function {func_name!r})"
        super().__init__(message if span is None else f"{span}: {message}")


class _Finder(StmtExprVisitor):
    def __init__(self) -> None:
        self.span: Span | None = None
        self.found: tuple[str, Span | None] | None = None

    def visit_stmt(self, stmt: Stmt) -> None:
        if self.found is not None:
            return
        outer = self.span
        self.span = stmt.span or outer
        if isinstance(stmt, AttrStmt) and stmt.attr_key in _THREAD_ATTRS:
            self.found = (f"{_THREAD_ATTRS[stmt.attr_key]} ({stmt.attr_key})", self.span)
            return
        super().visit_stmt(stmt)
        self.span = outer

    def visit_call_(self, call: Call) -> None:
        if self.found is None and call.kind is CallKind.BUILTIN:
            op = call.op
            unsupported = (op in TVM_OPS and op not in CPU_BUILTINS) or (
                op in RUNTIME_BUILTINS and op not in _CPU_RUNTIME_BUILTINS
            )
            if unsupported:
                self.found = (_SPELLING.get(op, f"T.{op}"), self.span)
                return
        self.generic_visit(call)


def check_cpu_support(func: PrimFunc) -> None:
    """Raise :class:`UnsupportedConstructError` for the first construct of ``func`` the CPU
    backend cannot build."""
    finder = _Finder()
    finder.visit_func(func)
    if finder.found is not None:
        construct, span = finder.found
        raise UnsupportedConstructError(construct, span, func.name)
