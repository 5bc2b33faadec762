"""Whether two iterations of a loop never touch one element of a buffer through two blocks:
on some dimension each iteration's accesses fall within its own stride, or, for a fused loop,
its digits ``p // c`` and ``p % c`` each separate on a dimension of their own."""

from __future__ import annotations

from collections.abc import Sequence
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
    """A fused loop ``p`` over ``[0, e)`` seen through its digits ``p // c`` and ``p % c``
    (which determine ``p``): two iterations differ in one digit at least, so they touch
    distinct elements when each digit separates on a dimension that the other digit does
    not enter (``fuse(f_o, y)`` of a conv2d tile: channel block and row)."""
    var = loop.loop_var
    if not (isinstance(loop.min, IntImm) and loop.min.value == 0):
        return False
    divisors: dict[str, set[int]] = {"div": set(), "mod": set()}

    def visit(node: object) -> None:
        if isinstance(node, (FloorDiv, FloorMod)) and node.a is var:
            if isinstance(node.b, IntImm) and node.b.value > 0:
                divisors["div" if isinstance(node, FloorDiv) else "mod"].add(node.b.value)

    for region in regions:
        for rng in region.region:
            post_order_visit(rng.min, visit)
    common = divisors["div"] & divisors["mod"]
    if len(common) != 1 or len(divisors["div"] | divisors["mod"]) != 1:
        return False
    factor = common.pop()
    high, low = Var(f"{var.name}_hi", var.dtype), Var(f"{var.name}_lo", var.dtype)
    digits = _Digits(var, factor, high, low)
    dims: list[list[Range]] = [
        [Range(digits.visit_expr(r.region[d].min), r.region[d].extent) for r in regions]
        for d in range(len(regions[0].region))
    ]
    if any(depends_on(rng.min, var) for ranges in dims for rng in ranges):
        return False
    for digit, other in ((high, low), (low, high)):
        if not any(
            _dimension_separates(ranges, digit)
            and not any(depends_on(rng.min, other) for rng in ranges)
            for ranges in dims
        ):
            return False
    return True


class _Digits(ExprMutator):
    """``p // c`` and ``p % c`` replaced by the digit vars ``high`` and ``low``."""

    def __init__(self, var: Var, factor: int, high: Var, low: Var) -> None:
        self.var, self.factor, self.high, self.low = var, factor, high, low

    def _digit(self, node: FloorDiv | FloorMod) -> bool:
        return node.a is self.var and isinstance(node.b, IntImm) and node.b.value == self.factor

    def visit_floor_div_(self, node: FloorDiv) -> PrimExpr:
        return self.high if self._digit(node) else self.generic_mutate(node)

    def visit_floor_mod_(self, node: FloorMod) -> PrimExpr:
        return self.low if self._digit(node) else self.generic_mutate(node)


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
