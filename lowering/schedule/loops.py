"""Loop primitives: split, fuse, reorder, add_unit_loop, parallel/vectorize/unroll/bind.

Split and fuse only re-index a loop (the iterations run in the same order), so they are
always legal. Reorder, parallel, vectorize and bind change the order or run iterations at
once; they require every block below to have affine bindings and to be complete or a
reduction (TVM's rules), and refuse when two blocks below share a buffer one of them
writes (a dependence between blocks that this analysis does not try to prove preserved).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

from irbuilder.ir import (
    Block,
    BlockRealize,
    BufferRegion,
    BufferStore,
    ExprMutator,
    FloorDiv,
    FloorMod,
    For,
    ForKind,
    IntImm,
    IterKind,
    IterVar,
    PrimExpr,
    Range,
    Stmt,
    Var,
    as_dtype,
    const,
    post_order_visit,
    rebuild,
)
from lowering.analysis.vars import depends_on
from lowering.arith import Analyzer, simplify_expr

from .affine import bindings_affine, detect, drop_outer_terms, predicate_matches_bindings
from .analysis import (
    access_regions,
    block_access,
    buffers_conflict,
    constant_extents,
    is_complete_block,
    is_reduction_block,
    relax_region,
)
from .bindings import rewrite_below
from .error import ScheduleError
from .state import ScheduleState, walk_preorder

__all__ = [
    "add_unit_loop",
    "fuse",
    "reorder",
    "set_loop_kind",
    "split",
]


def _fail(state: ScheduleState, name: str, reason: str, *nodes: Stmt) -> ScheduleError:
    from .error import render_error

    return ScheduleError(name, reason, render_error(state.output(), nodes) if nodes else "")


def _outer_loops(state: ScheduleState, loop: For) -> list[For]:
    """Loops above ``loop`` up to its scope block, outermost first."""
    out: list[For] = []
    for node in state.index.ancestors(loop):
        if isinstance(node, Block):
            break
        if isinstance(node, For):
            out.append(node)
    return out[::-1]


def split(
    state: ScheduleState,
    loop: For,
    factors: Sequence[int | None],
    preserve_unit_iters: bool,
    disable_predication: bool = False,
) -> list[For]:
    name = "split"
    if sum(f is None for f in factors) > 1:
        raise _fail(state, name, "at most one factor may be None (inferred)", loop)
    if any(f is not None and f <= 0 for f in factors):
        raise _fail(state, name, f"factors must be positive, got {list(factors)}", loop)
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
            raise _fail(
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
            raise _fail(
                state,
                name,
                "the loop's extent is symbolic: one factor must be None (inferred)",
                loop,
            )
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
        raise _fail(
            state,
            name,
            f"disable_predication=True, but the factors {resolved} do not provably divide "
            "the loop's extent: the split needs its predicate",
            loop,
        )
    if not exact:
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


def fuse(state: ScheduleState, loops: Sequence[For], preserve_unit_iters: bool) -> For:
    name = "fuse"
    if not loops:
        raise ScheduleError(name, "needs at least one loop")
    for outer, inner in itertools.pairwise(loops):
        if outer.body is not inner:
            raise _fail(
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
            raise _fail(state, name, f"loop {loop.loop_var.name!r} does not start at 0", loop)
        if any(depends_on(other.extent, loop.loop_var) for other in loops):
            raise _fail(state, name, "a loop's extent depends on another fused loop", loop)
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
        raise _fail(
            state,
            name,
            f"loop {loop.loop_var.name!r} has annotations or a thread binding; "
            "remove them before this primitive",
            loop,
        )


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


def _chain(state: ScheduleState, loops: Sequence[For], name: str) -> list[For]:
    """The loops from the outermost to the innermost of ``loops``, each the next's parent."""
    index = state.index
    ordered = sorted(loops, key=lambda lp: index.order[id(lp)])
    top, bottom = ordered[0], ordered[-1]
    for loop in ordered[1:]:
        if not index.is_ancestor(top, loop):
            raise _fail(state, name, "the loops are not nested in one another", *loops)
    path: list[For] = [bottom]
    for node in index.ancestors(bottom):
        if node is top:
            path.append(top)
            break
        if not isinstance(node, For):
            raise _fail(
                state,
                name,
                "the loops are not in one chain of nested loops (a block or statement lies "
                "between them)",
                *loops,
            )
        path.append(node)
    else:
        raise _fail(state, name, "the loops are not nested in one another", *loops)
    path.reverse()
    for outer, inner in itertools.pairwise(path):
        if outer.body is not inner:
            raise _fail(
                state,
                name,
                f"loop {outer.loop_var.name!r} holds more than loop "
                f"{inner.loop_var.name!r}; reordering would change what runs around it",
                outer,
            )
    return path


