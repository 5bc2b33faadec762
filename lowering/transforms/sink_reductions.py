"""The ``sink_reduction_loops`` pass: a reduction nest whose schedule put output loops
inside its reduction loops gets every reduction loop inside every output loop again.

TVM's CPU GEMM tutorial blocks a matmul by 32 x 32 and moves the row loop between the two
halves of the split reduction loop; it prints, once scheduled, ::

    for m_0 in T.parallel(32):
        for n_0, k_0, m_1, k_1 in T.grid(32, 256, 32, 4):
            for n_1 in T.vectorized(32):
                with T.block("C"):
                    ...                       # C[m, n] += A[m, k] * B[k, n]

Every multiply-add then loads and stores its element of ``C`` (the row changes between two
steps of one element), and the init test ``k_0 == 0 and k_1 == 0`` runs in the innermost
loop: 32 ms on the Zen 5 host where the unscheduled block takes 9. Each element of ``C``
gets its steps in the order of the reduction loops alone, so the loops may be permuted
while those loops keep their relative order: output loops outermost (a vectorized one made
serial: the later passes vectorize the output columns again, in register tiles), as
written or row-major (by decreasing stride) when that makes the contiguous row the late
stage walks longer (the TensorIR tutorial's ``i_1`` between ``j_0`` and ``j_1`` cuts it to
16 columns; a packed operand's panel loop, not contiguous with the row, keeps its place),
reduction loops innermost. That is the row-by-row nest
``tile_reduction_panels`` computes in register tiles.

Applied to a perfect nest of serial, vectorized or unrolled loops (no parallel loop inside
it, no thread binding, bounds that read no memory nor the nest's variables) whose body
updates one element ``C[idx]`` (optionally after the lowered init ``if k_0 == 0 and ...:
C[idx] = init``), where

* the output loops are those ``idx`` depends on, each with a constant coefficient and a
  constant extent, and ``idx`` takes a different value for every combination of them (each
  coefficient larger than the span of the smaller ones); the reduction loops are the others,
  serial or unrolled (the tutorial unrolls ``k_1``; moved innermost, it becomes serial and
  ``merge_split_loops`` joins it to ``k_0``);
* some serial output loop is inside some reduction loop (a vectorized one alone is the
  usual ``for k: for j in T.vectorized`` order, which vectorizes as it is; an unrolled one
  is the schedule's register tile, x86 ``conv2d_NCHWc``'s 8 output columns, kept);
* the update reads ``C`` only at ``idx``, stores nothing else, calls nothing external, and
  the init reads no ``C`` and tests only reduction variables;
* ``C`` overlaps no other array the nest reads: tested at run time for parameters, the nest
  as written when the test fails;
* the late stage takes the row-by-row nest: ``interchange_reductions`` applies to its
  innermost output loop (contiguous columns, at least 16; ``C`` may be the function's own
  allocation, which needs no overlap test), so it never stays one scalar chain per element,
  slower than as written.

A parallel loop over blocks of rows whose whole body is such a nest (a schedule's
``T.parallel(i_0)`` over 4 rows ``i_1``) becomes one parallel loop over the rows when its
index walks on into the first output loop's: the late stage then blocks the rows its own
way (the TensorIR tutorial's 4 x 16 tiles: 7.0 -> 5.6 ms, as AVX2 code 18.1 -> 12.2).

Every element still receives its init and then its steps in the same order: results are
bit-identical. Only the order across elements changes, which no element observes (each is
written at one index and read only there, and nothing else is written).
"""

from __future__ import annotations

from dataclasses import dataclass

from irbuilder.ir import (
    BufferStore,
    For,
    ForKind,
    IfThenElse,
    IntImm,
    PrimExpr,
    PrimFunc,
    SeqStmt,
    Stmt,
    structural_equal,
)

from ..analysis.loads import LoadCollector, reads_memory
from ..analysis.vars import depends_on
from ..arith.canonical import linear_coefficient
from ..late.interchange import interchange_loop
from ..late.versioning import (
    LoopRewriter,
    all_of,
    byte_range,
    no_overlap_checks,
    rewrite_loops,
)
from ..pass_infra import FunctionPass, function_pass
from .fuse_loops import fuse_loop_pair
from .merge_split import merge_split_loop
from .unroll import copy_with_fresh_vars

__all__ = ["sink_reduction_loops", "sink_reduction_nest"]

_MOVABLE = (ForKind.SERIAL, ForKind.VECTORIZED, ForKind.UNROLLED)


@dataclass
class _Nest:
    loops: list[For]
    init: IfThenElse | None
    update: BufferStore


