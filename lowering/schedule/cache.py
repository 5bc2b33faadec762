"""cache_read, cache_write and set_scope.

A cache stage is a new block ``<buffer>_<scope>`` under fresh loops ``ax0, ax1, ...`` that
copies the region the consumers read (cache_read) or the block writes (cache_write), placed
as a statement of the scope block: cache_read right before the statement holding the first
consumer, cache_write right after the statement holding the writer. The cache buffer has
the original's shape and is allocated by the scope block.

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
    BlockRealize,
    Buffer,
    BufferRegion,
    BufferStore,
    For,
    ForKind,
    IntImm,
    IterKind,
    IterVar,
    PrimExpr,
    Range,
    SeqStmt,
    Stmt,
    Var,
    const,
    make_data_var,
    post_order_visit,
    rebuild,
    seq,
)
from lowering.analysis.substitute import Substituter
from lowering.arith import simplify_expr

from .analysis import (
    access_regions,
    block_access,
    is_affine_block,
    relax_region,
    union_regions,
)
from .edit import is_allocated, refresh_regions
from .error import ScheduleError, render_error
from .state import ScheduleState

__all__ = ["cache_read", "cache_write", "set_scope"]


def _fail(state: ScheduleState, name: str, reason: str, *blocks: Stmt) -> ScheduleError:
    return ScheduleError(name, reason, render_error(state.output(), blocks))


def cache_name(buffer: Buffer, scope: str) -> str:
    return f"{buffer.name}_{scope.replace('.', '_')}"


def unique_name(state: ScheduleState, base: str) -> str:
    """``base``, or ``base_1``, ``base_2``... when a block or buffer already uses it."""
    taken = (
        {n.name_hint for n in state.index.nodes.values() if isinstance(n, Block)}
        | {
            b.name
            for n in state.index.nodes.values()
            if isinstance(n, Block)
            for b in n.alloc_buffers
        }
        | {b.name for b in state.func.buffer_map.values()}
    )
    name, k = base, 0
    while name in taken:
        k += 1
        name = f"{base}_{k}"
    return name


def make_cache_buffer(state: ScheduleState, buffer: Buffer, scope: str) -> Buffer:
    name = unique_name(state, cache_name(buffer, scope))
    return Buffer(
        name, make_data_var(name, buffer.dtype, scope), buffer.shape, buffer.dtype, scope=scope
    )


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


def copy_stage(region: BufferRegion, source: Buffer, target: Buffer, name: str) -> Stmt:
    """Loops ``ax*`` over ``region`` around a block copying ``source`` into ``target``."""
    loop_vars: list[Var] = []
    iter_vars: list[IterVar] = []
    values: list[PrimExpr] = []
    for k, (rng, dim) in enumerate(zip(region.region, region.buffer.shape)):
        dtype = rng.min.dtype
        loop_var = Var(f"ax{k}", dtype)
        loop_vars.append(loop_var)
        iter_vars.append(
            IterVar(Var(f"v{k}", dtype), Range(const(0, dim.dtype), dim), IterKind.SPATIAL)
        )
        is_zero = isinstance(rng.min, IntImm) and rng.min.value == 0
        values.append(loop_var if is_zero else simplify_expr(rng.min + loop_var))
    indices = tuple(iv.var for iv in iter_vars)
    store = BufferStore(target, source[indices], indices)
    block = refresh_regions(Block(tuple(iter_vars), (), (), name, store))
    stmt: Stmt = BlockRealize(tuple(values), const(True), block)
    for loop_var, rng in reversed(list(zip(loop_vars, region.region))):
        stmt = For(loop_var, const(0, loop_var.dtype), rng.extent, ForKind.SERIAL, stmt)
    return stmt


def _top_level(state: ScheduleState, scope: Block, node: Stmt) -> int:
    """The position, in the scope block's statement list, of the statement holding ``node``."""
    items = _items(scope)
    for k, item in enumerate(items):
        if item is node or state.index.is_ancestor(item, node):
            return k
    raise ValueError("statement not found in its scope")