def _affine_enough(
    bindings: Sequence[PrimExpr], extents: Mapping[Var, int], parallel: bool
) -> bool:
    """Reordering runs the same multiset of block instances (each instance's effect depends
    on its iter values only), so affine bindings whose pieces overlap (two loop iterations
    naming one instance) are fine for it, as in TVM; running iterations concurrently needs
    distinct instances."""
    if bindings_affine(bindings, extents) is not None:
        return True
    if parallel:
        return False
    for binding in bindings:
        found = detect(binding, extents)
        if found is None:
            return False
        # TVM's surjective check: the pieces, lowest scale first, leave no gap
        covered = 1
        for split in sorted((s for s in found.splits if s.extent != 1), key=lambda s: s.scale):
            if split.scale <= 0 or split.scale > covered:
                return False
            covered += split.scale * (split.extent - 1)
    return True


def _check_blocks_below(
    state: ScheduleState,
    top: For,
    name: str,
    *,
    moving: Sequence[Var],
    parallel: bool,
    cross_thread: bool = False,
) -> None:
    """The blocks below ``top`` tolerate reordering (or concurrent runs) of ``moving``."""
    index = state.index
    blocks = index.blocks_below(top)
    for stmt in walk_preorder(top):
        if isinstance(stmt, Block):
            break
        if isinstance(stmt, BufferStore):
            raise _fail(
                state,
                name,
                "a store outside any block lies inside the loops; its dependences "
                "cannot be analyzed",
                top,
            )
    moving_ids = {id(v) for v in moving}
    for block in blocks:
        realize = index.realize_of(block)
        bindings: Sequence[PrimExpr] = realize.iter_values
        if parallel:
            extents = constant_extents(index.loops_above(block))
        else:
            # reordering loops inside ``top`` keeps every enclosing loop fixed: their vars
            # are symbols there (TVM), so only the loops from ``top`` down must be affine
            extents = constant_extents(
                [lp for lp in index.loops_above(block) if lp is top or index.is_ancestor(top, lp)]
            )
            if extents is not None:
                bindings = [drop_outer_terms(v, extents) for v in bindings]
                if not predicate_matches_bindings(realize.predicate, bindings, extents):
                    raise _fail(
                        state,
                        name,
                        f"the predicate of block {block.name_hint!r} bounds loops the "
                        "bindings do not combine that way; its iterations are not an affine "
                        "map of the loops",
                        block,
                    )
        if extents is None or not _affine_enough(bindings, extents, parallel):
            raise _fail(
                state,
                name,
                f"block {block.name_hint!r} does not have affine bindings of its loops "
                "(loops must start at 0 with constant extents, bindings be injective "
                "sums of loop pieces)",
                block,
            )
        complete = is_complete_block(index, block, sole_writer=False)
        if not complete and not is_reduction_block(
            index, block, need_init=False, sole_writer=False
        ):
            raise _fail(
                state,
                name,
                f"block {block.name_hint!r} is neither a complete block nor a reduction "
                "block, so its iterations may depend on each other",
                block,
            )
        if parallel:
            reduce_only = cross_thread and is_reduction_block(index, block, sole_writer=False)
            feeds = [
                iv.kind
                for iv, value in zip(block.iter_vars, realize.iter_values)
                if any(depends_on(value, var) for var in moving)
            ]
            if reduce_only and feeds and all(kind == IterKind.REDUCE for kind in feeds):
                # a cross-thread reduction (TVM): threads of a threadIdx loop combine their
                # partial results; this CPU build refuses thread-bound loops, and the
                # interpreter runs the threads in turn, so the sum is the serial one
                continue
            for iv, value in zip(block.iter_vars, realize.iter_values):
                uses = any(depends_on(value, var) for var in moving)
                if uses and iv.kind != IterKind.SPATIAL:
                    raise _fail(
                        state,
                        name,
                        f"the loop is bound to the reduction iter var {iv.var.name!r} of "
                        f"block {block.name_hint!r}; its iterations accumulate into the "
                        "same element",
                        block,
                    )
            _check_distinct_writes(state, block, realize, moving_ids, name)
    for k, first in enumerate(blocks):
        for second in blocks[k + 1 :]:
            shared = buffers_conflict(block_access(first), block_access(second))
            if shared is not None and parallel and _separated(state, top, first, second, shared):
                continue
            if shared is not None:
                raise _fail(
                    state,
                    name,
                    f"blocks {first.name_hint!r} and {second.name_hint!r} inside the loop "
                    f"both access buffer {shared.name!r} and one writes it; the "
                    "dependence between them cannot be proven preserved",
                    first,
                    second,
                )


