"""TVM's stage-pipeline property of a scope: every block reads, of what earlier blocks of the
scope write, only elements they wrote.

TVM refuses ``rfactor`` in a scope without it (a consumer would read elements no producer
computed). Regions are widened over each block's loops in the scope; a read counts as covered
when one earlier writer's widened write region holds it (dimension by dimension: equal, or
constant ranges nested), so a read needing two writers together is not proven covered and
the scope is not taken as a stage pipeline.
"""

from __future__ import annotations

from irbuilder.ir import Block, BufferRegion

from .analysis import block_access
from .cache_region import block_region, region_covers
from .state import ScheduleState

__all__ = ["uncovered_read"]


def uncovered_read(state: ScheduleState, scope: Block) -> tuple[Block, BufferRegion] | None:
    """A block of ``scope`` and a region it reads that no earlier writer is shown to write,
    or None when the scope is a stage pipeline."""
    blocks = state.index.child_blocks(scope)
    writes: dict[int, list[BufferRegion]] = {}
    for block in blocks:
        for read in block_access(block).reads:
            produced = writes.get(id(read.buffer))
            if produced is None:
                continue
            wanted = block_region(state, block, read)
            if not any(region_covers(w, wanted) for w in produced):
                return block, read
        for write in block_access(block).writes:
            writes.setdefault(id(write.buffer), []).append(block_region(state, block, write))
    return None
