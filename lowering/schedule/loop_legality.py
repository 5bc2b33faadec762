"""Whether the blocks below a loop tolerate its iterations being reordered (reorder) or
run at once (parallel, vectorize, bind): TVM's rules.

Every block below needs affine bindings and to be complete or a reduction; run at once, a
loop must feed only spatial iter vars and write distinct elements in distinct iterations.
Two blocks below that share a buffer one of them writes are refused (a dependence this
analysis does not try to prove preserved), unless the loop runs at once and its iterations
touch disjoint parts of the buffer (:mod:`.loop_separation`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from irbuilder.ir import (
    LT,
    And,
    Block,
    BlockRealize,
    BufferRegion,
    BufferStore,
    ExprMutator,
    FloorDiv,
    FloorMod,
    For,
    IntImm,
    IterKind,
    PrimExpr,
    Var,
    post_order_visit,
)
from lowering.analysis.substitute import substitute_expr
from lowering.analysis.vars import depends_on
from lowering.arith import Analyzer, simplify_expr, supports_linear, to_linear

from .affine import bindings_affine, detect, drop_outer_terms, predicate_matches_bindings
from .analysis import (
    block_access,
    buffers_conflict,
    constant_extents,
    is_complete_block,
    is_reduction_block,
)
from .error import fail
from .loop_separation import separated
from .state import ScheduleState, walk_preorder

__all__ = ["check_blocks_below"]


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


def _fused_under_predicate(
    predicate: PrimExpr, bindings: Sequence[PrimExpr], extents: dict[Var, int]
) -> Sequence[PrimExpr]:
    """TVM's ``DetectIterMap`` under a predicate: ``(a * 128 + b) * 2 + c < 64`` (a split of
    a fused copy by ``[None, 128, 2]``) bounds the loops ``a, b, c`` as one iterator ``F`` of
    extent 64; the bindings rewritten over ``F`` (``b // 2`` is ``F // 4``) may be affine
    where over ``a, b, c`` they are not. ``extents`` gains ``F`` (and drops ``a, b, c``) when
    the bindings are rewritten; else the bindings come back unchanged."""
    parts: list[PrimExpr] = []
    stack = [predicate]
    while stack:
        node = stack.pop()
        if isinstance(node, And):
            stack.extend((node.a, node.b))
        else:
            parts.append(node)
    for part in parts:
        if not (isinstance(part, LT) and isinstance(part.b, IntImm)):
            continue
        found = detect(part.a, extents)
        if found is None or found.base != 0:
            continue
        digits = found.digits()
        if not digits or any(
            d.lower_factor != 1 or d.extent != extents[d.source] for d in digits
        ):
            continue
        bound = part.b.value
        total = 1
        for d in digits:
            total *= d.extent
        if not 0 < bound < total:
            continue
        fused = Var("fused_under_predicate", part.a.dtype)
        target = _linear_key(part.a)
        if target is None:
            continue
        sources = [d.source for d in digits]
        rewritten = [_ReplaceSum(target, fused).visit_expr(b) for b in bindings]
        if any(depends_on(b, v) for b in rewritten for v in sources):
            # the sum split apart (ours reads `a * 64 + b // 2`): each loop as its digit of
            # the fused iterator, simplified within the bound
            substitution: dict[Var, PrimExpr] = {}
            for k, d in enumerate(digits):
                value: PrimExpr = FloorDiv(fused, IntImm(fused.dtype, d.scale))
                if k + 1 < len(digits):
                    value = FloorMod(value, IntImm(fused.dtype, d.extent))
                substitution[d.source] = value
            analyzer = Analyzer()
            analyzer.bind_range(fused, IntImm(fused.dtype, 0), IntImm(fused.dtype, bound))
            rewritten = [
                simplify_expr(substitute_expr(b, substitution), analyzer) for b in bindings
            ]
        for d in digits:
            del extents[d.source]
        extents[fused] = bound
        return rewritten
    return bindings


def _linear_key(expr: PrimExpr) -> tuple[frozenset[tuple[int, int]], int] | None:
    if not (expr.dtype.is_int and supports_linear(expr.dtype)):
        return None
    form = to_linear(expr)
    terms = form.live_terms()
    if not all(isinstance(atom, Var) for atom, _ in terms):
        return None
    return frozenset((id(atom), coef) for atom, coef in terms), form.const


class _ReplaceSum(ExprMutator):
    """Each subexpression equal (as a linear form of loop vars) to the fused sum becomes the
    fused iterator."""

    def __init__(self, target: tuple[frozenset[tuple[int, int]], int], fused: Var) -> None:
        self.target, self.fused = target, fused

    def visit_expr(self, expr: PrimExpr) -> PrimExpr:
        if not isinstance(expr, (IntImm, Var)) and _linear_key(expr) == self.target:
            return self.fused
        return super().visit_expr(expr)


def check_blocks_below(
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
            raise fail(
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
                    raise fail(
                        state,
                        name,
                        f"the predicate of block {block.name_hint!r} bounds loops the "
                        "bindings do not combine that way; its iterations are not an affine "
                        "map of the loops",
                        block,
                    )
        if extents is not None and parallel and not _affine_enough(bindings, extents, True):
            bindings = _fused_under_predicate(realize.predicate, bindings, extents)
        if extents is None or not _affine_enough(bindings, extents, parallel):
            raise fail(
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
            raise fail(
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
                    raise fail(
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
            if shared is not None and parallel and separated(state, top, first, second, shared):
                continue
            if shared is not None:
                raise fail(
                    state,
                    name,
                    f"blocks {first.name_hint!r} and {second.name_hint!r} inside the loop "
                    f"both access buffer {shared.name!r} and one writes it; the "
                    "dependence between them cannot be proven preserved",
                    first,
                    second,
                )


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
        if _injective_point_writes(block, region, bound, analyzer):
            continue
        covered: set[int] = set()
        for rng in region.region:
            low = simplify_expr(rng.min, analyzer)
            mins = [v for v in bound if depends_on(low, v)]
            if not mins:
                continue
            if len(mins) != 1 or not _is_var_plus_free(low, mins[0], bound):
                raise fail(
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
            raise fail(
                state,
                name,
                f"block {block.name_hint!r} writes {region.buffer.name!r} at the same "
                f"element for every value of iter var {missing[0].name!r}, which the loop "
                "runs concurrently",
                block,
            )


def _injective_point_writes(
    block: Block, region: BufferRegion, bound: Sequence[Var], analyzer: Analyzer
) -> bool:
    """Whether the block writes one element per instance through indices that are an
    injective map of its iter vars (mixed-radix pieces covering each var they use, as a
    layout rewrite's ``p1_global[v0 // 64, v1, v0 % 64]``), every loop-bound var among them:
    then distinct iterations of the loop, distinct instances, write distinct elements."""
    if any(not (isinstance(r.extent, IntImm) and r.extent.value == 1) for r in region.region):
        return False
    extents: dict[Var, int] = {}
    for iv in block.iter_vars:
        if (
            isinstance(iv.dom.min, IntImm)
            and iv.dom.min.value == 0
            and isinstance(iv.dom.extent, IntImm)
        ):
            extents[iv.var] = iv.dom.extent.value
    indices = [simplify_expr(r.min, analyzer) for r in region.region]
    used = {v: e for v, e in extents.items() if any(depends_on(i, v) for i in indices)}
    if any(id(v) not in {id(u) for u in used} for v in bound):
        return False
    sums = bindings_affine(indices, used)
    if sums is None:
        return False
    spans: dict[int, list[tuple[int, int]]] = {}
    for found in sums:
        for split in found.splits:
            if split.extent != 1:
                spans.setdefault(id(split.source), []).append(
                    (split.lower_factor, split.lower_factor * split.extent)
                )
    for var, extent in used.items():
        reach = 1
        for low, high in sorted(spans.get(id(var), [])):
            if low != reach:
                return False
            reach = high
        if reach != extent:
            return False
    return True


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
