"""cache_write: a block's writes go to a cache buffer copied back right after the statement
holding the writer (the shared stage helpers are listed in :mod:`.cache`).

Legality: the block must write exactly the region it will copy back (affine bindings, stores
at iter vars, a predicate only where it drops instances outside the copied region), read
only what it initialized, and no block may read the buffer between the write and the copy
back, in this iteration or (sharing a loop with the writer) in a later one.
"""

from __future__ import annotations

from collections.abc import Sequence

from irbuilder.ir import (
    LT,
    Allocate,
    And,
    AttrStmt,
    Block,
    Buffer,
    BufferLoad,
    BufferRegion,
    BufferStore,
    DeclBuffer,
    Evaluate,
    For,
    ForKind,
    IfThenElse,
    IntImm,
    LetStmt,
    PrimExpr,
    Range,
    SeqStmt,
    Stmt,
    Var,
    const,
    post_order_visit,
    structural_equal,
)
from lowering.analysis.substitute import substitute_expr
from lowering.arith import simplify_expr, supports_linear, to_linear

from .affine import bindings_affine
from .analysis import (
    access_regions,
    block_access,
    mentions_any,
    uses_opaquely,
    writes_by_pointer,
)
from .cache_checks import (
    buffer_at,
    check_init_covers_reads,
    check_reads_after,
    check_single_writer,
    stores_at,
)
from .cache_placement import (
    place_stage,
    scope_seq,
    split_point,
)
from .cache_redirect import compactable, redirect_accesses
from .cache_region import loops_between, region_at, region_covers
from .cache_stage import copy_stage, make_cache_buffer
from .error import fail
from .state import ScheduleState
from .storage_scope import check_scope

__all__ = ["cache_write"]


def cache_write(
    state: ScheduleState,
    block: Block,
    write_index: int | str | Buffer,
    scope: str,
    consumers: Sequence[Block] | None,
) -> Block:
    name = "cache_write"
    check_scope(state, name, scope, block)
    buffer = buffer_at(state, name, block.writes, write_index, "writes", block)
    index = state.index
    realize = index.realize_of(block)
    reads_self = any(r is buffer for r in block_access(block).read_buffers)
    nested = _nested_writer(state, block, buffer)
    if nested is not None:
        _check_nested_reads(state, block, buffer)
    elif reads_self and block.init is None:
        raise fail(
            state,
            name,
            f"block {block.name_hint!r} reads {buffer.name!r} before writing it; the cache "
            "would start uninitialized",
            block,
        )
    elif block.init is not None:
        check_init_covers_reads(state, name, block, buffer)
    scope_block = index.scope_block(realize)
    check_single_writer(state, name, scope_block, buffer)
    readers = list(consumers or [])
    for reader in readers:
        if not any(b is reader for b in index.child_blocks(scope_block)):
            raise fail(state, name, f"block {reader.name_hint!r} is not in the same scope", reader)
        if any(w is buffer for w in block_access(reader).write_buffers):
            raise fail(
                state, name, f"block {reader.name_hint!r} also writes {buffer.name!r}", reader
            )
        if not access_regions(reader, buffer):
            raise fail(
                state, name, f"block {reader.name_hint!r} does not read {buffer.name!r}", reader
            )
        holder_r, _, _ = split_point(state, block, reader)
        _check_exact_writes(state, block, buffer, holder_r)
        check_reads_after(state, name, block, buffer, reader)
    # the copy back goes right before the first later block reading the buffer itself, in
    # the innermost statement list holding both (TVM's location); at the end of the scope
    # when there is none
    own = index.order[id(realize)]
    related = [
        b
        for b in index.child_blocks(scope_block)
        if b is not block
        and not any(b is r for r in readers)
        and any(r is buffer for r in block_access(b).read_buffers)
        and index.order[id(index.realize_of(b))] > own
    ]
    holder: Stmt
    if related:
        holder, _, position = split_point(state, block, related[0])
    else:
        holder = scope_seq(scope_block)
        position = len(holder.seq) if isinstance(holder, SeqStmt) else 1
    _check_exact_writes(state, block, buffer, holder)
    _check_later_iterations(state, scope_block, block, buffer, holder, readers)
    region = region_at(state, block, block_access(block).writes, buffer, holder)
    compact = compactable(state, scope_block, holder, region, buffer, [block, *readers])
    cache = make_cache_buffer(state, buffer, scope, region if compact else None)
    redirect_accesses(state, [block, *readers], buffer, cache, region if compact else None)
    stage = copy_stage(region, cache, buffer, cache.name, "source" if compact else None)
    return place_stage(state, holder, position, stage, scope_block, cache)


