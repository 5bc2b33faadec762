"""Index maps holding sampled values (``lambda i, j: (i, j // (v1 * v2), j % (v1 * v2))``
with ``v1``, ``v2`` ExprRVs, as TVM's traces hold them): the stand-in vars of the RVs are
replaced by the sampled values when a primitive is applied, by the trace's names when the
map is printed, and by the replay's RVs when a trace is replayed."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from irbuilder.ir import IntImm, PrimExpr, Var, post_order_visit
from lowering.analysis.substitute import substitute_expr
from lowering.arith import simplify_expr

from .layout import IndexMap
from .rv import ExprRV, expr_rv_of

__all__ = ["map_rvs", "rename_rvs", "resolve_rvs", "translate_rvs"]


def map_rvs(value: Any) -> list[ExprRV]:
    """The ExprRVs an index map's outputs use (none for anything else)."""
    if not isinstance(value, IndexMap):
        return []
    found: dict[int, ExprRV] = {}

    def visit(node: object) -> None:
        owner = expr_rv_of(node)
        if owner is not None:
            found.setdefault(id(owner), owner)

    for expr in value.final_indices:
        post_order_visit(expr, visit)
    return list(found.values())


def _substituted(index_map: IndexMap, vmap: Mapping[Var, PrimExpr]) -> IndexMap:
    return IndexMap(
        index_map.initial_indices, [substitute_expr(e, vmap) for e in index_map.final_indices]
    )


def resolve_rvs(value: Any, value_of: Callable[[ExprRV], Any]) -> Any:
    """``value`` with every ExprRV of an index map replaced by its sampled value."""
    rvs = map_rvs(value)
    if not rvs:
        return value
    vmap: dict[Var, PrimExpr] = {rv.var: IntImm(rv.var.dtype, int(value_of(rv))) for rv in rvs}
    resolved = _substituted(value, vmap)
    return IndexMap(resolved.initial_indices, [simplify_expr(e) for e in resolved.final_indices])


def rename_rvs(value: Any, name_of: Callable[[ExprRV], str]) -> Any:
    """``value`` with every ExprRV of an index map printed as ``name_of(rv)``."""
    rvs = map_rvs(value)
    if not rvs:
        return value
    return _substituted(value, {rv.var: Var(name_of(rv), rv.var.dtype) for rv in rvs})


def translate_rvs(value: Any, table: Mapping[int, Any]) -> Any:
    """``value`` with every ExprRV of an index map replaced by ``table[id(rv)]`` (the
    replay's RV for it); an RV the table lacks stays."""
    rvs = [rv for rv in map_rvs(value) if isinstance(table.get(id(rv)), ExprRV)]
    if not rvs:
        return value
    return _substituted(value, {rv.var: table[id(rv)].var for rv in rvs})