def _separated(state: ScheduleState, loop: For, first: Block, second: Block, buffer: Any) -> bool:
    """Whether two iterations of ``loop`` never touch one element of ``buffer`` through
    ``first`` and ``second``: on some dimension every access of either, widened over the
    loops inside ``loop``, is ``stride * p + common + a`` wide ``e`` with all the windows
    ``[a, a + e)`` inside one stride (``p`` the loop's var)."""
    if isinstance(loop.extent, IntImm) and loop.extent.value == 1:
        return True
    index = state.index
    regions: list[BufferRegion] = []
    for block in (first, second):
        realize = index.realize_of(block)
        binding = {iv.var: v for iv, v in zip(block.iter_vars, realize.iter_values)}
        inner = {
            lp.loop_var: Range(lp.min, lp.extent)
            for lp in index.loops_above(block)
            if index.is_ancestor(loop, lp)
        }
        accesses = access_regions(block, buffer) + access_regions(block, buffer, writes=True)
        regions.extend(relax_region(r, binding, inner) for r in accesses)
    if not regions:
        return True
    var = loop.loop_var
    for dim in range(len(buffer.shape)):
        if _dimension_separates([r.region[dim] for r in regions], var):
            return True
    return _digits_separate(regions, loop)


def _digits_separate(regions: Sequence[BufferRegion], loop: For) -> bool:
    """A fused loop ``p`` over ``[0, e)`` seen through its digits ``p // c`` and ``p % c``
    (which determine ``p``): two iterations differ in one digit at least, so they touch
    distinct elements when each digit separates on a dimension that the other digit does
    not enter (``fuse(f_o, y)`` of a conv2d tile: channel block and row)."""
    var = loop.loop_var
    if not (isinstance(loop.min, IntImm) and loop.min.value == 0):
        return False
    divisors: dict[str, set[int]] = {"div": set(), "mod": set()}

    def visit(node: object) -> None:
        if isinstance(node, (FloorDiv, FloorMod)) and node.a is var:
            if isinstance(node.b, IntImm) and node.b.value > 0:
                divisors["div" if isinstance(node, FloorDiv) else "mod"].add(node.b.value)

    for region in regions:
        for rng in region.region:
            post_order_visit(rng.min, visit)
    common = divisors["div"] & divisors["mod"]
    if len(common) != 1 or len(divisors["div"] | divisors["mod"]) != 1:
        return False
    factor = common.pop()
    high, low = Var(f"{var.name}_hi", var.dtype), Var(f"{var.name}_lo", var.dtype)
    digits = _Digits(var, factor, high, low)
    dims: list[list[Range]] = [
        [Range(digits.visit_expr(r.region[d].min), r.region[d].extent) for r in regions]
        for d in range(len(regions[0].region))
    ]
    if any(depends_on(rng.min, var) for ranges in dims for rng in ranges):
        return False
    for digit, other in ((high, low), (low, high)):
        if not any(
            _dimension_separates(ranges, digit)
            and not any(depends_on(rng.min, other) for rng in ranges)
            for ranges in dims
        ):
            return False
    return True


class _Digits(ExprMutator):
    """``p // c`` and ``p % c`` replaced by the digit vars ``high`` and ``low``."""

    def __init__(self, var: Var, factor: int, high: Var, low: Var) -> None:
        self.var, self.factor, self.high, self.low = var, factor, high, low

    def _digit(self, node: FloorDiv | FloorMod) -> bool:
        return node.a is self.var and isinstance(node.b, IntImm) and node.b.value == self.factor

    def visit_floor_div_(self, node: FloorDiv) -> PrimExpr:
        return self.high if self._digit(node) else self.generic_mutate(node)

    def visit_floor_mod_(self, node: FloorMod) -> PrimExpr:
        return self.low if self._digit(node) else self.generic_mutate(node)


def _dimension_separates(ranges: Sequence[Range], var: Var) -> bool:
    from lowering.arith import to_linear
    from lowering.arith.canonical import linear_coefficient

    stride = None
    base: PrimExpr | None = None
    lows: list[int] = []
    highs: list[int] = []
    for rng in ranges:
        if not isinstance(rng.extent, IntImm) or not rng.min.dtype.is_int:
            return False
        coef = linear_coefficient(rng.min, var)
        if coef is None or coef <= 0 or (stride is not None and coef != stride):
            return False
        stride = coef
        rest = rng.min - var * coef
        if base is None:
            base = rest
        diff = to_linear(rest - base)
        if diff.live_terms():
            return False
        lows.append(diff.const)
        highs.append(diff.const + rng.extent.value)
    assert stride is not None
    return max(highs) - min(lows) <= stride