def _check_later_iterations(
    state: ScheduleState,
    scope_block: Block,
    block: Block,
    buffer: Buffer,
    holder: Stmt,
    consumers: Sequence[Block],
) -> None:
    """A block reading the buffer before the writer in a loop they share reads, from the
    next iteration on, what the writer wrote: the copy back must then run inside that loop
    (``holder`` at or below their common statement list)."""
    index = state.index
    for reader in index.child_blocks(scope_block):
        if reader is block or any(reader is c for c in consumers):
            continue
        if not any(r is buffer for r in block_access(reader).read_buffers):
            continue
        try:
            common, writer_item, reader_item = split_point(state, block, reader)
        except ValueError:
            common, writer_item, reader_item = block, 0, 0
        if reader_item > writer_item:
            continue  # after the writer: the copy back is placed before the first such reader
        in_loop = False
        for node in index.ancestors(common):
            if node is scope_block:
                break
            in_loop = in_loop or isinstance(node, For)
        inside = holder is common or index.is_ancestor(common, holder)
        if reader_item == writer_item or (in_loop and not inside):
            raise fail(
                state,
                "cache_write",
                f"block {reader.name_hint!r} reads {buffer.name!r} in a loop shared with "
                f"{block.name_hint!r}, before it: from the next iteration on it would miss "
                "what the cache holds",
                reader,
                block,
            )


def _check_exact_writes(state: ScheduleState, block: Block, buffer: Buffer, holder: Stmt) -> None:
    """The block's instances below ``holder`` write every element of the region they span
    (so a copy of that region from the cache copies only written values): stores at distinct
    iter vars, not under a condition, with bindings that step the loops below ``holder`` as
    one mixed radix per dimension."""
    regions = [r for r in block_access(block).writes if r.buffer is buffer]
    nested = _nested_writer(state, block, buffer)
    tiles: dict[int, For] = {}
    pointer = nested is None and writes_by_pointer(block, buffer)
    if nested is not None or pointer:
        # a block holding blocks: its one nested writer writes, over the loops inside, the
        # whole tile the block writes; the tiles then step the loops below ``holder``. A
        # call given the data pointer writes the region declared for it (TVM's premise).
        if nested is not None:
            _check_exact_writes(state, nested, buffer, block)
            inner = region_at(state, nested, block_access(nested).writes, buffer, block)
            ok = len(regions) == 1 and _same_region(inner, regions[0])
        else:
            ok = len(regions) == 1
        if ok:
            for k, rng in enumerate(regions[0].region):
                if not isinstance(rng.extent, IntImm):
                    ok = False
                    break
                var = Var(f"tile{k}", rng.min.dtype)
                tiles[id(var)] = For(
                    var, const(0, var.dtype), rng.extent, ForKind.SERIAL, Evaluate(const(0))
                )
    else:
        ok = (
            len(regions) == 1
            and stores_at(block, buffer, [r.min for r in regions[0].region])
            and not _conditional_store(block, buffer)
        )
    binding = {
        iv.var: v for iv, v in zip(block.iter_vars, state.index.realize_of(block).iter_values)
    }
    loops = {id(lp.loop_var): lp for lp in loops_between(state, block, holder)}
    loops.update(tiles)
    tile_vars = [lp.loop_var for lp in tiles.values()]
    used: set[int] = set()
    values: list[PrimExpr] = []
    if ok and len(regions) == 1:
        for k, rng in enumerate(regions[0].region):
            if tile_vars:  # the tile's own elements as the lowest digit
                value = substitute_expr(rng.min, binding) + tile_vars[k]
                values.append(value)
                if _radix_steps(value, loops, used) is None:
                    ok = False
                    break
                continue
            if not (isinstance(rng.extent, IntImm) and rng.extent.value == 1):
                ok = False
                break
            value = substitute_expr(rng.min, binding)
            values.append(value)
            steps = _radix_steps(value, loops, used)
            if steps is None:
                ok = False
                break
        if not ok and not tile_vars and all(
            isinstance(r.extent, IntImm) and r.extent.value == 1 for r in regions[0].region
        ):
            # loops fused and split (MetaSchedule's GPU tiling: i = f // 4 * 16 + t // 8)
            # step the element through their digits
            values = [substitute_expr(r.min, binding) for r in regions[0].region]
            ok = _digit_steps(values, loops)
    else:
        ok = False
    if ok and tiles:
        ok = _true(state.index.realize_of(block).predicate)
    elif ok:
        ok = _predicate_keeps_region(state, block, buffer, holder, values)
    if not ok:
        raise fail(
            state,
            "cache_write",
            f"block {block.name_hint!r} must write every element of the {buffer.name!r} region "
            "it spans (stores at one point per instance, affine bindings stepping its loops, "
            "no condition), "
            "so that the copy back writes only what it computed",
            block,
        )


