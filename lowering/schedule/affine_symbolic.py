"""Affine bindings over loops with symbolic extents (``n * 32``, ``fused // n``): the
mixed-radix reading of :mod:`affine`, with extents that are *monomials* of shape variables.

A monomial is a positive constant times a product of variables (``32 * n``, ``n * m``). Where
:mod:`affine` compares integer extents, this compares monomials as polynomials and reads
"``a`` divides ``b``" as divisibility of monomials (``n`` divides ``32 * n``): a proof that
holds for every positive value of the variables. (A zero or negative extent runs no
iteration, so there is no instance to place.) Anything that is not a sum of digits
``(loop // d) % e * s`` with monomial ``d``, ``e``, ``s``, or whose digits cannot be shown to
chain and to be disjoint this way, is reported as not affine: the caller refuses.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from irbuilder.ir import Add, FloorDiv, FloorMod, For, IntImm, Mul, PrimExpr, Range, Sub, Var

__all__ = [
    "Monomial",
    "SymSum",
    "covers_once",
    "loop_sums",
    "monomial",
    "product",
    "symbolic_bindings_affine",
]


@dataclass(frozen=True)
class Monomial:
    """``coef * prod(var ** power)``; ``powers`` sorted by var id."""

    coef: int
    powers: tuple[tuple[int, int], ...] = ()

    def times(self, other: Monomial) -> Monomial:
        merged = dict(self.powers)
        for key, power in other.powers:
            merged[key] = merged.get(key, 0) + power
        return Monomial(self.coef * other.coef, tuple(sorted(merged.items())))

    def divides(self, other: Monomial) -> bool:
        if self.coef == 0 or other.coef % self.coef:
            return False
        theirs = dict(other.powers)
        return all(theirs.get(key, 0) >= power for key, power in self.powers)

    def over(self, divisor: Monomial) -> Monomial:
        """``self / divisor``; ``divisor`` divides ``self``."""
        merged = dict(self.powers)
        for key, power in divisor.powers:
            merged[key] -= power
        kept = tuple(sorted((k, p) for k, p in merged.items() if p))
        return Monomial(self.coef // divisor.coef, kept)

    @property
    def is_one(self) -> bool:
        return self.coef == 1 and not self.powers


ONE = Monomial(1)


def monomial(expr: PrimExpr, loop_ids: set[int] | None = None) -> Monomial | None:
    """``expr`` as a positive monomial of variables other than the loops', or None."""
    if isinstance(expr, IntImm):
        return Monomial(expr.value) if expr.value > 0 else None
    if isinstance(expr, Var):
        if not expr.dtype.is_integer or (loop_ids is not None and id(expr) in loop_ids):
            return None
        return Monomial(1, ((id(expr), 1),))
    if isinstance(expr, Mul):
        a, b = monomial(expr.a, loop_ids), monomial(expr.b, loop_ids)
        return None if a is None or b is None else a.times(b)
    return None


@dataclass(frozen=True, eq=False)
class SymSplit:
    """``(source // lower_factor) % extent * scale`` of a loop var."""

    source: Var
    lower_factor: Monomial
    extent: Monomial
    scale: Monomial


@dataclass(frozen=True, eq=False)
class SymSum:
    splits: tuple[SymSplit, ...]
    base: int

    @property
    def extent(self) -> Monomial:
        total = ONE
        for split in self.splits:
            total = total.times(split.extent)
        return total

    def digits(self) -> list[SymSplit] | None:
        """The splits lowest digit first, when each scale is the product of the extents
        below it."""
        rest = [s for s in self.splits if not s.extent.is_one]
        ordered: list[SymSplit] = []
        expected = ONE
        while rest:
            found = [s for s in rest if s.scale == expected]
            if len(found) != 1:
                return None
            ordered.append(found[0])
            rest.remove(found[0])
            expected = expected.times(found[0].extent)
        return ordered


def _restack(digits: list[SymSplit]) -> SymSum:
    scale = ONE
    out: list[SymSplit] = []
    for split in digits:
        out.append(SymSplit(split.source, split.lower_factor, split.extent, scale))
        scale = scale.times(split.extent)
    return SymSum(tuple(out), 0)


def _divide(digits: list[SymSplit], divisor: Monomial) -> SymSum | None:
    rest = list(digits)
    while not divisor.is_one and rest:
        low = rest[0]
        if low.extent.divides(divisor):
            divisor = divisor.over(low.extent)
            rest.pop(0)
        elif divisor.divides(low.extent):
            rest[0] = SymSplit(
                low.source, low.lower_factor.times(divisor), low.extent.over(divisor), ONE
            )
            divisor = ONE
        else:
            return None
    return _restack(rest)


