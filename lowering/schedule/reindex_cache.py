"""reindex_cache_read and reindex_cache_write: a cache stored in the layout an index map
gives to the block's iter vars.

``reindex_cache_read(block, i, scope, f)`` copies, before ``block``, each element the block
reads of its ``i``-th read buffer into ``cache[f(iter vars)]``, over the block's own loops
below the copy's place, and makes the block read ``cache[f(iter vars)]``. The copy goes where
cache_read puts it (after the buffer's single producer, in the innermost statement list
holding both, or at the start of the scope for an input).

``reindex_cache_write(block, i, scope, f)`` makes the block write ``cache[f(spatial iter
vars)]`` and copies it back, over the block's loops below the copy's place that feed its
spatial iter vars, where cache_write puts the copy.

Legality: the block reads (writes) the buffer at one index tuple, as a leaf block; ``f`` is
a bijection of the iter domain (for a write, of the spatial iter vars, which alone it may
use), so no two instances share a cache element. A write stores at distinct spatial iter
vars (each element has one writer instance), without a predicate or a condition, and a block
reading what it writes needs an init.
"""

from __future__ import annotations

from collections.abc import Sequence

from irbuilder.ir import (
    LE,
    LT,
    And,
    Block,
    BlockRealize,
    Buffer,
    BufferLoad,
    BufferStore,
    Call,
    Cast,
    For,
    ForKind,
    IfThenElse,
    IntImm,
    IterKind,
    IterVar,
    Or,
    PrimExpr,
    Stmt,
    Var,
    const,
    make_data_var,
    post_order_visit,
    rebuild,
    structural_equal,
)
from lowering.analysis.substitute import substitute_expr
from lowering.arith import Analyzer

from .analysis import block_access, uses_opaquely
from .cache_checks import buffer_at, check_reads_after, check_single_writer
from .cache_placement import (
    place_stage,
    scope_seq,
    split_point,
    top_level_position,
)
from .cache_region import loops_between
from .cache_stage import cache_name, unique_name
from .cache_write import _check_later_iterations, _conditional_store
from .edit import refresh_regions
from .error import fail
from .layout import IndexMap, bijection_sums
from .reindex import _access_indices, _Redirect
from .state import ScheduleState
from .storage_scope import check_scope

__all__ = ["reindex_cache_read", "reindex_cache_write"]


def _single_indices(
    state: ScheduleState, prim: str, block: Block, buffer: Buffer
) -> tuple[PrimExpr, ...]:
    found = _access_indices(block, buffer)
    nested = False

    def visit(node: object) -> None:
        nonlocal nested
        if isinstance(node, Block):
            nested = True

    post_order_visit(block.body, visit)
    if nested or not found or any(not _same(found[0], other) for other in found[1:]):
        raise fail(
            state,
            prim,
            f"block {block.name_hint!r} must be a leaf block accessing {buffer.name!r} at one "
            "single point (one index tuple)",
            block,
        )
    return found[0]


def _check_copy_in_bounds(
    state: ScheduleState, prim: str, block: Block, buffer: Buffer, indices: Sequence[PrimExpr]
) -> None:
    """The copy stage reads ``buffer[indices]`` at every instance of the block, unguarded.
    That is sound when the block itself reads there at every instance, or when the index
    provably stays inside the buffer; a read under a condition (``T.if_then_else``, an
    ``if``) may go out of bounds where the condition is false, so it needs the proof."""
    if not _read_is_guarded(block, buffer):
        return
    analyzer = Analyzer()
    for iv in block.iter_vars:
        analyzer.bind_range(iv.var, iv.dom.min, iv.dom.extent)
    for dim, (idx, extent) in enumerate(zip(indices, buffer.shape)):
        inside = analyzer.can_prove(LE(const(0, idx.dtype), idx)) and analyzer.can_prove(
            LT(idx, _cast_like(extent, idx))
        )
        if not inside:
            raise fail(
                state,
                prim,
                f"block {block.name_hint!r} reads {buffer.name!r} only under a condition, and "
                f"index {dim} of the read may leave the buffer where the condition is false; "
                "the unguarded copy stage would read out of bounds",
                block,
            )