def _true(expr: PrimExpr) -> bool:
    return isinstance(expr, IntImm) and expr.value == 1


def _same_region(a: BufferRegion, b: BufferRegion) -> bool:
    return len(a.region) == len(b.region) and all(
        structural_equal(simplify_expr(x.min), simplify_expr(y.min))
        and structural_equal(simplify_expr(x.extent), simplify_expr(y.extent))
        for x, y in zip(a.region, b.region)
    )


def _direct_uses(state: ScheduleState, block: Block, buffer: Buffer) -> bool:
    """Whether the block's own body (not its nested blocks) loads or stores ``buffer``."""

    def accesses(stmt: Stmt | None) -> set[int]:
        found: set[int] = set()

        def visit(node: object) -> None:
            if isinstance(node, (BufferLoad, BufferStore)) and node.buffer is buffer:
                found.add(id(node))

        if stmt is not None:
            post_order_visit(stmt, visit)
        return found

    nested: set[int] = set()
    for child in state.index.blocks_below(block):
        nested |= accesses(child.body) | accesses(child.init)
    return bool((accesses(block.body) | accesses(block.init)) - nested)


def _nested_writer(state: ScheduleState, block: Block, buffer: Buffer) -> Block | None:
    """For a block holding blocks that write ``buffer``: the one nested block writing it
    (refused when several do, or when the block's own body or a pointer touches it)."""
    children = state.index.blocks_below(block)
    writers = [b for b in children if any(w is buffer for w in block_access(b).write_buffers)]
    if not writers:
        return None
    if len(writers) == 2 and block.init is not None:
        # a blockized reduction (blockize of a reduction's inner loops, TVM's tensorize
        # form): its init holds the block starting the tile, its body the block updating
        # it; the update is the writer, and what it reads the init wrote
        in_init: set[int] = set()
        post_order_visit(block.init, lambda n: in_init.add(id(n)) if isinstance(n, Block) else None)
        starts = [w for w in writers if id(w) in in_init]
        updates = [w for w in writers if id(w) not in in_init]
        if len(starts) == 1 and len(updates) == 1:
            writers = updates
    if len(writers) > 1 or _direct_uses(state, block, buffer) or uses_opaquely(block, buffer):
        raise fail(
            state,
            "cache_write",
            f"block {block.name_hint!r} holds blocks writing {buffer.name!r}; a cache of it "
            "needs exactly one of them writing it, and no other access of it there but loads "
            "of nested blocks",
            block,
        )
    return writers[0]


def _check_nested_reads(state: ScheduleState, block: Block, buffer: Buffer) -> None:
    """Every nested block reading ``buffer`` reads only what an earlier nested block wrote
    in the same instance (the cache holds nothing else)."""
    written: list[BufferRegion] = []
    for child in state.index.blocks_below(block):
        for read in access_regions(child, buffer):
            wanted = region_at(state, child, [read], buffer, block)
            if not any(region_covers(w, wanted) for w in written):
                raise fail(
                    state,
                    "cache_write",
                    f"block {child.name_hint!r} reads {buffer.name!r} where no earlier block "
                    f"inside {block.name_hint!r} wrote it; the cache would start uninitialized",
                    child,
                    block,
                )
        for write in block_access(child).writes:
            if write.buffer is buffer:
                written.append(region_at(state, child, [write], buffer, block))


def _predicate_keeps_region(
    state: ScheduleState, block: Block, buffer: Buffer, holder: Stmt, values: list[PrimExpr]
) -> bool:
    """A predicate is allowed when it only drops instances outside the copied region: a
    conjunction of ``index < c`` where ``index`` is what the block stores at in one dimension
    and that dimension of the (clipped) region ends by ``c`` (the guard ``split`` writes)."""
    predicate = state.index.realize_of(block).predicate
    if isinstance(predicate, IntImm) and predicate.value == 1:
        return True
    region = region_at(state, block, block_access(block).writes, buffer, holder)
    conjuncts: list[PrimExpr] = []
    pending = [predicate]
    while pending:
        expr = pending.pop()
        if isinstance(expr, And):
            pending.extend([expr.a, expr.b])
        else:
            conjuncts.append(expr)
    indices = [simplify_expr(v) for v in values]
    for cond in conjuncts:
        if not (isinstance(cond, LT) and isinstance(cond.b, IntImm)):
            return False
        bound = cond.b.value
        lhs = simplify_expr(cond.a)
        dims = [d for d, idx in enumerate(indices) if structural_equal(idx, lhs)]
        ends = [_const_end(region.region[d]) for d in dims]
        if not any(end is not None and end <= bound for end in ends):
            return False
    return True


