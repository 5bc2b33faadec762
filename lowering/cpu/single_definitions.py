"""A variable bound again inside its own scope gets a fresh variable for the inner binding
(TVM's ConvertSSA, for the forms the lowering meets).

TVMScript can bind one variable twice, one binding inside the other
(``with T.LetStmt(16, var=x):`` under ``x: T.int32 = 32``; TVM's own ConvertSSA tests build
such functions, and printing them gives that text). The inner binding shadows the outer one
for its body only. The lowering passes take a variable to be defined once (a substitution or
a bound recorded for it holds wherever it is used), so before them each inner re-binding of a
``LetStmt``, a ``Let`` or a loop variable is renamed to a new variable of the same name and
type, and its uses in the binding's body follow (buffers declared there with the variable in
their shape too). A second binding after the first (not
inside it) is renamed the same way; each use still names the binding that reaches it.
Functions that bind every variable once come back unchanged (the same object).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TypeVar

from irbuilder.ir import Buffer, For, Let, LetStmt, PrimExpr, PrimFunc, Stmt, Var
from irbuilder.ir.functor import StmtExprMutator, rebuild

from ..analysis.vars import free_vars

_Body = TypeVar("_Body")

__all__ = ["rename_rebindings"]


class _Renamer(StmtExprMutator):
    def __init__(self) -> None:
        self.bound: set[Var] = set()
        self.renamed: dict[Var, Var] = {}
        self.buffers: dict[Buffer, tuple[tuple[tuple[Var, Var], ...], Buffer]] = {}

    def visit_var_(self, var: Var) -> PrimExpr:
        return self.renamed.get(var, var)

    def visit_buffer(self, buffer: Buffer) -> Buffer:
        # a buffer declared inside a re-binding whose shape uses the variable follows it
        layout = (*buffer.shape, *buffer.strides, buffer.elem_offset)
        used = tuple((var, self.renamed[var]) for e in layout for var in free_vars(e)
                     if var in self.renamed)
        if not used:
            return buffer
        known = self.buffers.get(buffer)
        if known is not None and known[0] == used:
            return known[1]
        renamed = dataclasses.replace(
            buffer,
            shape=tuple(self.visit_expr(e) for e in buffer.shape),
            strides=tuple(self.visit_expr(e) for e in buffer.strides),
            elem_offset=self.visit_expr(buffer.elem_offset),
        )
        self.buffers[buffer] = (used, renamed)
        return renamed

    def _scoped(self, var: Var, visit_body: Callable[[], _Body],
                rename: bool = True) -> tuple[Var, _Body]:
        """Visit a binding's body (``visit_body()``) with ``var`` renamed when bound before."""
        if var not in self.bound or not rename:
            self.bound.add(var)
            return var, visit_body()
        fresh = Var(var.name, var.dtype, var.type_annotation)
        previous = self.renamed.get(var)
        self.renamed[var] = fresh
        try:
            return fresh, visit_body()
        finally:
            if previous is None:
                del self.renamed[var]
            else:
                self.renamed[var] = previous

    def visit_let_stmt_(self, stmt: LetStmt) -> Stmt:
        value = self.visit_expr(stmt.value)
        var, body = self._scoped(stmt.var, lambda: self.visit_stmt(stmt.body))
        if var is stmt.var and value is stmt.value and body is stmt.body:
            return stmt
        renamed: Stmt = rebuild(stmt, {"var": var, "value": value, "body": body})
        return renamed

    def visit_let_(self, expr: Let) -> PrimExpr:
        value = self.visit_expr(expr.value)
        var, body = self._scoped(expr.var, lambda: self.visit_expr(expr.body))
        if var is expr.var and value is expr.value and body is expr.body:
            return expr
        renamed: PrimExpr = rebuild(expr, {"var": var, "value": value, "body": body})
        return renamed

    def visit_for_(self, stmt: For) -> Stmt:
        begin = self.visit_expr(stmt.min)
        extent = self.visit_expr(stmt.extent)
        # a thread-bound loop's variable is also its IterVar's: such loops keep theirs
        var, body = self._scoped(stmt.loop_var, lambda: self.visit_stmt(stmt.body),
                                 rename=stmt.thread_binding is None)
        if var is stmt.loop_var and begin is stmt.min and extent is stmt.extent and (
                body is stmt.body):
            return stmt
        loop: Stmt = rebuild(stmt, {"loop_var": var, "min": begin, "extent": extent, "body": body})
        return loop


def rename_rebindings(func: PrimFunc) -> PrimFunc:
    """``func`` with every variable bound at most once."""
    renamer = _Renamer()
    renamer.bound.update(p for p in func.params if isinstance(p, Var))
    return renamer.visit_func(func)
