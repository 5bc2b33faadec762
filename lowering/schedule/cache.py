"""cache_read and set_scope, and the cache stages cache_write (:mod:`.cache_write`) shares.

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
    GE,
    LE,
    Allocate,
    Block,
    BlockRealize,
    Buffer,
    BufferLoad,
    BufferRegion,
    BufferStore,
    Cast,
    DataType,
    DeclBuffer,
    For,
    ForKind,
    IfThenElse,
    IntImm,
    IterKind,
    IterVar,
    PrimExpr,
    Range,
    SeqStmt,
    Stmt,
    StmtExprMutator,
    Var,
    const,
    make_data_var,
    post_order_visit,
    rebuild,
    seq,
    structural_equal,
)
from irbuilder.ir.expr_text import expr_text
from lowering.analysis.substitute import Substituter
from lowering.arith import Analyzer, simplify_expr

from .analysis import (
    access_regions,
    block_access,
    relax_region,
    union_regions,
    uses_opaquely,
)
from .edit import is_allocated, refresh_regions
from .error import ScheduleError, render_error
from .state import ScheduleState

__all__ = ["cache_read", "set_scope"]


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


def make_cache_buffer(
    state: ScheduleState, buffer: Buffer, scope: str, region: BufferRegion | None = None
) -> Buffer:
    """The cache: the buffer's shape, or ``region``'s extents (a compacted cache)."""
    name = unique_name(state, cache_name(buffer, scope))
    shape = buffer.shape if region is None else tuple(r.extent for r in region.region)
    return Buffer(name, make_data_var(name, buffer.dtype, scope), shape, buffer.dtype, scope=scope)


def _compactable(
    state: ScheduleState,
    scope_block: Block,
    holder: Stmt,
    region: BufferRegion,
    buffer: Buffer,
    users: Sequence[Block],
) -> bool:
    """TVM allocates a cache under a non-root block with the copied region's shape. Done
    when the region is the same in every iteration of the scope's loops around the copy
    (constant extents, a start free of those loops) and the blocks using the cache access
    the buffer only by loads and stores (indices can then be shifted)."""
    if scope_block is state.root:
        return False
    if not all(isinstance(r.extent, IntImm) for r in region.region):
        return False
    loops: dict[int, For] = {}
    for node in state.index.ancestors(holder):
        if node is scope_block:
            break
        if isinstance(node, For):
            loops[id(node.loop_var)] = node
    if any(_mentions(r.min, loops) for r in region.region):
        return False
    return not any(uses_opaquely(user, buffer) for user in users)


class _Shift(StmtExprMutator):
    """Loads and stores of ``old`` read/write ``new`` at the indices minus ``mins``."""

    def __init__(self, old: Buffer, new: Buffer, mins: Sequence[PrimExpr]) -> None:
        self.old, self.new, self.mins = old, new, list(mins)

    def _shift(self, indices: Sequence[PrimExpr]) -> tuple[PrimExpr, ...]:
        return tuple(
            simplify_expr(self.visit_expr(i) - m) if not _is_zero(m) else self.visit_expr(i)
            for i, m in zip(indices, self.mins)
        )

    def visit_buffer_load_(self, load: BufferLoad) -> PrimExpr:
        if load.buffer is self.old:
            return BufferLoad(self.new, self._shift(load.indices))
        return self.generic_mutate(load)

    def visit_buffer_store_(self, store: BufferStore) -> Stmt:
        if store.buffer is self.old:
            value = self.visit_expr(store.value)
            return BufferStore(self.new, value, self._shift(store.indices), span=store.span)
        return self.generic_mutate(store)


def _is_zero(expr: PrimExpr) -> bool:
    return isinstance(expr, IntImm) and expr.value == 0


def _redirect(
    state: ScheduleState,
    blocks: Sequence[Block],
    buffer: Buffer,
    cache: Buffer,
    region: BufferRegion | None,
) -> None:
    """Make ``blocks`` use ``cache`` for ``buffer`` (shifted by ``region``'s start when the
    cache is compacted)."""
    # A use of the data pointer (``T.tvm_access_ptr(..., A.data, offset, ...)``) follows
    # to the cache when both lay elements out alike (same shape, no strides or offset),
    # so that its flat offsets mean the same elements; otherwise it keeps the buffer.
    same_layout = (
        region is None
        and not buffer.strides
        and _is_zero(buffer.elem_offset)
        and not cache.strides
        and _is_zero(cache.elem_offset)
        and len(buffer.shape) == len(cache.shape)
        and all(structural_equal(a, b) for a, b in zip(buffer.shape, cache.shape))
    )
    vmap = {buffer.data: cache.data} if same_layout else {}
    for target in blocks:
        if region is None:
            new = Substituter(vmap=vmap, bmap={buffer: cache}).visit_stmt(target)
        else:
            new = _Shift(buffer, cache, [r.min for r in region.region]).visit_stmt(target)
        assert isinstance(new, Block)
        if not (vmap and uses_opaquely(target, buffer)):
            new = refresh_regions(new)
        # else: an opaque use is inferred as the whole buffer; the block keeps its declared
        # T.reads/T.writes, renamed to the cache, as TVM does (legality never reads them)
        realize = state.index.realize_of(target)
        state.replace(realize, rebuild(realize, {"block": new}), {target: new})


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


def copy_stage(
    region: BufferRegion, source: Buffer, target: Buffer, name: str, compact: str | None = None
) -> Stmt:
    """Loops ``ax*`` over ``region`` around a block copying ``source`` into ``target``.

    ``compact`` names the side ("source" or "target") that is a cache of the region's
    shape: the block's iter vars then run over the region's extents, that side is indexed
    by them and the other by the region's start plus them."""
    if compact is not None:
        return _compact_copy_stage(region, source, target, name, compact)
    loop_vars: list[Var] = []
    iter_vars: list[IterVar] = []
    values: list[PrimExpr] = []
    for k, (rng, dim) in enumerate(zip(region.region, region.buffer.shape)):
        dtype = dim.dtype
        rng = Range(_as_dtype(rng.min, dtype), _as_dtype(rng.extent, dtype))
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
        extent = _as_dtype(rng.extent, loop_var.dtype)
        stmt = For(loop_var, const(0, loop_var.dtype), extent, ForKind.SERIAL, stmt)
    return stmt


