"""Closed integer intervals of index expressions, for compute_at's region relaxation.

TVM relaxes a consumer's access over the loops inside the target loop with interval
arithmetic (``arith::EvalSet``): each relaxed var stands for its whole range, others for
themselves, and the result is ``[lo, hi]`` with both ends expressions of the outer loop
vars. This module does the same for the operators whose interval is exact or an
over-approximation that is easy to show sound: ``+``, ``-``, ``*`` by a constant, ``//`` and
``%`` by a positive constant, ``min``/``max``. Anything else that mentions a relaxed var has
no interval here (the caller then takes the whole buffer dimension, which is always sound).

:func:`simplify_index` writes the ends the way TVM's simplifier does where the tests compare
them (``(c * 360 + 359) // 16`` -> ``c * 22 + 22`` when ``c`` is 0 or 1, ``(x * 8 + 7) // 16``
-> ``x // 2``); :func:`lower_bound_cond` / :func:`upper_bound_cond` spell a block predicate
as TVM does (``1 <= h * 8 + ax0``, ``h * 8 + ax0 < 225``).
"""

from __future__ import annotations

from collections.abc import Mapping

from irbuilder.ir import (
    LE,
    LT,
    Add,
    Cast,
    DataType,
    FloorDiv,
    FloorMod,
    IntImm,
    Max,
    Min,
    Mul,
    PrimExpr,
    Range,
    Sub,
    Var,
    const,
    structural_equal,
)
from irbuilder.ir.linear_form import LinearForm, from_linear, supports_linear, to_linear
from lowering.analysis.substitute import substitute_expr
from lowering.arith import Analyzer, simplify_expr

from .analysis import mentions_any

__all__ = [
    "Interval",
    "eval_interval",
    "lower_bound_cond",
    "pick_max",
    "pick_min",
    "simplify_index",
    "upper_bound_cond",
]

Interval = tuple[PrimExpr, PrimExpr]
"""``(lo, hi)``, both ends included."""


def eval_interval(expr: PrimExpr, relaxed: Mapping[Var, Range]) -> Interval | None:
    """The interval of ``expr`` as the vars of ``relaxed`` range over their ranges (each
    end unsimplified), or None when an operator here cannot bound it."""
    ids = {id(v) for v in relaxed}
    by_id = {id(v): r for v, r in relaxed.items()}
    return _eval(expr, ids, by_id)


def _eval(expr: PrimExpr, ids: set[int], by_id: dict[int, Range]) -> Interval | None:
    if not mentions_any(expr, ids):
        return expr, expr
    if isinstance(expr, Var):
        rng = by_id[id(expr)]
        return rng.min, rng.min + rng.extent - 1
    if isinstance(expr, (Add, Sub, Min, Max)):
        a = _eval(expr.a, ids, by_id)
        b = _eval(expr.b, ids, by_id)
        if a is None or b is None:
            return None
        if isinstance(expr, Add):
            return a[0] + b[0], a[1] + b[1]
        if isinstance(expr, Sub):
            return a[0] - b[1], a[1] - b[0]
        if isinstance(expr, Min):
            return Min(a[0], b[0]), Min(a[1], b[1])
        return Max(a[0], b[0]), Max(a[1], b[1])
    if isinstance(expr, Mul):
        for x, c in ((expr.a, expr.b), (expr.b, expr.a)):
            if isinstance(c, IntImm):
                inner = _eval(x, ids, by_id)
                if inner is None:
                    return None
                lo, hi = inner[0] * c, inner[1] * c
                return (lo, hi) if c.value >= 0 else (hi, lo)
        return None
    if isinstance(expr, (FloorDiv, FloorMod)) and isinstance(expr.b, IntImm) and expr.b.value > 0:
        inner = _eval(expr.a, ids, by_id)
        if inner is None:
            return None
        if isinstance(expr, FloorDiv):
            # floordiv by a positive constant is monotone
            return FloorDiv(inner[0], expr.b), FloorDiv(inner[1], expr.b)
        # a remainder may wrap anywhere inside one period
        return const(0, expr.dtype), const(expr.b.value - 1, expr.dtype)
    return None


