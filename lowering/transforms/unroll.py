"""The ``unroll_loop`` pass: ``T.unroll`` loops with a small constant extent become copies.

Each copy substitutes the loop variable with its value and gets fresh Vars and
Buffers for everything *defined* inside the body (loop vars, let vars, allocated
data vars, declared buffers), so the result defines every variable once.
Loops whose extent is not a constant, or exceeds the ``max_extent`` option
(``PassContext.option("unroll_loop", "max_extent", 64)``), stay loops: kind SERIAL
with the annotation ``"pragma_unroll": True`` for the code generator.
"""

from __future__ import annotations

from collections.abc import Mapping

from irbuilder.ir import (
    Allocate,
    Buffer,
    DeclBuffer,
    Evaluate,
    For,
    ForKind,
    IntImm,
    IterVar,
    Let,
    LetStmt,
    PrimExpr,
    PrimFunc,
    SizeVar,
    Stmt,
    StmtExprMutator,
    Var,
    as_dtype,
    rebuild,
    seq,
)

from ..pass_infra import FunctionPass, PassContext, function_pass

__all__ = ["copy_with_fresh_vars", "fresh_var", "unroll_loop"]

DEFAULT_MAX_EXTENT = 64


def fresh_var(var: Var) -> Var:
    """A new Var with the same name hint, dtype and type annotation."""
    cls = SizeVar if isinstance(var, SizeVar) else Var
    return cls(var.name, var.dtype, var.type_annotation, span=var.span)


class _FreshCopier(StmtExprMutator):
    """Substitutes vars and renews every definition site met on the way."""

    def __init__(self, subst: Mapping[Var, PrimExpr]) -> None:
        self.vars: dict[Var, PrimExpr] = dict(subst)
        self.buffers: dict[Buffer, Buffer] = {}

    def _define(self, var: Var) -> Var:
        new = fresh_var(var)
        self.vars[var] = new
        return new

    def visit_expr(self, expr: PrimExpr) -> PrimExpr:
        if isinstance(expr, Var):
            return self.vars.get(expr, expr)
        if isinstance(expr, Let):
            value = self.visit_expr(expr.value)
            var = self._define(expr.var)
            return Let(var, value, self.visit_expr(expr.body), span=expr.span)
        return self.generic_mutate(expr)

    def visit_buffer(self, buffer: Buffer) -> Buffer:
        mapped = self.buffers.get(buffer)
        if mapped is not None:
            return mapped
        changes = {
            "data": self.visit_expr(buffer.data),
            "shape": self.mutate_value(buffer.shape),
            "strides": self.mutate_value(buffer.strides),
            "elem_offset": self.visit_expr(buffer.elem_offset),
        }
        changes = {k: v for k, v in changes.items() if v is not getattr(buffer, k)}
        new = rebuild(buffer, changes)
        self.buffers[buffer] = new
        return new  # type: ignore[no-any-return]

    def _declare(self, buffer: Buffer) -> Buffer:
        self.buffers.pop(buffer, None)
        mapped = self.visit_buffer(buffer)
        if mapped is buffer:  # a declaration needs its own object even if nothing changed
            mapped = rebuild(buffer, {"shape": tuple(buffer.shape)})
            self.buffers[buffer] = mapped
        return mapped

    def visit_iter_var(self, iter_var: IterVar) -> IterVar:
        dom = self.mutate_value(iter_var.dom)
        var = self._define(iter_var.var)
        return IterVar(var, dom, iter_var.kind, iter_var.thread_tag, span=iter_var.span)

    def visit_for_(self, stmt: For) -> Stmt:
        begin = self.visit_expr(stmt.min)
        extent = self.visit_expr(stmt.extent)
        binding = stmt.thread_binding
        if binding is not None:
            binding = self.visit_iter_var(binding)
        var = self._define(stmt.loop_var)
        body = self.visit_stmt(stmt.body)
        return For(var, begin, extent, stmt.kind, body, binding, stmt.annotations, span=stmt.span)

    def visit_let_stmt_(self, stmt: LetStmt) -> Stmt:
        value = self.visit_expr(stmt.value)
        var = self._define(stmt.var)
        return LetStmt(var, value, self.visit_stmt(stmt.body), span=stmt.span)

    def visit_allocate_(self, stmt: Allocate) -> Stmt:
        extent = self.visit_expr(stmt.extent)
        cond = self.visit_expr(stmt.condition)
        var = self._define(stmt.buffer_var)
        body = self.visit_stmt(stmt.body)
        return Allocate(var, stmt.dtype, extent, cond, body, stmt.annotations, span=stmt.span)

    def visit_decl_buffer_(self, stmt: DeclBuffer) -> Stmt:
        buffer = self._declare(stmt.buffer)
        return DeclBuffer(buffer, self.visit_stmt(stmt.body), span=stmt.span)


def copy_with_fresh_vars(stmt: Stmt, subst: Mapping[Var, PrimExpr] | None = None) -> Stmt:
    """A copy of ``stmt`` with ``subst`` applied and fresh objects for its definitions."""
    return _FreshCopier(subst or {}).visit_stmt(stmt)


class _Unroller(StmtExprMutator):
    def __init__(self, max_extent: int) -> None:
        self.max_extent = max_extent

    def visit_for_(self, stmt: For) -> Stmt:
        new = self.generic_mutate(stmt)  # inner loops first
        if new.kind is not ForKind.UNROLLED:
            return new
        extent = new.extent
        if isinstance(extent, IntImm) and extent.value <= self.max_extent:
            if extent.value <= 0:
                return Evaluate(IntImm(as_dtype("int32"), 0), span=new.span)
            copies = [
                copy_with_fresh_vars(new.body, {new.loop_var: new.min if k == 0 else new.min + k})
                for k in range(extent.value)
            ]
            return seq(copies)
        annotations = dict(new.annotations)
        annotations["pragma_unroll"] = True
        return For(
            new.loop_var,
            new.min,
            new.extent,
            ForKind.SERIAL,
            new.body,
            new.thread_binding,
            annotations,
            span=new.span,
        )


@function_pass("unroll_loop")
def _unroll_loop(func: PrimFunc) -> PrimFunc:
    """Unroll ``T.unroll`` loops of constant extent <= ``max_extent`` (default 64)."""
    max_extent = PassContext.current().option("unroll_loop", "max_extent", DEFAULT_MAX_EXTENT)
    if not isinstance(max_extent, int) or isinstance(max_extent, bool):
        raise TypeError(f"unroll_loop option max_extent must be an int, got {max_extent!r}")
    body = _Unroller(max_extent).visit_stmt(func.body)
    return func if body is func.body else func.with_body(body)


unroll_loop: FunctionPass = _unroll_loop
"""The ``unroll_loop`` pass (a :class:`FunctionPass`)."""