def _compact_copy_stage(
    region: BufferRegion, source: Buffer, target: Buffer, name: str, compact: str
) -> Stmt:
    loop_vars: list[Var] = []
    iter_vars: list[IterVar] = []
    full: list[PrimExpr] = []
    for k, (rng, dim) in enumerate(zip(region.region, region.buffer.shape)):
        dtype = dim.dtype
        extent = _as_dtype(rng.extent, dtype)
        loop_vars.append(Var(f"ax{k}", dtype))
        iv = IterVar(Var(f"v{k}", dtype), Range(const(0, dtype), extent), IterKind.SPATIAL)
        iter_vars.append(iv)
        lo = _as_dtype(rng.min, dtype)
        full.append(iv.var if _is_zero(lo) else simplify_expr(lo + iv.var))
    local = tuple(iv.var for iv in iter_vars)
    src_idx, dst_idx = (local, tuple(full)) if compact == "source" else (tuple(full), local)
    store = BufferStore(target, source[src_idx], dst_idx)
    block = refresh_regions(Block(tuple(iter_vars), (), (), name, store))
    stmt: Stmt = BlockRealize(tuple(loop_vars), const(True), block)
    for loop_var, iv in reversed(list(zip(loop_vars, iter_vars))):
        stmt = For(loop_var, const(0, loop_var.dtype), iv.dom.extent, ForKind.SERIAL, stmt)
    return stmt


def _as_dtype(value: PrimExpr, dtype: DataType) -> PrimExpr:
    if value.dtype == dtype:
        return value
    if isinstance(value, IntImm):
        return const(value.value, dtype)
    return Cast(dtype, value)


