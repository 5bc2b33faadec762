"""The ``vectorize_parallel_columns`` pass: a parallel loop over the contiguous dimension,
around serial loops, runs ``L`` of its iterations at once, one per vector lane.

``for j in T.parallel(n): for i in range(1, m): O[i, j] = O[i - 1, j] + A[i, j]`` (a
cumulative sum down the columns) has a serial inner loop stepping a whole row per
iteration: each access touches one float of a cache line, and nothing vectorizes (on the
Zen 5 host 14.7 ms for 1024 x 4096 float32, against 0.94 ms for numba's twin that runs
blocks of columns side by side). Iterations of a parallel loop are independent (the
promise ``T.parallel`` makes, checked by the race check), so ``L`` neighbouring columns
may run in lock-step, column ``j0 + u`` in lane ``u``, each performing its own operations
in its own order (bit-exact)::

    for j_lanes in T.parallel(n // L):
        for i in range(1, m):
            O[T.Ramp(i * n + j_lanes * L, 1, L)] = O[T.Ramp(...)] + A[T.Ramp(...)]
    for j_rest in range(n % L):                  # leftover columns, as written
        <the body>

The body is vectorized as a ``T.vectorized`` loop would be (inner serial loops run once
for all lanes: :func:`lowering.transforms.vectorize.vectorize_body`). Applied to PARALLEL
loops without a thread binding whose body holds a serial loop and, wherever it indexes
memory with the loop variable, does so with a coefficient of 1 (contiguous lanes, never a
gather), when the body has a vector form (no allocation, no extern call, ...) and the loop
runs at least ``L`` times. ``L`` is the Target's vector width over the widest element the
body touches (16 float32 on AVX-512, 8 on AVX2), doubled while the group stays within
:data:`COLUMN_BLOCK_BYTES` and leaves at least :data:`MIN_COLUMN_GROUPS` groups.
"""

from __future__ import annotations

from irbuilder.ir import (
    BufferLoad,
    BufferStore,
    FloorDiv,
    FloorMod,
    For,
    ForKind,
    IntImm,
    PrimExpr,
    PrimFunc,
    SeqStmt,
    Stmt,
    StmtExprMutator,
    Var,
    post_order_visit,
)

from ..analysis.vars import depends_on
from ..arith.canonical import linear_coefficient
from ..pass_infra import FunctionPass, PassContext, function_pass
from ..target import Target, as_target
from ..transforms.unroll import copy_with_fresh_vars
from ..transforms.vectorize import CannotVectorize, vectorize_body

__all__ = ["vectorize_column_loop", "vectorize_parallel_columns"]


COLUMN_BLOCK_BYTES = 256
"""Widest group of columns, in bytes: four cache lines of every row. A wider group than one
vector (LLVM splits it into several) gives each thread more independent rows' worth of
lines in flight: the 1024 x 4096 float32 column cumsum took 1.9 ms with 8-lane groups
(AVX2), 1.1 ms with 16 and 0.54 ms with 64 on the Zen 5 host (AVX-512: 1.07 ms with 16,
0.49 ms with 64); a 3-d permutation was unchanged."""

MIN_COLUMN_GROUPS = 64
"""Fewest parallel groups a widened group may leave (work for many cores): the group stays
one vector wide when the loop is too short to widen it."""


class _NotColumns(Exception):
    """Stops the walk at the first access that is not a column lane."""


def _column_accesses(body: Stmt, var: Var) -> int | None:
    """The widest element size (bytes) of the accesses of ``body``, when every index that
    depends on ``var`` steps one element per ``var`` and a serial loop is inside; else
    None."""
    widest = 0
    has_loop = False

    def visit(node: object) -> None:
        nonlocal widest, has_loop
        if isinstance(node, For):
            has_loop = has_loop or node.kind is ForKind.SERIAL
        if isinstance(node, (BufferLoad, BufferStore)):
            widest = max(widest, node.buffer.dtype.itemsize)
            for index in node.indices:
                if depends_on(index, var) and (
                    index.dtype.lanes != 1 or linear_coefficient(index, var) != 1
                ):
                    raise _NotColumns

    try:
        post_order_visit(body, visit)
    except _NotColumns:
        return None
    return widest if has_loop and widest else None


def vectorize_column_loop(loop: For, target: Target) -> Stmt | None:
    """``loop`` run in column lanes (module doc), or None when it does not apply."""
    if loop.kind is not ForKind.PARALLEL or loop.thread_binding is not None:
        return None
    var = loop.loop_var
    if not var.dtype.is_int:
        return None
    item = _column_accesses(loop.body, var)
    if item is None:
        return None
    lanes = target.vector_bits // 8 // item
    if lanes < 2:
        return None
    n = loop.extent
    if isinstance(n, IntImm) and n.value < lanes:
        return None
    while (
        isinstance(n, IntImm)
        and 2 * lanes * item <= COLUMN_BLOCK_BYTES
        and n.value // (2 * lanes) >= MIN_COLUMN_GROUPS
    ):
        lanes *= 2
    dtype = var.dtype
    width = IntImm(dtype, lanes)
    group = Var(f"{var.name}_lanes", dtype)
    first = group * width
    if not (isinstance(loop.min, IntImm) and loop.min.value == 0):
        first = loop.min + first
    try:
        body = vectorize_body(var, loop.body, first, lanes)
    except CannotVectorize:
        return None
    groups = IntImm(dtype, n.value // lanes) if isinstance(n, IntImm) else FloorDiv(n, width)
    vectorized = For(group, IntImm(dtype, 0), groups, ForKind.PARALLEL, body,
                     annotations=loop.annotations, span=loop.span)
    if isinstance(n, IntImm) and n.value % lanes == 0:
        return vectorized
    left = IntImm(dtype, n.value % lanes) if isinstance(n, IntImm) else FloorMod(n, width)
    rest = Var(f"{var.name}_rest", dtype)
    done = loop.min + groups * width
    leftover = For(rest, IntImm(dtype, 0), left, ForKind.SERIAL,
                   copy_with_fresh_vars(loop.body, {var: done + rest}), span=loop.span)
    return SeqStmt((vectorized, leftover), span=loop.span)


class _Columns(StmtExprMutator):
    def __init__(self, target: Target) -> None:
        self.target = target

    def visit_expr(self, expr: PrimExpr) -> PrimExpr:
        return expr

    def visit_for_(self, stmt: For) -> Stmt:
        if stmt.kind is ForKind.PARALLEL:
            out = vectorize_column_loop(stmt, self.target)
            if out is not None:
                return out
        return self.generic_mutate(stmt)


@function_pass("vectorize_parallel_columns", opt_level=1)
def _vectorize_parallel_columns(func: PrimFunc) -> PrimFunc:
    """Run neighbouring iterations of a parallel loop over the contiguous dimension in
    vector lanes (module doc), as wide as the PassContext's target allows."""
    body = _Columns(as_target(PassContext.current().target)).visit_stmt(func.body)
    return func if body is func.body else func.with_body(body)


vectorize_parallel_columns: FunctionPass = _vectorize_parallel_columns
"""The ``vectorize_parallel_columns`` pass (a :class:`FunctionPass`)."""
