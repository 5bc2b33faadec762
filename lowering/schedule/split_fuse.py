"""split and fuse: a loop re-indexed as several, or several as one.

They only re-index loops (the iterations run in the same order), so they are always legal;
TVM refuses them on loops carrying annotations or a thread binding.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from irbuilder.ir import (
    Allocate,
    AttrStmt,
    Block,
    BlockRealize,
    BufferStore,
    DeclBuffer,
    FloorDiv,
    For,
    ForKind,
    IfThenElse,
    IntImm,
    LetStmt,
    PrimExpr,
    SeqStmt,
    Stmt,
    Var,
    const,
)
from irbuilder.ir.linear_form import LinearForm, from_linear
from lowering.analysis.loads import reads_memory
from lowering.analysis.vars import depends_on
from lowering.arith import simplify_expr, supports_linear, to_linear

from .bindings import rewrite_below
from .error import ScheduleError, fail
from .state import ScheduleState

__all__ = ["fuse", "split"]


def split(
    state: ScheduleState,
    loop: For,
    factors: Sequence[int | None],
    preserve_unit_iters: bool,
    disable_predication: bool = False,
) -> list[For]:
    name = "split"
    if sum(f is None for f in factors) > 1:
        raise fail(state, name, "at most one factor may be None (inferred)", loop)
    if any(f is not None and f <= 0 for f in factors):
        raise fail(state, name, f"factors must be positive, got {list(factors)}", loop)
    _refuse_annotated(state, name, loop)
    dtype = loop.loop_var.dtype
    known = 1
    for f in factors:
        if f is not None:
            known *= f
    exact = False
    resolved: list[PrimExpr | int]
    if isinstance(loop.extent, IntImm):
        extent = loop.extent.value
        sizes_known = [(-(-extent // known) if f is None else f) for f in factors]
        resolved = list(sizes_known)
        product = 1
        for count in sizes_known:
            product *= count
        if product < extent:
            raise fail(
                state,
                name,
                f"the product of the factors {resolved} is {product}, less than the loop's "
                f"extent {extent}",
                loop,
            )
        exact = product == extent
    else:
        # A symbolic extent: the inferred factor is ceil(extent / known), TVM's
        # ``floordiv(extent + known - 1, known)``; the predicate guards the overshoot.
        if None not in factors:
            raise fail(
                state,
                name,
                "the loop's extent is symbolic: one factor must be None (inferred)",
                loop,
            )
        quotient = _exact_quotient(loop.extent, known)
        if quotient is not None:
            # ``n * 32`` split by 32: ceil(extent / known) is ``n`` and the split is exact
            inferred = quotient
            exact = True
        else:
            inferred = simplify_expr(
                FloorDiv(loop.extent + const(known - 1, dtype), const(known, dtype))
            )
        resolved = [inferred if f is None else f for f in factors]
    dtype = loop.loop_var.dtype
    new_vars = [Var(f"{loop.loop_var.name}_{k}", dtype) for k in range(len(resolved))]
    sizes: list[PrimExpr] = [const(f, dtype) if isinstance(f, int) else f for f in resolved]
    value: PrimExpr | None = None
    for var, factor, size in zip(new_vars, resolved, sizes):
        unit = isinstance(factor, int) and factor == 1
        term: PrimExpr = var if (not unit or preserve_unit_iters) else const(0, dtype)
        value = term if value is None else value * size + term
    assert value is not None
    if not (isinstance(loop.min, IntImm) and loop.min.value == 0):
        value = loop.min + value
    outer = _outer_loops(state, loop)
    new_loops_shell = [
        For(v, const(0, dtype), size, ForKind.SERIAL, loop.body)
        for v, size in zip(new_vars, sizes)
    ]
    predicate = None
    if not exact and disable_predication:
        # TVM drops the guard on the user's word; without a proof of exactness that
        # would run iterations past the extent, so the split is refused instead
        raise fail(
            state,
            name,
            f"disable_predication=True, but the factors {resolved} do not provably divide "
            "the loop's extent: the split needs its predicate",
            loop,
        )
    if not exact:
        unguarded = _outside_blocks(loop.body)
        if unguarded is not None:
            raise fail(
                state,
                name,
                f"the factors {resolved} do not divide the loop's extent, and its body has "
                f"a statement outside any block ({unguarded}) that the split's predicate, "
                "which guards blocks, would leave running past the extent",
                loop,
            )
        predicate = (
            value < loop.min + loop.extent
            if not isinstance(loop.min, IntImm) or loop.min.value
            else value < loop.extent
        )
    body, reuse = rewrite_below(
        loop.body, outer + new_loops_shell, {loop.loop_var: value}, predicate, preserve_unit_iters
    )
    stmt: Stmt = body
    built: list[For] = []
    for var, size in reversed(list(zip(new_vars, sizes))):
        stmt = For(var, const(0, dtype), size, ForKind.SERIAL, stmt)
        built.append(stmt)
    reuse_map = dict(reuse)
    state.replace(loop, stmt, reuse_map)
    return built[::-1]


def _outside_blocks(stmt: Stmt) -> str | None:
    """What in ``stmt`` runs outside every block (a store, an evaluation, a load in a
    condition or binding...), described; None when loops, sequences and block realizes are
    all there is above its blocks."""
    if isinstance(stmt, BlockRealize):
        return None
    if isinstance(stmt, For):
        return _outside_blocks(stmt.body)
    if isinstance(stmt, SeqStmt):
        for part in stmt.seq:
            found = _outside_blocks(part)
            if found is not None:
                return found
        return None
    if isinstance(stmt, BufferStore):
        return f"a store to {stmt.buffer.name!r}"
    if isinstance(stmt, (IfThenElse, LetStmt)):
        value = stmt.condition if isinstance(stmt, IfThenElse) else stmt.value
        if reads_memory(value):
            return f"a {type(stmt).__name__} reading memory"
        parts: list[Stmt | None] = (
            [stmt.then_case, stmt.else_case] if isinstance(stmt, IfThenElse) else [stmt.body]
        )
        for branch in parts:
            found = None if branch is None else _outside_blocks(branch)
            if found is not None:
                return found
        return None
    if isinstance(stmt, (AttrStmt, DeclBuffer, Allocate)):
        return _outside_blocks(stmt.body)
    return f"a {type(stmt).__name__}"


def _exact_quotient(extent: PrimExpr, divisor: int) -> PrimExpr | None:
    """``extent / divisor`` when every term and the constant of ``extent`` are multiples of
    ``divisor`` (so the division is exact for every value of its variables), else None."""
    if not supports_linear(extent.dtype):
        return None
    form = to_linear(extent)
    if form.const % divisor:
        return None
    quotient = LinearForm(extent.dtype)
    for atom, coef in form.live_terms():
        if coef % divisor:
            return None
        quotient.add_term(atom, coef // divisor)
    quotient.add_const(form.const // divisor)
    return simplify_expr(from_linear(quotient))


def fuse(state: ScheduleState, loops: Sequence[For], preserve_unit_iters: bool) -> For:
    name = "fuse"
    if not loops:
        raise ScheduleError(name, "needs at least one loop")
    for outer, inner in itertools.pairwise(loops):
        if outer.body is not inner:
            raise fail(
                state,
                name,
                f"loop {inner.loop_var.name!r} is not the only statement directly inside "
                f"loop {outer.loop_var.name!r}; only perfectly nested consecutive loops fuse",
                outer,
                inner,
            )
    for loop in loops:
        _refuse_annotated(state, name, loop)
        if not (isinstance(loop.min, IntImm) and loop.min.value == 0):
            raise fail(state, name, f"loop {loop.loop_var.name!r} does not start at 0", loop)
        if any(depends_on(other.extent, loop.loop_var) for other in loops):
            raise fail(state, name, "a loop's extent depends on another fused loop", loop)
    dtype = loops[0].loop_var.dtype
    fused = Var("_".join(lp.loop_var.name for lp in loops) + "_fused", dtype)
    kept = [lp for lp in loops if preserve_unit_iters or not _is_unit(lp.extent)]
    # TVM's substitution: the innermost loop is ``fused % e``, a middle one
    # ``fused % (lower * e) // lower``, the outermost ``fused // lower``.
    vmap: dict[Var, PrimExpr] = {}
    lower: PrimExpr = const(1, dtype)
    for k in range(len(loops) - 1, -1, -1):
        loop = loops[k]
        if loop not in kept:
            vmap[loop.loop_var] = const(0, dtype)
            continue
        value: PrimExpr = fused
        if loop is not kept[0]:
            value = value % _fold_mul(lower, loop.extent)
        if not _is_unit(lower):
            value = value // lower
        vmap[loop.loop_var] = value
        lower = _fold_mul(lower, loop.extent)
    total = simplify_expr(lower) if not isinstance(lower, IntImm) else lower
    enclosing = _outer_loops(state, loops[0])
    shell = For(fused, const(0, dtype), total, ForKind.SERIAL, loops[-1].body)
    body, reuse = rewrite_below(
        loops[-1].body, [*enclosing, shell], vmap, None, preserve_unit_iters
    )
    new = For(fused, const(0, dtype), total, ForKind.SERIAL, body)
    state.replace(loops[0], new, reuse)
    return new


def _refuse_annotated(state: ScheduleState, name: str, loop: For) -> None:
    """TVM refuses to split or fuse a loop carrying annotations or a thread binding: the
    new loops could not all keep them."""
    if loop.annotations or loop.thread_binding is not None or loop.kind == ForKind.THREAD_BINDING:
        raise fail(
            state,
            name,
            f"loop {loop.loop_var.name!r} has annotations or a thread binding; "
            "remove them before this primitive",
            loop,
        )


def _outer_loops(state: ScheduleState, loop: For) -> list[For]:
    """Loops above ``loop`` up to its scope block, outermost first."""
    out: list[For] = []
    for node in state.index.ancestors(loop):
        if isinstance(node, Block):
            break
        if isinstance(node, For):
            out.append(node)
    return out[::-1]


def _is_unit(expr: PrimExpr) -> bool:
    return isinstance(expr, IntImm) and expr.value == 1


def _fold_mul(a: PrimExpr, b: PrimExpr) -> PrimExpr:
    if isinstance(a, IntImm) and isinstance(b, IntImm):
        return const(a.value * b.value, a.dtype)
    if _is_unit(a):
        return b
    if _is_unit(b):
        return a
    return a * b