def _cast_like(value: PrimExpr, like: PrimExpr) -> PrimExpr:
    return value if value.dtype == like.dtype else Cast(like.dtype, value)


def _read_is_guarded(block: Block, buffer: Buffer) -> bool:
    """Whether some load of ``buffer`` in the block sits under a condition."""
    found = False

    def loads_buffer(node: Stmt | PrimExpr) -> bool:
        hit = False

        def visit(n: object) -> None:
            nonlocal hit
            if isinstance(n, BufferLoad) and n.buffer is buffer:
                hit = True

        post_order_visit(node, visit)
        return hit

    def visit(node: object) -> None:
        nonlocal found
        if isinstance(node, IfThenElse):
            found = (
                found
                or loads_buffer(node.then_case)
                or (node.else_case is not None and loads_buffer(node.else_case))
            )
        elif isinstance(node, Call) and node.op == "if_then_else" and len(node.args) == 3:
            found = found or loads_buffer(node.args[1]) or loads_buffer(node.args[2])
        elif isinstance(node, (And, Or)):
            found = found or loads_buffer(node.b)  # not evaluated when ``a`` decides

    post_order_visit(block.body, visit)
    return found


def _same(a: Sequence[PrimExpr], b: Sequence[PrimExpr]) -> bool:
    return len(a) == len(b) and all(structural_equal(x, y) for x, y in zip(a, b))


def _cache_shape(
    state: ScheduleState, prim: str, block: Block, iter_vars: Sequence[IterVar], mapping: IndexMap
) -> list[int]:
    """The shape ``mapping`` sends the box of ``iter_vars`` onto (refused unless a bijection)."""
    dims: list[int] = []
    for iv in iter_vars:
        if not (isinstance(iv.dom.min, IntImm) and iv.dom.min.value == 0):
            dims = []
            break
        if not isinstance(iv.dom.extent, IntImm):
            dims = []
            break
        dims.append(iv.dom.extent.value)
    sums = (
        bijection_sums(mapping, dims)
        if dims and len(dims) == len(mapping.initial_indices)
        else None
    )
    if sums is None:
        raise fail(
            state,
            prim,
            f"the index map {mapping!r} is not a bijection of the iteration domain of block "
            f"{block.name_hint!r}",
            block,
        )
    return [s.extent for s in sums]


def _make_cache(
    state: ScheduleState, buffer: Buffer, scope: str, shape: Sequence[int], dtype_of: PrimExpr
) -> Buffer:
    name = unique_name(state, cache_name(buffer, scope))
    dims = tuple(IntImm(dtype_of.dtype, d) for d in shape)
    return Buffer(name, make_data_var(name, buffer.dtype, scope), dims, buffer.dtype, scope=scope)


