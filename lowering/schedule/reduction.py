"""rfactor (decompose_reduction lives in ``decompose.py``, re-exported here).

rfactor(loop, factor_axis) splits the reduction over ``loop``: block ``<name>_rf`` reduces
into ``<buffer>_rf`` (the output's shape with the loop's extent inserted at
``factor_axis``), with the loop bound to a new spatial iter var, and the original block,
under the loops that are not other reduction loops, reduces ``<buffer>_rf`` over that
axis. Legal for a reduction block whose update is ``C[i] = C[i] op value`` with ``op`` one of
``+ * min max``, whose init is the identity of ``op`` and whose loop nest holds only it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from irbuilder.ir import (
    Add,
    Block,
    BlockRealize,
    Buffer,
    BufferLoad,
    BufferRegion,
    BufferStore,
    FloatImm,
    For,
    ForKind,
    IntImm,
    IterKind,
    IterVar,
    LetStmt,
    Max,
    Min,
    Mul,
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
    structural_equal,
)
from irbuilder.ir.reducer import kind_of_combiner, reduce_identity
from lowering.analysis.substitute import Substituter, substitute_expr
from lowering.analysis.vars import depends_on

from .affine import bindings_affine
from .analysis import (
    block_access,
    constant_extents,
    is_reduction_block,
    refuse_position_dependent,
)
from .arg_reducer import ArgReducer, match_arg_reducer
from .cache_stage import unique_name
from .decompose import decompose_reduction, fresh_iter_vars
from .edit import leaf_root, refresh_regions
from .error import fail
from .stage_pipeline import uncovered_read
from .state import ScheduleState
from .views import declare_views

__all__ = ["decompose_reduction", "rfactor"]



def _reducer(block: Block) -> tuple[BufferStore, type, PrimExpr] | None:
    """(update store, reducer node class, the value combined) for ``C = C op value``.

    Let-bound values (``v = C[i] + x; C[i] = v``) are substituted first, as TVM reads them:
    a let names a pure value."""
    body = block.body
    lets: dict[Var, PrimExpr] = {}
    while isinstance(body, LetStmt):
        lets[body.var] = substitute_expr(body.value, lets)
        body = body.body
    if not isinstance(body, BufferStore):
        return None
    if lets:
        body = BufferStore(
            body.buffer,
            substitute_expr(body.value, lets),
            tuple(substitute_expr(i, lets) for i in body.indices),
            span=body.span,
        )
    value = body.value
    if not isinstance(value, (Add, Mul, Min, Max)):
        return None

    def is_self(expr: PrimExpr) -> bool:
        return (
            isinstance(expr, BufferLoad)
            and expr.buffer is body.buffer
            and all(structural_equal(a, b) for a, b in zip(expr.indices, body.indices))
        )

    if is_self(value.a):
        other = value.b
    elif is_self(value.b):
        other = value.a
    else:
        return None
    reads_self = False

    def visit(node: object) -> None:
        nonlocal reads_self
        if isinstance(node, BufferLoad) and node.buffer is body.buffer:
            reads_self = True

    post_order_visit(other, visit)
    if reads_self:
        return None
    return body, type(value), other


@dataclass(frozen=True, eq=False)
class _Single:
    """``C[i] = C[i] op value`` with init ``C[i] = identity``."""

    update: BufferStore
    kind: type
    value: PrimExpr
    identity: PrimExpr

    @property
    def buffers(self) -> tuple[Buffer]:
        return (self.update.buffer,)

    @property
    def indices(self) -> tuple[PrimExpr, ...]:
        return tuple(self.update.indices)

    @property
    def rhs(self) -> tuple[PrimExpr]:
        return (self.value,)

    def update_stmt(
        self, targets: Sequence[Buffer], indices: Sequence[PrimExpr], rhs: Sequence[PrimExpr]
    ) -> Stmt:
        (target,), at = targets, tuple(indices)
        return BufferStore(target, self.kind(BufferLoad(target, at), rhs[0]), at)

    def init_stmt(self, targets: Sequence[Buffer], indices: Sequence[PrimExpr]) -> Stmt:
        return BufferStore(targets[0], self.identity, tuple(indices))


def _stores_several(block: Block) -> bool:
    """Whether the update (below its lets) is several stores: a multi-buffer reducer."""
    body = block.body
    while isinstance(body, LetStmt):
        body = body.body
    return isinstance(body, SeqStmt) and sum(isinstance(x, BufferStore) for x in body.seq) > 1


def _is_identity(init: Stmt | None, update: BufferStore, kind: type) -> bool:
    if not isinstance(init, BufferStore) or init.buffer is not update.buffer:
        return False
    if not all(structural_equal(a, b) for a, b in zip(init.indices, update.indices)):
        return False
    reduce_kind = kind_of_combiner(kind)
    assert reduce_kind is not None  # _reducer matched one of +, *, min, max
    expected = reduce_identity(reduce_kind, update.value.dtype, finite=True)
    got = init.value
    if isinstance(got, (IntImm, FloatImm)) and isinstance(expected, (IntImm, FloatImm)):
        return got.value == expected.value and got.dtype == expected.dtype
    return False


def rfactor(state: ScheduleState, loop: For, factor_axis: int) -> Block:
    name = "rfactor"
    index = state.index
    blocks = index.blocks_below(loop)
    if len(blocks) != 1:
        raise fail(
            state, name, f"the loop must hold exactly one block, it holds {len(blocks)}", loop
        )
    block = blocks[0]
    if not is_reduction_block(index, block):
        raise fail(state, name, f"block {block.name_hint!r} is not a reduction block", block)
    refuse_position_dependent(state, name, block)
    found = _reducer(block)
    red: _Single | ArgReducer
    if found is not None:
        init = block.init
        if not (isinstance(init, BufferStore) and _is_identity(init, found[0], found[1])):
            raise fail(
                state,
                name,
                f"the init of block {block.name_hint!r} is not the identity of its reduction",
                block,
            )
        red = _Single(*found, init.value)
    else:
        arg = match_arg_reducer(block)
        if arg is None and _stores_several(block):
            raise fail(
                state,
                name,
                f"block {block.name_hint!r} reduces several buffers together, but not in "
                "TVM's argmax/argmin form (lets v0 = Select(V >= y1, I, y0), v1 = Select(V "
                ">= y1, V, y1) stored to I and V, init -1 and min_value; <= and max_value "
                "for argmin)",
                block,
            )
        if arg is None:
            raise fail(
                state,
                name,
                f"block {block.name_hint!r} is not an update 'C[...] = C[...] op value' with "
                "op one of +, *, min, max",
                block,
            )
        red = arg
    if any(any(m.buffer is b for b in red.buffers) for m in block.match_buffers):
        # The rf buffer is shaped and indexed like the reduced buffer: a view's indices
        # (C0[()] of C0 = T.match_buffer(C[vi], ())) do not tell the block's instances
        # apart, so their partial results would collide (TVM builds exactly that, with the
        # view undeclared in the new blocks).
        raise fail(
            state,
            name,
            f"block {block.name_hint!r} reduces into {red.buffers[0].name!r}, a match_buffer "
            "view of the block: the rf buffer, indexed like it, would merge the partial "
            "results of different instances; reduce into the viewed buffer itself",
            block,
        )
    realize = index.realize_of(block)
    if not (isinstance(realize.predicate, IntImm) and realize.predicate.value == 1):
        raise fail(state, name, f"block {block.name_hint!r} has a predicate (T.where)", block)
    loops = index.loops_above(block)
    extents = constant_extents(loops)
    if extents is None or bindings_affine(realize.iter_values, extents) is None:
        raise fail(state, name, f"block {block.name_hint!r} does not have affine bindings", block)
    scope_block = index.scope_block(realize)
    uncovered = uncovered_read(state, scope_block)
    if uncovered is not None:
        reader, region = uncovered
        raise fail(
            state,
            name,
            f"the scope is not a stage pipeline: block {reader.name_hint!r} reads elements of "
            f"{region.buffer.name!r} that no earlier block is shown to write (as TVM, rfactor "
            "needs every read of a produced buffer covered by its producer)",
            reader,
        )
    leaf = leaf_root(index, block)
    # loops[:first] hold other statements too; they stay, the rf nest goes before them
    first = next((k for k, lp in enumerate(loops) if lp is leaf), len(loops))
    pairs = list(zip(block.iter_vars, realize.iter_values))
    if any(depends_on(v, loop.loop_var) for iv, v in pairs if iv.kind == IterKind.SPATIAL):
        raise fail(state, name, "the loop is bound to a spatial iter var, not a reduction", loop)
    touched = [
        iv for iv, v in pairs if iv.kind == IterKind.REDUCE and depends_on(v, loop.loop_var)
    ]
    # A reduction iter var sharing a loop with those (after fuse and split, ours reads
    # `v_i = f_0 // 128` beside `v_j = f_0 % 128 * 2 + f_1`; TVM keeps `(f_0 * 2 + f_1) // 256`)
    # is rebound through the new per-loop iter vars too: kept with its old binding it would
    # read a loop another new iter var reads as well, and the rf block's bindings would no
    # longer be affine (decompose_reduction, parallel refused on it)
    binding_of = {id(iv): v for iv, v in pairs}
    shared_loops = {
        id(lp)
        for lp in loops
        for iv in touched
        if depends_on(binding_of[id(iv)], lp.loop_var)
    }
    grew = True
    while grew:
        grew = False
        for iv, v in pairs:
            if iv.kind != IterKind.REDUCE or any(iv is t for t in touched):
                continue
            if any(id(lp) in shared_loops and depends_on(v, lp.loop_var) for lp in loops):
                touched.append(iv)
                shared_loops |= {id(lp) for lp in loops if depends_on(v, lp.loop_var)}
                grew = True
    unit = isinstance(loop.extent, IntImm) and loop.extent.value == 1
    if not touched and not unit:
        # a unit loop bound to nothing (left by a split or fuse) still factors, into a
        # dimension of one (TVM); a longer one would repeat the whole reduction
        raise fail(
            state, name, "the loop is not bound to any reduction iter var of the block", loop
        )
    out = red.buffers[0]
    ndim = len(out.shape)
    if not -(ndim + 1) <= factor_axis <= ndim:
        raise fail(
            state, name, f"factor_axis {factor_axis} is out of range for {out.name!r}", block
        )
    if factor_axis < 0:  # counted from the end of the rf buffer's shape, as in TVM
        factor_axis += ndim + 1
    reduce_loops = [
        lp
        for lp in loops
        if lp is loop
        or any(depends_on(v, lp.loop_var) for iv, v in pairs if iv.kind == IterKind.REDUCE)
    ]
    # As TVM: a reduction iter var bound without the loop keeps its binding in the rf
    # block; those bound through it are replaced by one iter var per loop they use.
    touched_ids = {id(iv) for iv in touched}
    untouched = [
        (iv, v) for iv, v in pairs if iv.kind == IterKind.REDUCE and id(iv) not in touched_ids
    ]
    per_loop = [
        lp
        for lp in reduce_loops
        if lp is not loop
        and any(depends_on(v, lp.loop_var) for iv, v in pairs if id(iv) in touched_ids)
    ]
    if any(
        depends_on(v, lp.loop_var)
        for lp in reduce_loops
        for iv, v in pairs
        if iv.kind == IterKind.SPATIAL
    ):
        raise fail(state, name, "a loop feeds both spatial and reduction iter vars", block)
    shared = [lp for lp in reduce_loops if any(lp is o for o in loops[:first])]
    if shared:
        raise fail(
            state,
            name,
            f"reduction loop {shared[0].loop_var.name!r} of block {block.name_hint!r} holds "
            "other statements",
            shared[0],
        )
    if first:
        _check_hoistable(state, name, block, loops[0], red.buffers)
    not_serial = [lp for lp in reduce_loops if lp.kind != ForKind.SERIAL]
    if not_serial:
        # The rf block keeps the loops, the write-back makes them serial: a parallel or
        # vectorized reduction loop's kind would be lost or would race on the rf buffer.
        raise fail(
            state,
            name,
            f"reduction loop {not_serial[0].loop_var.name!r} is not serial",
            not_serial[0],
        )
    # rf block: iter vars = rf var (S), spatial vars, other reduction loops' vars (R).
    new_iv = {lp.loop_var: Var(f"v{lp.loop_var.name}", lp.loop_var.dtype) for lp in reduce_loops}
    rf_var = new_iv[loop.loop_var]
    rf_iters = [IterVar(rf_var, Range(const(0, rf_var.dtype), loop.extent), IterKind.SPATIAL)]
    rf_values: list[PrimExpr] = [loop.loop_var]
    spatial = [(iv, v) for iv, v in pairs if iv.kind == IterKind.SPATIAL]
    rf_iters.extend(iv for iv, _ in spatial)
    rf_values.extend(v for _, v in spatial)
    rf_iters.extend(iv for iv, _ in untouched)
    rf_values.extend(v for _, v in untouched)
    for lp in per_loop:
        rf_iters.append(
            IterVar(
                new_iv[lp.loop_var], Range(const(0, lp.loop_var.dtype), lp.extent), IterKind.REDUCE
            )
        )
        rf_values.append(lp.loop_var)
    reduce_sub = {iv.var: substitute_expr(v, new_iv) for iv, v in pairs if id(iv) in touched_ids}
    rf_buffers: list[Buffer] = []
    for target in red.buffers:
        rf_name = unique_name(state, f"{target.name}_rf")
        rf_shape = (*target.shape[:factor_axis], loop.extent, *target.shape[factor_axis:])
        # TVM builds the rf buffer from the reduced one's node: its elem_offset's index type
        # stays (int64 for a 0-d buffer's)
        offset = IntImm(target.elem_offset.dtype, 0)
        data = make_data_var(rf_name, target.dtype)
        rf_buffers.append(Buffer(rf_name, data, rf_shape, target.dtype, elem_offset=offset))
    rf_indices = (*red.indices[:factor_axis], rf_var, *red.indices[factor_axis:])
    rf_rhs = [substitute_expr(v, reduce_sub) for v in red.rhs]
    rf_init: Stmt | None = red.init_stmt(rf_buffers, rf_indices)
    rf_body = red.update_stmt(rf_buffers, rf_indices, rf_rhs)
    if all(iv.kind == IterKind.SPATIAL for iv in rf_iters):
        if isinstance(red, ArgReducer):
            # (-1, min_value) combined with a pair whose value is min_value keeps -1: the
            # pair alone is not the combination, and a block without reduction vars has
            # no init to start from
            raise fail(
                state,
                name,
                f"the loop is the only reduction loop of argmax/argmin block "
                f"{block.name_hint!r}: split it first, the rf block needs a reduction left",
                loop,
            )
        # Nothing left to reduce: each rf element is the identity combined with one value,
        # which is that value (identity op x == x for + * min max).
        rf_init = None
        rf_body = BufferStore(rf_buffers[0], rf_rhs[0], rf_indices)
    # the value may read through views of the block (A0 = T.match_buffer(A[vi, vk], ())):
    # the rf block declares its own, over its iter vars (TVM's rf block declares none)
    (rf_stored,), rf_views = declare_views(state, name, block, [rf_body], reduce_sub, rf_iters)
    rf_block = refresh_regions(
        Block(
            tuple(rf_iters),
            (),
            (),
            unique_name(state, f"{block.name_hint}_rf"),
            rf_stored,
            rf_init,
            match_buffers=rf_views,
            annotations=dict(block.annotations),
        )
    )
    if isinstance(red, ArgReducer):
        # TVM lists the rf block's reads in the original block's order, not the body's
        rf_block = _reads_in_order(rf_block, [r.buffer for r in block.reads])
    rf_stmt: Stmt = BlockRealize(tuple(rf_values), const(True), rf_block)
    loop_reuse: dict[Stmt, Stmt] = {}
    for lp in reversed(loops):
        rf_stmt = rebuild(lp, {"body": rf_stmt})
        loop_reuse[lp] = rf_stmt
    # write-back: iter vars = rf var (R), spatial vars (S), under non-reduction loops + loop.
    kept = [lp for lp in loops if lp is loop or lp not in reduce_loops]
    fresh = {lp.loop_var: Var(lp.loop_var.name, lp.loop_var.dtype) for lp in kept}
    wb_rf = IterVar(
        Var(rf_var.name, rf_var.dtype), Range(const(0, rf_var.dtype), loop.extent), IterKind.REDUCE
    )
    wb_spatial, wb_map = fresh_iter_vars([iv for iv, _ in spatial])
    wb_iters = [wb_rf, *wb_spatial]
    wb_values = [fresh[loop.loop_var], *[substitute_expr(v, fresh) for _, v in spatial]]
    out_indices = tuple(substitute_expr(i, wb_map) for i in red.indices)
    wb_rf_indices = (*out_indices[:factor_axis], wb_rf.var, *out_indices[factor_axis:])
    wb_update = red.update_stmt(
        red.buffers, out_indices, [BufferLoad(b, wb_rf_indices) for b in rf_buffers]
    )
    # a single reducer keeps its init; a pair's init is rebuilt in the lets' order (TVM's)
    wb_init_in = (
        block.init
        if isinstance(red, _Single) and block.init is not None
        else red.init_stmt(red.buffers, out_indices)
    )
    # the write-back keeps the views it still uses (the output's), over its own iter vars
    (wb_body, wb_init), wb_views = declare_views(
        state,
        name,
        block,
        [wb_update, wb_init_in],
        wb_map,
        wb_iters,
        fresh=False,
    )
    wb_block = refresh_regions(
        rebuild(
            block,
            {
                "iter_vars": tuple(wb_iters),
                "body": wb_body,
                "init": wb_init,
                "match_buffers": wb_views,
            },
        )
    )
    if isinstance(red, ArgReducer):
        wb_block = _reads_in_order(wb_block, rf_buffers)
    wb_stmt: Stmt = BlockRealize(tuple(wb_values), const(True), wb_block)
    for lp in reversed(kept):
        if any(lp is o for o in loops[:first]):
            continue
        wb_stmt = For(fresh[lp.loop_var], lp.min, lp.extent, ForKind.SERIAL, wb_stmt)
    scope = index.scope_block(realize)
    if first:
        # the write-back takes the block's place; the outer loops keep their other
        # statements under fresh vars (the rf nest before them took the old ones), as TVM
        renamer = _RenameLoops({lp.loop_var: fresh[lp.loop_var] for lp in loops[:first]})
        renamer.leaf, renamer.replacement = leaf, wb_stmt
        outer_now = renamer.visit_stmt(loops[0])
        reuse = {**renamer.reuse, block: wb_block}
        inner = {lp: v for lp, v in loop_reuse.items() if not any(lp is o for o in loops[:first])}
        reuse.update(inner)
        state.replace(loops[0], seq([rf_stmt, outer_now]), reuse)
    else:
        state.replace(leaf, seq([rf_stmt, wb_stmt]), {block: wb_block, **loop_reuse})
    scope_now = state.resolve(scope)
    assert isinstance(scope_now, Block)
    new_scope = rebuild(scope_now, {"alloc_buffers": (*scope_now.alloc_buffers, *rf_buffers)})
    scope_realize = state.index.realize_of(scope_now)
    state.replace(
        scope_realize, rebuild(scope_realize, {"block": new_scope}), {scope_now: new_scope}
    )
    return rf_block


def _reads_in_order(block: Block, order: Sequence[Buffer]) -> Block:
    """``block`` with its reads of ``order``'s buffers first, in that order (the rest after,
    as they were)."""

    def rank(region: BufferRegion) -> int:
        return next((k for k, b in enumerate(order) if b is region.buffer), len(order))

    reads = tuple(sorted(block.reads, key=rank))
    return block if reads == block.reads else rebuild(block, {"reads": reads})


def _check_hoistable(
    state: ScheduleState, name: str, block: Block, outer: For, outs: Sequence[Buffer]
) -> None:
    """The rf nest computes every partial result before ``outer``, where the block's loops
    also run other blocks: none of them may write what the block's value reads."""
    reads = {
        id(b) for b in block_access(block).read_buffers if not any(b is o for o in outs)
    }
    for other in state.index.blocks_below(outer):
        if other is block:
            continue
        clobbered = [w for w in block_access(other).write_buffers if id(w) in reads]
        if clobbered:
            raise fail(
                state,
                name,
                f"block {other.name_hint!r}, under the loops of block {block.name_hint!r}, "
                f"writes {clobbered[0].name!r}, which the rf block would read before it",
                other,
                block,
            )


class _RenameLoops(Substituter):
    """The loops of ``vmap`` under their new vars (uses included), ``leaf`` replaced by
    ``replacement``; ``reuse`` maps each rebuilt Block/For to its new node."""

    def __init__(self, vmap: Mapping[Var, Var]) -> None:
        super().__init__(vmap)
        self.renamed = vmap
        self.leaf: Stmt | None = None
        self.replacement: Stmt | None = None
        self.reuse: dict[Stmt, Stmt] = {}

    def visit_stmt(self, stmt: Stmt) -> Stmt:
        if stmt is self.leaf and self.replacement is not None:
            return self.replacement
        new = super().visit_stmt(stmt)
        if isinstance(stmt, For):
            var = self.renamed.get(stmt.loop_var)
            if var is not None:
                new = rebuild(new, {"loop_var": var})
        if isinstance(stmt, (For, Block)) and new is not stmt:
            self.reuse[stmt] = new
        return new
