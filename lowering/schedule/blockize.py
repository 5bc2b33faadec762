"""blockize(loop): wrap the subtree of ``loop`` in an outer block ``<name>_o``.

Each binding of the single block below is divided into an outer part (loops above
``loop``) and an inner part (``loop`` and the loops inside): the inner pieces must be the
lowest digits of the affine binding, so ``v = v_o * E + v_i`` exactly. The outer block gets
``v_o`` (domain ``dom / E``, bound to the outer part; ``T.axis.spatial(1, 0)`` when all of
``v`` is inside), the inner block keeps its name with ``v_i`` (domain ``E``) where ``v`` has
an inner part. A reduction's init moves to the outer block as a ``<name>_init`` block over
the inner spatial loops, as TVM does. The iterations run in the same order, so the only
conditions are the division itself, one block below the loop, and no predicate.
"""

from __future__ import annotations

from irbuilder.ir import (
    Block,
    BlockRealize,
    For,
    ForKind,
    IntImm,
    IterKind,
    IterVar,
    PrimExpr,
    Range,
    Stmt,
    Var,
    const,
    rebuild,
)
from lowering.analysis.substitute import substitute
from lowering.analysis.vars import depends_on

from .affine import IterSplit, IterSum, detect, normalize
from .analysis import constant_extents
from .edit import refresh_regions
from .error import ScheduleError, fail
from .state import ScheduleState
from .views import declare_views, substitute_views

__all__ = ["blockize"]


def _fail(state: ScheduleState, reason: str, *nodes: Stmt) -> ScheduleError:
    return fail(state, "blockize", reason, *nodes)


def _divide(
    found: IterSum, inner_ids: set[int]
) -> tuple[list[IterSplit], list[IterSplit], int] | None:
    """(outer digits, inner digits, E) when the inner digits are the lowest ones."""
    digits = found.digits()
    if digits is None or found.base != 0:
        return None
    inner = [d for d in digits if id(d.source) in inner_ids]
    outer = [d for d in digits if id(d.source) not in inner_ids]
    if any(a is not b for a, b in zip(digits, inner)):
        return None
    extent = 1
    for d in inner:
        extent *= d.extent
    return outer, inner, extent