def _check_distinct_writes(
    state: ScheduleState, block: Block, realize: BlockRealize, moving: set[int], name: str
) -> None:
    """Distinct iterations of the parallel loop write distinct elements."""
    bound = [
        iv.var
        for iv, value in zip(block.iter_vars, realize.iter_values)
        if any(isinstance(n, Var) and id(n) in moving for n in _vars_of(value))
    ]
    # Indices are read under the iter vars' domains: a packed layout's
    # (v0 * 8 + v2) // 8 is v0 when v2 < 8 (what TVM's affine analysis sees).
    analyzer = Analyzer()
    for iv in block.iter_vars:
        analyzer.bind_range(iv.var, iv.dom.min, iv.dom.extent)
    for region in block_access(block).writes:
        covered: set[int] = set()
        for rng in region.region:
            low = simplify_expr(rng.min, analyzer)
            mins = [v for v in bound if depends_on(low, v)]
            if not mins:
                continue
            if len(mins) != 1 or not _is_var_plus_free(low, mins[0], bound):
                raise _fail(
                    state,
                    name,
                    f"block {block.name_hint!r} writes {region.buffer.name!r} at an index "
                    "that is not one loop-bound iter var, so two iterations may write "
                    "the same element",
                    block,
                )
            covered.add(id(mins[0]))
        missing = [v for v in bound if id(v) not in covered]
        if missing:
            raise _fail(
                state,
                name,
                f"block {block.name_hint!r} writes {region.buffer.name!r} at the same "
                f"element for every value of iter var {missing[0].name!r}, which the loop "
                "runs concurrently",
                block,
            )


def _vars_of(expr: PrimExpr) -> list[object]:
    found: list[object] = []
    post_order_visit(expr, found.append)
    return found


def _is_var_plus_free(expr: PrimExpr, var: Var, bound: Sequence[Var]) -> bool:
    from lowering.arith import to_linear

    if not expr.dtype.is_int:
        return False
    form = to_linear(expr)
    coef = 0
    for atom, c in form.live_terms():
        if atom is var:
            coef += c
        elif any(depends_on(atom, v) for v in bound):
            return False
    return coef in (1, -1)


def reorder(state: ScheduleState, loops: Sequence[For]) -> list[For]:
    name = "reorder"
    if len({id(lp) for lp in loops}) != len(loops):
        raise _fail(state, name, "a loop is listed twice", *loops)
    path = _chain(state, loops, name)
    path_vars = [lp.loop_var for lp in path]
    for loop in path:
        if any(depends_on(loop.min, v) or depends_on(loop.extent, v) for v in path_vars):
            raise _fail(
                state,
                name,
                f"the range of loop {loop.loop_var.name!r} depends on another loop of the nest",
                loop,
            )
    _check_blocks_below(state, path[0], name, moving=path_vars, parallel=False)
    listed = {id(lp) for lp in loops}
    queue = list(loops)
    order = [queue.pop(0) if id(lp) in listed else lp for lp in path]
    stmt = path[-1].body
    reuse: dict[Stmt, Stmt] = {}
    for source in reversed(order):
        stmt = rebuild(source, {"body": stmt})
        reuse[source] = stmt
    state.replace(path[0], stmt, reuse)
    return [reuse[lp] for lp in loops]  # type: ignore[misc]


def add_unit_loop(state: ScheduleState, target: Block | For) -> For:
    var = Var("u", as_dtype("int32"))
    node: Stmt = state.index.realize_of(target) if isinstance(target, Block) else target
    new = For(var, const(0), const(1), ForKind.SERIAL, node)
    state.replace(node, new)
    return new


_THREAD_TAGS = ("blockIdx.", "threadIdx.", "vthread")


def set_loop_kind(
    state: ScheduleState,
    loop: For,
    kind: ForKind,
    name: str,
    thread_axis: str | None = None,
) -> For:
    if kind in (ForKind.PARALLEL, ForKind.VECTORIZED, ForKind.THREAD_BINDING):
        if kind == ForKind.VECTORIZED and not isinstance(loop.extent, IntImm):
            raise _fail(state, name, "a vectorized loop needs a constant extent", loop)
        _check_blocks_below(
            state,
            loop,
            name,
            moving=[loop.loop_var],
            parallel=True,
            cross_thread=thread_axis is not None and thread_axis.startswith("threadIdx."),
        )
    binding = None
    if kind == ForKind.THREAD_BINDING:
        assert thread_axis is not None
        if not thread_axis.startswith(_THREAD_TAGS):
            raise _fail(state, name, f"unknown thread axis {thread_axis!r}", loop)
        binding = IterVar(
            Var(thread_axis, loop.loop_var.dtype),
            Range(loop.min, loop.extent),
            IterKind.THREAD,
            thread_axis,
        )
    new = rebuild(loop, {"kind": kind, "thread_binding": binding})
    state.replace(loop, new, {loop: new})
    return new  # type: ignore[no-any-return]
