"""decompose_reduction and rfactor.

decompose_reduction(block, loop) moves a reduction block's init into its own block
``<name>_init`` right before ``loop`` (replicating, as ``<var>_init`` loops, the loops
inside ``loop`` that its spatial bindings use) and renames the block ``<name>_update``.
Legal when every loop that a reduction binding uses is ``loop`` or inside it (the init then
still runs once per output element before its first update) and the predicate uses no
reduction loop.

rfactor(loop, factor_axis) splits the reduction over ``loop``: block ``<name>_rf`` reduces
into ``<buffer>_rf`` (the output's shape with the loop's extent inserted at
``factor_axis``), with the loop bound to a new spatial iter var, and the original block,
under the loops that are not other reduction loops, reduces ``<buffer>_rf`` over that
axis. Legal for a reduction block whose update is ``C[i] = C[i] op value`` with ``op`` one of
``+ * min max``, whose init is the identity of ``op`` and whose loop nest holds only it.
"""

from __future__ import annotations

from collections.abc import Mapping

from irbuilder.ir import (
    Add,
    And,
    Block,
    BlockRealize,
    Buffer,
    BufferLoad,
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
from lowering.analysis.substitute import Substituter, substitute, substitute_expr
from lowering.analysis.vars import depends_on
from lowering.arith import Analyzer, simplify_expr

from .affine import bindings_affine
from .analysis import (
    block_access,
    constant_extents,
    is_reduction_block,
    refuse_position_dependent,
)
from .cache_stage import unique_name
from .edit import leaf_root, refresh_regions
from .error import fail
from .stage_pipeline import uncovered_read
from .state import ScheduleState, replace_child

__all__ = ["decompose_reduction", "rfactor"]



def _uses_any(expr: PrimExpr, vars_: list[Var]) -> bool:
    return any(depends_on(expr, v) for v in vars_)


def _fresh(iter_vars: list[IterVar]) -> tuple[list[IterVar], dict[Var, PrimExpr]]:
    """Copies of ``iter_vars`` with new Vars (same names), and the substitution to them."""
    vmap: dict[Var, PrimExpr] = {}
    out: list[IterVar] = []
    for iv in iter_vars:
        var = Var(iv.var.name, iv.var.dtype)
        vmap[iv.var] = var
        out.append(IterVar(var, iv.dom, iv.kind, iv.thread_tag))
    return out, vmap


def decompose_reduction(state: ScheduleState, block: Block, loop: For) -> Block:
    name = "decompose_reduction"
    index = state.index
    refuse_position_dependent(state, name, block)
    if block.init is None:
        raise fail(state, name, f"block {block.name_hint!r} has no init to decompose", block)
    if not is_reduction_block(index, block):
        raise fail(state, name, f"block {block.name_hint!r} is not a reduction block", block)
    loops = index.loops_above(block)
    if not any(lp is loop for lp in loops):
        raise fail(state, name, "the loop is not one of the block's loops", loop, block)
    realize = index.realize_of(block)
    position = next(k for k, lp in enumerate(loops) if lp is loop)
    inner = loops[position:]
    outer_vars = [lp.loop_var for lp in loops[:position]]
    for iv, value in zip(block.iter_vars, realize.iter_values):
        if iv.kind == IterKind.REDUCE and _uses_any(value, outer_vars):
            raise fail(
                state,
                name,
                f"reduction iter var {iv.var.name!r} is bound to a loop outside the given "
                "loop; the init would run again inside the reduction",
                loop,
                block,
            )
    for lp in inner:
        # A loop bound to no iter var runs the whole reduction again at each iteration (a
        # compute_at recomputation): the block's init restarts it every time, one init
        # before the loop would not.
        repeats = not (isinstance(lp.extent, IntImm) and lp.extent.value == 1)
        if repeats and not any(depends_on(v, lp.loop_var) for v in realize.iter_values):
            raise fail(
                state,
                name,
                f"loop {lp.loop_var.name!r} inside the given loop repeats the block without "
                "being bound to any of its iter vars; one init before it would not restart "
                "the reduction at each repetition",
                loop,
                block,
            )
    spatial = [
        (iv, v)
        for iv, v in zip(block.iter_vars, realize.iter_values)
        if iv.kind == IterKind.SPATIAL
    ]
    needed = [lp for lp in inner if any(depends_on(v, lp.loop_var) for _, v in spatial)]
    reduce_vars = [lp.loop_var for lp in inner if lp not in needed]
    init_predicate = _init_predicate(state, block, realize, inner, needed, reduce_vars)
    fresh = {lp.loop_var: Var(f"{lp.loop_var.name}_init", lp.loop_var.dtype) for lp in needed}
    init_iters, init_map = _fresh([iv for iv, _ in spatial])
    init_block = refresh_regions(
        Block(
            tuple(init_iters),
            (),
            (),
            f"{block.name_hint}_init",
            substitute(block.init, init_map),
            annotations=dict(block.annotations),
        )
    )
    init_realize = BlockRealize(
        tuple(substitute_expr(v, fresh) for _, v in spatial),
        substitute_expr(init_predicate, fresh),
        init_block,
    )
    init_stmt: Stmt = init_realize
    for lp in reversed(needed):
        # TVM copies the loop (kind, thread binding, annotations) under a fresh var
        binding = lp.thread_binding
        if binding is not None:  # a thread axis var is bound per loop: give it its own
            binding = IterVar(
                Var(binding.var.name, binding.var.dtype), binding.dom, binding.kind,
                binding.thread_tag,
            )
        init_stmt = rebuild(
            lp, {"loop_var": fresh[lp.loop_var], "body": init_stmt, "thread_binding": binding}
        )
    update = refresh_regions(
        rebuild(block, {"init": None, "name_hint": f"{block.name_hint}_update"})
    )
    # Without its init the update reads the element it accumulates into: TVM lists those
    # reads first (the written regions joined to the block's reads).
    written = {id(r.buffer) for r in update.writes}
    update = rebuild(
        update,
        {
            "reads": tuple(r for r in update.reads if id(r.buffer) in written)
            + tuple(r for r in update.reads if id(r.buffer) not in written)
        },
    )
    state.replace(realize, rebuild(realize, {"block": update}), {block: update})
    new_loop = state.resolve(loop)
    assert isinstance(new_loop, For)
    parent = state.index.parent[id(new_loop)]
    if isinstance(parent, SeqStmt):
        items = list(parent.seq)
        at = next(k for k, s in enumerate(items) if s is new_loop)
        items.insert(at, init_stmt)
        state.replace(parent, seq(items))
    else:
        state.replace(parent, replace_child(parent, new_loop, seq([init_stmt, new_loop])))
    return init_block


def _conjuncts(expr: PrimExpr) -> list[PrimExpr]:
    if isinstance(expr, And):
        return _conjuncts(expr.a) + _conjuncts(expr.b)
    return [expr]


def _init_predicate(
    state: ScheduleState,
    block: Block,
    realize: BlockRealize,
    inner: list[For],
    needed: list[For],
    reduce_vars: list[Var],
) -> PrimExpr:
    """The init block's predicate: the conjuncts on its own loops. A conjunct on a reduction
    loop is dropped, as TVM does, only when it provably holds at the instance that ran the
    init (every reduction iter var at its minimum, reached at the loops' minima through
    affine bindings); otherwise the init's guard would change and the primitive refuses."""
    kept: list[PrimExpr] = []
    reduce_conjuncts: list[PrimExpr] = []
    for conj in _conjuncts(realize.predicate):
        (reduce_conjuncts if _uses_any(conj, reduce_vars) else kept).append(conj)
    if reduce_conjuncts:
        name = "decompose_reduction"
        extents = constant_extents(state.index.loops_above(block))
        at_min = {lp.loop_var: lp.min for lp in inner if lp not in needed}
        analyzer = Analyzer()
        for lp in needed:
            analyzer.bind_range(lp.loop_var, lp.min, lp.extent)
        first_instance = extents is not None and bindings_affine(
            realize.iter_values, extents
        ) is not None
        for iv, value in zip(block.iter_vars, realize.iter_values):
            if iv.kind == IterKind.REDUCE and first_instance:
                first_instance = structural_equal(
                    simplify_expr(substitute_expr(value, at_min) - iv.dom.min, analyzer),
                    const(0, iv.var.dtype),
                )
        for conj in reduce_conjuncts:
            holds = simplify_expr(substitute_expr(conj, at_min), analyzer)
            if not (first_instance and isinstance(holds, IntImm) and holds.value):
                raise fail(
                    state,
                    name,
                    "the block's predicate depends on a reduction loop and does not "
                    "provably hold where the init ran",
                    block,
                )
    out: PrimExpr = const(True)
    for conj in kept:
        out = conj if isinstance(out, IntImm) else And(out, conj)
    return out


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
    if found is None and _stores_several(block):
        raise fail(
            state,
            name,
            f"block {block.name_hint!r} reduces several buffers together (an argmax/argmin): "
            "on ties the factored result may keep another index than the original's first",
            block,
        )
    if found is None:
        raise fail(
            state,
            name,
            f"block {block.name_hint!r} is not an update 'C[...] = C[...] op value' with op "
            "one of +, *, min, max",
            block,
        )
    update, kind, value = found
    if not _is_identity(block.init, update, kind):
        raise fail(
            state,
            name,
            f"the init of block {block.name_hint!r} is not the identity of its reduction",
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
    unit = isinstance(loop.extent, IntImm) and loop.extent.value == 1
    if not touched and not unit:
        # a unit loop bound to nothing (left by a split or fuse) still factors, into a
        # dimension of one (TVM); a longer one would repeat the whole reduction
        raise fail(
            state, name, "the loop is not bound to any reduction iter var of the block", loop
        )
    out = update.buffer
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
        _check_hoistable(state, name, block, loops[0], out_buffer=update.buffer)
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
    rf_name = unique_name(state, f"{out.name}_rf")
    rf_shape = (*out.shape[:factor_axis], loop.extent, *out.shape[factor_axis:])
    rf_buffer = Buffer(rf_name, make_data_var(rf_name, out.dtype), rf_shape, out.dtype)
    rf_indices = (*update.indices[:factor_axis], rf_var, *update.indices[factor_axis:])
    rf_value = kind(BufferLoad(rf_buffer, rf_indices), substitute_expr(value, reduce_sub))
    assert isinstance(block.init, BufferStore)
    rf_init: BufferStore | None = BufferStore(rf_buffer, block.init.value, rf_indices)
    rf_body = BufferStore(rf_buffer, rf_value, rf_indices)
    if all(iv.kind == IterKind.SPATIAL for iv in rf_iters):
        # Nothing left to reduce: each rf element is the identity combined with one value,
        # which is that value (identity op x == x for + * min max).
        rf_init = None
        rf_body = BufferStore(rf_buffer, substitute_expr(value, reduce_sub), rf_indices)
    rf_block = refresh_regions(
        Block(
            tuple(rf_iters),
            (),
            (),
            unique_name(state, f"{block.name_hint}_rf"),
            rf_body,
            rf_init,
            annotations=dict(block.annotations),
        )
    )
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
    wb_spatial, wb_map = _fresh([iv for iv, _ in spatial])
    wb_iters = [wb_rf, *wb_spatial]
    wb_values = [fresh[loop.loop_var], *[substitute_expr(v, fresh) for _, v in spatial]]
    out_indices = tuple(substitute_expr(i, wb_map) for i in update.indices)
    wb_rf_indices = (*out_indices[:factor_axis], wb_rf.var, *out_indices[factor_axis:])
    wb_value = kind(BufferLoad(out, out_indices), BufferLoad(rf_buffer, wb_rf_indices))
    wb_block = refresh_regions(
        rebuild(
            block,
            {
                "iter_vars": tuple(wb_iters),
                "body": BufferStore(out, wb_value, out_indices),
                "init": substitute(block.init, wb_map),
            },
        )
    )
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
    new_scope = rebuild(scope_now, {"alloc_buffers": (*scope_now.alloc_buffers, rf_buffer)})
    scope_realize = state.index.realize_of(scope_now)
    state.replace(
        scope_realize, rebuild(scope_realize, {"block": new_scope}), {scope_now: new_scope}
    )
    return rf_block


def _check_hoistable(
    state: ScheduleState, name: str, block: Block, outer: For, out_buffer: Buffer
) -> None:
    """The rf nest computes every partial result before ``outer``, where the block's loops
    also run other blocks: none of them may write what the block's value reads."""
    reads = {id(b) for b in block_access(block).read_buffers if b is not out_buffer}
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