def blockize(state: ScheduleState, loop: For, preserve_unit_iters: bool) -> Block:
    index = state.index
    blocks = index.blocks_below(loop)
    if len(blocks) != 1:
        raise _fail(state, f"the loop must hold exactly one block, it holds {len(blocks)}", loop)
    block = blocks[0]
    realize = index.realize_of(block)
    if not (isinstance(realize.predicate, IntImm) and realize.predicate.value == 1):
        raise _fail(state, f"block {block.name_hint!r} has a predicate (T.where)", block)
    if block.init is not None:
        reduced = [iv.var for iv in block.iter_vars if iv.kind != IterKind.SPATIAL]
        used = [v for v in reduced if depends_on(block.init, v)]
        if used:
            # TVM's reduction block indexes its init by spatial iter vars only; the init
            # block blockize builds has iter vars for those alone
            raise _fail(
                state,
                f"the init of block {block.name_hint!r} uses the reduction iter var "
                f"{used[0].name!r}: it is not a reduction block, and the outer block's init "
                "would have no value for it",
                block,
            )
    loops = index.loops_above(block)
    extents = constant_extents(loops)
    if extents is None:
        raise _fail(state, "the loops must start at 0 with constant extents", loop)
    position = next(k for k, lp in enumerate(loops) if lp is loop)
    inner_loops = loops[position:]
    inner_ids = {id(lp.loop_var) for lp in inner_loops}
    outer_ivs: list[IterVar] = []
    outer_values: list[PrimExpr] = []
    inner_ivs: list[IterVar] = []
    inner_values: list[PrimExpr] = []
    vmap: dict[Var, PrimExpr] = {}
    parts: dict[int, tuple[Var, Var | None, int]] = {}
    for iv, value in zip(block.iter_vars, realize.iter_values):
        found = detect(value, extents)
        divided = None if found is None else _divide(found, inner_ids)
        dom = iv.dom
        if divided is None or not (isinstance(dom.min, IntImm) and dom.min.value == 0):
            raise _fail(
                state,
                f"the binding of {iv.var.name!r} does not divide into a part outside the "
                "loop times the extent inside plus a part inside",
                block,
            )
        outer, inner, extent = divided
        # TVM keeps an outer loop of extent 1 as the outer iter var's binding
        units = (
            [d for d in found.splits if d.source_extent == 1 and id(d.source) not in inner_ids]
            if preserve_unit_iters and found is not None
            else []
        )
        if not isinstance(dom.extent, IntImm) or dom.extent.value % extent:
            raise _fail(
                state, f"the domain of {iv.var.name!r} is not a multiple of {extent}", block
            )
        dtype = iv.var.dtype
        outer_var = Var(f"{iv.var.name}_o", dtype)
        outer_sum = IterSum(tuple(d.with_scale(d.scale // extent) for d in outer + units), 0)
        outer_ivs.append(
            IterVar(
                outer_var, Range(const(0, dtype), const(dom.extent.value // extent, dtype)), iv.kind
            )
        )
        outer_values.append(
            normalize(outer_sum, value, keep_unit_loops=preserve_unit_iters)
            if outer or units
            else const(0, dtype)
        )
        inner_var: Var | None = None
        if inner:
            inner_var = Var(f"{iv.var.name}_i", dtype)
            inner_ivs.append(
                IterVar(inner_var, Range(const(0, dtype), const(extent, dtype)), iv.kind)
            )
            inner_values.append(normalize(IterSum(tuple(inner), 0), value))
        if inner_var is None:
            vmap[iv.var] = outer_var
        elif not outer and dom.extent.value == extent:
            vmap[iv.var] = inner_var
        else:
            vmap[iv.var] = outer_var * const(extent, dtype) + inner_var
        parts[id(iv.var)] = (outer_var, inner_var, extent)
    inner_block = refresh_regions(
        rebuild(
            block,
            {
                "iter_vars": tuple(inner_ivs),
                "body": substitute(block.body, vmap),
                "init": None,
                "match_buffers": substitute_views(block, vmap),
            },
        )
    )
    inner_realize = BlockRealize(tuple(inner_values), const(True), inner_block)
    reuse: dict[Stmt, Stmt] = {block: inner_block}
    body: Stmt = inner_realize
    for lp in reversed(inner_loops):
        new_loop = rebuild(lp, {"body": body})
        reuse[lp] = new_loop
        body = new_loop
    init: Stmt | None = None
    if block.init is not None:
        init = _outer_init(state, block, realize, inner_loops, parts, extents)
    outer_block = refresh_regions(
        Block(tuple(outer_ivs), (), (), f"{block.name_hint}_o", body, init)
    )
    outer_realize = BlockRealize(tuple(outer_values), const(True), outer_block)
    state.replace(loop, outer_realize, reuse)
    return outer_block


def _outer_init(
    state: ScheduleState,
    block: Block,
    realize: BlockRealize,
    inner_loops: list[For],
    parts: dict[int, tuple[Var, Var | None, int]],
    extents: dict[Var, int],
) -> Stmt:
    """The init as a block over the inner spatial loops (inside the outer block's init)."""
    assert block.init is not None
    spatial = [
        (iv, v)
        for iv, v in zip(block.iter_vars, realize.iter_values)
        if iv.kind == IterKind.SPATIAL
    ]
    used = [lp for lp in inner_loops if any(_mentions(v, lp.loop_var) for _, v in spatial)]
    fresh = {lp.loop_var: Var(lp.loop_var.name, lp.loop_var.dtype) for lp in used}
    ivs: list[IterVar] = []
    values: list[PrimExpr] = []
    vmap: dict[Var, PrimExpr] = {}
    inner_ids = {id(lp.loop_var) for lp in inner_loops}
    for iv, value in spatial:
        outer_var, inner_var, extent = parts[id(iv.var)]
        if inner_var is None:
            vmap[iv.var] = outer_var
            continue
        dtype = iv.var.dtype
        init_var = Var(f"{iv.var.name}_i_init", dtype)
        ivs.append(
            IterVar(init_var, Range(const(0, dtype), const(extent, dtype)), IterKind.SPATIAL)
        )
        found = detect(value, extents)
        assert found is not None
        inner = [d for d in (found.digits() or []) if id(d.source) in inner_ids]
        inner_value = normalize(IterSum(tuple(inner), 0), value)
        values.append(substitute(inner_value, fresh))
        vmap[iv.var] = (
            init_var
            if iv.dom.extent.value == extent  # type: ignore[attr-defined]
            else outer_var * const(extent, dtype) + init_var
        )
    # the init may write through a view the block declares: the init block declares its own
    # (declare_views substitutes ``vmap`` in the init as well)
    (init_body,), views = declare_views(state, "blockize", block, [block.init], vmap, ivs)
    init_block = refresh_regions(
        Block(tuple(ivs), (), (), f"{block.name_hint}_init", init_body, match_buffers=views)
    )
    stmt: Stmt = BlockRealize(tuple(values), const(True), init_block)
    for lp in reversed(used):
        stmt = For(fresh[lp.loop_var], lp.min, lp.extent, ForKind.SERIAL, stmt)
    return stmt


def _mentions(expr: PrimExpr, var: Var) -> bool:
    return depends_on(expr, var)
