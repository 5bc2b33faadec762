"""Build-time refusal of TVM constructs without meaning on the CPU backend.

TVM programs may use GPU threads (``T.launch_thread``, ``T.env_thread``, ``T.thread_binding``
loops; those around a comm_reducer allreduce run serially, see ``lowering.cpu.thread_allreduce``),
runtime
builtins (``T.call_packed``, ``T.tvm_storage_sync``, ``T.tvm_struct_get``, ``T.ptx_*``...),
scalable vectors (``T.vscale``) and low-precision float values the legalisation leaves
(``bfloat16``/``e4m3_float8``/``e5m2_float8`` vectors). They parse, print and compare
structurally; building such a function raises :class:`UnsupportedConstructError` naming the
construct and pointing at the statement that uses it (rather than an unrelated error from a
later pass).
"""

from __future__ import annotations

from irbuilder.ir import (
    AttrStmt,
    Buffer,
    Call,
    CallKind,
    DataType,
    For,
    ForKind,
    PrimExpr,
    PrimFunc,
    Span,
    Stmt,
)
from irbuilder.ir.functor import StmtExprMutator, StmtExprVisitor
from irbuilder.tir.runtime import RUNTIME_BUILTINS
from irbuilder.tir.tvm_ops import CPU_BUILTINS, TVM_OPS

__all__ = ["UnsupportedConstructError", "check_cpu_support"]

_THREAD_ATTRS = {
    "thread_extent": "T.launch_thread",
    "virtual_thread": "T.launch_thread",
    "buffer_realize": "T.realize",
}
_CPU_RUNTIME_BUILTINS = frozenset({"address_of", "type_annotation", "tvm_access_ptr"})
_SPELLING = {"tvm_call_packed": "T.call_packed", "tvm_call_cpacked": "T.call_cpacked"}


class UnsupportedConstructError(ValueError):
    """A construct the CPU backend cannot build; ``span`` locates its statement."""

    def __init__(self, construct: str, span: Span | None, func_name: str) -> None:
        self.construct = construct
        self.span = span
        message = f"{construct} is not supported by the CPU backend (function {func_name!r})"
        super().__init__(message if span is None else f"{span}: {message}")


class LocatedMutator(StmtExprMutator):
    """A mutator that knows the span of the statement it is inside (:attr:`span`), to
    locate the :class:`UnsupportedConstructError` it raises."""

    span: Span | None = None

    def visit_stmt(self, stmt: Stmt) -> Stmt:
        outer = self.span
        self.span = stmt.span or outer
        try:
            return super().visit_stmt(stmt)
        finally:
            self.span = outer


def _low_precision(dtype: DataType) -> str:
    return str(dtype.element_of())


class _Finder(StmtExprVisitor):
    def __init__(self) -> None:
        self.span: Span | None = None
        self.found: tuple[str, Span | None] | None = None

    def visit_stmt(self, stmt: Stmt) -> None:
        if self.found is not None:
            return
        outer = self.span
        self.span = stmt.span or outer
        if isinstance(stmt, For) and stmt.kind is ForKind.THREAD_BINDING:
            tag = stmt.thread_binding.thread_tag if stmt.thread_binding is not None else "?"
            label = f"T.thread_binding (loop {stmt.loop_var.name!r} bound to a GPU thread, {tag})"
            self.found = (label, self.span)
            return
        if isinstance(stmt, AttrStmt) and stmt.attr_key in _THREAD_ATTRS:
            label = _THREAD_ATTRS[stmt.attr_key]
            if stmt.attr_key != "buffer_realize":
                label += f" ({stmt.attr_key})"
            self.found = (label, self.span)
            return
        super().visit_stmt(stmt)
        self.span = outer

    def visit_expr(self, expr: PrimExpr) -> None:
        if self.found is None and expr.dtype.is_low_precision_float:
            self.found = (_low_precision(expr.dtype), self.span)
            return
        if self.found is None and expr.dtype.scalable:
            self.found = (f"the scalable vector type {expr.dtype}", self.span)
            return
        super().visit_expr(expr)

    def visit_buffer(self, buffer: Buffer) -> None:
        if self.found is None and buffer.dtype.is_low_precision_float:
            self.found = (f"{_low_precision(buffer.dtype)} (buffer {buffer.name!r})", self.span)
        elif self.found is None and buffer.dtype.scalable:
            what = f"the scalable vector type {buffer.dtype} (buffer {buffer.name!r})"
            self.found = (what, self.span)

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
    for param in func.params:
        buffer = func.buffer_map.get(param)
        dtype = buffer.dtype if buffer is not None else param.dtype
        if dtype.scalable:
            raise UnsupportedConstructError(
                f"the scalable vector type {dtype}", func.span, func.name
            )
        if dtype.is_low_precision_float:
            what = f"parameter {param.name!r}" if buffer is None else f"buffer {buffer.name!r}"
            raise UnsupportedConstructError(
                f"{_low_precision(dtype)} ({what})", func.span, func.name
            )
    finder.visit_func(func)
    if finder.found is not None:
        construct, span = finder.found
        raise UnsupportedConstructError(construct, span, func.name)
