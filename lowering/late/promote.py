"""The ``promote_accumulators`` pass: keep a loop's in-memory accumulator in a register.

``for k: C[i, j] = C[i, j] + A[i, k] * B[k, j]`` loads and stores ``C[i, j]`` on every
iteration: LLVM cannot keep it in a register because ``A`` or ``B`` might overlap ``C``
(they are arbitrary numpy arrays), so every step waits for a store-to-load forward. The
pass versions such a loop on a cheap run-time test -- the accumulator's address lies
outside every other parameter buffer the loop reads -- and on the fast path accumulates
into a one-element local buffer (which LLVM promotes to a register), storing once after
the loop. Operations and their order are unchanged, so results are bit-identical; when
the test fails (overlapping arrays) the original loop runs.

Applied to SERIAL loops with a constant trip count of at least :data:`MIN_TRIP_COUNT`
whose body is a single scalar ``BufferStore`` to a non-local buffer at an index independent
of the loop, whose value reads that buffer only at the same index, and has no side effects.
"""

from __future__ import annotations

from irbuilder.ir import (
    Allocate,
    Buffer,
    BufferLoad,
    BufferStore,
    DeclBuffer,
    For,
    ForKind,
    IfThenElse,
    IntImm,
    PrimExpr,
    PrimFunc,
    SeqStmt,
    Stmt,
    StmtExprMutator,
    as_dtype,
    make_data_var,
    structural_equal,
)

from ..analysis.loads import LoadCollector
from ..analysis.vars import depends_on
from ..arith import simplify_expr
from ..pass_infra import FunctionPass, function_pass
from ..transforms.unroll import copy_with_fresh_vars
from .versioning import LoopRewriter, all_of, element_range, no_overlap_checks, rewrite_loops

__all__ = ["MIN_TRIP_COUNT", "promote_accumulators", "promote_loop"]

MIN_TRIP_COUNT = 16
"""Shorter loops are left alone. LLVM unrolls a short constant loop whole and its own loop
vectorizer then runs the loop around it across lanes (a 3x3 depthwise convolution or max
pool vectorizes over the output row), which a test versioning the short loop prevents:
measured on znver5, the 3x3 depthwise convolution and max pool of 64x112x112 ran 12x and
7x slower promoted (1.47 / 1.55 ms against 0.12 / 0.23 ms). A short chain also has little
store-to-load latency to save."""

_U64 = as_dtype("uint64")
_TRUE = IntImm(as_dtype("bool"), 1)


def _plan(loop: For, local_data: set[int]) -> tuple[list[BufferLoad], list[PrimExpr]] | None:
    """The accumulator's loads in the loop's store and the no-overlap tests the fast copy
    needs, or None when the loop does not qualify (see module doc)."""
    if loop.kind is not ForKind.SERIAL or not isinstance(loop.body, BufferStore):
        return None
    if not (isinstance(loop.extent, IntImm) and loop.extent.value >= MIN_TRIP_COUNT):
        return None
    store = loop.body
    buffer = store.buffer
    if id(buffer.data) in local_data or len(store.indices) != 1:
        return None
    if store.value.dtype.lanes != 1 or buffer.dtype.lanes != 1:
        return None
    (index,) = store.indices
    var = loop.loop_var
    if depends_on(index, var):
        return None
    found = LoadCollector(traps_are_effects=True)
    found.visit_expr(store.value)
    if found.impure:
        return None
    self_loads = [load for load in found.loads if load.buffer.data is buffer.data]
    if not self_loads or any(
        len(load.indices) != 1 or not structural_equal(load.indices[0], index)
        for load in self_loads
    ):
        return None
    others = (load.buffer for load in found.loads if load.buffer.data is not buffer.data)
    checks = no_overlap_checks(element_range(buffer, index), others, local_data)
    return None if checks is None else (self_loads, checks)


def promote_loop(loop: For, local_data: set[int]) -> Stmt | None:
    """The versioned loop with a register accumulator (see module doc), or None."""
    plan = _plan(loop, local_data)
    if plan is None:
        return None
    self_loads, checks = plan
    store = loop.body
    assert isinstance(store, BufferStore)
    buffer, (index,), var = store.buffer, store.indices, loop.loop_var
    acc_data = make_data_var(f"{buffer.name}_acc", buffer.dtype)
    acc = Buffer(f"{buffer.name}_acc", acc_data, (IntImm(as_dtype("int32"), 1),), buffer.dtype)
    zero = IntImm(as_dtype("int32"), 0)
    acc_load = BufferLoad(acc, (zero,))
    value = _replace_loads(store.value, self_loads, acc_load)
    fast_loop = For(
        var,
        loop.min,
        loop.extent,
        loop.kind,
        BufferStore(acc, value, (zero,)),
        loop.thread_binding,
        loop.annotations,
        span=loop.span,
    )
    fast = SeqStmt(
        (
            BufferStore(acc, BufferLoad(buffer, (index,)), (zero,)),
            copy_with_fresh_vars(fast_loop),
            BufferStore(buffer, acc_load, (index,)),
        )
    )
    fast_alloc = Allocate(
        acc_data, buffer.dtype, IntImm(as_dtype("int32"), 1), _TRUE, DeclBuffer(acc, fast)
    )
    return IfThenElse(all_of(checks), fast_alloc, loop, span=loop.span) if checks else fast_alloc


class _Replace(StmtExprMutator):
    def __init__(self, targets: list[BufferLoad], new: PrimExpr) -> None:
        self.targets = {id(t) for t in targets}
        self.new = new

    def visit_expr(self, expr: PrimExpr) -> PrimExpr:
        if id(expr) in self.targets:
            return self.new
        return super().visit_expr(expr)


def _replace_loads(expr: PrimExpr, targets: list[BufferLoad], new: PrimExpr) -> PrimExpr:
    return _Replace(targets, new).visit_expr(expr)


class _Promoter(LoopRewriter):
    def rewrite(self, loop: For) -> Stmt | None:
        return promote_loop(loop, self.local_data)

    def visit_if_then_else_(self, stmt: IfThenElse) -> Stmt:
        # The fallback of a loop versioned on the very test this pass would make (the lane
        # split of `vectorize_reductions` checks the same element against the same buffers)
        # runs only when that test fails: a promoted copy there could never run.
        fallback = stmt.else_case
        if isinstance(fallback, For):
            inner = self.generic_mutate(fallback)
            plan = _plan(inner, self.local_data)
            if plan is not None and plan[1] and structural_equal(
                simplify_expr(all_of(plan[1])), simplify_expr(stmt.condition)
            ):
                then = self.visit_stmt(stmt.then_case)
                if then is stmt.then_case and inner is fallback:
                    return stmt
                return IfThenElse(stmt.condition, then, inner, span=stmt.span)
        return self.generic_mutate(stmt)


@function_pass("promote_accumulators", opt_level=1)
def _promote_accumulators(func: PrimFunc) -> PrimFunc:
    """Version loops accumulating into one array element to accumulate in a register."""
    return rewrite_loops(func, _Promoter)


promote_accumulators: FunctionPass = _promote_accumulators
"""The ``promote_accumulators`` pass (a :class:`FunctionPass`)."""
