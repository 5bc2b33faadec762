"""The iter-var ranges whose instances access exactly a box of a buffer, for compute_at
and reverse_compute_at when the moved block's indices are digits of its iter vars.

Each index of the access must be a constant (the box must then be that point) or one
digit of one iter var: the var itself, ``v // c``,
``v % c`` or ``v % c // d`` (TVM's affine case, e.g. ``temp[v // 16, v % 16]``), the
digits of each var tiling it as a mixed-radix number and each index used once. The
instances reaching a box are then those whose digits lie in the box's ranges; they form
one interval of the var exactly when the digits below the highest ranging one span their
whole extent, the only case accepted (so the block runs exactly the instances the loop
iteration needs, no more). Anything else returns None and the primitive refuses.
"""

from __future__ import annotations

from collections.abc import Sequence

from irbuilder.ir import (
    Add,
    Block,
    BufferRegion,
    FloorDiv,
    FloorMod,
    IntImm,
    Mul,
    PrimExpr,
    Range,
    Var,
    const,
)
from lowering.arith import simplify_expr

__all__ = ["digit_iter_ranges"]


def _digit(expr: PrimExpr, extents: dict[int, tuple[Var, int]]) -> tuple[Var, int, int] | None:
    """``expr`` as ``(var, lower, extent)``: the digit ``(var // lower) % extent``."""
    if isinstance(expr, Var):
        found = extents.get(id(expr))
        return None if found is None else (found[0], 1, found[1])
    if isinstance(expr, (FloorDiv, FloorMod)) and isinstance(expr.b, IntImm):
        c = expr.b.value
        inner = _digit(expr.a, extents)
        if inner is None or c <= 0:
            return None
        var, lower, extent = inner
        if isinstance(expr, FloorDiv):
            if c >= extent or (extent % c != 0 and lower * extent != extents[id(var)][1]):
                return None
            return var, lower * c, -(-extent // c)
        if lower != 1 and extent % c != 0:
            return None
        return var, lower, min(c, extent)
    return None


def digit_iter_ranges(
    block: Block, indices: Sequence[PrimExpr], region: BufferRegion
) -> dict[int, Range] | None:
    """Iter var (by id) -> the range of its instances accessing ``region`` through
    ``indices``, when that set is exactly an interval; else None."""
    extents: dict[int, tuple[Var, int]] = {}
    for iv in block.iter_vars:
        lo, ext = iv.dom.min, iv.dom.extent
        if isinstance(lo, IntImm) and lo.value == 0 and isinstance(ext, IntImm):
            extents[id(iv.var)] = (iv.var, ext.value)
    pieces: dict[int, list[tuple[int, int, Range]]] = {}
    for index, rng in zip(indices, region.region):
        if isinstance(index, IntImm):
            # a fixed point of this dimension: what is needed there must be that point
            if not (
                isinstance(rng.min, IntImm)
                and rng.min.value == index.value
                and isinstance(rng.extent, IntImm)
                and rng.extent.value == 1
            ):
                return None
            continue
        found = _digit(index, extents)
        if found is None:
            return None
        var, lower, extent = found
        pieces.setdefault(id(var), []).append((lower, extent, rng))
    out: dict[int, Range] = {}
    for key, digits in pieces.items():
        digits.sort(key=lambda d: d[0])
        expected = 1
        for lower, extent, _ in digits:
            if lower != expected:
                return None
            expected *= extent
        if expected < extents[key][1]:
            return None
        ranging = [
            k
            for k, (_, _, rng) in enumerate(digits)
            if not (isinstance(rng.extent, IntImm) and rng.extent.value == 1)
        ]
        top = ranging[-1] if ranging else 0
        for _lower, extent, rng in digits[:top]:
            if not (
                isinstance(rng.min, IntImm)
                and rng.min.value == 0
                and isinstance(rng.extent, IntImm)
                and rng.extent.value == extent
            ):
                return None
        dtype = extents[key][0].dtype
        low: PrimExpr | None = None
        for lower, _, rng in reversed(digits[top:]):
            term = rng.min if lower == 1 else Mul(rng.min, const(lower, dtype))
            low = term if low is None else Add(low, term)
        assert low is not None
        lower_top, _, rng_top = digits[top]
        size = rng_top.extent if lower_top == 1 else Mul(rng_top.extent, const(lower_top, dtype))
        out[key] = Range(simplify_expr(low), simplify_expr(size))
    return out