def _copy_nest(
    state: ScheduleState,
    block: Block,
    iter_vars: Sequence[IterVar],
    holder: Stmt,
    name: str,
    body_of: object,
) -> Stmt:
    """A block named ``name`` with ``iter_vars`` (as spatial) bound as in ``block``, under
    fresh copies of the block's loops below ``holder`` that its bindings use."""
    realize = state.index.realize_of(block)
    binding = {iv.var: v for iv, v in zip(block.iter_vars, realize.iter_values)}
    loops = loops_between(state, block, holder)[::-1]  # outermost first
    used: set[int] = set()

    def visit(node: object) -> None:
        if isinstance(node, Var):
            used.add(id(node))

    for iv in iter_vars:
        post_order_visit(binding[iv.var], visit)
    # The predicate is copied too (the stage copies only what the block reads), so the loops
    # it names must be copied with it, or it would use them outside their scope.
    post_order_visit(realize.predicate, visit)
    kept = [lp for lp in loops if id(lp.loop_var) in used]
    fresh = {lp.loop_var: Var(lp.loop_var.name, lp.loop_var.dtype) for lp in kept}
    new_ivs = [
        IterVar(Var(iv.var.name, iv.var.dtype), iv.dom, IterKind.SPATIAL) for iv in iter_vars
    ]
    to_new = {iv.var: n.var for iv, n in zip(iter_vars, new_ivs)}
    assert callable(body_of)
    store = body_of(to_new)
    new_block = refresh_regions(Block(tuple(new_ivs), (), (), name, store))
    values = tuple(substitute_expr(binding[iv.var], fresh) for iv in iter_vars)
    predicate = substitute_expr(realize.predicate, fresh)
    stmt: Stmt = BlockRealize(values, predicate, new_block)
    for lp in reversed(kept):
        stmt = For(fresh[lp.loop_var], lp.min, lp.extent, ForKind.SERIAL, stmt)
    return stmt


def reindex_cache_read(
    state: ScheduleState,
    block: Block,
    read_index: int | str | Buffer,
    scope: str,
    mapping: IndexMap,
) -> Block:
    name = "reindex_cache_read"
    check_scope(state, name, scope, block)
    buffer = buffer_at(state, name, block.reads, read_index, "reads", block)
    index = state.index
    scope_block = index.scope_block(index.realize_of(block))
    writer = check_single_writer(state, name, scope_block, buffer)
    indices = _single_indices(state, name, block, buffer)
    if any(w is buffer for w in block_access(block).write_buffers):
        raise fail(state, name, f"block {block.name_hint!r} writes {buffer.name!r} as well", block)
    shape = _cache_shape(state, name, block, block.iter_vars, mapping)
    _check_copy_in_bounds(state, name, block, buffer, indices)
    if writer is not None:
        writer_item = top_level_position(state, scope_block, index.realize_of(writer))
        if top_level_position(state, scope_block, index.realize_of(block)) < writer_item:
            writer = None
    holder: Stmt
    if writer is None:
        holder, position = scope_seq(scope_block), 0
    else:
        check_reads_after(state, name, writer, buffer, block)
        holder, _, position = split_point(state, writer, block)
    cache = _make_cache(state, buffer, scope, shape, block.iter_vars[0].var)
    own = [iv.var for iv in block.iter_vars]

    def copy_body(to_new: dict[Var, Var]) -> Stmt:
        target = mapping.map_indices([to_new[v] for v in own])
        source = tuple(substitute_expr(i, to_new) for i in indices)
        return BufferStore(cache, BufferLoad(buffer, source), tuple(target))

    stage = _copy_nest(state, block, block.iter_vars, holder, cache.name, copy_body)
    cached = tuple(mapping.map_indices(own))
    redirected = _Redirect(buffer, cache, cached).visit_stmt(block)
    assert isinstance(redirected, Block)
    new = refresh_regions(redirected)
    realize = index.realize_of(block)
    state.replace(realize, rebuild(realize, {"block": new}), {block: new})
    return place_stage(state, holder, position, stage, scope_block, cache)