def _top_level(state: ScheduleState, scope: Block, node: Stmt) -> int:
    """The position, in the scope block's statement list, of the statement holding ``node``."""
    items = _items(scope)
    for k, item in enumerate(items):
        if item is node or state.index.is_ancestor(item, node):
            return k
    raise ValueError("statement not found in its scope")


def _items(scope: Block) -> list[Stmt]:
    body = _scope_seq(scope)
    return list(body.seq) if isinstance(body, SeqStmt) else [body]


def _insert(state: ScheduleState, scope: Block, position: int, stage: Stmt, alloc: Buffer) -> Block:
    """Insert ``stage`` as top-level statement ``position`` of ``scope``, which allocates
    ``alloc``; returns the new scope block."""
    _insert_at(state, _scope_seq(scope), position, stage)
    new_scope = _resolve(state, scope)
    _allocate(state, new_scope, alloc)
    return _resolve(state, new_scope)


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


def _check_single_writer(
    state: ScheduleState, prim: str, scope_block: Block, buffer: Buffer
) -> Block | None:
    """TVM requires at most one block of the scope to write the cached buffer."""
    writers = [
        b
        for b in state.index.child_blocks(scope_block)
        if any(w is buffer for w in block_access(b).write_buffers)
    ]
    if len(writers) > 1:
        raise _fail(
            state,
            prim,
            f"{buffer.name!r} is written by {len(writers)} blocks of the scope; "
            "a cache needs a single producer",
            *writers,
        )
    return writers[0] if writers else None


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
    writer = _check_single_writer(state, name, scope_block, buffer)
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
    if writer is not None and all(_runs_first(state, scope_block, c, writer) for c in chosen):
        writer = None  # consumers that all run before the producer read the scope's input
    if writer is None:
        # an input of the scope: copied whole at the start of the scope
        holder: Stmt = _scope_seq(scope_block)
        position = 0
        region = BufferRegion(buffer, tuple(Range(const(0, d.dtype), d) for d in buffer.shape))
        if scope_block is not state.root:
            # under a block: what the consumers read of it there
            reads = [
                _region_at(state, c, access_regions(c, buffer), buffer, holder) for c in chosen
            ]
            region = clip(union_regions(reads))
    else:
        # right after the producer, before the first consumer that follows it, in the
        # innermost statement list holding both (TVM's location)
        for consumer in chosen:
            _check_reads_after(state, name, writer, buffer, consumer)
        first = min(chosen, key=lambda c: index.order[id(index.realize_of(c))])
        holder, _, position = _split_point(state, writer, first)
        region = _region_at(state, writer, block_access(writer).writes, buffer, holder)
    for accessor in (*chosen, *([writer] if writer is not None else [])):
        check_in_bounds(state, name, region, accessor)
    compact = _compactable(state, scope_block, holder, region, buffer, chosen)
    cache = make_cache_buffer(state, buffer, scope, region if compact else None)
    stage_name = cache.name
    _redirect(state, [*chosen], buffer, cache, region if compact else None)
    holder_now = state.resolve(holder)
    assert holder_now is not None
    stage = copy_stage(region, buffer, cache, stage_name, "target" if compact else None)
    _insert_at(state, holder_now, position, stage)
    _allocate(state, _resolve(state, scope_block), cache)
    return _find_stage(state, stage_name)


def _runs_first(state: ScheduleState, scope: Block, first: Block, then: Block) -> bool:
    """Whether every instance of ``first`` runs before every instance of ``then``: it comes
    earlier in the innermost statement list holding both, and the loops around that list
    (up to the scope) run once."""
    index = state.index
    try:
        holder, then_item, first_item = _split_point(state, then, first)
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


def _scope_seq(scope: Block) -> Stmt:
    """The scope block's statement list, below buffer declarations and allocations."""
    body = scope.body
    while isinstance(body, (Allocate, DeclBuffer)):
        body = body.body
    return body


