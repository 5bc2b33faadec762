"""The ranges of a moved block's iter vars and the loop nest that runs them, for compute_at
and reverse_compute_at.

Each iter var gets a *domain* ``[lo, hi]`` (the instances the target loop's iteration
needs) and a *bound* (the instances that exist: the iter var's own domain, narrowed by the
buffer's shape where the store maps it there). As in TVM, a bound that provably contains the
domain is dropped; a bound inside the domain replaces it; a constant intersection of the two
replaces the domain; otherwise the loop runs the domain and a ``T.where`` keeps the block
inside the bound. Each choice keeps every needed instance and adds only instances that
exist, so the moved block computes what it computed before, for at least the points read.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from irbuilder.ir import (
    GE,
    LT,
    And,
    Block,
    BlockRealize,
    For,
    ForKind,
    IntImm,
    PrimExpr,
    Stmt,
    Var,
    const,
)
from lowering.analysis.substitute import substitute_expr
from lowering.arith import Analyzer, simplify_expr, supports_linear, to_linear

from .interval import (
    Interval,
    lower_bound_cond,
    pick_max,
    pick_min,
    same,
    simplify_index,
    upper_bound_cond,
)

__all__ = ["VarDomain", "build_nest", "outer_analyzer", "settle"]


@dataclass(frozen=True)
class VarDomain:
    """Run ``[lo, hi]``; keep the block inside ``bound`` (both ends included) when set."""

    lo: PrimExpr
    hi: PrimExpr
    bound: Interval | None


def outer_analyzer(outer: Sequence[For]) -> tuple[Analyzer, dict[Var, PrimExpr]]:
    """An analyzer knowing the ranges of ``outer`` loops, and the loops running once (TVM's
    analyzer binds such a var to its only value)."""
    analyzer = Analyzer()
    single: dict[Var, PrimExpr] = {}
    for lp in outer:
        _bind_loop(analyzer, lp.loop_var, lp.min, lp.extent)
        if isinstance(lp.extent, IntImm) and lp.extent.value == 1:
            single[lp.loop_var] = lp.min
    return analyzer, single


def _bind_loop(analyzer: Analyzer, var: Var, begin: PrimExpr, extent: PrimExpr) -> None:
    # a symbolic extent (``k_0 < n``) is kept as an expression, so that TVM's symbolic
    # bounds (``k_0 * 32 + ax0 < n * 32``) can be proven and their guard dropped, as TVM does
    if isinstance(extent, IntImm) and isinstance(begin, IntImm):
        analyzer.bind_range(var, begin, extent)
    else:
        analyzer.bind_symbolic_range(var, begin, extent)


def _span(lo: PrimExpr, hi: PrimExpr, analyzer: Analyzer) -> PrimExpr:
    """``hi - lo + 1``; a constant when the two differ by one (``x // n`` and ``x // n``
    cancel even where the simplifier cannot bound ``x // n`` in the index type)."""
    if supports_linear(lo.dtype) and lo.dtype == hi.dtype:
        diff = to_linear(hi)
        diff.add_form(to_linear(lo), -1)
        if diff.is_const:
            return const(diff.const + 1, lo.dtype)
    return simplify_index(hi - lo + 1, analyzer)


def settle(dom: Interval, bound: Interval, analyzer: Analyzer) -> VarDomain:
    """TVM's choice between running ``dom`` and guarding it by ``bound``."""
    dlo, dhi = simplify_index(dom[0], analyzer), simplify_index(dom[1], analyzer)
    blo, bhi = simplify_index(bound[0], analyzer), simplify_index(bound[1], analyzer)
    ilo, ihi = pick_max(dlo, blo, analyzer), pick_min(dhi, bhi, analyzer)
    if same(ilo, dlo, analyzer) and same(ihi, dhi, analyzer):
        return VarDomain(dlo, dhi, None)
    if same(ilo, blo, analyzer) and same(ihi, bhi, analyzer):
        return VarDomain(blo, bhi, None)
    if isinstance(ilo, IntImm) and isinstance(ihi, IntImm):
        return VarDomain(ilo, ihi, None)
    return VarDomain(dlo, dhi, (blo, bhi))


def build_nest(
    block: Block,
    doms: Sequence[VarDomain],
    preserve_unit_loops: bool,
    outer: Sequence[For],
) -> Stmt:
    """The loops ``ax0, ax1, ...`` (one per iter var whose range is not a single point, or
    every one with ``preserve_unit_loops``) and the block's realize under them."""
    analyzer, single = outer_analyzer(outer)
    values: list[PrimExpr] = []
    loops: list[tuple[Var, PrimExpr]] = []
    predicate: PrimExpr = const(True)
    # a unit loop runs at 0: TVM's simplifier reads it so in the predicate
    unit: dict[Var, PrimExpr] = {}

    def conjoin(cond: PrimExpr) -> None:
        nonlocal predicate
        predicate = cond if isinstance(predicate, IntImm) else And(predicate, cond)

    for iv, dom in zip(block.iter_vars, doms):
        lo = simplify_index(substitute_expr(dom.lo, single), analyzer)
        hi = simplify_index(substitute_expr(dom.hi, single), analyzer)
        extent = _span(lo, hi, analyzer)
        if isinstance(extent, IntImm) and extent.value == 1 and not preserve_unit_loops:
            value: PrimExpr = lo
        else:
            var = Var(f"ax{len(loops)}", iv.var.dtype)
            loops.append((var, extent))
            _bind_loop(analyzer, var, const(0, var.dtype), extent)
            if isinstance(extent, IntImm) and extent.value == 1:
                unit[var] = const(0, var.dtype)
            value = var if isinstance(lo, IntImm) and lo.value == 0 else lo + var
        values.append(value)
        if dom.bound is None:
            continue
        b_lo = simplify_expr(substitute_expr(dom.bound[0], single), analyzer)
        b_end = simplify_expr(substitute_expr(dom.bound[1], single) + 1, analyzer)
        if not analyzer.can_prove(GE(value, b_lo)):
            conjoin(lower_bound_cond(substitute_expr(value, unit), b_lo))
        if not analyzer.can_prove(LT(value, b_end)):
            conjoin(upper_bound_cond(substitute_expr(value, unit), b_end))
    stmt: Stmt = BlockRealize(tuple(values), predicate, block)
    for var, extent in reversed(loops):
        stmt = For(var, const(0, var.dtype), extent, ForKind.SERIAL, stmt)
    return stmt
