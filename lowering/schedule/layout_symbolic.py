"""transform_block_layout over a symbolic iteration domain.

A block iterating ``(1, 32, 1, n, 128)`` re-indexed by
``lambda x, y, z, w, k: (x * 32 * n + y * n + z * n + w, k)`` iterates ``(n * 32, 128)``.
Each output must linearize its indices in row-major order (``layout_pad_map.
symbolic_row_major``) and every index of extent > 1 feed exactly one output: the map is then
a bijection whatever ``n`` is, and its inverse reads each index back as a digit
(``y = v0 // n``, ``w = v0 % n``; extent-1 indices are 0). An index expression equal to an
output (``C[v_i1 * n + v_i3]``, same linear terms) becomes that output's variable
(``C[v0]``), as TVM's iter-map simplification gives.
"""

from __future__ import annotations

from collections.abc import Sequence

from irbuilder.ir import (
    Block,
    BufferLoad,
    BufferStore,
    IntImm,
    IterKind,
    IterVar,
    MatchBufferRegion,
    PrimExpr,
    Range,
    Stmt,
    StmtExprMutator,
    Var,
    const,
)
from lowering.analysis.substitute import substitute
from lowering.arith import Analyzer, simplify_expr

from .layout import IndexMap
from .layout_pad_map import linear_terms, symbolic_row_major

__all__ = ["SymbolicLayout", "symbolic_block_layout"]


def _is_one(expr: PrimExpr) -> bool:
    return isinstance(expr, IntImm) and expr.value == 1


class SymbolicLayout:
    """New iter vars, the inverse of every old one, and the outputs' linear terms."""

    def __init__(
        self,
        new_ivs: list[IterVar],
        inverse: dict[Var, PrimExpr],
        outputs: list[dict[Var, PrimExpr]],
    ) -> None:
        self.new_ivs, self.inverse, self.outputs = new_ivs, inverse, outputs


def symbolic_block_layout(block: Block, index_map: IndexMap) -> SymbolicLayout | str:
    """The layout, or why the map is not a provable bijection of the block's domain."""
    initial = index_map.initial_indices
    ivs = block.iter_vars
    if any(not (isinstance(iv.dom.min, IntImm) and iv.dom.min.value == 0) for iv in ivs):
        return "every iter var's domain must start at 0"
    extent_of = {id(v): iv.dom.extent for v, iv in zip(initial, ivs)}
    to_iter = {v: iv.var for v, iv in zip(initial, ivs)}
    owner: dict[int, int] = {}
    new_ivs: list[IterVar] = []
    inverse: dict[Var, PrimExpr] = {}
    outputs: list[dict[Var, PrimExpr]] = []
    dtype = ivs[0].var.dtype
    analyzer = Analyzer()
    for k, expr in enumerate(index_map.final_indices):
        terms = linear_terms(expr, initial)
        if terms is None:
            return f"output {k} is not a linear combination of the indices"
        used = [v for v in initial if v in terms and not _is_one(extent_of[id(v)])]
        used_ids = {id(v) for v in used}
        for var in used:
            if id(var) in owner:
                return f"index {var.name!r} feeds two outputs"
            owner[id(var)] = k
        shape = [extent_of[id(v)] for v in initial if v in terms]
        subset = [v for v in initial if v in terms]
        linear = symbolic_row_major(subset, [expr], shape) if used else [const(1, dtype)]
        if linear is None:
            return f"output {k} does not linearize its indices in row-major order"
        kinds = {iv.kind for v, iv in zip(initial, ivs) if id(v) in used_ids}
        if len(kinds) > 1:
            return f"output {k} mixes spatial and reduction iter vars"
        kind = kinds.pop() if kinds else IterKind.SPATIAL
        new_var = Var(f"v{k}", dtype)
        new_ivs.append(IterVar(new_var, Range(const(0, dtype), linear[0]), kind))
        analyzer.bind_range(new_var, const(0, dtype), linear[0])
        stride: PrimExpr = const(1, dtype)
        for pos, var in enumerate(reversed(used)):
            value: PrimExpr = new_var
            if not _is_one(stride):
                value = value // stride
            if pos != len(used) - 1:
                value = value % extent_of[id(var)]
            inverse[to_iter[var]] = simplify_expr(value, analyzer)
            stride = stride * extent_of[id(var)]
        outputs.append({to_iter[v]: simplify_expr(terms[v], analyzer) for v in used})
    for var, iv in zip(initial, ivs):
        if id(var) not in owner:
            if not _is_one(iv.dom.extent):
                return f"index {var.name!r} feeds no output"
            inverse[iv.var] = const(0, iv.var.dtype)
    return SymbolicLayout(new_ivs, inverse, outputs)


class _Rewrite(StmtExprMutator):
    """Indices equal to an output become its variable; the rest read the old iter vars back."""

    def __init__(self, layout: SymbolicLayout, old_vars: Sequence[Var]) -> None:
        self.layout, self.old_vars = layout, list(old_vars)
        self.units = {v for v in old_vars if v not in layout.inverse or _is_zero(layout.inverse[v])}
        self.analyzer = Analyzer()
        for iv in layout.new_ivs:
            self.analyzer.bind_range(iv.var, iv.dom.min, iv.dom.extent)

    def _index(self, expr: PrimExpr) -> PrimExpr:
        terms = linear_terms(expr, self.old_vars)
        if terms is not None:
            kept = {v: c for v, c in terms.items() if v not in self.units}
            for output, iv in zip(self.layout.outputs, self.layout.new_ivs):
                if (
                    kept
                    and set(map(id, kept)) == set(map(id, output))
                    and all(
                        _is_zero(simplify_expr(kept[v] - output[v], self.analyzer)) for v in kept
                    )
                ):
                    return iv.var
        return simplify_expr(substitute(expr, self.layout.inverse), self.analyzer)

    def visit_buffer_load_(self, load: BufferLoad) -> PrimExpr:
        return BufferLoad(load.buffer, tuple(self._index(i) for i in load.indices))

    def visit_buffer_store_(self, store: BufferStore) -> Stmt:
        value = self.visit_expr(store.value)
        indices = tuple(self._index(i) for i in store.indices)
        return BufferStore(store.buffer, value, indices, span=store.span)

    def visit_var_(self, var: Var) -> PrimExpr:
        return self.layout.inverse.get(var, var)


def _is_zero(expr: PrimExpr) -> bool:
    return isinstance(expr, IntImm) and expr.value == 0


def rewrite_block_body(stmt: Stmt, layout: SymbolicLayout, old_vars: Sequence[Var]) -> Stmt:
    """``stmt`` (a block's body or init) over the new iter vars."""
    return _Rewrite(layout, old_vars).visit_stmt(stmt)


def rewrite_block_views(
    views: tuple[MatchBufferRegion, ...], layout: SymbolicLayout, old_vars: Sequence[Var]
) -> tuple[MatchBufferRegion, ...]:
    """A block's views with their source regions over the new iter vars."""
    rewrite = _Rewrite(layout, old_vars)
    return tuple(
        MatchBufferRegion(m.buffer, rewrite.visit_buffer_region(m.source), span=m.span)
        for m in views
    )