def _split_floordiv(expr: FloorDiv, analyzer: Analyzer) -> PrimExpr | None:
    """``(sum a_i x_i + b) // c`` with ``c > 0``: each ``a_i = q_i c + r_i`` gives
    ``sum q_i x_i + q + (sum r_i x_i + r) // c``, the last term 0 when its operand provably
    lies in ``[0, c)`` (an identity on integers); or ``x // (c / a)`` for ``(x * a + b) // c``
    with ``a`` dividing ``c`` and ``0 <= b < a``."""
    c = expr.b
    if not (isinstance(c, IntImm) and c.value > 0 and supports_linear(expr.dtype)):
        return None
    form = to_linear(simplify_expr(expr.a, analyzer))
    terms = form.live_terms()
    if len(terms) == 1 and 0 < terms[0][1] and c.value % terms[0][1] == 0:
        atom, a = terms[0]
        if 0 <= form.const < a:
            if a == c.value:
                return atom
            return FloorDiv(atom, const(c.value // a, expr.dtype))
    quotient = LinearForm(expr.dtype)
    remainder = LinearForm(expr.dtype)
    for atom, coef in terms:
        quotient.add_term(atom, coef // c.value)
        remainder.add_term(atom, coef % c.value)
    quotient.add_const(form.const // c.value)
    remainder.add_const(form.const % c.value)
    bound = analyzer.const_int_bound(from_linear(remainder))
    if not (0 <= bound.lo and bound.hi < c.value):
        return None
    return from_linear(quotient)


def simplify_index(expr: PrimExpr, analyzer: Analyzer) -> PrimExpr:
    """``expr`` simplified, floor divisions by constants resolved where exact."""

    def rewrite(node: PrimExpr) -> PrimExpr:
        if isinstance(node, (Add, Sub, Mul, Min, Max, FloorDiv, FloorMod)):
            a, b = rewrite(node.a), rewrite(node.b)
            node = type(node)(a, b)
            if isinstance(node, FloorDiv):
                split = _split_floordiv(node, analyzer)
                if split is not None:
                    return split
            if isinstance(node, (Min, Max)):
                picked = (pick_min if isinstance(node, Min) else pick_max)(a, b, analyzer)
                if not isinstance(picked, (Min, Max)):
                    return picked
        return node

    return simplify_expr(rewrite(simplify_expr(expr, analyzer)), analyzer)


def to_dtype(expr: PrimExpr, dtype: DataType) -> PrimExpr:
    """``expr`` as an integer of ``dtype`` (a constant retyped, anything else cast): a bound
    derived from int64 buffer indices for an int32 iter var, or the other way round."""
    if expr.dtype == dtype:
        return expr
    if isinstance(expr, IntImm):
        return const(expr.value, dtype)
    return Cast(dtype, expr)


def _same_width(a: PrimExpr, b: PrimExpr) -> tuple[PrimExpr, PrimExpr]:
    if a.dtype == b.dtype or not (a.dtype.is_integer and b.dtype.is_integer):
        return a, b
    wide = a.dtype if a.dtype.bits >= b.dtype.bits else b.dtype
    return to_dtype(a, wide), to_dtype(b, wide)


def pick_min(a: PrimExpr, b: PrimExpr, analyzer: Analyzer) -> PrimExpr:
    """The smaller of ``a`` and ``b`` when provable, else ``min(a, b)``."""
    a, b = _same_width(a, b)
    diff = analyzer.compare(a, b)
    if diff is not None and diff.hi <= 0:
        return a
    if diff is not None and diff.lo >= 0:
        return b
    return Min(a, b)


def pick_max(a: PrimExpr, b: PrimExpr, analyzer: Analyzer) -> PrimExpr:
    """The larger of ``a`` and ``b`` when provable, else ``max(a, b)``."""
    a, b = _same_width(a, b)
    diff = analyzer.compare(a, b)
    if diff is not None and diff.lo >= 0:
        return a
    if diff is not None and diff.hi <= 0:
        return b
    return Max(a, b)


def _moved(value: PrimExpr, bound: PrimExpr) -> tuple[PrimExpr, int] | None:
    """``value - bound`` as ``(terms, k)`` with every constant in ``k``."""
    if not supports_linear(value.dtype):
        return None
    form = to_linear(value - bound)
    if form.is_const:
        return None
    k = form.const
    form.const = 0
    return from_linear(form), k


def lower_bound_cond(value: PrimExpr, bound: PrimExpr) -> PrimExpr:
    """``bound <= value`` with the constants on the left: TVM's simplifier writes every
    ``x >= c`` as ``c <= x``, and its parser (like ours) reads ``c <= x`` as that node."""
    moved = _moved(value, bound)
    if moved is None:
        return LE(bound, value)
    terms, k = moved
    return LE(const(-k, value.dtype), terms)


def upper_bound_cond(value: PrimExpr, bound: PrimExpr) -> PrimExpr:
    """``value < bound`` with the constants on the right (TVM's spelling)."""
    moved = _moved(value, bound)
    if moved is None:
        return LT(value, bound)
    terms, k = moved
    return LT(terms, const(-k, value.dtype))


def same(a: PrimExpr, b: PrimExpr, analyzer: Analyzer) -> bool:
    """Whether ``a == b`` is provable."""
    if structural_equal(a, b):
        return True
    diff = analyzer.compare(a, b)
    return diff is not None and diff.lo == 0 and diff.hi == 0


def substitute_interval(ends: Interval, binding: Mapping[Var, PrimExpr]) -> Interval:
    return substitute_expr(ends[0], binding), substitute_expr(ends[1], binding)