def _nest(loop: For) -> _Nest | None:
    loops: list[For] = []
    body: Stmt = loop
    while isinstance(body, For):
        if body.kind not in _MOVABLE or body.thread_binding is not None:
            return None
        loops.append(body)
        body = body.body
    init: IfThenElse | None = None
    if isinstance(body, SeqStmt) and len(body.seq) == 2:
        first, body = body.seq
        if not (isinstance(first, IfThenElse) and first.else_case is None
                and isinstance(first.then_case, BufferStore)):
            return None
        init = first
    if not isinstance(body, BufferStore):
        return None
    return _Nest(loops, init, body)


def _injective(index_terms: list[tuple[int, int]]) -> bool:
    """Whether ``sum(c * v)`` over loops ``v in [0, extent)`` (``(c, extent)`` pairs) takes
    a different value for every combination: each ``|c|`` above the span of the smaller."""
    span = 0
    for coef, extent in sorted(index_terms, key=lambda t: abs(t[0])):
        if abs(coef) <= span:
            return False
        span += abs(coef) * (extent - 1)
    return True


def sink_reduction_nest(loop: For, local_data: set[int]) -> Stmt | None:
    """``loop``'s nest with its reduction loops innermost (module doc), versioned on a
    no-overlap test where one is needed, or None when it does not apply."""
    nest = _nest(loop)
    if nest is None or len(nest.loops) < 3:
        return None
    update = nest.update
    target = update.buffer
    if len(update.indices) != 1:
        return None
    (index,) = update.indices
    if reads_memory(index):
        return None
    outputs: list[For] = []
    reductions: list[For] = []
    terms: list[tuple[int, int]] = []
    for lp in nest.loops:
        for bound in (lp.min, lp.extent):
            if reads_memory(bound) or any(depends_on(bound, o.loop_var) for o in nest.loops):
                return None
        if not depends_on(index, lp.loop_var):
            if lp.kind is ForKind.VECTORIZED:
                return None
            reductions.append(lp)
            continue
        coef = linear_coefficient(index, lp.loop_var)
        if coef is None or coef == 0 or not isinstance(lp.extent, IntImm):
            return None
        terms.append((coef, lp.extent.value))
        outputs.append(lp)
    if not reductions or not _injective(terms):
        return None
    first_reduction = nest.loops.index(reductions[0])
    output_ids = {id(lp) for lp in outputs}
    moved = [lp for lp in nest.loops[first_reduction:] if id(lp) in output_ids]
    # Vectorized output loops alone inside the reductions are the usual ``for k: for j in
    # T.vectorized`` order, which vectorizes as written: unless an output loop outside the
    # reductions continues their row (a 4-lane ``j_1`` under ``j_0, k``), checked below
    if not moved:
        return None  # every output loop is already outside the reductions
    only_lanes = all(lp.kind is ForKind.VECTORIZED for lp in moved)
    if any(lp.kind is ForKind.UNROLLED for lp in moved):
        # the schedule's own register tile (x86 conv2d_NCHWc unrolls 8 output columns
        # inside its reduction loops): moved out, they would be 8 chains one after another
        return None
    found = LoadCollector(traps_are_effects=True)
    found.visit_expr(update.value)
    if nest.init is not None:
        guard, init = nest.init.condition, nest.init.then_case
        assert isinstance(init, BufferStore)
        if (init.buffer.data is not target.data or len(init.indices) != 1
                or not structural_equal(init.indices[0], index) or reads_memory(guard)
                or any(depends_on(guard, o.loop_var) for o in outputs)):
            return None
        start = LoadCollector(traps_are_effects=True)
        start.visit_expr(init.value)
        if start.impure or any(load.buffer.data is target.data for load in start.loads):
            return None  # the init reads the accumulator
        found.loads.extend(start.loads)
    if found.impure:
        return None
    others = []
    for load in found.loads:
        if load.buffer.data is target.data:
            if len(load.indices) != 1 or not structural_equal(load.indices[0], index):
                return None
        else:
            others.append(load.buffer)
    checks: list[PrimExpr] | None = []
    if id(target.data) not in local_data:
        written = byte_range(target)
        checks = None if written is None else no_overlap_checks(written, others, local_data)
    if checks is None:
        return None
    body: Stmt = update if nest.init is None else SeqStmt((nest.init, update))
    steps = body
    for lp in reversed(reductions):
        steps = For(lp.loop_var, lp.min, lp.extent, ForKind.SERIAL, steps, lp.thread_binding,
                    lp.annotations, span=lp.span)
    assert isinstance(steps, For)
    # the reduction loops as the late stage sees them: a split pair merged
    steps = merge_split_loop(steps) or steps
    # The output loops as written, or row-major (by decreasing stride) when that makes the
    # row the late stage walks longer: the schedule's i_1 between j_0 and j_1 cuts it to
    # 16 columns, where j_0 walking on into j_1 is 1024; a packed operand's panel loop
    # (its stride apart from the row's) stays where the schedule put it.
    strides = {id(lp): abs(coef) for lp, (coef, _) in zip(outputs, terms)}
    row_major = sorted(outputs, key=lambda lp: -strides[id(lp)])
    row = _row(outputs, steps)
    if row_major != outputs:
        longer = _row(row_major, steps)
        if _trips(longer) > _trips(row):
            outputs, row = row_major, longer
    if only_lanes and _trips(row) <= _product(moved):
        return None
    if interchange_loop(row, local_data) is None:
        # the late stage would leave the row-by-row nest as it is: one scalar chain per
        # element, slower than the nest as written (columns not contiguous, a short row)
        return None
    for lp in reversed([*outputs, *reductions]):
        kind = lp.kind if lp.kind is ForKind.UNROLLED and id(lp) in output_ids \
            else ForKind.SERIAL
        body = For(lp.loop_var, lp.min, lp.extent, kind, body, lp.thread_binding,
                   lp.annotations, span=lp.span)
    if not checks:
        return body
    return IfThenElse(all_of(checks), copy_with_fresh_vars(body), loop, span=loop.span)