def reindex_cache_write(
    state: ScheduleState,
    block: Block,
    write_index: int | str | Buffer,
    scope: str,
    mapping: IndexMap,
) -> Block:
    name = "reindex_cache_write"
    check_scope(state, name, scope, block)
    buffer = buffer_at(state, name, block.writes, write_index, "writes", block)
    index = state.index
    realize = index.realize_of(block)
    scope_block = index.scope_block(realize)
    check_single_writer(state, name, scope_block, buffer)
    indices = _single_indices(state, name, block, buffer)
    if uses_opaquely(block, buffer):
        # only loads and stores move to the cache: a write through a view (or the data
        # pointer) would be overwritten by the copy back
        raise fail(
            state,
            name,
            f"block {block.name_hint!r} also accesses {buffer.name!r} through a match_buffer "
            "view or its data pointer; the copy back would overwrite what it writes there",
            block,
        )
    spatial = [iv for iv in block.iter_vars if iv.kind == IterKind.SPATIAL]
    spatial_ids = {id(iv.var) for iv in spatial}
    distinct = {id(i) for i in indices if isinstance(i, Var)}
    if not (
        isinstance(realize.predicate, IntImm)
        and realize.predicate.value == 1
        and all(isinstance(i, Var) and id(i) in spatial_ids for i in indices)
        and len(distinct) == len(indices)
        and not _conditional_store(block, buffer)
    ):
        raise fail(
            state,
            name,
            f"block {block.name_hint!r} must store {buffer.name!r} at distinct spatial iter vars, "
            "without a predicate or a condition",
            block,
        )
    reads_self = any(r is buffer for r in block_access(block).read_buffers)
    if reads_self and block.init is None:
        raise fail(
            state,
            name,
            f"block {block.name_hint!r} reads {buffer.name!r} before writing it; the cache "
            "would start uninitialized",
            block,
        )
    # the map is over all iter vars but may use only the spatial ones
    used: set[int] = set()
    for expr in mapping.final_indices:

        def visit(node: object) -> None:
            if isinstance(node, Var):
                used.add(id(node))

        post_order_visit(expr, visit)
    reduce_params = [
        p for p, iv in zip(mapping.initial_indices, block.iter_vars) if iv.kind != IterKind.SPATIAL
    ]
    if len(mapping.initial_indices) != len(block.iter_vars) or any(
        id(p) in used for p in reduce_params
    ):
        raise fail(
            state,
            name,
            f"the index map {mapping!r} must take the {len(block.iter_vars)} iter vars of block "
            f"{block.name_hint!r} and use only its spatial ones",
            block,
        )
    spatial_params = [
        p for p, iv in zip(mapping.initial_indices, block.iter_vars) if iv.kind == IterKind.SPATIAL
    ]
    shape = _cache_shape(
        state, name, block, spatial, IndexMap(spatial_params, mapping.final_indices)
    )
    own = [iv.var for iv in block.iter_vars]
    related = [
        b
        for b in index.child_blocks(scope_block)
        if b is not block
        and any(r is buffer for r in block_access(b).read_buffers)
        and index.order[id(index.realize_of(b))] > index.order[id(realize)]
    ]
    holder: Stmt
    if related:
        holder, _, position = split_point(state, block, related[0])
    else:
        holder = scope_seq(scope_block)
        items = getattr(holder, "seq", None)
        position = len(items) if items is not None else 1
    _check_later_iterations(state, scope_block, block, buffer, holder, [])
    # every loop below the copy's place that the copy does not repeat must run at least once
    for lp in loops_between(state, block, holder):
        if not (isinstance(lp.extent, IntImm) and lp.extent.value > 0):
            raise fail(state, name, f"loop {lp.loop_var.name!r} may run no iteration", block)
    cache = _make_cache(state, buffer, scope, shape, block.iter_vars[0].var)
    cached = tuple(mapping.map_indices(own))

    def copy_body(to_new: dict[Var, Var]) -> Stmt:
        spatial_map = {p: to_new[iv.var] for p, iv in zip(spatial_params, spatial)}
        source = tuple(substitute_expr(e, spatial_map) for e in mapping.final_indices)
        target = tuple(substitute_expr(i, to_new) for i in indices)
        return BufferStore(buffer, BufferLoad(cache, source), target)

    stage = _copy_nest(state, block, spatial, holder, cache.name, copy_body)
    redirected = _Redirect(buffer, cache, cached).visit_stmt(block)
    assert isinstance(redirected, Block)
    new = refresh_regions(redirected)
    state.replace(realize, rebuild(realize, {"block": new}), {block: new})
    return place_stage(state, holder, position, stage, scope_block, cache)
