"""Legality of the cache primitives: which buffer an index names, a single producer,
consumers reading only what the producer wrote before them, copies staying inside the buffer
where the accesses they stand for are guarded, stores at the iter vars."""

from __future__ import annotations

from collections.abc import Sequence

from irbuilder.ir import (
    GE,
    LE,
    Block,
    BlockRealize,
    Buffer,
    BufferLoad,
    BufferRegion,
    BufferStore,
    Call,
    For,
    IfThenElse,
    IntImm,
    IterKind,
    PrimExpr,
    const,
    post_order_visit,
    structural_equal,
)
from irbuilder.ir.expr_text import expr_text
from lowering.arith import Analyzer, simplify_expr

from .analysis import (
    access_regions,
    block_access,
    mentions_any,
)
from .cache_placement import split_point
from .cache_region import region_at, region_covers
from .cache_stage import cast_to
from .error import fail
from .state import ScheduleState

__all__ = [
    "buffer_at",
    "check_in_bounds",
    "check_init_covers_reads",
    "check_reads_after",
    "check_single_writer",
    "stores_at",
]


def buffer_at(
    state: ScheduleState,
    prim: str,
    regions: Sequence[BufferRegion],
    position: int | str | Buffer,
    what: str,
    block: Block,
) -> Buffer:
    """The buffer ``position`` names among ``regions``: an index, a buffer name, or the
    buffer itself (TVM v0.16 accepts all three)."""
    if isinstance(position, (str, Buffer)):
        found = [
            r.buffer
            for r in regions
            if (r.buffer.name == position if isinstance(position, str) else r.buffer is position)
        ]
        label = position if isinstance(position, str) else position.name
        if not found:
            raise fail(state, prim, f"block {block.name_hint!r} {what} no buffer {label!r}", block)
        if any(b is not found[0] for b in found):
            raise fail(
                state, prim, f"block {block.name_hint!r} {what} several buffers {label!r}", block
            )
        return found[0]
    if not 0 <= position < len(regions):
        raise fail(
            state,
            prim,
            f"block {block.name_hint!r} {what} {len(regions)} buffer(s); "
            f"index {position} is out of range",
            block,
        )
    return regions[position].buffer


def check_single_writer(
    state: ScheduleState, prim: str, scope_block: Block, buffer: Buffer
) -> Block | None:
    """TVM requires at most one block of the scope to write the cached buffer."""
    writers = [
        b
        for b in state.index.child_blocks(scope_block)
        if any(w is buffer for w in block_access(b).write_buffers)
    ]
    if len(writers) > 1:
        raise fail(
            state,
            prim,
            f"{buffer.name!r} is written by {len(writers)} blocks of the scope; "
            "a cache needs a single producer",
            *writers,
        )
    return writers[0] if writers else None


def check_reads_after(
    state: ScheduleState, prim: str, source: Block, buffer: Buffer, reader: Block
) -> None:
    """``reader`` runs after ``source`` in every iteration they share and reads only what
    ``source`` wrote there (regions taken over the loops below their common statement)."""
    try:
        holder, src_item, reader_item = split_point(state, source, reader)
    except ValueError:
        holder, src_item, reader_item = source, 0, -1
    if reader_item <= src_item:
        raise fail(
            state,
            prim,
            f"block {reader.name_hint!r} does not run after {source.name_hint!r}, which "
            f"produces the {buffer.name!r} it reads",
            reader,
        )
    written = region_at(state, source, block_access(source).writes, buffer, holder)
    read = region_at(state, reader, access_regions(reader, buffer), buffer, holder)
    if not region_covers(written, read):
        raise fail(
            state,
            prim,
            f"block {reader.name_hint!r} may read {buffer.name!r} outside what "
            f"{source.name_hint!r} produces before it",
            reader,
        )