def _insert_at(state: ScheduleState, holder: Stmt, position: int, stage: Stmt) -> None:
    """Insert ``stage`` as item ``position`` of ``holder`` (a SeqStmt or a single statement)."""
    items = list(holder.seq) if isinstance(holder, SeqStmt) else [holder]
    items.insert(position, stage)
    state.replace(holder, seq(items))


def _allocate(state: ScheduleState, scope: Block, buffer: Buffer) -> None:
    new_scope = rebuild(scope, {"alloc_buffers": (*scope.alloc_buffers, buffer)})
    realize = state.index.realize_of(scope)
    state.replace(realize, rebuild(realize, {"block": new_scope}), {scope: new_scope})


def _split_point(state: ScheduleState, before: Block, after: Block) -> tuple[Stmt, int, int]:
    """The innermost SeqStmt holding both blocks, and the positions of the items holding
    each (callers check their order)."""
    index = state.index
    lower = index.realize_of(after)
    upper = index.realize_of(before)
    child: Stmt = lower
    for node in index.ancestors(lower):
        if node is upper or index.is_ancestor(node, upper):
            if not isinstance(node, SeqStmt):
                raise ValueError("no statement list holds both blocks")
            items = list(node.seq)
            up = next(
                k for k, it in enumerate(items) if it is upper or index.is_ancestor(it, upper)
            )
            low = next(k for k, it in enumerate(items) if it is child)
            return node, up, low
        child = node
    raise ValueError("blocks are not in one scope")


def _loops_between(state: ScheduleState, block: Block, holder: Stmt) -> list[For]:
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


def _region_at(
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
    loops = {lp.loop_var: Range(lp.min, lp.extent) for lp in _loops_between(state, block, holder)}
    found = [clip(relax_region(r, binding, loops)) for r in regions if r.buffer is buffer]
    return clip(union_regions(found))


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
                and analyzer.can_prove(LE(end, _as_dtype(dim, end.dtype)))):
            raise _fail(
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
    (``T.where``) on it or on a block around it, or an ``if`` around or inside it."""
    index = state.index
    realize = index.realize_of(block)
    found: list[bool] = []
    post_order_visit(
        block.body, lambda n: found.append(True) if isinstance(n, IfThenElse) else None
    )
    nodes = [realize, *index.ancestors(realize)]
    for node in nodes:
        if isinstance(node, IfThenElse):
            found.append(True)
        elif isinstance(node, BlockRealize) and not (
            isinstance(node.predicate, IntImm) and node.predicate.value == 1
        ):
            found.append(True)
    return bool(found)


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


def _check_reads_after(
    state: ScheduleState, prim: str, source: Block, buffer: Buffer, reader: Block
) -> None:
    """``reader`` runs after ``source`` in every iteration they share and reads only what
    ``source`` wrote there (regions taken over the loops below their common statement)."""
    try:
        holder, src_item, reader_item = _split_point(state, source, reader)
    except ValueError:
        holder, src_item, reader_item = source, 0, -1
    if reader_item <= src_item:
        raise _fail(
            state,
            prim,
            f"block {reader.name_hint!r} does not run after {source.name_hint!r}, which "
            f"produces the {buffer.name!r} it reads",
            reader,
        )
    written = _region_at(state, source, block_access(source).writes, buffer, holder)
    read = _region_at(state, reader, access_regions(reader, buffer), buffer, holder)
    if not region_covers(written, read):
        raise _fail(
            state,
            prim,
            f"block {reader.name_hint!r} may read {buffer.name!r} outside what "
            f"{source.name_hint!r} produces before it",
            reader,
        )


def _resolve(state: ScheduleState, node: Block) -> Block:
    found = state.resolve(node)
    assert isinstance(found, Block)
    return found


def _stores_at(block: Block, buffer: Buffer, point: Sequence[PrimExpr]) -> bool:
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

def _mentions(expr: PrimExpr, ids: dict[int, For]) -> bool:
    found = False

    def visit(node: object) -> None:
        nonlocal found
        if isinstance(node, Var) and id(node) in ids:
            found = True

    post_order_visit(expr, visit)
    return found


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
