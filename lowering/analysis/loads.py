"""Small collectors shared by the codegen-time loop rewrites (distribute, promote)."""

from __future__ import annotations

from irbuilder.ir import (
    Allocate,
    BufferLoad,
    Call,
    CallKind,
    Div,
    FloorDiv,
    FloorMod,
    IntImm,
    Mod,
    PrimExpr,
    StmtExprVisitor,
)

__all__ = ["LoadCollector", "LocalAllocations", "reads_memory"]


class LocalAllocations(StmtExprVisitor):
    """Data vars (by id) of the function's own allocations: they never alias parameters."""

    def __init__(self) -> None:
        self.vars: set[int] = set()

    def visit_expr(self, expr: PrimExpr) -> None:
        return None  # allocations are statements: skip expression trees

    def visit_allocate_(self, stmt: Allocate) -> None:
        self.vars.add(id(stmt.buffer_var))
        self.generic_visit(stmt)


class LoadCollector(StmtExprVisitor):
    """The loads in a tree, and whether evaluating it may have an effect.

    ``impure`` is set by extern calls and, when ``traps_are_effects``, by integer
    divisions that may raise mid-loop (so earlier stores must stay visible): by anything
    but a non-zero constant, the rule of :func:`irbuilder.ir.traps.may_trap`.
    """

    def __init__(self, traps_are_effects: bool = False) -> None:
        self.loads: list[BufferLoad] = []
        self.impure = False
        self.traps_are_effects = traps_are_effects

    def visit_buffer_load_(self, node: BufferLoad) -> None:
        self.loads.append(node)
        self.generic_visit(node)

    def visit_call_(self, node: Call) -> None:
        if node.kind is CallKind.EXTERN:
            self.impure = True
        self.generic_visit(node)

    def visit_expr(self, expr: PrimExpr) -> None:
        if (
            self.traps_are_effects
            and isinstance(expr, (Div, Mod, FloorDiv, FloorMod))
            and not expr.dtype.is_float
            and not (isinstance(expr.b, IntImm) and expr.b.value != 0)
        ):
            self.impure = True
        super().visit_expr(expr)


def reads_memory(expr: PrimExpr) -> bool:
    """Whether evaluating ``expr`` loads from any buffer."""
    found = LoadCollector()
    found.visit_expr(expr)
    return bool(found.loads)
