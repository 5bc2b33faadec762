"""cache_inplace(block, read_buffer_index, storage_scope): a block that reads and writes a
buffer (an in-place operation) works on a cache: copied in right before each instance of the
block, copied back right after it.

Always legal when accepted: the copies cover, per instance, every element the block reads or
writes of the buffer (an opaque use, ``A.data`` passed to a call, covers the whole buffer),
so the block sees the values it saw, and an element it leaves alone goes back unchanged.
Refused when the block uses the buffer through its data pointer and the cache would lay
elements out differently (a strided buffer): the pointer could not follow to the cache.
"""

from __future__ import annotations

from irbuilder.ir import Block, Buffer, IntImm, SeqStmt, Stmt

from .analysis import block_access, relax_region, union_regions, uses_opaquely
from .cache_checks import buffer_at
from .cache_placement import allocate_buffer, find_stage, insert_at, resolve_block
from .cache_redirect import redirect_accesses
from .cache_region import clip
from .cache_stage import copy_stage, is_zero, make_cache_buffer, unique_name
from .error import fail
from .state import ScheduleState
from .storage_scope import check_scope

__all__ = ["cache_inplace"]


def _true(expr: object) -> bool:
    return isinstance(expr, IntImm) and expr.value == 1


def _dense(buffer: Buffer) -> bool:
    return not buffer.strides and is_zero(buffer.elem_offset)


def _insert_beside(state: ScheduleState, block: Block, after: int, stage: Stmt) -> None:
    """Put ``stage`` right before (``after`` 0) or right after (1) the block's realize, in
    the statement list holding it (made when it stands alone)."""
    realize = state.index.realize_of(resolve_block(state, block))
    holder = state.index.parent[id(realize)]
    if isinstance(holder, SeqStmt):
        position = next(k for k, s in enumerate(holder.seq) if s is realize)
        insert_at(state, holder, position + after, stage)
    else:
        insert_at(state, realize, after, stage)


def cache_inplace(
    state: ScheduleState, block: Block, read_index: int | str | Buffer, scope: str
) -> list[Block]:
    name = "cache_inplace"
    check_scope(state, name, scope, block)
    buffer = buffer_at(state, name, block.reads, read_index, "reads", block)
    access = block_access(block)
    if not any(w is buffer for w in access.write_buffers):
        raise fail(
            state,
            name,
            f"block {block.name_hint!r} reads {buffer.name!r} but does not write it; "
            "cache_inplace is for a block doing both",
            block,
        )
    if uses_opaquely(block, buffer) and not _dense(buffer):
        raise fail(
            state,
            name,
            f"block {block.name_hint!r} uses {buffer.name!r} by its data pointer and the "
            "buffer has strides or an offset; the pointer cannot follow to a dense cache",
            block,
        )
    index = state.index
    realize = index.realize_of(block)
    if realize.predicate is not None and not _true(realize.predicate):
        # the copies would run where the block does not: outside the buffer, maybe
        raise fail(state, name, f"block {block.name_hint!r} has a predicate (T.where)", block)
    binding = {iv.var: v for iv, v in zip(block.iter_vars, realize.iter_values)}
    # one instance's elements, in the loops' terms (the copies run beside each instance)
    regions = [
        clip(relax_region(r, binding, {}))
        for r in (*access.reads, *access.writes)
        if r.buffer is buffer
    ]
    region = clip(union_regions(regions))
    scope_block = index.scope_block(realize)
    cache = make_cache_buffer(state, buffer, scope, None)
    read_name = unique_name(state, cache.name)
    redirect_accesses(state, [block], buffer, cache, None)
    new_block = resolve_block(state, block)
    _insert_beside(state, new_block, 0, copy_stage(region, buffer, cache, read_name))
    copy_in = find_stage(state, read_name)
    write_name = unique_name(state, cache.name)
    _insert_beside(state, new_block, 1, copy_stage(region, cache, buffer, write_name))
    copy_out = find_stage(state, write_name)
    allocate_buffer(state, resolve_block(state, scope_block), cache)
    return [resolve_block(state, copy_in), resolve_block(state, copy_out)]
