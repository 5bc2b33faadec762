"""Whether two iterations of a loop never touch one element of a buffer through two blocks:
on some dimension each iteration's accesses fall within its own stride, or, for a fused loop,
its mixed-radix digits (``p // c``, ``p % m // c``, ``p % c``) each separate on a dimension of
their own."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise
from typing import Any

from irbuilder.ir import (
    Block,
    BufferRegion,
    ExprMutator,
    FloorDiv,
    FloorMod,
    For,
    IntImm,
    PrimExpr,
    Range,
    Var,
    post_order_visit,
)
from lowering.analysis.vars import depends_on

from .analysis import (
    access_regions,
    relax_region,
)
from .state import ScheduleState

__all__ = ["separated"]


def separated(state: ScheduleState, loop: For, first: Block, second: Block, buffer: Any) -> bool:
    """Whether two iterations of ``loop`` never touch one element of ``buffer`` through
    ``first`` and ``second``: on some dimension every access of either, widened over the
    loops inside ``loop``, is ``stride * p + common + a`` wide ``e`` with all the windows
    ``[a, a + e)`` inside one stride (``p`` the loop's var)."""
    if isinstance(loop.extent, IntImm) and loop.extent.value == 1:
        return True
    index = state.index
    regions: list[BufferRegion] = []
    for block in (first, second):
        realize = index.realize_of(block)
        binding = {iv.var: v for iv, v in zip(block.iter_vars, realize.iter_values)}
        inner = {
            lp.loop_var: Range(lp.min, lp.extent)
            for lp in index.loops_above(block)
            if index.is_ancestor(loop, lp)
        }
        accesses = access_regions(block, buffer) + access_regions(block, buffer, writes=True)
        regions.extend(relax_region(r, binding, inner) for r in accesses)
    if not regions:
        return True
    var = loop.loop_var
    for dim in range(len(buffer.shape)):
        if _dimension_separates([r.region[dim] for r in regions], var):
            return True
    return _digits_separate(regions, loop)


def _digits_separate(regions: Sequence[BufferRegion], loop: For) -> bool:
    """A fused loop ``p`` over ``[0, e)`` seen through its mixed-radix digits (``fuse`` of
    loops with extents ``e1, e2, e3`` reads ``p // (e2 * e3)``, ``p % (e2 * e3) // e3`` and
    ``p % e3``; the place values are the divisors and moduli the accesses use): two iterations
    differ in one digit at least, so they touch distinct elements when each digit separates
    on a dimension that no other digit enters (``fuse(f_o, y)`` of a conv2d tile: channel
    block and row; a MetaSchedule tile fusing three outer loops)."""
    var = loop.loop_var
    if not (isinstance(loop.min, IntImm) and loop.min.value == 0):
        return False
    if not isinstance(loop.extent, IntImm):
        return False
    total = loop.extent.value
    constants: set[int] = set()

    def visit(node: object) -> None:
        if isinstance(node, (FloorDiv, FloorMod)) and depends_on(node.a, var):
            if isinstance(node.b, IntImm) and 1 < node.b.value < total:
                constants.add(node.b.value)

    for region in regions:
        for rng in region.region:
            post_order_visit(rng.min, visit)
    places = sorted({1} | constants)
    bounds = [*places[1:], total]
    if any(high % low for low, high in zip(places, bounds)):
        return False
    digits = [Var(f"{var.name}_d{k}", var.dtype) for k in range(len(places))]
    radix = _Radix(var, places, [b // p for p, b in zip(places, bounds)], digits)
    dims: list[list[Range]] = []
    for d in range(len(regions[0].region)):
        ranges = []
        for r in regions:
            low = radix.visit_expr(r.region[d].min)
            if radix.failed or depends_on(low, var):
                return False
            ranges.append(Range(low, r.region[d].extent))
        dims.append(ranges)
    sizes = [b // p for p, b in zip(places, bounds)]
    separated_digits: set[int] = set()
    for ranges in dims:
        separated_digits |= _radix_dimension(ranges, digits, sizes)
    return all(k in separated_digits for k in range(len(digits)) if sizes[k] > 1)


def _radix_dimension(
    ranges: Sequence[Range], digits: Sequence[Var], sizes: Sequence[int]
) -> set[int]:
    """The digits a dimension separates: every access's start is ``sum c_k * d_k + common + a``
    with the same coefficients, all windows ``[a, a + e)`` within the smallest coefficient and
    each coefficient at least the next smaller one times its digit's size (a mixed radix),
    so two iterations differing in one of those digits touch disjoint windows."""
    from lowering.arith import to_linear

    digit_ids = {id(d): k for k, d in enumerate(digits)}
    coefs: dict[int, int] | None = None
    base: PrimExpr | None = None
    lows: list[int] = []
    highs: list[int] = []
    for rng in ranges:
        if not isinstance(rng.extent, IntImm) or not rng.min.dtype.is_int:
            return set()
        found: dict[int, int] = {}
        for atom, coef in to_linear(rng.min).live_terms():
            k = digit_ids.get(id(atom))
            if k is not None:
                if coef <= 0:
                    return set()
                found[k] = coef
            elif any(depends_on(atom, d) for d in digits):
                return set()
        if coefs is None:
            coefs, base = found, rng.min
        elif found != coefs:
            return set()
        assert base is not None
        diff = to_linear(rng.min - base)
        if diff.live_terms():
            return set()
        lows.append(diff.const)
        highs.append(diff.const + rng.extent.value)
    if not coefs:
        return set()
    order = sorted(coefs, key=lambda k: coefs[k])
    if max(highs) - min(lows) > coefs[order[0]]:
        return set()
    for low, high in pairwise(order):
        if coefs[high] < coefs[low] * sizes[low]:
            return set()
    return set(coefs)


class _Radix(ExprMutator):
    """``p``, ``p // c``, ``p % c`` (and their nestings) at the place values ``places``
    rewritten as sums of the digit vars ``digits`` (digit ``k`` counts ``places[k]`` and
    ranges over ``[0, sizes[k])``); ``failed`` when ``p`` occurs in another form."""

    def __init__(self, var: Var, places: list[int], sizes: list[int], digits: list[Var]):
        self.var, self.places, self.sizes, self.digits = var, places, sizes, digits
        self.failed = False

    def _form(self, node: PrimExpr) -> dict[int, int] | None:
        """The value as {digit: coefficient}, or None when it is not one."""
        if node is self.var:
            return dict(enumerate(self.places))
        if isinstance(node, (FloorDiv, FloorMod)) and isinstance(node.b, IntImm):
            inner = self._form(node.a)
            c = node.b.value
            if inner is None or c <= 0:
                return None
            high = {k: v for k, v in inner.items() if v % c == 0}
            low = {k: v for k, v in inner.items() if v % c != 0}
            if sum(v * (self.sizes[k] - 1) for k, v in low.items()) >= c:
                return None
            if isinstance(node, FloorDiv):
                return {k: v // c for k, v in high.items()}
            return low
        return None

    def _rewrite(self, node: PrimExpr) -> PrimExpr:
        form = self._form(node)
        if form is None:
            self.failed = True
            return node
        terms = [self.digits[k] * v for k, v in sorted(form.items())]
        if not terms:
            return IntImm(self.var.dtype, 0)
        out: PrimExpr = terms[0]
        for t in terms[1:]:
            out = out + t
        return out

    def visit_var_(self, node: Var) -> PrimExpr:
        return self._rewrite(node) if node is self.var else node

    def visit_floor_div_(self, node: FloorDiv) -> PrimExpr:
        if depends_on(node.a, self.var):
            return self._rewrite(node)
        return self.generic_mutate(node)

    def visit_floor_mod_(self, node: FloorMod) -> PrimExpr:
        if depends_on(node.a, self.var):
            return self._rewrite(node)
        return self.generic_mutate(node)


def _dimension_separates(ranges: Sequence[Range], var: Var) -> bool:
    from lowering.arith import to_linear
    from lowering.arith.canonical import linear_coefficient

    stride = None
    base: PrimExpr | None = None
    lows: list[int] = []
    highs: list[int] = []
    for rng in ranges:
        if not isinstance(rng.extent, IntImm) or not rng.min.dtype.is_int:
            return False
        coef = linear_coefficient(rng.min, var)
        if coef is None or coef <= 0 or (stride is not None and coef != stride):
            return False
        stride = coef
        rest = rng.min - var * coef
        if base is None:
            base = rest
        diff = to_linear(rest - base)
        if diff.live_terms():
            return False
        lows.append(diff.const)
        highs.append(diff.const + rng.extent.value)
    assert stride is not None
    return max(highs) - min(lows) <= stride