def _product(loops: list[For]) -> int:
    count = 1
    for lp in loops:
        count *= _trips(lp)
    return count


def _trips(loop: For) -> int:
    return loop.extent.value if isinstance(loop.extent, IntImm) else 0


def _row(outputs: list[For], steps: Stmt) -> For:
    """The innermost output loop around ``steps`` as ``fuse_contiguous_loops`` will leave
    it: one loop with the output loops outside it that walk on contiguously (a split
    ``j_0 * 4 + j_1`` is one row of ``4 * J`` again)."""
    inner = outputs[-1]
    row = For(inner.loop_var, inner.min, inner.extent, ForKind.SERIAL, steps)
    for outer in reversed(outputs[:-1]):
        fused = fuse_loop_pair(For(outer.loop_var, outer.min, outer.extent, ForKind.SERIAL,
                                   row))
        if fused is None:
            break
        row = fused
    return row


def _merged_rows(parallel: For, nest: Stmt) -> For | None:
    """``parallel`` (a parallel loop over blocks of rows) and the first output loop of the
    sunk ``nest`` it holds as one parallel loop over rows, when its index walks on into
    that loop's (``i_0 * 4 + i_1``): the late stage then picks its own blocks of rows
    instead of the schedule's 4."""
    trial = For(parallel.loop_var, parallel.min, parallel.extent, ForKind.SERIAL, nest,
                span=parallel.span)
    fused = fuse_loop_pair(trial)
    if fused is None:
        return None
    return For(fused.loop_var, fused.min, fused.extent, ForKind.PARALLEL, fused.body,
               annotations=parallel.annotations, span=parallel.span)


class _Sink(LoopRewriter):
    inner_first = False

    def rewrite(self, loop: For) -> Stmt | None:
        if loop.kind is ForKind.PARALLEL and isinstance(loop.body, For) \
                and loop.thread_binding is None:
            # The sunk nest's iterations are independent (each element is its own chain):
            # a parallel loop over blocks of its rows may take the rows themselves.
            inner = sink_reduction_nest(loop.body, self.local_data)
            sunk = inner.then_case if isinstance(inner, IfThenElse) else inner
            if inner is None:
                return None
            merged = None if sunk is None else _merged_rows(loop, sunk)
            if merged is None:
                # the nest sunk where it is (offering the body again would sink it twice)
                return For(loop.loop_var, loop.min, loop.extent, loop.kind, inner,
                           loop.thread_binding, loop.annotations, span=loop.span)
            if isinstance(inner, IfThenElse):
                return IfThenElse(inner.condition, merged, loop, span=loop.span)
            return merged
        return sink_reduction_nest(loop, self.local_data)


@function_pass("sink_reduction_loops", opt_level=1)
def _sink_reduction_loops(func: PrimFunc) -> PrimFunc:
    """Move a reduction nest's reduction loops inside its output loops (module doc)."""
    return rewrite_loops(func, _Sink)


sink_reduction_loops: FunctionPass = _sink_reduction_loops
"""The ``sink_reduction_loops`` pass (a :class:`FunctionPass`)."""