def _items(scope: Block) -> list[Stmt]:
    body = scope.body
    return list(body.seq) if isinstance(body, SeqStmt) else [body]


def _insert(state: ScheduleState, scope: Block, position: int, stage: Stmt, alloc: Buffer) -> Block:
    items = _items(scope)
    items.insert(position, stage)
    new_scope = rebuild(scope, {"body": seq(items), "alloc_buffers": (*scope.alloc_buffers, alloc)})
    realize = state.index.realize_of(scope)
    state.replace(realize, rebuild(realize, {"block": new_scope}), {scope: new_scope})
    return new_scope  # type: ignore[no-any-return]


def _find_stage(state: ScheduleState, name: str) -> Block:
    found = [n for n in state.index.nodes.values() if isinstance(n, Block) and n.name_hint == name]
    assert len(found) == 1, "cache stage names are unique"
    return found[0]


def _buffer_at(
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
            raise _fail(state, prim, f"block {block.name_hint!r} {what} no buffer {label!r}", block)
        if any(b is not found[0] for b in found):
            raise _fail(
                state, prim, f"block {block.name_hint!r} {what} several buffers {label!r}", block
            )
        return found[0]
    if not 0 <= position < len(regions):
        raise _fail(
            state,
            prim,
            f"block {block.name_hint!r} {what} {len(regions)} buffer(s); "
            f"index {position} is out of range",
            block,
        )
    return regions[position].buffer


# TVM's StorageScope ranks: a scope is one of these, or one of the first three followed by a
# ".tag" (e.g. "global.vtcm", "shared.dyn", "local.fragment").
_SCOPE_RANKS = ("global", "shared", "local")
_SCOPE_EXACT = (
    "",
    "warp",
    "wmma.matrix_a",
    "wmma.matrix_b",
    "wmma.accumulator",
    "metal.simdgroup",
)


def check_scope(state: ScheduleState, prim: str, scope: str, block: Block) -> None:
    if scope in _SCOPE_EXACT or scope in _SCOPE_RANKS:
        return
    if any(scope.startswith(rank + ".") for rank in _SCOPE_RANKS):
        return
    raise _fail(state, prim, f"{scope!r} is not a storage scope", block)


def cache_read(
    state: ScheduleState,
    block: Block,
    read_index: int | str | Buffer,
    scope: str,
    consumers: Sequence[Block] | None,
) -> Block:
    name = "cache_read"
    check_scope(state, name, scope, block)
    buffer = _buffer_at(state, name, block.reads, read_index, "reads", block)
    index = state.index
    scope_block = index.scope_block(index.realize_of(block))
    siblings = index.child_blocks(scope_block)
    readers = [b for b in siblings if any(r is buffer for r in block_access(b).read_buffers)]
    chosen = list(consumers) if consumers is not None else readers
    if not any(b is block for b in chosen):
        chosen.append(block)
    for consumer in chosen:
        if not any(b is consumer for b in readers):
            raise _fail(
                state, name, f"block {consumer.name_hint!r} does not read {buffer.name!r}", consumer
            )
        if any(w is buffer for w in block_access(consumer).write_buffers):
            raise _fail(
                state,
                name,
                f"block {consumer.name_hint!r} writes {buffer.name!r} as well as reading it; "
                "it would read a stale copy",
                consumer,
            )
    positions = [_top_level(state, scope_block, index.realize_of(c)) for c in chosen]
    first, last = min(positions), max(positions)
    writers = [b for b in siblings if any(w is buffer for w in block_access(b).write_buffers)]
    writer_positions = [_top_level(state, scope_block, index.realize_of(w)) for w in writers]
    if any(first <= p <= last for p in writer_positions):
        raise _fail(
            state,
            name,
            f"{buffer.name!r} is written between the place of the copy and a consumer "
            "(or in the same loop nest as a consumer); the consumers would read a stale copy",
            *[w for w, p in zip(writers, writer_positions) if first <= p <= last],
        )
    regions = [block_region(state, c, r) for c in chosen for r in access_regions(c, buffer)]
    region = clip(union_regions(regions))
    cache = make_cache_buffer(state, buffer, scope)
    stage_name = cache.name
    sub = Substituter(bmap={buffer: cache})

    for consumer in chosen:
        new = sub.visit_stmt(consumer)
        assert isinstance(new, Block)
        new = refresh_regions(new)
        realize = state.index.realize_of(consumer)
        state.replace(realize, rebuild(realize, {"block": new}), {consumer: new})
    scope_block = _resolve(state, scope_block)
    _insert(state, scope_block, first, copy_stage(region, buffer, cache, stage_name), cache)
    return _find_stage(state, stage_name)


def _resolve(state: ScheduleState, node: Block) -> Block:
    found = state.resolve(node)
    assert isinstance(found, Block)
    return found


def _stores_at_iter_vars(block: Block, buffer: Buffer) -> bool:
    iter_ids = {id(iv.var) for iv in block.iter_vars}
    ok = True

    def visit(node: object) -> None:
        nonlocal ok
        if isinstance(node, BufferStore) and node.buffer is buffer:
            seen: set[int] = set()
            for idx in node.indices:
                if not isinstance(idx, Var) or id(idx) not in iter_ids or id(idx) in seen:
                    ok = False
                seen.add(id(idx))

    post_order_visit(block.body, visit)
    if block.init is not None:
        post_order_visit(block.init, visit)
    return ok


def cache_write(
    state: ScheduleState,
    block: Block,
    write_index: int | str | Buffer,
    scope: str,
    consumers: Sequence[Block] | None,
) -> Block:
    name = "cache_write"
    check_scope(state, name, scope, block)
    buffer = _buffer_at(state, name, block.writes, write_index, "writes", block)
    index = state.index
    realize = index.realize_of(block)
    if not (isinstance(realize.predicate, IntImm) and realize.predicate.value == 1):
        raise _fail(
            state,
            name,
            f"block {block.name_hint!r} has a predicate (T.where): the copied-back region "
            "could hold elements it never writes",
            block,
        )
    if not is_affine_block(index, block) or not _stores_at_iter_vars(block, buffer):
        raise _fail(
            state,
            name,
            f"block {block.name_hint!r} must store {buffer.name!r} at distinct iter vars "
            "with affine bindings, so that the copied-back region is exactly what it writes",
            block,
        )
    reads_self = any(r is buffer for r in block_access(block).read_buffers)
    if reads_self and block.init is None:
        raise _fail(
            state,
            name,
            f"block {block.name_hint!r} reads {buffer.name!r} before writing it; the cache "
            "would start uninitialized",
            block,
        )
    scope_block = index.scope_block(realize)
    position = _top_level(state, scope_block, realize)
    item = _items(scope_block)[position]
    others = [b for b in index.blocks_below(item) if b is not block] if item is not realize else []
    for other in others:
        access = block_access(other)
        if any(b is buffer for b in access.read_buffers + access.write_buffers):
            raise _fail(
                state,
                name,
                f"block {other.name_hint!r} in the same loop nest also accesses "
                f"{buffer.name!r} before the copy back",
                other,
            )
    region = clip(
        union_regions(
            [
                block_region(state, block, r)
                for r in block_access(block).writes
                if r.buffer is buffer
            ]
        )
    )
    readers = list(consumers or [])
    _check_cache_readers(state, scope_block, position, buffer, region, readers)
    cache = make_cache_buffer(state, buffer, scope)
    sub = Substituter(bmap={buffer: cache})
    for target in [block, *readers]:
        new = sub.visit_stmt(target)
        assert isinstance(new, Block)
        new = refresh_regions(new)
        target_realize = state.index.realize_of(target)
        state.replace(target_realize, rebuild(target_realize, {"block": new}), {target: new})
    scope_block = _resolve(state, scope_block)
    _insert(state, scope_block, position + 1, copy_stage(region, cache, buffer, cache.name), cache)
    return _find_stage(state, cache.name)


def _check_cache_readers(
    state: ScheduleState,
    scope: Block,
    position: int,
    buffer: Buffer,
    region: BufferRegion,
    readers: Sequence[Block],
) -> None:
    """``consumer_blocks`` of cache_write may read the cache instead of the buffer: each is
    a later block of the scope reading only the copied region, with no write of the buffer
    between the copy and it (it would not see that write)."""
    from .compute_at import _covers

    name = "cache_write"
    index = state.index
    siblings = index.child_blocks(scope)
    for reader in readers:
        if not any(b is reader for b in siblings):
            raise _fail(state, name, f"block {reader.name_hint!r} is not in the same scope", reader)
        reader_pos = _top_level(state, scope, index.realize_of(reader))
        if reader_pos <= position:
            raise _fail(
                state, name, f"block {reader.name_hint!r} does not run after the writer", reader
            )
        if any(w is buffer for w in block_access(reader).write_buffers):
            raise _fail(
                state, name, f"block {reader.name_hint!r} also writes {buffer.name!r}", reader
            )
        reads = [block_region(state, reader, r) for r in access_regions(reader, buffer)]
        if not reads:
            raise _fail(
                state, name, f"block {reader.name_hint!r} does not read {buffer.name!r}", reader
            )
        if not _covers(region, union_regions(reads)):
            raise _fail(
                state,
                name,
                f"block {reader.name_hint!r} may read {buffer.name!r} outside what the cache holds",
                reader,
            )
        for other in siblings:
            other_pos = _top_level(state, scope, index.realize_of(other))
            writes = any(w is buffer for w in block_access(other).write_buffers)
            if writes and position < other_pos <= reader_pos and other is not reader:
                raise _fail(
                    state,
                    name,
                    f"block {other.name_hint!r} writes {buffer.name!r} between the copy and "
                    f"{reader.name_hint!r}, which would read the cache",
                    other,
                    reader,
                )


def set_scope(
    state: ScheduleState, block: Block, buffer_index: int | str | Buffer, scope: str
) -> None:
    name = "set_scope"
    check_scope(state, name, scope, block)
    buffer = _buffer_at(state, name, block.writes, buffer_index, "writes", block)
    if not is_allocated(state.func, state.index, buffer):
        raise _fail(
            state,
            name,
            f"{buffer.name!r} is a parameter of the function; its scope is the caller's",
            block,
        )
    if buffer.scope == scope:
        return
    bmap = {buffer: _with_scope(buffer, scope)}
    # a view of the buffer (a block's match_buffer of it) lives in the same scope
    for node in state.index.nodes.values():
        if isinstance(node, Block):
            for match in node.match_buffers:
                if match.source.buffer is buffer:
                    bmap[match.buffer] = _with_scope(match.buffer, scope)
    sub = Substituter(bmap=bmap)
    root = state.func.body
    new_root = sub.visit_stmt(root)
    reuse: dict[Stmt, Stmt] = {}
    old_nodes = [n for n in state.index.nodes.values() if isinstance(n, (Block, For))]
    state.set_func(state.func.with_body(new_root))
    new_nodes = [n for n in state.index.nodes.values() if isinstance(n, (Block, For))]
    for old, new_node in zip(old_nodes, new_nodes):
        if old is not new_node:
            reuse[old] = new_node
    state.reuse.update({id(k): v for k, v in reuse.items()})
    state.keep.extend(reuse)


def _with_scope(buffer: Buffer, scope: str) -> Buffer:
    return Buffer(
        buffer.name,
        make_data_var(buffer.name, buffer.dtype, scope),
        buffer.shape,
        buffer.dtype,
        buffer.strides,
        buffer.elem_offset,
        scope,
        buffer.data_alignment,
        buffer.offset_factor,
        buffer.axis_separators,
    )