def _modulo(digits: list[SymSplit], modulus: Monomial) -> SymSum | None:
    kept: list[SymSplit] = []
    for low in digits:
        if modulus.is_one:
            break
        if low.extent.divides(modulus):
            kept.append(low)
            modulus = modulus.over(low.extent)
        elif modulus.divides(low.extent):
            kept.append(SymSplit(low.source, low.lower_factor, modulus, ONE))
            modulus = ONE
        else:
            return None
    return _restack(kept)


def _detect(expr: PrimExpr, extents: Mapping[int, tuple[Var, Monomial]]) -> SymSum | None:
    loop_ids = set(extents)
    if isinstance(expr, IntImm):
        return SymSum((), expr.value)
    if isinstance(expr, Var):
        if id(expr) not in extents:
            return None
        var, ext = extents[id(expr)]
        return SymSum((SymSplit(var, ONE, ext, ONE),), 0)
    if isinstance(expr, (Add, Sub)):
        a, b = _detect(expr.a, extents), _detect(expr.b, extents)
        if a is None or b is None or isinstance(expr, Sub):
            return None  # a negative digit is not a mixed-radix number
        return SymSum(a.splits + b.splits, a.base + b.base)
    if isinstance(expr, Mul):
        for x, y in ((expr.a, expr.b), (expr.b, expr.a)):
            factor = monomial(y, loop_ids)
            if factor is not None:
                inner = _detect(x, extents)
                if inner is None or inner.base:
                    return None
                return SymSum(
                    tuple(
                        SymSplit(s.source, s.lower_factor, s.extent, s.scale.times(factor))
                        for s in inner.splits
                    ),
                    0,
                )
        return None
    if isinstance(expr, (FloorDiv, FloorMod)):
        divisor = monomial(expr.b, loop_ids)
        inner = _detect(expr.a, extents)
        if divisor is None or inner is None or inner.base:
            return None
        digits = inner.digits()
        if digits is None:
            return None
        if isinstance(expr, FloorDiv):
            return _divide(digits, divisor)
        return _modulo(digits, divisor)
    return None


def _before(a: tuple[Monomial, Monomial], b: tuple[Monomial, Monomial]) -> bool:
    """Span ``a`` ends where or before ``b`` starts (``a``'s end divides ``b``'s start)."""
    return a[0].times(a[1]).divides(b[0])


def symbolic_bindings_affine(
    bindings: Sequence[PrimExpr], extents: Mapping[Var, PrimExpr]
) -> list[SymSum] | None:
    """Detected sums when every binding is a mixed-radix number of loop digits with
    monomial extents and no two digits of one loop can overlap; else None."""
    loops: dict[int, tuple[Var, Monomial]] = {}
    for var, extent in extents.items():
        mono = monomial(extent)
        if mono is None:
            return None
        loops[id(var)] = (var, mono)
    sums: list[SymSum] = []
    spans: dict[int, list[tuple[Monomial, Monomial]]] = {}
    for binding in bindings:
        found = _detect(binding, loops)
        if found is None or found.digits() is None:
            return None
        for split in found.splits:
            if split.extent.is_one:
                continue
            span = (split.lower_factor, split.extent)
            taken = spans.setdefault(id(split.source), [])
            if not all(_before(span, other) or _before(other, span) for other in taken):
                return None
            taken.append(span)
        sums.append(found)
    return sums


def loop_sums(loops: Sequence[For], bindings: Sequence[PrimExpr]) -> list[SymSum] | None:
    """:func:`symbolic_bindings_affine` over ``loops`` (each starting at 0)."""
    extents: dict[Var, PrimExpr] = {}
    for loop in loops:
        if not (isinstance(loop.min, IntImm) and loop.min.value == 0):
            return None
        extents[loop.loop_var] = loop.extent
    return symbolic_bindings_affine(bindings, extents)


def covers_once(found: SymSum, dom: Range) -> bool:
    """The detected sum runs over exactly ``dom`` (same start, same monomial extent)."""
    if not (isinstance(dom.min, IntImm) and dom.min.value == found.base):
        return False
    return monomial(dom.extent) == found.extent


def product(exprs: Sequence[PrimExpr]) -> Monomial | None:
    """The monomial product of ``exprs``, or None when one is not a monomial."""
    total = ONE
    for expr in exprs:
        mono = monomial(expr)
        if mono is None:
            return None
        total = total.times(mono)
    return total
