"""Affine iteration maps: a lite form of TVM's ``DetectIterMap``.

A block binding is *affine* when it is a mixed-radix number over pieces of loop
variables: ``sum(split_k * scale_k) + base`` where each ``split`` is
``(loop_var // lower_factor) % extent`` of a loop starting at 0, the scales are
``1, e_0, e_0 * e_1, ...`` once the splits are sorted, and no two splits of all the
block's bindings cover the same digits of one loop variable. Such a map is injective
(distinct block instances come from distinct loop iterations) and surjective onto
``[base, base + prod(extents))``. Anything else is reported as not affine, which makes the
primitives that need affinity refuse rather than guess.

:func:`normalize` prints a detected map back in TVM's simplified form
(``i_0 * 32 + i_1``, ``fused // 128``, ``fused % 128``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from irbuilder.ir import (
    GE,
    GT,
    LE,
    LT,
    Add,
    And,
    FloorDiv,
    FloorMod,
    IntImm,
    Mul,
    PrimExpr,
    Sub,
    Var,
    const,
)
from lowering.analysis.vars import depends_on

__all__ = [
    "IterSplit",
    "IterSum",
    "DivModRule",
    "LeafRule",
    "bindings_affine",
    "detect",
    "drop_outer_terms",
    "normalize",
    "predicate_matches_bindings",
]


@dataclass(frozen=True, eq=False)
class IterSplit:
    """``(source // lower_factor) % extent * scale``, ``source`` in ``[0, source_extent)``."""

    source: Var
    source_extent: int
    lower_factor: int
    extent: int
    scale: int

    def with_scale(self, scale: int) -> IterSplit:
        return IterSplit(self.source, self.source_extent, self.lower_factor, self.extent, scale)


@dataclass(frozen=True, eq=False)
class IterSum:
    splits: tuple[IterSplit, ...]
    base: int

    def scaled(self, factor: int) -> IterSum:
        return IterSum(
            tuple(s.with_scale(s.scale * factor) for s in self.splits), self.base * factor
        )

    def digits(self) -> list[IterSplit] | None:
        """The splits lowest digit first, when they form a mixed-radix number."""
        ordered = sorted((s for s in self.splits if s.extent != 1), key=lambda s: s.scale)
        expected = 1
        for split in ordered:
            if split.scale != expected:
                return None
            expected *= split.extent
        return ordered

    @property
    def extent(self) -> int:
        total = 1
        for split in self.splits:
            total *= split.extent
        return total


# How a caller may read the atoms of an expression other than as loop vars (a var bound to a
# constant, fused iterators standing for sums of pieces), and how ``// c`` and ``% c`` act
# on a detected sum (``is_div`` for ``//``; the sum has no base and ``c > 0``).
LeafRule = Callable[[Var], "IterSum | None"]
DivModRule = Callable[["IterSum", int, bool], "IterSum | None"]


def detect(
    expr: PrimExpr,
    extents: Mapping[Var, int],
    *,
    leaf: LeafRule | None = None,
    div_mod: DivModRule | None = None,
) -> IterSum | None:
    """``expr`` as an :class:`IterSum` over the loop vars of ``extents``, or None.

    ``leaf`` replaces the reading of a var (by default: a whole loop var of ``extents``),
    ``div_mod`` the reading of ``// c`` and ``% c`` (by default: dividing the digits of a
    mixed-radix sum exactly)."""
    if isinstance(expr, IntImm):
        return IterSum((), expr.value)
    if isinstance(expr, Var):
        if leaf is not None:
            return leaf(expr)
        if expr not in extents:
            return None
        ext = extents[expr]
        return IterSum((IterSplit(expr, ext, 1, ext, 1),), 0)
    if isinstance(expr, (Add, Sub)):
        a = detect(expr.a, extents, leaf=leaf, div_mod=div_mod)
        b = detect(expr.b, extents, leaf=leaf, div_mod=div_mod)
        if a is None or b is None:
            return None
        if isinstance(expr, Sub):
            b = b.scaled(-1)
        return IterSum(a.splits + b.splits, a.base + b.base)
    if isinstance(expr, Mul):
        for x, y in ((expr.a, expr.b), (expr.b, expr.a)):
            if isinstance(y, IntImm):
                inner = detect(x, extents, leaf=leaf, div_mod=div_mod)
                return None if inner is None else inner.scaled(y.value)
        return None
    if isinstance(expr, (FloorDiv, FloorMod)) and isinstance(expr.b, IntImm):
        inner = detect(expr.a, extents, leaf=leaf, div_mod=div_mod)
        if inner is None or inner.base != 0 or expr.b.value <= 0:
            return None
        if div_mod is not None:
            return div_mod(inner, expr.b.value, isinstance(expr, FloorDiv))
        digits = inner.digits()
        if digits is None:
            return None
        if isinstance(expr, FloorDiv):
            return _divide(digits, expr.b.value)
        return _modulo(digits, expr.b.value)
    return None


def _restack(digits: list[IterSplit]) -> IterSum:
    scale = 1
    out: list[IterSplit] = []
    for split in digits:
        out.append(split.with_scale(scale))
        scale *= split.extent
    return IterSum(tuple(out), 0)


def _divide(digits: list[IterSplit], divisor: int) -> IterSum | None:
    rest = list(digits)
    while divisor > 1 and rest:
        low = rest[0]
        if divisor % low.extent == 0:
            divisor //= low.extent
            rest.pop(0)
        elif low.extent % divisor == 0:
            rest[0] = IterSplit(
                low.source,
                low.source_extent,
                low.lower_factor * divisor,
                low.extent // divisor,
                1,
            )
            divisor = 1
        else:
            return None
    return _restack(rest)


def _modulo(digits: list[IterSplit], modulus: int) -> IterSum | None:
    kept: list[IterSplit] = []
    for low in digits:
        if modulus == 1:
            break
        if modulus % low.extent == 0:
            kept.append(low)
            modulus //= low.extent
        elif low.extent % modulus == 0:
            kept.append(IterSplit(low.source, low.source_extent, low.lower_factor, modulus, 1))
            modulus = 1
        else:
            return None
    if modulus != 1 and len(kept) == len(digits):
        pass  # the modulus exceeds the value's range: x % m == x
    return _restack(kept)


def bindings_affine(
    bindings: Sequence[PrimExpr], extents: Mapping[Var, int]
) -> list[IterSum] | None:
    """Detected sums when every binding is affine and no two splits share digits."""
    sums: list[IterSum] = []
    covered: dict[int, list[tuple[int, int]]] = {}
    for binding in bindings:
        found = detect(binding, extents)
        if found is None or found.digits() is None:
            return None
        for split in found.splits:
            if split.extent == 1:
                continue
            lo, hi = split.lower_factor, split.lower_factor * split.extent
            spans = covered.setdefault(id(split.source), [])
            if any(lo < other_hi and other_lo < hi for other_lo, other_hi in spans):
                return None
            spans.append((lo, hi))
        sums.append(found)
    return sums


def _split_expr(split: IterSplit) -> PrimExpr:
    """TVM's spelling of one piece: the whole source, ``source // lower`` for a top piece,
    else ``source % (lower * extent) // lower`` (its ``IterMapToExprNormalizer``)."""
    value: PrimExpr = split.source
    dtype = split.source.dtype
    upper = split.lower_factor * split.extent
    if split.lower_factor == 1 and split.extent == split.source_extent:
        pass
    elif upper == split.source_extent:
        value = FloorDiv(value, const(split.lower_factor, dtype))
    else:
        value = FloorMod(value, const(upper, dtype))
        if split.lower_factor != 1:
            value = FloorDiv(value, const(split.lower_factor, dtype))
    if split.scale != 1:
        value = Mul(value, const(split.scale, dtype))
    return value


def normalize(found: IterSum, dtype_of: PrimExpr, keep_unit_loops: bool = False) -> PrimExpr:
    """The expression of ``found`` in TVM's simplified spelling, highest digit first.

    ``keep_unit_loops`` keeps extent-1 loop variables as terms (TVM keeps them as iterators
    unless asked to simplify trivial iterators); among equal scales they come after the
    wider piece, as TVM's fusion of the sum places them below it."""
    dtype = dtype_of.dtype

    def kept(split: IterSplit) -> bool:
        return split.extent != 1 or (keep_unit_loops and split.source_extent == 1)

    terms = sorted(
        (s for s in found.splits if kept(s)), key=lambda s: (-s.scale, s.extent == 1)
    )
    out: PrimExpr | None = None
    for split in terms:
        term = _split_expr(split)
        out = term if out is None else Add(out, term)
    if out is None:
        return const(found.base, dtype)
    if found.base > 0:
        out = Add(out, const(found.base, dtype))
    elif found.base < 0:
        out = Sub(out, const(-found.base, dtype))
    return out


def _terms(expr: PrimExpr, sign: int, out: list[tuple[int, PrimExpr]]) -> None:
    if isinstance(expr, Add):
        _terms(expr.a, sign, out)
        _terms(expr.b, sign, out)
    elif isinstance(expr, Sub):
        _terms(expr.a, sign, out)
        _terms(expr.b, -sign, out)
    else:
        out.append((sign, expr))


def drop_outer_terms(expr: PrimExpr, inner: Mapping[Var, int]) -> PrimExpr:
    """``expr`` without its additive terms that use none of the ``inner`` loop vars.

    Seen from inside loops whose enclosing loops are fixed, such terms are a constant
    offset (TVM treats the vars of loops outside a primitive's loops as symbols); a term
    mixing inner and outer vars is kept, so detection over ``inner`` fails on it."""
    terms: list[tuple[int, PrimExpr]] = []
    _terms(expr, 1, terms)
    out: PrimExpr | None = None
    for sign, term in terms:
        if not any(depends_on(term, var) for var in inner):
            continue
        if out is None:
            out = term if sign > 0 else Mul(term, const(-1, term.dtype))
        else:
            out = Add(out, term) if sign > 0 else Sub(out, term)
    return const(0, expr.dtype) if out is None else out


def same_digits(a: IterSum, b: IterSum) -> bool:
    """Whether two sums are made of the same loop pieces at the same scales."""

    def key(s: IterSum) -> list[tuple[int, int, int, int]]:
        return sorted(
            (id(p.source), p.lower_factor, p.extent, p.scale) for p in s.splits if p.extent != 1
        )

    return key(a) == key(b)


def _conjuncts(expr: PrimExpr, out: list[PrimExpr]) -> None:
    if isinstance(expr, And):
        _conjuncts(expr.a, out)
        _conjuncts(expr.b, out)
    else:
        out.append(expr)


def predicate_matches_bindings(
    predicate: PrimExpr, bindings: Sequence[PrimExpr], extents: Mapping[Var, int]
) -> bool:
    """Whether each conjunct of a block's predicate that uses the ``extents`` loops only
    bounds one of the bindings (``binding_expr < n`` as ``split`` leaves it): TVM's
    ``DetectIterMap`` absorbs such bounds, and refuses a predicate bounding a sum of
    pieces that no binding is made of (``i * 128 + j < 100`` under ``vi = i``, ``vj = j``)."""
    sums = [found for b in bindings if (found := detect(b, extents)) is not None]
    parts: list[PrimExpr] = []
    _conjuncts(predicate, parts)
    for part in parts:
        if not any(depends_on(part, var) for var in extents):
            continue
        if not isinstance(part, (LT, LE, GE, GT)):
            return False
        matched = False
        for side, other in ((part.a, part.b), (part.b, part.a)):
            if any(depends_on(other, var) for var in extents):
                continue
            found = detect(drop_outer_terms(side, extents), extents)
            if found is not None and any(same_digits(found, s) for s in sums):
                matched = True
        if not matched:
            return False
    return True
