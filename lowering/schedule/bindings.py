"""Rewriting the bindings of the blocks below a changed loop nest.

After a loop variable is replaced (split, fuse), block bindings are substituted and then
printed back in TVM's simplified affine form when they are affine in the loops around them;
predicates are substituted but not simplified (TVM keeps ``(i_0 * 2 + i_1) * 3 + i_2 < n``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from irbuilder.ir import (
    And,
    Block,
    BlockRealize,
    For,
    IntImm,
    PrimExpr,
    Stmt,
    StmtExprMutator,
    Var,
)
from lowering.analysis.substitute import Substituter
from lowering.arith import Analyzer, simplify_expr

from .affine import detect, normalize
from .analysis import constant_extents

__all__ = ["conjoin", "rewrite_below", "simplify_binding"]


def conjoin(old: PrimExpr, new: PrimExpr) -> PrimExpr:
    if isinstance(old, IntImm) and old.value == 1:
        return new
    return And(old, new)


def simplify_binding(
    expr: PrimExpr, loops: Sequence[For], preserve_unit_iters: bool = False
) -> PrimExpr:
    extents = constant_extents(loops)
    if extents is not None:
        found = detect(expr, extents)
        if found is not None and found.digits() is not None:
            return normalize(found, expr, keep_unit_loops=preserve_unit_iters)
    analyzer = Analyzer()
    for loop in loops:
        analyzer.bind_range(loop.loop_var, loop.min, loop.extent)
    return simplify_expr(expr, analyzer)


class _Rewriter(StmtExprMutator):
    def __init__(
        self,
        outer: Sequence[For],
        vmap: Mapping[Var, PrimExpr],
        predicate: PrimExpr | None,
        preserve_unit_iters: bool,
    ) -> None:
        self.loops: list[For] = list(outer)
        self.preserve_unit_iters = preserve_unit_iters
        self.sub = Substituter(vmap)
        self.predicate = predicate
        self.reuse: dict[Stmt, Stmt] = {}

    def visit_expr(self, expr: PrimExpr) -> PrimExpr:
        return self.sub.visit_expr(expr)

    def visit_for_(self, loop: For) -> Stmt:
        self.loops.append(loop)
        try:
            new = self.generic_mutate(loop)
        finally:
            self.loops.pop()
        if new is not loop:
            self.reuse[loop] = new
        return new

    def visit_block_realize_(self, realize: BlockRealize) -> Stmt:
        values = tuple(
            simplify_binding(self.sub.visit_expr(v), self.loops, self.preserve_unit_iters)
            for v in realize.iter_values
        )
        predicate = self.sub.visit_expr(realize.predicate)
        if self.predicate is not None:
            predicate = conjoin(predicate, self.predicate)
        saved, self.loops = self.loops, []
        saved_pred, self.predicate = self.predicate, None
        try:
            block = self.visit_stmt(realize.block)
        finally:
            self.loops, self.predicate = saved, saved_pred
        assert isinstance(block, Block)
        if block is not realize.block:
            self.reuse[realize.block] = block
        return BlockRealize(values, predicate, block, span=realize.span)


def rewrite_below(
    stmt: Stmt,
    outer: Sequence[For],
    vmap: Mapping[Var, PrimExpr],
    predicate: PrimExpr | None = None,
    preserve_unit_iters: bool = False,
) -> tuple[Stmt, dict[Stmt, Stmt]]:
    """``stmt`` with ``vmap`` applied, block bindings re-simplified under ``outer`` loops.

    ``predicate`` (if given) is added to every block directly below. ``preserve_unit_iters``
    keeps extent-1 loop variables in the bindings. Returns the new statement and the
    Blocks/Fors it rebuilt (old -> new).
    """
    rewriter = _Rewriter(outer, vmap, predicate, preserve_unit_iters)
    new = rewriter.visit_stmt(stmt)
    return new, rewriter.reuse
