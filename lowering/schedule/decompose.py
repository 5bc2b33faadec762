"""decompose_reduction(block, loop): a reduction block's init moved into its own block
``<name>_init`` right before ``loop`` (replicating, as ``<var>_init`` loops, the loops
inside ``loop`` that its spatial bindings use); the block is renamed ``<name>_update``.
Legal when every loop that a reduction binding uses is ``loop`` or inside it (the init then
still runs once per output element before its first update) and the predicate uses no
reduction loop. The init block declares the match_buffer views its init uses.
"""

from __future__ import annotations

from irbuilder.ir import (
    And,
    Block,
    BlockRealize,
    For,
    IntImm,
    IterKind,
    IterVar,
    PrimExpr,
    SeqStmt,
    Stmt,
    Var,
    const,
    rebuild,
    seq,
    structural_equal,
)
from lowering.analysis.substitute import substitute_expr
from lowering.analysis.vars import depends_on
from lowering.arith import Analyzer, simplify_expr

from .affine import bindings_affine
from .affine_symbolic import symbolic_bindings_affine
from .analysis import constant_extents, is_reduction_block, refuse_position_dependent
from .edit import refresh_regions
from .error import fail
from .state import ScheduleState, replace_child
from .views import declare_views

__all__ = ["decompose_reduction", "fresh_iter_vars"]


def _uses_any(expr: PrimExpr, vars_: list[Var]) -> bool:
    return any(depends_on(expr, v) for v in vars_)


def fresh_iter_vars(iter_vars: list[IterVar]) -> tuple[list[IterVar], dict[Var, PrimExpr]]:
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
    _check_affine(state, name, block, realize, loops)
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
    init_iters, init_map = fresh_iter_vars([iv for iv, _ in spatial])
    # An init writing through a view of the block (C0 = T.match_buffer(C[vi], ())) needs the
    # view declared in the init block too; TVM's init block declares none and cannot run.
    (init_body,), init_views = declare_views(
        state, name, block, [block.init], init_map, init_iters
    )
    init_block = refresh_regions(
        Block(
            tuple(init_iters),
            (),
            (),
            f"{block.name_hint}_init",
            init_body,
            match_buffers=init_views,
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


def _check_affine(
    state: ScheduleState, name: str, block: Block, realize: BlockRealize, loops: list[For]
) -> None:
    """TVM's reduction block has affine bindings (its init then runs exactly once per output
    element: at the first instance). ``vk = k * k // 2`` reaches ``vk == 0`` at two loop
    iterations, and the block's init restarts the sum at both; one init block would not."""
    extents = constant_extents(loops)
    if extents is not None:
        affine = bindings_affine(realize.iter_values, extents) is not None
    else:
        sym_extents: dict[Var, PrimExpr] = {}
        for lp in loops:
            if not (isinstance(lp.min, IntImm) and lp.min.value == 0):
                return
            sym_extents[lp.loop_var] = lp.extent
        affine = symbolic_bindings_affine(realize.iter_values, sym_extents) is not None
    if not affine:
        raise fail(
            state,
            name,
            f"block {block.name_hint!r} is not a reduction block: its bindings are not an "
            "affine map of its loops (the init may run at more than one instance of an "
            "output element)",
            block,
        )


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
