"""blockize([block, ...]): wrap consecutive sibling nests in one outer block ``outer_<names>_``.

TVM v0.16's list form of ``blockize``. Each block, with the loops that hold only it, is one
statement of a statement list; the statements must follow each other. The outer block runs
once where they ran, so the iterations and their order are unchanged. Its iter vars are
TVM's: one per iter var of the first block, named ``<v>_o``, over the domain divided by what
the loops inside cover, bound to 0. Supported here when every binding uses only the loops
inside (so every outer part is 0 and an outer iter var stands for nothing in the inner
blocks, which the division then rewrites as single-loop blockize does); bindings reaching
outer loops, predicates and reductions (an init) are refused.
"""

from __future__ import annotations

from collections.abc import Sequence

from irbuilder.ir import (
    Block,
    BlockRealize,
    IntImm,
    IterVar,
    PrimExpr,
    Range,
    SeqStmt,
    Stmt,
    Var,
    const,
    rebuild,
    seq,
)
from lowering.analysis.substitute import substitute

from .affine import IterSum, detect, normalize
from .analysis import constant_extents
from .blockize import _divide
from .edit import leaf_root, refresh_regions
from .error import ScheduleError, fail
from .state import ScheduleState
from .views import substitute_views

__all__ = ["blockize_blocks"]


def _fail(state: ScheduleState, reason: str, *nodes: Stmt) -> ScheduleError:
    return fail(state, "blockize", reason, *nodes)


def _statement_list(state: ScheduleState, tops: Sequence[Stmt]) -> tuple[SeqStmt, list[int]]:
    """The statement list holding every ``tops`` directly, and their positions in it."""
    parents = [state.index.parent.get(id(top)) for top in tops]
    first = parents[0]
    if not isinstance(first, SeqStmt) or any(p is not first for p in parents):
        raise _fail(
            state,
            "the blocks (with the loops holding only them) must be statements of one list",
            *tops,
        )
    positions = [next(k for k, s in enumerate(first.seq) if s is top) for top in tops]
    return first, positions


def blockize_blocks(
    state: ScheduleState, blocks: Sequence[Block], preserve_unit_iters: bool
) -> Block:
    index = state.index
    if not blocks:
        raise ScheduleError("blockize", "the list of blocks is empty")
    if len({id(b) for b in blocks}) != len(blocks):
        raise _fail(state, "a block is listed twice", *blocks)
    tops = [leaf_root(index, b) for b in blocks]
    holder, positions = _statement_list(state, tops)
    order = sorted(range(len(blocks)), key=lambda k: positions[k])
    ordered = [positions[k] for k in order]
    if ordered != list(range(ordered[0], ordered[0] + len(ordered))):
        raise _fail(state, "the blocks must be consecutive statements", *blocks)
    outer_ivs: list[IterVar] | None = None
    body: list[Stmt] = []
    reuse: dict[Stmt, Stmt] = {}
    for k in order:
        block, top = blocks[k], tops[k]
        realize = index.realize_of(block)
        if block.init is not None:
            raise _fail(
                state,
                f"block {block.name_hint!r} has an init (a reduction): blockize of several "
                "blocks supports none (TVM refuses an outer reduction there)",
                block,
            )
        if not (isinstance(realize.predicate, IntImm) and realize.predicate.value == 1):
            raise _fail(state, f"block {block.name_hint!r} has a predicate (T.where)", block)
        inner_loops = [
            lp for lp in index.loops_above(block) if lp is top or index.is_ancestor(top, lp)
        ]
        extents = constant_extents(inner_loops)
        if extents is None:
            raise _fail(state, "the loops must start at 0 with constant extents", block)
        inner_ids = {id(lp.loop_var) for lp in inner_loops}
        ivs: list[IterVar] = []
        values: list[PrimExpr] = []
        vmap: dict[Var, PrimExpr] = {}
        outer_here: list[IterVar] = []
        for iv, value in zip(block.iter_vars, realize.iter_values):
            found = detect(value, extents)
            divided = None if found is None else _divide(found, inner_ids)
            dom = iv.dom
            if (
                divided is None
                or divided[0]
                or not (isinstance(dom.min, IntImm) and dom.min.value == 0)
                or not isinstance(dom.extent, IntImm)
                or dom.extent.value % divided[2]
            ):
                raise _fail(
                    state,
                    f"the binding of {iv.var.name!r} of block {block.name_hint!r} is not an "
                    "affine map of the loops holding only the block (loops outside them are "
                    "not supported in blockize of several blocks)",
                    block,
                )
            _, inner, extent = divided
            dtype = iv.var.dtype
            outer_here.append(
                IterVar(
                    Var(f"{iv.var.name}_o", dtype),
                    Range(const(0, dtype), const(dom.extent.value // extent, dtype)),
                    iv.kind,
                )
            )
            units = [d for d in found.splits if d.source_extent == 1] if found else []
            if not inner and not (units and preserve_unit_iters):
                vmap[iv.var] = const(0, dtype)  # bound to 0 (unit loops dropped)
                continue
            inner = inner or units
            inner_var = Var(f"{iv.var.name}_i", dtype)
            ivs.append(IterVar(inner_var, Range(const(0, dtype), const(extent, dtype)), iv.kind))
            values.append(
                normalize(IterSum(tuple(inner), 0), value, keep_unit_loops=preserve_unit_iters)
            )
            vmap[iv.var] = inner_var
        if outer_ivs is None:
            outer_ivs = outer_here
        inner_block = refresh_regions(
            rebuild(
                block,
                {
                    "iter_vars": tuple(ivs),
                    "body": substitute(block.body, vmap),
                    "match_buffers": substitute_views(block, vmap),
                },
            )
        )
        reuse[block] = inner_block
        stmt: Stmt = BlockRealize(tuple(values), const(True), inner_block)
        for lp in reversed(inner_loops):
            stmt = rebuild(lp, {"body": stmt})
            reuse[lp] = stmt
        body.append(stmt)
    assert outer_ivs is not None
    name = "outer_" + "".join(f"{blocks[k].name_hint}_" for k in order)
    outer_block = refresh_regions(Block(tuple(outer_ivs), (), (), name, seq(body)))
    outer_values = tuple(const(0, iv.var.dtype) for iv in outer_ivs)
    outer_realize = BlockRealize(outer_values, const(True), outer_block)
    start = ordered[0]
    items = [*holder.seq[:start], outer_realize, *holder.seq[start + len(ordered) :]]
    state.replace(holder, seq(items), reuse)
    return outer_block