def _const_end(rng: Range) -> int | None:
    if isinstance(rng.min, IntImm) and isinstance(rng.extent, IntImm):
        return rng.min.value + rng.extent.value
    return None


def _radix_steps(value: PrimExpr, loops: dict[int, For], used: set[int]) -> bool | None:
    if not supports_linear(value.dtype):
        return None
    form = to_linear(value)
    steps: list[tuple[int, For]] = []
    for atom, coef in form.live_terms():
        if isinstance(atom, Var) and id(atom) in loops:
            if id(atom) in used:
                return None
            used.add(id(atom))
            loop = loops[id(atom)]
            # a unit loop's variable is only its start: it steps nothing (a split with
            # preserve_unit_iters gives `i_0 * 64 + i_1 * 64 + i_2` with i_1 of extent 1)
            if not (isinstance(loop.extent, IntImm) and loop.extent.value == 1):
                steps.append((coef, loop))
        elif mentions_any(atom, loops):
            return None
    expected = 1
    for coef, loop in sorted(steps, key=lambda t: t[0]):
        if coef != expected or not isinstance(loop.extent, IntImm):
            return None
        expected *= loop.extent.value
    return True



def _digit_steps(values: list[PrimExpr], loops: dict[int, For]) -> bool:
    """Whether the indices step the loops' digits as one mixed radix per dimension, no digit
    of a loop in two places (``(f // 4) * 16 + t // 8`` and ``f % 4 * 32 + t % 8 * 4 + u``
    of fused loops ``f``, ``t``): the parts not reading the loops are the same for the
    whole tile."""
    extents: dict[Var, int] = {}
    for lp in loops.values():
        if not (isinstance(lp.extent, IntImm) and isinstance(lp.min, IntImm)):
            return False
        if lp.min.value != 0:
            return False
        extents[lp.loop_var] = lp.extent.value
    inner: list[PrimExpr] = []
    for value in values:
        if not supports_linear(value.dtype):
            return False
        part: PrimExpr = IntImm(value.dtype, 0)
        for atom, coef in to_linear(value).live_terms():
            if mentions_any(atom, loops):
                part = part + atom * coef
        inner.append(part)
    return bindings_affine(inner, extents) is not None


def _conditional_store(block: Block, buffer: Buffer) -> bool:
    """Whether an instance of the block may end without storing ``buffer`` (its stores are
    all at one point, ``stores_at``): some path through an ``if`` skips every store, or a
    nested block stores (its stores are not followed here). An ``if``/``else`` storing in
    both branches always stores. A store through one of the block's views of ``buffer``
    counts as a store of it; a block storing neither way (writing by a pointer) is judged
    elsewhere."""
    targets = {id(buffer)} | {
        id(m.buffer) for m in block.match_buffers if m.source.buffer is buffer
    }
    nested = stores = False

    def visit(node: object) -> None:
        nonlocal nested, stores
        if isinstance(node, Block):
            nested = True
        elif isinstance(node, BufferStore) and id(node.buffer) in targets:
            stores = True

    post_order_visit(block.body, visit)
    return nested or (stores and not _always_stores(block.body, targets))


def _always_stores(stmt: Stmt, targets: set[int]) -> bool:
    """Whether every run of ``stmt`` stores one of the buffers ``targets`` (ids)."""
    if isinstance(stmt, BufferStore):
        return id(stmt.buffer) in targets
    if isinstance(stmt, SeqStmt):
        return any(_always_stores(s, targets) for s in stmt.seq)
    if isinstance(stmt, IfThenElse):
        return (
            stmt.else_case is not None
            and _always_stores(stmt.then_case, targets)
            and _always_stores(stmt.else_case, targets)
        )
    if isinstance(stmt, For):  # a loop runs its body when it provably iterates
        return (
            isinstance(stmt.extent, IntImm)
            and stmt.extent.value >= 1
            and _always_stores(stmt.body, targets)
        )
    if isinstance(stmt, (LetStmt, AttrStmt, DeclBuffer, Allocate)):
        return _always_stores(stmt.body, targets)
    return False
