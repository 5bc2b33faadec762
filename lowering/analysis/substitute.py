"""Substitution of variables and buffers, keyed by object identity."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

from irbuilder.ir import Buffer, PrimExpr, Stmt, StmtExprMutator, Var

__all__ = ["Substituter", "substitute", "substitute_expr"]

_NodeT = TypeVar("_NodeT", PrimExpr, Stmt)


class Substituter(StmtExprMutator):
    """Replaces uses of Vars (``vmap``) and references to Buffers (``bmap``).

    Definition sites are not rewritten (the functors skip them), so a map
    entry for a loop var only changes its uses.
    """

    def __init__(
        self,
        vmap: Mapping[Var, PrimExpr] | None = None,
        bmap: Mapping[Buffer, Buffer] | None = None,
    ) -> None:
        self.vmap: Mapping[Var, PrimExpr] = vmap or {}
        self.bmap: Mapping[Buffer, Buffer] = bmap or {}

    def visit_var_(self, var: Var) -> PrimExpr:
        return self.vmap.get(var, var)

    def visit_buffer(self, buffer: Buffer) -> Buffer:
        return self.bmap.get(buffer, buffer)


def substitute(
    node: _NodeT,
    vmap: Mapping[Var, PrimExpr] | None = None,
    bmap: Mapping[Buffer, Buffer] | None = None,
) -> _NodeT:
    """``node`` with every use of a mapped Var/Buffer replaced (the same object if none)."""
    if not vmap and not bmap:
        return node
    sub = Substituter(vmap, bmap)
    if isinstance(node, PrimExpr):
        return sub.visit_expr(node)
    return sub.visit_stmt(node)


def substitute_expr(expr: PrimExpr, vmap: Mapping[Var, PrimExpr]) -> PrimExpr:
    """Expression-only shorthand of :func:`substitute`."""
    return substitute(expr, vmap)