def check_in_bounds(state: ScheduleState, name: str, region: BufferRegion, block: Block) -> None:
    """Refuse a copy of ``region`` placed among ``block``'s ancestors unless it stays inside
    the buffer for every value of the loop and block variables around it: the accesses it
    stands for may be guarded (a ``T.where``, an ``if``) where the copy would not be."""
    index = state.index
    if not _guarded(state, block):
        return  # every instance runs: the region is what the program itself accesses
    analyzer = Analyzer()
    for node in index.ancestors(index.realize_of(block)):  # loops and enclosing blocks
        if isinstance(node, For):
            analyzer.bind_range(node.loop_var, node.min, node.extent)
        elif isinstance(node, Block):
            for iv in node.iter_vars:
                analyzer.bind_range(iv.var, iv.dom.min, iv.dom.extent)
    buffer = region.buffer
    for axis, (rng, dim) in enumerate(zip(region.region, buffer.shape)):
        end = rng.min + rng.extent
        if not (analyzer.can_prove(GE(rng.min, const(0, rng.min.dtype)))
                and analyzer.can_prove(LE(end, cast_to(dim, end.dtype)))):
            raise fail(
                state,
                name,
                f"the region of {buffer.name!r} to copy, [{expr_text(rng.min)}, "
                f"{expr_text(simplify_expr(end))}) on axis {axis}, may fall outside the buffer "
                f"(extent {expr_text(dim)}) where the accesses it stands for are "
                "guarded; the copy would read or write out of bounds",
                block,
            )


def _guarded(state: ScheduleState, block: Block) -> bool:
    """Whether some instance of ``block``, or an access in it, may be skipped: a predicate
    (``T.where``) on it, on a block around it or on a block inside it (an opaque block
    holding guarded blocks, as loop_partition's), an ``if`` around or inside it, or a
    ``T.if_then_else`` inside it (a padding block's load runs only in bounds)."""
    index = state.index
    realize = index.realize_of(block)
    found: list[bool] = []

    def conditional(node: object) -> None:
        if isinstance(node, IfThenElse) or (
            isinstance(node, Call) and node.op == "if_then_else"
        ):
            found.append(True)
        elif isinstance(node, BlockRealize) and not (
            isinstance(node.predicate, IntImm) and node.predicate.value == 1
        ):
            found.append(True)

    post_order_visit(block.body, conditional)
    if block.init is not None:
        post_order_visit(block.init, conditional)
    nodes = [realize, *index.ancestors(realize)]
    for node in nodes:
        if isinstance(node, IfThenElse):
            found.append(True)
        elif isinstance(node, BlockRealize) and not (
            isinstance(node.predicate, IntImm) and node.predicate.value == 1
        ):
            found.append(True)
    return bool(found)


def stores_at(block: Block, buffer: Buffer, point: Sequence[PrimExpr]) -> bool:
    """Every store of ``buffer`` in the block is at the indices ``point``."""
    ok = True

    def visit(node: object) -> None:
        nonlocal ok
        if isinstance(node, BufferStore) and node.buffer is buffer:
            if len(node.indices) != len(point) or not all(
                structural_equal(a, b) for a, b in zip(node.indices, point)
            ):
                ok = False

    post_order_visit(block.body, visit)
    if block.init is not None:
        post_order_visit(block.init, visit)
    return ok


def check_init_covers_reads(state: ScheduleState, prim: str, block: Block, buffer: Buffer) -> None:
    """A block reading what it writes, with an init, starts each element it accumulates from
    its init only when the element's indices use no reduction iter var (TVM's reduction
    block). ``B[vk] = B[vk] + A[vi, vk]`` with ``vk`` a reduction iter var runs its init at
    ``vk == 0`` only: the other elements accumulate onto the buffer's old values, which a
    fresh buffer (a cache, a reindex copy) does not hold."""
    loads: list[BufferLoad] = []
    post_order_visit(
        block.body,
        lambda n: loads.append(n) if isinstance(n, BufferLoad) and n.buffer is buffer else None,
    )
    if not loads:
        return
    reduce_ids = {id(iv.var) for iv in block.iter_vars if iv.kind != IterKind.SPATIAL}
    for region in access_regions(block, buffer):
        for rng in region.region:
            if mentions_any(rng.min, reduce_ids) or mentions_any(rng.extent, reduce_ids):
                raise fail(
                    state,
                    prim,
                    f"block {block.name_hint!r} reads {buffer.name!r} at indices using a "
                    "reduction iter var: its init does not start every element it reads, "
                    "which keep the buffer's earlier values; the new buffer would start "
                    "uninitialized",
                    block,
                )
