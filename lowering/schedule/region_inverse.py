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
from irbuilder.ir.linear_form import LinearForm, from_linear, supports_linear, to_linear
from lowering.analysis.vars import depends_on
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


def _fused_sum(expr: PrimExpr, extents: dict[int, tuple[Var, int]]) -> list[Var] | None:
    """``expr`` as ``v_0 * s_0 + v_1 * s_1 + ...`` of distinct iter vars forming a
    mixed-radix number (the lowest scale 1, each next scale the previous times its var's
    extent), two vars at least; the vars highest digit first."""
    if not isinstance(expr, Add) or not supports_linear(expr.dtype):
        return None
    form = to_linear(expr)
    if form.const != 0:
        return None
    scaled: list[tuple[int, Var]] = []
    for atom, coef in form.live_terms():
        if not (isinstance(atom, Var) and id(atom) in extents and coef > 0):
            return None
        scaled.append((coef, atom))
    scaled.sort(key=lambda t: t[0])
    expected = 1
    for coef, var in scaled:
        if coef != expected or extents[id(var)][1] <= 1:
            return None
        expected *= extents[id(var)][1]
    if len(scaled) < 2 or len({id(v) for _, v in scaled}) != len(scaled):
        return None
    return [v for _, v in reversed(scaled)]


def _split_interval(
    lo: PrimExpr, n: int, parts: list[Var], extents: dict[int, tuple[Var, int]]
) -> dict[int, Range] | None:
    """The box of the parts' values whose mixed-radix number runs over ``[lo, lo + n)``,
    when that set is exactly a box; else None."""
    out: dict[int, Range] = {}
    dtype = lo.dtype
    for k, var in enumerate(parts):
        below = 1
        for other in parts[k + 1 :]:
            below *= extents[id(other)][1]
        if below == 1:
            out[id(var)] = Range(simplify_expr(lo), const(n, dtype))
            return out
        form = to_linear(lo)
        if any(coef % below for _, coef in form.live_terms()):
            return None
        quotient = LinearForm(dtype)
        for atom, coef in form.live_terms():
            quotient.add_term(atom, coef // below)
        quotient.add_const(form.const // below)
        rest = form.const % below
        top = simplify_expr(from_linear(quotient))
        if rest == 0 and n % below == 0:
            # whole rows of the lower digits
            out[id(var)] = Range(top, const(n // below, dtype))
            for other in parts[k + 1 :]:
                out[id(other)] = Range(const(0, dtype), const(extents[id(other)][1], dtype))
            return out
        if rest + n > below:
            return None
        out[id(var)] = Range(top, const(1, dtype))
        lo = const(rest, dtype)
    return None


def digit_iter_ranges(
    block: Block, indices: Sequence[PrimExpr], region: BufferRegion
) -> dict[int, Range] | None:
    """Iter var (by id) -> the range of its instances accessing ``region`` through
    ``indices``, when that set is exactly an interval; else None.

    A sum of iter vars forming one mixed-radix number (``v1 * 8 + v4`` with ``v4 < 8``)
    under a ``//`` or ``%`` stands for one fused var; its interval is split back into the
    box of its parts when exact (whole rows of the lower parts, or within one row)."""
    extents: dict[int, tuple[Var, int]] = {}
    for iv in block.iter_vars:
        lo, ext = iv.dom.min, iv.dom.extent
        if isinstance(lo, IntImm) and lo.value == 0 and isinstance(ext, IntImm):
            extents[id(iv.var)] = (iv.var, ext.value)
    fused: list[tuple[Var, list[Var]]] = []
    rewritten: list[PrimExpr] = []
    for index in indices:
        if isinstance(index, (FloorDiv, FloorMod)):
            parts = _fused_sum(index.a, extents)
            if parts is not None:
                key = [
                    f
                    for f in fused
                    if len(f[1]) == len(parts) and all(a is b for a, b in zip(f[1], parts))
                ]
                if key:
                    virtual = key[0][0]
                else:
                    size = 1
                    for part in parts:
                        size *= extents[id(part)][1]
                    virtual = Var("fused", index.dtype)
                    extents[id(virtual)] = (virtual, size)
                    fused.append((virtual, parts))
                index = type(index)(virtual, index.b)
        rewritten.append(index)
    used = [id(p) for _, parts in fused for p in parts]
    if len(set(used)) != len(used):
        return None
    for index in rewritten:
        # a fused part used on its own as well: its digits are not one number
        if any(depends_on(index, extents[key][0]) for key in used):
            return None
    found = _digit_ranges(rewritten, region, extents)
    if found is None:
        return None
    for virtual, parts in fused:
        rng = found.pop(id(virtual), None)
        if rng is None:
            continue
        if not isinstance(rng.extent, IntImm):
            return None
        split = _split_interval(rng.min, rng.extent.value, parts, extents)
        if split is None:
            return None
        found.update(split)
    return found


def _digit_ranges(
    indices: Sequence[PrimExpr], region: BufferRegion, extents: dict[int, tuple[Var, int]]
) -> dict[int, Range] | None:
    pieces: dict[int, list[tuple[int, int, Range]]] = {}
    for index, rng in zip(indices, region.region):
        if (
            isinstance(index, FloorDiv)
            and isinstance(index.a, Var)
            and id(index.a) in extents
            and isinstance(index.b, IntImm)
            and index.b.value >= extents[id(index.a)][1]
        ):
            # v // c with c past v's extent: always 0
            index = const(0, index.dtype)
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
