"""The region a cache stage copies: a block's accesses widened over the loops between it
and the stage's place, clipped to the buffer; and whether one region holds another."""

from __future__ import annotations

from collections.abc import Sequence

from irbuilder.ir import (
    Block,
    Buffer,
    BufferRegion,
    For,
    IntImm,
    Range,
    Stmt,
    const,
    structural_equal,
)
from lowering.arith import simplify_expr

from .analysis import (
    relax_region,
    union_regions,
)
from .state import ScheduleState

__all__ = ["block_region", "clip", "loops_between", "region_at", "region_covers"]


def block_region(state: ScheduleState, block: Block, region: BufferRegion) -> BufferRegion:
    """``region`` of one block instance widened over all the block's loops in its scope."""
    index = state.index
    realize = index.realize_of(block)
    binding = {iv.var: v for iv, v in zip(block.iter_vars, realize.iter_values)}
    loops = {lp.loop_var: Range(lp.min, lp.extent) for lp in index.loops_above(block)}
    return clip(relax_region(region, binding, loops))


def clip(region: BufferRegion) -> BufferRegion:
    """Constant ranges intersected with the buffer's bounds."""
    ranges: list[Range] = []
    for rng, dim in zip(region.region, region.buffer.shape):
        if (
            isinstance(rng.min, IntImm)
            and isinstance(rng.extent, IntImm)
            and isinstance(dim, IntImm)
        ):
            lo = max(rng.min.value, 0)
            hi = min(rng.min.value + rng.extent.value, dim.value)
            ranges.append(Range(const(lo, rng.min.dtype), const(max(hi - lo, 0), rng.extent.dtype)))
        else:
            ranges.append(rng)
    return BufferRegion(region.buffer, tuple(ranges))


def loops_between(state: ScheduleState, block: Block, holder: Stmt) -> list[For]:
    loops: list[For] = []
    for node in state.index.ancestors(state.index.realize_of(block)):
        if isinstance(node, Block):
            break
        if isinstance(node, For):
            loops.append(node)
        if node is holder:
            # a single statement as holder becomes an item beside the stage: all of it
            break
    return loops


def region_at(
    state: ScheduleState,
    block: Block,
    regions: Sequence[BufferRegion],
    buffer: Buffer,
    holder: Stmt,
) -> BufferRegion:
    """The union of ``block``'s regions of ``buffer`` over all instances below ``holder``
    (the loops above ``holder`` stay symbols)."""
    realize = state.index.realize_of(block)
    binding = {iv.var: v for iv, v in zip(block.iter_vars, realize.iter_values)}
    loops = {lp.loop_var: Range(lp.min, lp.extent) for lp in loops_between(state, block, holder)}
    found = [clip(relax_region(r, binding, loops)) for r in regions if r.buffer is buffer]
    return clip(union_regions(found))


def region_covers(outer: BufferRegion, inner: BufferRegion) -> bool:
    """Whether ``outer`` holds ``inner``: each dimension equal, or constant ranges nested."""
    for a, b in zip(outer.region, inner.region):
        if structural_equal(a.min, b.min) and structural_equal(a.extent, b.extent):
            continue
        shift = simplify_expr(b.min - a.min)
        if not (
            isinstance(shift, IntImm)
            and isinstance(a.extent, IntImm)
            and isinstance(b.extent, IntImm)
        ):
            return False
        if not (0 <= shift.value and shift.value + b.extent.value <= a.extent.value):
            return False
    return True
