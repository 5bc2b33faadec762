"""Iterations told apart by the digits of a fused loop variable, across dimensions.

A fused-then-split loop nest (``sch.fuse(i, jo)`` with ``jo`` from a split of ``j`` by 5)
indexes ``B[f // 10, f % 10 * 5 + j1]`` with ``0 <= j1 < 5``. No dimension alone is injective in
``f``, and the flattened offset ``f // 10 * 48 + f % 10 * 5 + j1`` is not either without the
block's predicate. But equal elements need equal indices in every dimension: the first
dimension pins the digit ``f // 10``, the second the digit ``f % 10`` (its other terms move it
by less than 5), and those two digits determine ``f``.

The rule: write a dimension's index in iteration ``p`` as ``sum(s_k * D_k(p)) + R``, with each
``D_k`` a digit ``p // a % b`` (``p % b``, ``p // a`` and ``p`` itself are digits too) and ``R``
free of ``p``. Sorted by ``|s_k|``, if each ``|s_k|`` exceeds what the later digits and the
difference of ``R`` between the two accesses can add up to, equal indices mean equal digits
(at the first digit that differs, its term outweighs everything after it); when the rests
differ by multiples of a step larger than all digit terms together (``P[x + 2 * l]``,
``0 <= x < 2``), the digit terms must be equal on both sides (no slack). A set of pinned
digits determines ``p`` when, starting from 1, a digit ``p // a % b`` with ``a`` equal to the
covered modulus extends it to ``a * b`` until the modulus reaches the loop's extent (two
iterations of one loop that agree modulo its extent or more are the same iteration).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from irbuilder.ir import FloorDiv, FloorMod, IntImm, PrimExpr, Var

from ..arith import Analyzer, LinearForm, from_linear, supports_linear, to_linear
from .race_accesses import mentions

__all__ = ["Digit", "covers", "digit_of", "pinned_digits"]

Digit = tuple[int, int | None]
"""``(a, b)`` for ``p // a % b``; ``b`` None for ``p // a`` (``(1, None)`` is ``p``)."""


def digit_of(atom: PrimExpr, p: Var) -> Digit | None:
    """The digit of ``p`` that ``atom`` is, or None."""
    if atom is p:
        return (1, None)
    if not (isinstance(atom, (FloorDiv, FloorMod)) and isinstance(atom.b, IntImm)):
        return None
    c = atom.b.value
    inner = digit_of(atom.a, p)
    if c <= 0 or inner is None:
        return None
    a, b = inner
    if isinstance(atom, FloorDiv):
        if b is None:
            return (a * c, None)
        # (p // a % b) // c == p // (a*c) % (b // c) when c divides b
        return (a * c, b // c) if b % c == 0 else None
    if b is None or b % c == 0:
        return (a, c)  # (p // a % b) % c == p // a % c when c divides b
    return None


def _split_digits(
    index: PrimExpr, p: Var
) -> tuple[list[tuple[Digit, int, PrimExpr]], PrimExpr] | None:
    """``index`` as ``[(digit, coefficient, atom)], rest``; None if ``p`` appears otherwise."""
    form = to_linear(index)
    rest = LinearForm(form.dtype)
    rest.const = form.const
    digits: list[tuple[Digit, int, PrimExpr]] = []
    for atom, coef in form.live_terms():
        digit = digit_of(atom, p)
        if digit is not None:
            digits.append((digit, coef, atom))
        elif mentions(atom, {p}):
            return None
        else:
            rest.add_term(atom, coef)
    return digits, from_linear(rest)


def pinned_digits(
    analyzer: Analyzer,
    ia: PrimExpr,
    pa: Var,
    ib: PrimExpr,
    pb: Var,
    varies: Callable[[PrimExpr], bool],
) -> set[Digit]:
    """The digits of the iteration variable that ``ia == ib`` forces equal (``ia`` indexes in
    iteration ``pa``, ``ib`` in ``pb``; same digits, same coefficients on both sides)."""
    if ia.dtype != ib.dtype or not supports_linear(ia.dtype) or varies(ia) or varies(ib):
        return set()
    split_a, split_b = _split_digits(ia, pa), _split_digits(ib, pb)
    if split_a is None or split_b is None:
        return set()
    (digits_a, rest_a), (digits_b, rest_b) = split_a, split_b
    shape_a = sorted(((d[0], d[1] or 0), c) for d, c, _ in digits_a)
    shape_b = sorted(((d[0], d[1] or 0), c) for d, c, _ in digits_b)
    if not digits_a or shape_a != shape_b or len({d for d, _ in shape_a}) != len(shape_a):
        return set()
    spans: list[tuple[int, int, Digit]] = []
    for digit, coef, atom in digits_a:
        bound = analyzer.const_int_bound(atom)
        span = bound.hi - bound.lo
        if digit[1] is not None:
            span = min(span, digit[1] - 1)
        spans.append((abs(coef), span, digit))
    spans.sort(key=lambda item: -item[0])
    if _multiple_of(rest_a, rest_b) > sum(s * span for s, span, _ in spans):
        slack = 0  # the digits' part of the index is its value modulo the rests' step
    else:
        rest = analyzer.compare(rest_a, rest_b)
        if rest is None:
            return set()
        slack = max(-rest.lo, rest.hi)
    pinned: set[Digit] = set()
    for k, (stride, _, digit) in enumerate(spans):
        below = slack + sum(s * span for s, span, _ in spans[k + 1 :])
        if stride <= below:
            break
        pinned.add(digit)
    return pinned


def _multiple_of(rest_a: PrimExpr, rest_b: PrimExpr) -> int:
    """A step ``g`` that ``rest_a - rest_b`` is always a multiple of (0: none known).

    ``P[x + 2 * l]`` with ``0 <= x < 2``: the rests ``2 * l_a`` and ``2 * l_b`` differ by a
    multiple of 2, so equal indices have equal ``x`` (the digits' part, below 2, is the
    index modulo 2). Any integer atom counts (its coefficient is what matters)."""
    form = to_linear(rest_a).copy()
    form_b = to_linear(rest_b)
    for atom, coef in form_b.live_terms():
        form.add_term(atom, -coef)
    step = abs(form.const - form_b.const)
    for _, coef in form.live_terms():
        step = math.gcd(step, abs(coef))
    return step


def covers(digits: set[Digit], extent: int) -> bool:
    """Whether the digits determine a loop variable that takes ``extent`` consecutive values."""
    modulus = 1
    while modulus < extent:
        step = [b for a, b in digits if a == modulus]
        if not step:
            return False
        if any(b is None for b in step):
            return True
        modulus *= max(b for b in step if b is not None)
    return True
