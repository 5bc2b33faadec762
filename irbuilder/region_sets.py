"""Interval arithmetic over index expressions, for block region inference.

An interval is ``(lo, hi)`` with both ends included, as expressions; ``None`` stands for
"anything" (the whole dimension once covered). Ends are kept in a small canonical
affine form (terms in order of first appearance, constant last), so ``vi * 16 + 15 + 1 -
vi * 16`` is the constant ``16`` and two ends differing by a constant compare exactly.
Ends whose order is unknown are combined with ``T.min``/``T.max``, as TVM's interval sets
do.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .ir import (
    Add,
    DataType,
    IntImm,
    Max,
    Min,
    Mul,
    PrimExpr,
    Sub,
    Var,
    const,
    structural_equal,
)

__all__ = ["Interval", "Linear", "affine", "compare", "hull", "narrow_hi", "narrow_lo", "offset"]

Interval = tuple[PrimExpr, PrimExpr]


@dataclass
class Linear:
    """``sum(coef * atom) + const``; atoms are Vars or any other non-affine expression."""

    dtype: DataType
    terms: list[tuple[PrimExpr, int]] = field(default_factory=list)
    const: int = 0

    def add(self, atom: PrimExpr, coef: int) -> None:
        for pos, (known, c) in enumerate(self.terms):
            if known is atom or (not isinstance(atom, Var) and structural_equal(known, atom)):
                self.terms[pos] = (known, c + coef)
                return
        self.terms.append((atom, coef))

    def add_form(self, other: Linear, scale: int) -> None:
        for atom, coef in other.terms:
            self.add(atom, coef * scale)
        self.const += other.const * scale

    def live(self) -> list[tuple[PrimExpr, int]]:
        return [(a, c) for a, c in self.terms if c != 0]

    def constant(self) -> int | None:
        """The value when no term is left, else None."""
        return None if self.live() else self.const

    def expr(self) -> PrimExpr:
        """The form as an expression: ``a * 4 + b - 3``."""
        out: PrimExpr | None = None
        for atom, coef in self.live():
            magnitude = abs(coef)
            term = atom if magnitude == 1 else Mul(atom, const(magnitude, self.dtype))
            if out is None:
                out = term if coef > 0 else Mul(atom, const(coef, self.dtype))
            else:
                out = Add(out, term) if coef > 0 else Sub(out, term)
        if out is None:
            return const(self.const, self.dtype)
        if self.const > 0:
            return Add(out, const(self.const, self.dtype))
        if self.const < 0:
            return Sub(out, const(-self.const, self.dtype))
        return out


def affine(expr: PrimExpr) -> Linear:
    """The affine form of an integer expression (non-affine parts become atoms)."""
    form = Linear(expr.dtype)
    _collect(expr, 1, form)
    return form


def _collect(expr: PrimExpr, scale: int, form: Linear) -> None:
    if isinstance(expr, IntImm):
        form.const += expr.value * scale
    elif isinstance(expr, Add):
        _collect(expr.a, scale, form)
        _collect(expr.b, scale, form)
    elif isinstance(expr, Sub):
        _collect(expr.a, scale, form)
        _collect(expr.b, -scale, form)
    elif isinstance(expr, Mul) and isinstance(expr.b, IntImm):
        _collect(expr.a, scale * expr.b.value, form)
    elif isinstance(expr, Mul) and isinstance(expr.a, IntImm):
        _collect(expr.b, scale * expr.a.value, form)
    else:
        form.add(expr, scale)


def offset(expr: PrimExpr, delta: int | PrimExpr, sign: int = 1) -> PrimExpr:
    """``expr + sign * delta`` in canonical form."""
    form = affine(expr)
    if isinstance(delta, int):
        form.const += sign * delta
    else:
        form.add_form(affine(delta), sign)
    return form.expr()


def compare(a: PrimExpr, b: PrimExpr) -> int | None:
    """``a - b`` when it is a constant, else None."""
    form = affine(a)
    form.add_form(affine(b), -1)
    return form.constant()


def hull(a: Interval | None, b: Interval | None) -> Interval | None:
    """The smallest interval holding both."""
    if a is None or b is None:
        return None
    lo_diff = compare(a[0], b[0])
    hi_diff = compare(a[1], b[1])
    if lo_diff is None:
        lo: PrimExpr = Min(a[0], b[0])
    else:
        lo = a[0] if lo_diff <= 0 else b[0]
    if hi_diff is None:
        hi: PrimExpr = Max(a[1], b[1])
    else:
        hi = a[1] if hi_diff >= 0 else b[1]
    return lo, hi


def narrow_lo(dom: Interval, bound: PrimExpr) -> Interval:
    """``dom`` with ``lo`` raised to ``bound`` when that is provably tighter."""
    diff = compare(bound, dom[0])
    return (bound, dom[1]) if diff is not None and diff > 0 else dom


def narrow_hi(dom: Interval, bound: PrimExpr) -> Interval:
    """``dom`` with ``hi`` lowered to ``bound`` when that is provably tighter."""
    diff = compare(bound, dom[1])
    return (dom[0], bound) if diff is not None and diff < 0 else dom
