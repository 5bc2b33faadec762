"""Free variables and small expression helpers."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from irbuilder.ir import (
    Allocate,
    Block,
    DeclBuffer,
    For,
    IntImm,
    Let,
    LetStmt,
    PrimExpr,
    Reduce,
    Stmt,
    StmtExprVisitor,
    Var,
    const,
    post_order_visit,
)

__all__ = ["add", "defined_var_ids", "depends_on", "free_vars", "is_const", "mul", "product"]


class _FreeVars(StmtExprVisitor):
    def __init__(self) -> None:
        self.bound: dict[Var, int] = {}
        self.free: dict[Var, None] = {}

    def _scoped(self, var: Var, visit: Any, *children: Any) -> None:
        self.bound[var] = self.bound.get(var, 0) + 1
        for child in children:
            visit(child)
        self.bound[var] -= 1

    def visit_var_(self, var: Var) -> None:
        if not self.bound.get(var):
            self.free.setdefault(var, None)

    def visit_for_(self, node: For) -> None:
        self.visit_expr(node.min)
        self.visit_expr(node.extent)
        self._scoped(node.loop_var, self.visit_stmt, node.body)

    def visit_let_stmt_(self, node: LetStmt) -> None:
        self.visit_expr(node.value)
        self._scoped(node.var, self.visit_stmt, node.body)

    def visit_let_(self, node: Let) -> None:
        self.visit_expr(node.value)
        self._scoped(node.var, self.visit_expr, node.body)

    def visit_allocate_(self, node: Allocate) -> None:
        self.visit_expr(node.extent)
        self.visit_expr(node.condition)
        self._scoped(node.buffer_var, self.visit_stmt, node.body)

    def visit_decl_buffer_(self, node: DeclBuffer) -> None:
        # the declared view's layout may use variables of the scope (a match_buffer
        # lowered inside a loop: elem_offset = i * 4 + ...)
        buffer = node.buffer
        for expr in (*buffer.shape, *buffer.strides, buffer.elem_offset):
            self.visit_expr(expr)
        self.visit_stmt(node.body)

    def visit_reduce_(self, node: Reduce) -> None:
        for axis in node.axes:
            self.visit_value(axis.dom)
            self.bound[axis.var] = self.bound.get(axis.var, 0) + 1
        self.visit_expr(node.source)
        if node.condition is not None:
            self.visit_expr(node.condition)
        for axis in node.axes:
            self.bound[axis.var] -= 1

    def visit_block_(self, node: Block) -> None:
        for iv in node.iter_vars:
            self.visit_value(iv.dom)
            self.bound[iv.var] = self.bound.get(iv.var, 0) + 1
        self.generic_visit(node)
        for iv in node.iter_vars:
            self.bound[iv.var] -= 1


def free_vars(node: Stmt | PrimExpr) -> list[Var]:
    """Vars used in ``node`` and not bound inside it, in first-use order (no duplicates)."""
    visitor = _FreeVars()
    if isinstance(node, Stmt):
        visitor.visit_stmt(node)
    else:
        visitor.visit_expr(node)
    return list(visitor.free)


def defined_var_ids(stmt: Stmt) -> set[int]:
    """Ids of the variables the statements of ``stmt`` bind by their own syntax (loop
    variables, ``LetStmt`` variables, allocations' data variables)."""
    found: set[int] = set()

    def visit(node: object) -> None:
        if isinstance(node, LetStmt):
            found.add(id(node.var))
        elif isinstance(node, For):
            found.add(id(node.loop_var))
        elif isinstance(node, Allocate):
            found.add(id(node.buffer_var))

    post_order_visit(stmt, visit)
    return found


def depends_on(node: Stmt | PrimExpr, var: Var) -> bool:
    """Whether ``var`` (by identity) is among the free variables of ``node``."""
    return any(v is var for v in free_vars(node))


def product(values: Iterable[PrimExpr]) -> PrimExpr:
    """The product of ``values`` (constants fold; an empty product is int32 1)."""
    result: PrimExpr | None = None
    for value in values:
        if result is None:
            result = value
        elif isinstance(result, IntImm) and result.value == 1:
            result = value
        elif isinstance(value, IntImm) and value.value == 1:
            continue
        else:
            result = result * value
    return const(1) if result is None else result


def is_const(expr: PrimExpr, value: int) -> bool:
    """Whether ``expr`` is the integer constant ``value``."""
    return isinstance(expr, IntImm) and expr.value == value


def add(a: PrimExpr, b: PrimExpr) -> PrimExpr:
    """``a + b`` that drops an integer zero operand (constants fold)."""
    if is_const(b, 0) and a.dtype.is_integer:
        return a
    if is_const(a, 0) and b.dtype.is_integer:
        return b
    return a + b


def mul(a: PrimExpr, b: PrimExpr) -> PrimExpr:
    """``a * b`` that drops an integer one operand (constants fold)."""
    if is_const(b, 1):
        return a
    if is_const(a, 1):
        return b
    return a * b
