"""reindex and transform_block_layout.

reindex(block, ("read" | "write", i)) gives the block its own copy ``<buffer>_reindex`` of
a buffer, indexed by the iter vars its access uses (in iter-var order, each over its
domain): a read is gathered into it by a block ``<buffer>_reindex`` placed right before the
block's top-level statement, a write is scattered back right after. Legal for a read when
nothing writes the buffer between the copy and the block (the block included); for a write
when the block stores it at distinct iter vars, its loops run the whole domain once, it
initializes what it reads (an init) and nothing else in its nest touches the buffer.

transform_block_layout(block, index_map) re-indexes a block's iteration space: the block,
alone under loops bound one to one to its iter vars, gets new loops ``ax*`` and iter vars
``v*`` over the map's outputs, and its body the inverse map. Legal when the map is a
bijection of the iteration box (affine pieces, none overlapping, no output mixing spatial and
reduction iter vars) and the block is complete or a reduction (its instances are then
independent but for the order of a reduction).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from irbuilder.ir import (
    Block,
    BlockRealize,
    Buffer,
    BufferLoad,
    BufferRegion,
    BufferStore,
    Cast,
    For,
    ForKind,
    IfThenElse,
    IntImm,
    IterKind,
    IterVar,
    MatchBufferRegion,
    PrimExpr,
    Range,
    Stmt,
    StmtExprMutator,
    Var,
    While,
    const,
    make_data_var,
    post_order_visit,
    rebuild,
    structural_equal,
)
from irbuilder.ir.expr_text import expr_text
from lowering.analysis.substitute import substitute
from lowering.analysis.vars import depends_on
from lowering.arith import Analyzer, simplify_expr
from lowering.arith.analyzer import IntBound

from .analysis import (
    block_access,
    is_complete_block,
    is_reduction_block,
    position_dependent_vars,
    uses_opaquely,
)
from .cache_checks import check_init_covers_reads
from .cache_placement import insert_stage, scope_items, top_level_position
from .cache_stage import unique_name
from .edit import refresh_regions
from .error import fail
from .full_domain import check_full_domain
from .layout import IndexMap, bijection_sums, digits_inverse, resolve_buffer
from .layout_symbolic import rewrite_block_body, rewrite_block_views, symbolic_block_layout
from .state import ScheduleState
from .views import substitute_views

__all__ = ["reindex", "transform_block_layout"]



def _access_indices(block: Block, buffer: Buffer) -> list[tuple[PrimExpr, ...]]:
    found: list[tuple[PrimExpr, ...]] = []

    def visit(node: object) -> None:
        if isinstance(node, (BufferLoad, BufferStore)) and node.buffer is buffer:
            found.append(node.indices)

    post_order_visit(block.body, visit)
    if block.init is not None:
        post_order_visit(block.init, visit)
    return found


class _Redirect(StmtExprMutator):
    def __init__(self, old: Buffer, new: Buffer, indices: tuple[PrimExpr, ...]) -> None:
        self.old, self.new, self.indices = old, new, indices

    def visit_buffer_load_(self, load: BufferLoad) -> PrimExpr:
        if load.buffer is self.old:
            return BufferLoad(self.new, self.indices)
        return self.generic_mutate(load)

    def visit_buffer_store_(self, store: BufferStore) -> Stmt:
        if store.buffer is self.old:
            return BufferStore(
                self.new, self.visit_expr(store.value), self.indices, span=store.span
            )
        return self.generic_mutate(store)


def reindex(state: ScheduleState, block: Block, buffer_arg: Any) -> Block:
    name = "reindex"
    if isinstance(buffer_arg, (str, Buffer)):
        buffer_arg = _as_indexed(state, block, buffer_arg, name)
    if not (
        isinstance(buffer_arg, tuple)
        and len(buffer_arg) == 2
        and buffer_arg[0] in ("read", "write")
    ):
        raise TypeError("reindex: buffer must be ('read' | 'write', index), a name or a Buffer")
    is_write = buffer_arg[0] == "write"
    buffer = resolve_buffer(state, block, buffer_arg, name)
    index = state.index
    direct_uses = position_dependent_vars(index, block)
    if direct_uses:
        raise fail(
            state,
            name,
            f"block {block.name_hint!r} uses {direct_uses[0].name!r} of an enclosing loop directly",
            block,
        )
    patterns = _access_indices(block, buffer)
    if not patterns:
        # only through a match_buffer view or a data pointer: there are no indices to
        # build the reindex buffer from (TVM fails an internal check here)
        via = (
            "through match_buffer view "
            + next(m.buffer.name for m in block.match_buffers if m.source.buffer is buffer)
            if any(m.source.buffer is buffer for m in block.match_buffers)
            else "by its data pointer"
        )
        raise fail(
            state,
            name,
            f"block {block.name_hint!r} accesses {buffer.name!r} only {via}, with no loads "
            "or stores whose indices the reindex stage could take",
            block,
        )
    first = _drop_constant_parts(block, patterns[0])
    if not all(all(structural_equal(a, b) for a, b in zip(patterns[0], p)) for p in patterns[1:]):
        raise fail(
            state,
            name,
            f"block {block.name_hint!r} accesses {buffer.name!r} at several indices",
            block,
        )
    used = [iv for iv in block.iter_vars if any(depends_on(i, iv.var) for i in first)]
    iter_ids = {id(iv.var) for iv in block.iter_vars}
    for idx in first:
        stray = [n for n in _vars(idx) if id(n) not in iter_ids]
        if stray:
            raise fail(
                state,
                name,
                f"the index of {buffer.name!r} uses {stray[0].name!r}, not an iter var",
                block,
            )
    shape = tuple(iv.dom.extent for iv in used)
    if not all(isinstance(iv.dom.min, IntImm) and iv.dom.min.value == 0 for iv in used):
        raise fail(state, name, "the iter vars of the access must start at 0", block)
    _check_stage_in_bounds(state, name, block, buffer, first, is_write)
    new_name = unique_name(state, f"{buffer.name}_reindex")
    new_buffer = Buffer(
        new_name,
        make_data_var(new_name, buffer.dtype, buffer.scope),
        shape,
        buffer.dtype,
        scope=buffer.scope,
    )
    realize = index.realize_of(block)
    scope = index.scope_block(realize)
    try:
        position = top_level_position(state, scope, realize)
    except ValueError:
        # below its scope block's init (an init statement of a blockized reduction): the
        # reindex stage has no place in the scope's statement list
        raise fail(state, name, f"block {block.name_hint!r} is inside the init of block "
                   f"{scope.name_hint!r}; the reindex stage would have no place", block) from None
    item = scope_items(scope)[position]
    others = [b for b in index.blocks_below(item) if b is not block] if item is not realize else []
    if is_write and uses_opaquely(block, buffer):
        # the stores go to the reindex buffer, copied back over the buffer afterwards: a
        # write through a view (or the data pointer) to the buffer itself would be lost
        raise fail(
            state,
            name,
            f"block {block.name_hint!r} also accesses {buffer.name!r} through a match_buffer "
            "view or its data pointer; the copy back would overwrite what it writes there",
            block,
        )
    if is_write:
        if not all(isinstance(i, Var) and id(i) in iter_ids for i in first) or len(
            {id(i) for i in first}
        ) != len(first):
            raise fail(
                state,
                name,
                f"block {block.name_hint!r} must store {buffer.name!r} at distinct iter vars",
                block,
            )
        check_full_domain(state, block, name)
        if any(r is buffer for r in block_access(block).read_buffers) and block.init is None:
            raise fail(
                state,
                name,
                f"block {block.name_hint!r} reads {buffer.name!r} before writing it",
                block,
            )
        if block.init is not None:
            check_init_covers_reads(state, name, block, buffer)
        for other in others:
            access = block_access(other)
            if any(b is buffer for b in access.read_buffers + access.write_buffers):
                raise fail(
                    state,
                    name,
                    f"block {other.name_hint!r} in the same loop nest also accesses "
                    f"{buffer.name!r}",
                    other,
                )
    else:
        if any(w is buffer for w in block_access(block).write_buffers):
            raise fail(
                state, name, f"block {block.name_hint!r} also writes {buffer.name!r}", block
            )
        for other in others:
            if any(w is buffer for w in block_access(other).write_buffers):
                raise fail(
                    state,
                    name,
                    f"block {other.name_hint!r} in the same loop nest writes {buffer.name!r}",
                    other,
                )
    redirected = _Redirect(buffer, new_buffer, tuple(iv.var for iv in used)).visit_stmt(block)
    assert isinstance(redirected, Block)
    # TVM swaps the buffer in the declared regions (each access is exactly the new
    # buffer at the used iter vars) instead of re-deriving them
    point = BufferRegion(
        new_buffer, tuple(Range(iv.var, const(1, iv.var.dtype)) for iv in used)
    )

    def swap(regions: tuple[BufferRegion, ...]) -> tuple[BufferRegion, ...]:
        return tuple(point if r.buffer is buffer else r for r in regions)

    new_block = rebuild(redirected, {"reads": swap(block.reads), "writes": swap(block.writes)})
    state.replace(realize, rebuild(realize, {"block": new_block}), {block: new_block})
    stage = _copy_stage(used, first, buffer, new_buffer, new_name, is_write)
    scope_now = state.resolve(scope)
    assert isinstance(scope_now, Block)
    insert_stage(state, scope_now, position + 1 if is_write else position, stage, new_buffer)
    found = [
        n for n in state.index.nodes.values() if isinstance(n, Block) and n.name_hint == new_name
    ]
    return found[0]


def _as_indexed(state: ScheduleState, block: Block, buffer: Any, name: str) -> tuple[str, int]:
    """TVM's lookup of a buffer named (or given) for reindex: its place among the block's
    reads, then writes; a buffer both read and written counts as written."""
    found: tuple[str, int] | None = None
    for kind, regions in (("read", block.reads), ("write", block.writes)):
        for k, region in enumerate(regions):
            if region.buffer is buffer or region.buffer.name == buffer:
                found = (kind, k)
    if found is None:
        raise fail(state, name, f"block {block.name_hint!r} does not access {buffer!r}", block)
    return found


def _check_stage_in_bounds(
    state: ScheduleState,
    name: str,
    block: Block,
    buffer: Buffer,
    indices: tuple[PrimExpr, ...],
    is_write: bool,
) -> None:
    """The reindex stage copies ``buffer`` at the access indices over the whole domain of the
    iter vars they use, not only at the instances the block runs or at the ones its
    conditions let through (TVM builds the same stage and then accesses out of bounds):
    those indices must stay inside the buffer over the domain, and a write copied back must
    be one the block makes at every instance (not under a condition), or the copy would put
    values the block never computed over the buffer."""
    analyzer = Analyzer()
    for iv in block.iter_vars:
        analyzer.bind_symbolic_range(iv.var, iv.dom.min, iv.dom.extent)
    for dim, (idx, size) in enumerate(zip(indices, buffer.shape)):
        zero = const(0, idx.dtype)
        bound = size if size.dtype == idx.dtype else Cast(idx.dtype, size)
        if not (analyzer.can_prove(idx >= zero) and analyzer.can_prove(idx < bound)):
            raise fail(
                state,
                name,
                f"index {expr_text(idx)} of {buffer.name!r} (dimension {dim}) is not provably "
                f"inside the buffer over the domains of block {block.name_hint!r}'s iter vars; the "
                "reindex stage copies over the whole domain and would access out of bounds",
                block,
            )
    if is_write and _stores_conditionally(block.body, buffer):
        raise fail(
            state,
            name,
            f"block {block.name_hint!r} stores {buffer.name!r} only under a condition; the "
            "copy back would write elements the block leaves alone",
            block,
        )


def _stores_conditionally(stmt: Stmt, buffer: Buffer) -> bool:
    found = False

    def visit(node: object) -> None:
        nonlocal found
        if isinstance(node, (IfThenElse, While)):
            inner: list[bool] = []
            post_order_visit(
                node,
                lambda n: inner.append(True)
                if isinstance(n, BufferStore) and n.buffer is buffer
                else None,
            )
            found = found or bool(inner)

    post_order_visit(stmt, visit)
    return found


def _drop_constant_parts(block: Block, indices: tuple[PrimExpr, ...]) -> tuple[PrimExpr, ...]:
    """The access indices with parts that are constant over the iter var domains folded
    away (``co // 64 * 3 + rc`` with ``co < 64`` is ``rc``), as TVM's simplification does;
    an index is only replaced when the folding removes an iter var from it."""
    analyzer = Analyzer()
    for iv in block.iter_vars:
        analyzer.bind_range(iv.var, iv.dom.min, iv.dom.extent)
    out: list[PrimExpr] = []
    for idx in indices:
        folded = simplify_expr(idx, analyzer)
        before = {id(v) for v in _vars(idx)}
        after = {id(v) for v in _vars(folded)}
        out.append(folded if after < before else idx)
    return tuple(out)


def _vars(expr: PrimExpr) -> list[Var]:
    out: list[Var] = []
    post_order_visit(expr, lambda n: out.append(n) if isinstance(n, Var) else None)
    return out


def _copy_stage(
    used: Sequence[IterVar],
    indices: tuple[PrimExpr, ...],
    buffer: Buffer,
    new_buffer: Buffer,
    name: str,
    is_write: bool,
) -> Stmt:
    loop_vars = [Var(f"ax{k}", iv.var.dtype) for k, iv in enumerate(used)]
    copies = [
        IterVar(Var(f"v{k}", iv.var.dtype), iv.dom, IterKind.SPATIAL) for k, iv in enumerate(used)
    ]
    vmap = {iv.var: c.var for iv, c in zip(used, copies)}
    original = tuple(substitute(i, vmap) for i in indices)
    mine = tuple(c.var for c in copies)
    if is_write:
        store = BufferStore(buffer, BufferLoad(new_buffer, mine), original)
    else:
        store = BufferStore(new_buffer, BufferLoad(buffer, original), mine)
    block = refresh_regions(Block(tuple(copies), (), (), name, store))
    stmt: Stmt = BlockRealize(tuple(loop_vars), const(True), block)
    for var, iv in reversed(list(zip(loop_vars, used))):
        stmt = For(var, const(0, var.dtype), iv.dom.extent, ForKind.SERIAL, stmt)
    return stmt


def transform_block_layout(state: ScheduleState, block: Block, index_map: IndexMap) -> None:
    name = "transform_block_layout"
    index = state.index
    realize = index.realize_of(block)
    loops = index.loops_above(block)
    direct_uses = position_dependent_vars(index, block)
    if direct_uses:
        raise fail(
            state,
            name,
            f"block {block.name_hint!r} uses {direct_uses[0].name!r} of an enclosing loop directly",
            block,
        )
    if len(index_map.initial_indices) != len(block.iter_vars):
        raise fail(
            state,
            name,
            f"the index map takes {len(index_map.initial_indices)} indices, the block has "
            f"{len(block.iter_vars)} iter vars",
            block,
        )
    trivial = len(loops) == len(block.iter_vars) and all(
        isinstance(v, Var) and v is lp.loop_var
        for v, lp in zip(_ordered_values(realize, loops), loops)
    )
    if (
        not trivial
        or (loops and index.blocks_below(loops[0]) != [block])
        or not (isinstance(realize.predicate, IntImm) and realize.predicate.value == 1)
    ):
        raise fail(
            state,
            name,
            f"block {block.name_hint!r} must be alone under loops bound one to one to its "
            "iter vars, without a predicate",
            block,
        )
    if not (is_complete_block(index, block) or is_reduction_block(index, block)):
        raise fail(
            state,
            name,
            f"block {block.name_hint!r} is neither a complete block nor a reduction block",
            block,
        )
    if any(not isinstance(iv.dom.extent, IntImm) for iv in block.iter_vars):
        _symbolic_transform(state, block, index_map, loops, realize)
        return
    extents: dict[Var, int] = {}
    kinds: dict[int, IterKind] = {}
    for var, iv in zip(index_map.initial_indices, block.iter_vars):
        if not (
            isinstance(iv.dom.min, IntImm)
            and iv.dom.min.value == 0
            and isinstance(iv.dom.extent, IntImm)
        ):
            raise fail(
                state, name, f"iter var {iv.var.name!r} needs a constant domain from 0", block
            )
        extents[var] = iv.dom.extent.value
        kinds[id(var)] = iv.kind
    sums = bijection_sums(index_map, list(extents.values()))
    if sums is None:
        raise fail(
            state, name, "the index map is not a bijection of the block's iteration space", block
        )
    new_ivs: list[IterVar] = []
    new_vars: list[Var] = []
    for k, found in enumerate(sums):
        sources = {kinds[id(s.source)] for s in found.splits if s.extent != 1}
        if len(sources) > 1:
            raise fail(
                state,
                name,
                f"output {k} of the index map mixes spatial and reduction iter vars",
                block,
            )
        kind = sources.pop() if sources else IterKind.SPATIAL
        var = Var(f"v{k}", block.iter_vars[0].var.dtype)
        new_vars.append(var)
        new_ivs.append(
            IterVar(var, Range(const(0, var.dtype), const(found.extent, var.dtype)), kind)
        )
    inverse = dict(zip(index_map.initial_indices, digits_inverse(index_map, sums, new_vars)))
    old_to_new = {iv.var: inverse[v] for v, iv in zip(index_map.initial_indices, block.iter_vars)}
    # indices simplified under the new iter vars' domains, as TVM does
    analyzer = Analyzer()
    for iv in new_ivs:
        assert isinstance(iv.dom.extent, IntImm)
        analyzer.bind(iv.var, IntBound(0, iv.dom.extent.value - 1))
    tidy = _SimplifyIndices(analyzer)
    new_block = refresh_regions(
        rebuild(
            block,
            {
                "iter_vars": tuple(new_ivs),
                "body": tidy.visit_stmt(substitute(block.body, old_to_new)),
                "init": None
                if block.init is None
                else tidy.visit_stmt(substitute(block.init, old_to_new)),
                # the views' sources are in the old iter vars too (TVM substitutes the
                # whole block)
                "match_buffers": tidy.views(substitute_views(block, old_to_new)),
            },
        )
    )
    loop_vars = [Var(f"ax{k}", v.dtype) for k, v in enumerate(new_vars)]
    stmt: Stmt = BlockRealize(tuple(loop_vars), const(True), new_block)
    for var, iv in reversed(list(zip(loop_vars, new_ivs))):
        stmt = For(var, const(0, var.dtype), iv.dom.extent, ForKind.SERIAL, stmt)
    top: Stmt = loops[0] if loops else realize
    state.replace(top, stmt, {block: new_block})


def _symbolic_transform(
    state: ScheduleState,
    block: Block,
    index_map: IndexMap,
    loops: Sequence[For],
    realize: BlockRealize,
) -> None:
    """A symbolic domain: a row-major linearization per output (``layout_symbolic.py``)."""
    found = symbolic_block_layout(block, index_map)
    if isinstance(found, str):
        raise fail(
            state,
            "transform_block_layout",
            f"the index map is not a provable bijection of the block's symbolic iteration "
            f"space: {found}",
            block,
        )
    old_vars = [iv.var for iv in block.iter_vars]
    init = None if block.init is None else rewrite_block_body(block.init, found, old_vars)
    new_block = refresh_regions(
        rebuild(
            block,
            {
                "iter_vars": tuple(found.new_ivs),
                "body": rewrite_block_body(block.body, found, old_vars),
                "init": init,
                "match_buffers": rewrite_block_views(block.match_buffers, found, old_vars),
            },
        )
    )
    loop_vars = [Var(f"ax{k}", iv.var.dtype) for k, iv in enumerate(found.new_ivs)]
    stmt: Stmt = BlockRealize(tuple(loop_vars), const(True), new_block)
    for var, iv in reversed(list(zip(loop_vars, found.new_ivs))):
        stmt = For(var, const(0, var.dtype), iv.dom.extent, ForKind.SERIAL, stmt)
    top: Stmt = loops[0] if loops else realize
    state.replace(top, stmt, {block: new_block})


class _SimplifyIndices(StmtExprMutator):
    def __init__(self, analyzer: Analyzer) -> None:
        self.analyzer = analyzer

    def visit_buffer_load_(self, load: BufferLoad) -> PrimExpr:
        indices = tuple(simplify_expr(self.visit_expr(i), self.analyzer) for i in load.indices)
        return BufferLoad(load.buffer, indices)

    def visit_buffer_store_(self, store: BufferStore) -> Stmt:
        indices = tuple(simplify_expr(self.visit_expr(i), self.analyzer) for i in store.indices)
        return BufferStore(store.buffer, self.visit_expr(store.value), indices, span=store.span)

    def views(self, views: tuple[MatchBufferRegion, ...]) -> tuple[MatchBufferRegion, ...]:
        """``views`` with their source regions' bounds simplified, as the indices are."""
        return tuple(
            MatchBufferRegion(
                m.buffer,
                BufferRegion(
                    m.source.buffer,
                    tuple(
                        Range(
                            simplify_expr(r.min, self.analyzer),
                            simplify_expr(r.extent, self.analyzer),
                        )
                        for r in m.source.region
                    ),
                ),
                span=m.span,
            )
            for m in views
        )


def _ordered_values(realize: BlockRealize, loops: Sequence[For]) -> list[PrimExpr]:
    """The bindings, in the order of the loops they use (for the one-to-one check)."""
    by_loop: list[PrimExpr] = []
    for loop in loops:
        match = [v for v in realize.iter_values if isinstance(v, Var) and v is loop.loop_var]
        by_loop.append(match[0] if match else const(-1))
    return by_loop
