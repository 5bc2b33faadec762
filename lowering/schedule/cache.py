"""cache_read: the blocks reading a buffer read a cache copied in before them.

A cache stage is a new block ``<buffer>_<scope>`` under fresh loops ``ax0, ax1, ...`` that
copies the region the consumers read (cache_read) or the block writes (cache_write,
:mod:`.cache_write`), placed as a statement of the scope block: cache_read right before the
statement holding the first consumer, cache_write right after the statement holding the
writer. The cache buffer has the original's shape and is allocated by the scope block. The
pieces the cache primitives share: :mod:`.cache_stage` (the buffer and the copy nest),
:mod:`.cache_region` (what is copied), :mod:`.cache_placement` (where it goes),
:mod:`.cache_redirect` (the blocks' accesses moved to the cache), :mod:`.cache_checks`
(legality), :mod:`.storage_scope` (scope names, set_scope).

Legality: cache_read refuses when the buffer is written between the copy and a consumer
(including by a consumer itself); cache_write needs the block to write exactly the region it
will copy back (affine bindings, stores at iter vars, no predicate), to initialize what it
reads (an init), and no other block of the same statement to read or write the buffer
before the copy back.
"""

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
)

from .analysis import (
    access_regions,
    block_access,
    union_regions,
)
from .cache_checks import buffer_at, check_in_bounds, check_reads_after, check_single_writer
from .cache_placement import (
    place_stage,
    scope_seq,
    split_point,
)
from .cache_redirect import compactable, redirect_accesses
from .cache_region import clip, region_at
from .cache_stage import copy_stage, make_cache_buffer
from .error import fail
from .state import ScheduleState
from .storage_scope import check_scope

__all__ = ["cache_read"]


def cache_read(
    state: ScheduleState,
    block: Block,
    read_index: int | str | Buffer,
    scope: str,
    consumers: Sequence[Block] | None,
) -> Block:
    name = "cache_read"
    check_scope(state, name, scope, block)
    buffer = buffer_at(state, name, block.reads, read_index, "reads", block)
    index = state.index
    scope_block = index.scope_block(index.realize_of(block))
    writer = check_single_writer(state, name, scope_block, buffer)
    siblings = index.child_blocks(scope_block)
    readers = [b for b in siblings if any(r is buffer for r in block_access(b).read_buffers)]
    # as TVM: ``consumer_blocks`` names exactly the blocks that read the cache
    # (by default, the readers but the producer: a block also writing the buffer)
    chosen = (
        list(consumers)
        if consumers
        else [
            r for r in readers if not any(w is buffer for w in block_access(r).write_buffers)
        ]
    )
    if not chosen:
        chosen = [block]
    for consumer in chosen:
        if not any(b is consumer for b in readers):
            raise fail(
                state, name, f"block {consumer.name_hint!r} does not read {buffer.name!r}", consumer
            )
        if any(w is buffer for w in block_access(consumer).write_buffers):
            raise fail(
                state,
                name,
                f"block {consumer.name_hint!r} writes {buffer.name!r} as well as reading it; "
                "it would read a stale copy",
                consumer,
            )
    if writer is not None and all(_runs_first(state, scope_block, c, writer) for c in chosen):
        writer = None  # consumers that all run before the producer read the scope's input
    if writer is None:
        # an input of the scope: copied whole at the start of the scope
        holder: Stmt = scope_seq(scope_block)
        position = 0
        region = BufferRegion(buffer, tuple(Range(const(0, d.dtype), d) for d in buffer.shape))
        if scope_block is not state.root:
            # under a block: what the consumers read of it there
            reads = [
                region_at(state, c, access_regions(c, buffer), buffer, holder) for c in chosen
            ]
            region = clip(union_regions(reads))
    else:
        # right after the producer, before the first consumer that follows it, in the
        # innermost statement list holding both (TVM's location)
        for consumer in chosen:
            check_reads_after(state, name, writer, buffer, consumer)
        first = min(chosen, key=lambda c: index.order[id(index.realize_of(c))])
        holder, _, position = split_point(state, writer, first)
        region = region_at(state, writer, block_access(writer).writes, buffer, holder)
    for accessor in (*chosen, *([writer] if writer is not None else [])):
        check_in_bounds(state, name, region, accessor)
    compact = compactable(state, scope_block, holder, region, buffer, chosen)
    cache = make_cache_buffer(state, buffer, scope, region if compact else None)
    redirect_accesses(state, [*chosen], buffer, cache, region if compact else None)
    stage = copy_stage(region, buffer, cache, cache.name, "target" if compact else None)
    return place_stage(state, holder, position, stage, scope_block, cache)


def _runs_first(state: ScheduleState, scope: Block, first: Block, then: Block) -> bool:
    """Whether every instance of ``first`` runs before every instance of ``then``: it comes
    earlier in the innermost statement list holding both, and the loops around that list
    (up to the scope) run once."""
    index = state.index
    try:
        holder, then_item, first_item = split_point(state, then, first)
    except ValueError:
        return False
    if first_item >= then_item:
        return False
    for node in index.ancestors(holder):
        if node is scope:
            return True
        if isinstance(node, For) and not (
            isinstance(node.extent, IntImm) and node.extent.value == 1
        ):
            return False
    return True
