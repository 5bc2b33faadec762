"""Interval arithmetic over index expressions, for block region inference.

An interval is ``(lo, hi)`` with both ends included, as expressions; ``None`` stands for
"anything" (the whole dimension once covered). Ends are kept in the exact canonical
affine form of :mod:`irbuilder.ir.linear_form` (terms in order of first appearance), so
``vi * 16 + 15 + 1 - vi * 16`` is the constant ``16`` and two ends differing by a constant
compare exactly. Ends whose order is unknown are combined with ``T.min``/``T.max``, as TVM's
interval sets do.
"""

from __future__ import annotations

from .ir import Max, Min, PrimExpr, structural_equal
from .ir.linear_form import LinearForm, from_linear, to_linear

__all__ = [
    "Interval",
    "affine",
    "compare",
    "constant_of",
    "hull",
    "narrow_hi",
    "narrow_lo",
    "offset",
]

Interval = tuple[PrimExpr, PrimExpr]


def affine(expr: PrimExpr) -> LinearForm:
    """The exact affine form of an integer expression (non-affine parts become atoms)."""
    return to_linear(expr, wrap=False)


def constant_of(form: LinearForm) -> int | None:
    """The value of ``form`` when no term is left, else None."""
    return None if form.live_terms() else form.const


def offset(expr: PrimExpr, delta: int | PrimExpr, sign: int = 1) -> PrimExpr:
    """``expr + sign * delta`` in canonical form."""
    form = affine(expr)
    if isinstance(delta, int):
        form.add_const(sign * delta)
    else:
        form.add_form(affine(delta), sign)
    return from_linear(form)


def compare(a: PrimExpr, b: PrimExpr) -> int | None:
    """``a - b`` when it is a constant, else None."""
    form = affine(a)
    form.add_form(affine(b), -1)
    return constant_of(form)


def hull(a: Interval | None, b: Interval | None) -> Interval | None:
    """The smallest interval holding both."""
    if a is None or b is None:
        return None
    lo_diff = compare(a[0], b[0])
    hi_diff = compare(a[1], b[1])
    if lo_diff is None:
        lo: PrimExpr = _joined(a[0], b[0], Min)
    else:
        lo = a[0] if lo_diff <= 0 else b[0]
    if hi_diff is None:
        hi: PrimExpr = _joined(a[1], b[1], Max)
    else:
        hi = a[1] if hi_diff >= 0 else b[1]
    return lo, hi


def _joined(a: PrimExpr, b: PrimExpr, kind: type[Min] | type[Max]) -> PrimExpr:
    """``kind(a, b)``, or the side that already takes the other in (``min(min(x, 0), 0)``
    is ``min(x, 0)``: TVM's regions of a load indexed by loads read that way)."""
    for outer, inner in ((a, b), (b, a)):
        if isinstance(outer, kind) and (structural_equal(outer.a, inner)
                                        or structural_equal(outer.b, inner)):
            return outer
    return kind(a, b)


def narrow_lo(dom: Interval, bound: PrimExpr) -> Interval:
    """``dom`` with ``lo`` raised to ``bound`` when that is provably tighter."""
    diff = compare(bound, dom[0])
    return (bound, dom[1]) if diff is not None and diff > 0 else dom


def narrow_hi(dom: Interval, bound: PrimExpr) -> Interval:
    """``dom`` with ``hi`` lowered to ``bound`` when that is provably tighter."""
    diff = compare(bound, dom[1])
    return (dom[0], bound) if diff is not None and diff < 0 else dom
