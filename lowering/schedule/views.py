"""A block's ``T.match_buffer`` views through block rewrites.

A view's source region is written in the block's iter vars (``B0 = T.match_buffer(B[vi, vj],
())``), so a primitive that gives a block new iter vars must rewrite the views' sources with
the same substitution as the body, and a primitive that moves part of a block's body into a
new block (an init, an rf block) must declare there the views that part uses: a view is
visible only inside the block declaring it. These helpers do both, or refuse when a view's
source depends on an iter var the new block does not have.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from irbuilder.ir import (
    Block,
    Buffer,
    BufferLoad,
    BufferStore,
    IterVar,
    MatchBufferRegion,
    PrimExpr,
    Stmt,
    Var,
    make_data_var,
    post_order_visit,
    rebuild,
)
from lowering.analysis.substitute import Substituter, substitute
from lowering.analysis.vars import depends_on

from .error import fail
from .state import ScheduleState

__all__ = ["declare_views", "renew_views", "substitute_views"]


def substitute_views(block: Block, vmap: Mapping[Var, PrimExpr]) -> tuple[MatchBufferRegion, ...]:
    """``block``'s views with ``vmap`` applied to their source regions (the views' buffers
    stay: the rewritten block still declares them)."""
    if not vmap:
        return block.match_buffers
    sub = Substituter(vmap)
    return tuple(
        MatchBufferRegion(m.buffer, sub.visit_buffer_region(m.source), span=m.span)
        for m in block.match_buffers
    )


def _used_views(block: Block, stmts: Iterable[Stmt]) -> list[MatchBufferRegion]:
    """The views of ``block`` that ``stmts`` access (by load, store, region or data
    pointer), with the views their sources are taken from, in declaration order."""
    by_buffer = {id(m.buffer): m for m in block.match_buffers}
    by_data = {id(m.buffer.data): m for m in block.match_buffers}
    used: set[int] = set()

    def visit(node: object) -> None:
        if isinstance(node, (BufferLoad, BufferStore)) and id(node.buffer) in by_buffer:
            used.add(id(node.buffer))
        elif isinstance(node, Var) and id(node) in by_data:
            used.add(id(by_data[id(node)].buffer))
        elif isinstance(node, Block):
            for region in (*node.reads, *node.writes, *(m.source for m in node.match_buffers)):
                if id(region.buffer) in by_buffer:
                    used.add(id(region.buffer))

    for stmt in stmts:
        post_order_visit(stmt, visit)
    # a view of a view: its source's view is needed too (declared before it)
    for match in reversed(block.match_buffers):
        if id(match.buffer) in used and id(match.source.buffer) in by_buffer:
            used.add(id(match.source.buffer))
    return [m for m in block.match_buffers if id(m.buffer) in used]


def _fresh_view(buffer: Buffer, vmap: dict[Var, PrimExpr]) -> Buffer:
    """A copy of a view's buffer for another block: its own data var, and its own offset and
    stride vars (the match binds them per block; one var bound by two matches would keep
    the first block's value)."""
    def renew(expr: PrimExpr) -> PrimExpr:
        if isinstance(expr, Var):
            if expr not in vmap:
                vmap[expr] = Var(expr.name, expr.dtype)
            return vmap[expr]
        return expr

    return rebuild(  # type: ignore[no-any-return]
        buffer,
        {
            "data": make_data_var(buffer.name, buffer.dtype, buffer.scope),
            "elem_offset": renew(buffer.elem_offset),
            "strides": tuple(renew(s) for s in buffer.strides),
        },
    )


def renew_views(block: Block) -> Block:
    """``block`` with copies of its views (their own buffers, data, offset and stride vars)
    and of the buffers it allocates, every use in it redirected: for a block a primitive
    duplicates, since a view or an allocation, like any variable, is defined by one block
    only."""
    if not block.match_buffers and not block.alloc_buffers:
        return block
    vmap: dict[Var, PrimExpr] = {}
    bmap: dict[Buffer, Buffer] = {}
    allocs: list[Buffer] = []
    for alloc in block.alloc_buffers:  # block-local buffers are defined per block too
        new_alloc = rebuild(alloc, {"data": make_data_var(alloc.name, alloc.dtype, alloc.scope)})
        vmap[alloc.data] = new_alloc.data
        bmap[alloc] = new_alloc
        allocs.append(new_alloc)
    matches: list[MatchBufferRegion] = []
    for match in block.match_buffers:
        source = Substituter(vmap, bmap).visit_buffer_region(match.source)
        new = _fresh_view(match.buffer, vmap)
        vmap[match.buffer.data] = new.data
        bmap[match.buffer] = new
        matches.append(MatchBufferRegion(new, source, span=match.span))
    renewed = Substituter(vmap, bmap).visit_stmt(
        rebuild(block, {"match_buffers": (), "alloc_buffers": ()})
    )
    return rebuild(  # type: ignore[no-any-return]
        renewed, {"match_buffers": tuple(matches), "alloc_buffers": tuple(allocs)}
    )


def declare_views(
    state: ScheduleState,
    primitive: str,
    block: Block,
    stmts: Sequence[Stmt],
    vmap: Mapping[Var, PrimExpr],
    iter_vars: Iterable[IterVar],
    fresh: bool = True,
) -> tuple[list[Stmt], tuple[MatchBufferRegion, ...]]:
    """``stmts`` (taken from ``block`` into a block with ``iter_vars``, ``vmap`` mapping
    ``block``'s iter vars to what stands for them there) with ``vmap`` applied, and the views
    they use, for that block to declare, their sources rewritten by ``vmap``. ``fresh``: the
    views are copies and ``stmts`` refer to them (a new block beside ``block``'s successor);
    else the same buffers (``block``'s successor itself, dropping the views it no longer
    uses). Refused when a used view's source depends on an iter var of ``block`` that
    ``vmap`` does not map and ``iter_vars`` does not keep (the view has no meaning there)."""
    views = _used_views(block, stmts)
    kept = {id(iv.var) for iv in iter_vars}
    lost = [iv.var for iv in block.iter_vars if id(iv.var) not in kept and iv.var not in vmap]
    renamed: dict[Var, PrimExpr] = dict(vmap)
    bmap: dict[Buffer, Buffer] = {}
    declared: list[MatchBufferRegion] = []
    for match in views:
        source = Substituter(renamed, bmap).visit_buffer_region(match.source)
        stale = next(
            (
                v
                for v in lost
                for r in source.region
                if depends_on(r.min, v) or depends_on(r.extent, v)
            ),
            None,
        )
        if stale is not None:
            raise fail(
                state,
                primitive,
                f"block {block.name_hint!r} views {match.source.buffer.name!r} through "
                f"match_buffer {match.buffer.name!r} at a region depending on iter var "
                f"{stale.name!r}, which the rewritten block does not have; the view cannot "
                "be declared there",
                block,
            )
        new = match.buffer
        if fresh:
            new = _fresh_view(match.buffer, renamed)
            renamed[match.buffer.data] = new.data
            bmap[match.buffer] = new
        declared.append(MatchBufferRegion(new, source, span=match.span))
    return [substitute(stmt, renamed, bmap) for stmt in stmts], tuple(declared)
