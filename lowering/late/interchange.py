"""The ``interchange_reductions`` pass: make a strided reduction nest vectorizable.

The naive matmul ::

    for j in range(J):
        C[i*J + j] = 0
        for k in range(K):
            C[i*J + j] = C[i*J + j] + A[i*K + k] * B[k*J + j]

accumulates one element at a time while ``B`` is read down a column (a new cache line and
page every step); no loop of it vectorizes without reassociating the sum. Interchanged ::

    for j in range(J): C[i*J + j] = 0
    for k in range(K):
        for j in range(J):
            C[i*J + j] = C[i*J + j] + A[i*K + k] * B[k*J + j]

every element of ``C`` still receives the same operations in the same order (k ascending),
so results are bit-identical, but the inner loop walks ``C`` and ``B`` contiguously and
vectorizes. The lowered form of a block with ``T.init()`` -- ``for k: if k == 0: C[...] =
0`` then the update -- is the same nest: its init runs once, before the first update.

This is legal when distinct ``j`` write distinct elements (the store index is ``j`` times a
non-zero constant plus terms free of ``j`` and ``k``), the value reads the accumulated array
only at the element being written, nothing in the nest may trap or call out, and the other
arrays read do not overlap the written one -- which for parameters is a
run-time test: the nest is versioned, the interchanged copy runs inside a no-overlap region
(:data:`lowering.late.alias_version.NOALIAS_ATTR`, so LLVM needs no checks of its own), and the
original nest runs when the arrays overlap.

Applied where it pays: the written array is contiguous in ``j`` (coefficient 1), every load
that depends on ``j`` is contiguous in it, and some load walks memory with a stride other
than one element as ``k`` advances (otherwise the original loop already streams).
"""

from __future__ import annotations

from irbuilder.ir import (
    EQ,
    GE,
    GT,
    Add,
    And,
    AttrStmt,
    Buffer,
    BufferStore,
    For,
    ForKind,
    IfThenElse,
    IntImm,
    Mul,
    PrimExpr,
    PrimFunc,
    SeqStmt,
    Stmt,
    Var,
    as_dtype,
    structural_equal,
)

from ..analysis.loads import LoadCollector, reads_memory
from ..analysis.vars import depends_on
from ..arith.canonical import linear_coefficient
from ..pass_infra import FunctionPass, function_pass
from ..transforms.unroll import copy_with_fresh_vars
from .alias_version import short_accumulator
from .versioning import (
    NOALIAS_ATTR,
    VersionedLoopRewriter,
    all_of,
    byte_range,
    no_overlap_checks,
    rewrite_versioned_loops,
)

__all__ = [
    "MIN_INNER_TRIP_COUNT",
    "MIN_PARALLEL_CHUNKS",
    "interchange_loop",
    "interchange_nests",
    "interchange_reductions",
    "split_reduction_nest",
    "split_reduction_nests",
]

MIN_INNER_TRIP_COUNT = 16
"""Shorter ``j`` loops would not fill a vector: leave them alone."""

MIN_PARALLEL_CHUNKS = 8
"""A parallel ``j`` loop is cut into at least this many chunks of columns (of 16 to 1024
columns, the widest that divides it), each interchanged: enough chunks to share among the
threads, each chunk's row a contiguous run of up to 4 KiB (float32)."""

_U64 = as_dtype("uint64")


def split_reduction_nest(loop: For) -> tuple[BufferStore | None, For, BufferStore] | None:
    """``(init store or None, inner k loop, accumulating store)`` of a ``j`` loop of the
    matched shape: ``init; for k: update``, or the lowered block form
    ``for k: (if k == k_min: init); update`` (the init taken out with ``k = k_min``)."""
    parts = split_reduction_nests(loop)
    if parts is None or len(parts[1]) != 1:
        return None
    return parts[0], parts[1][0], parts[2]


def split_reduction_nests(
    loop: For,
) -> tuple[BufferStore | None, list[For], BufferStore] | None:
    """``(init store or None, the k loops outermost first, accumulating store)`` of a ``j``
    loop over perfectly nested reduction loops: ``init; for k...: update``, or the lowered
    block form ``for k...: (if k1 == k1_min and ...: init); update`` (the init taken out
    with every ``k`` at its start)."""
    body = loop.body
    init: Stmt | None = None
    if (
        isinstance(body, SeqStmt)
        and len(body.seq) == 2
        and isinstance(body.seq[0], BufferStore)
        and isinstance(body.seq[1], For)
    ):
        init, body = body.seq
    ks: list[For] = []
    while isinstance(body, For):
        ks.append(body)
        body = body.body
    if not ks:
        return None
    update = body
    if init is None and isinstance(update, SeqStmt) and len(update.seq) == 2:
        guard, rest = update.seq
        if (
            isinstance(guard, IfThenElse)
            and guard.else_case is None
            and isinstance(guard.then_case, BufferStore)
            and _is_first_iteration(guard.condition, ks)
        ):
            init = copy_with_fresh_vars(guard.then_case, {k.loop_var: k.min for k in ks})
            update = rest
    if not isinstance(update, BufferStore):
        return None
    assert init is None or isinstance(init, BufferStore)
    return init, ks, update


def _is_first_iteration(cond: PrimExpr, loops: list[For]) -> bool:
    """Whether ``cond`` is ``k == k_min`` for every loop of ``loops``, and-ed in any order."""
    terms: list[PrimExpr] = []

    def flatten(expr: PrimExpr) -> None:
        if isinstance(expr, And):
            flatten(expr.a)
            flatten(expr.b)
        else:
            terms.append(expr)

    flatten(cond)
    if len(terms) != len(loops):
        return False
    for loop in loops:
        var, start = loop.loop_var, loop.min
        if not any(
            isinstance(t, EQ)
            and (
                (t.a is var and structural_equal(t.b, start))
                or (t.b is var and structural_equal(t.a, start))
            )
            for t in terms
        ):
            return False
    return True


def interchange_loop(loop: For, local_data: set[int]) -> Stmt | None:
    """The versioned, interchanged nest (see the module doc), or None when it does not apply."""
    if loop.kind is ForKind.PARALLEL:
        return _interchange_in_chunks(loop, local_data)
    if loop.kind is not ForKind.SERIAL:
        return None
    # Symbolic trip counts are tested at run time (the fast copy runs when they qualify).
    trip_checks: list[PrimExpr] = []
    if isinstance(loop.extent, IntImm):
        if loop.extent.value < MIN_INNER_TRIP_COUNT:
            return None
    elif reads_memory(loop.extent) or not loop.extent.dtype.is_int:
        return None
    else:
        trip_checks.append(GE(loop.extent, IntImm(loop.extent.dtype, MIN_INNER_TRIP_COUNT)))
    parts = split_reduction_nests(loop)
    if parts is None:
        return None
    init, ks, store = parts
    if short_accumulator(ks[0]) is not None:
        # A reduction of a few steps (a 3x3 window) stays in place: with the nest in a
        # no-overlap region (version_accumulator_nests) LLVM keeps the accumulator in a
        # register and vectorizes the j loop around it. Interchanged, every step loads
        # and stores the row: a 3x3 depthwise convolution of 64 x 112 x 112 took 0.156 ms
        # against 0.089 (AVX2 code on the Zen 5 host; AVX-512: 0.083 and 0.068).
        return None
    j = loop.loop_var
    for inner in ks:
        if inner.kind is not ForKind.SERIAL:
            return None
        if isinstance(inner.extent, IntImm):
            if inner.extent.value <= 0:
                return None
        elif reads_memory(inner.extent) or not inner.extent.dtype.is_int:
            return None
        else:
            # the init runs once before the first update: only when there is one
            trip_checks.append(GT(inner.extent, IntImm(inner.extent.dtype, 0)))
        if depends_on(inner.min, j) or depends_on(inner.extent, j):
            return None
        # Interchanged, the j loop's start is evaluated once per k and the k loop's once in
        # all: a start reading memory the nest writes would see other values.
        if reads_memory(inner.min):
            return None
    if reads_memory(loop.min):
        return None
    target = store.buffer
    if id(target.data) in local_data or len(store.indices) != 1:
        return None
    if store.value.dtype.lanes != 1 or target.dtype.lanes != 1:
        return None
    (index,) = store.indices
    if (
        any(depends_on(index, k.loop_var) for k in ks)
        or linear_coefficient(index, j) != 1
        or reads_memory(index)
    ):
        return None
    if init is not None:
        if init.buffer.data is not target.data or len(init.indices) != 1:
            return None
        if not structural_equal(init.indices[0], index):
            return None
    found = LoadCollector(traps_are_effects=True)
    found.visit_expr(store.value)
    if init is not None:
        found.visit_expr(init.value)
    if found.impure:
        return None
    reads_self = False
    strided_in_k = False
    others: dict[int, Buffer] = {}
    init_loads: set[int] = set()
    if init is not None:
        init_only = LoadCollector()
        init_only.visit_expr(init.value)
        init_loads = {id(load) for load in init_only.loads}
    for load in found.loads:
        if len(load.indices) != 1:
            return None
        (at,) = load.indices
        if load.buffer.data is target.data:
            if id(load) in init_loads or not structural_equal(at, index):
                return None
            reads_self = True
            continue
        coef_j = linear_coefficient(at, j)
        if coef_j is None or coef_j not in (0, 1):
            return None
        for inner in ks:
            k = inner.loop_var
            coef_k = linear_coefficient(at, k)
            if coef_k is None:
                # a symbolic stride (``k * n + j``): profitable to assume it is not +-1
                if not depends_on(at, k):
                    return None
                strided_in_k = True
            elif coef_k not in (0, 1, -1):
                strided_in_k = True
        if id(load.buffer.data) not in local_data:
            others.setdefault(id(load.buffer.data), load.buffer)
    if not (reads_self and strided_in_k):
        return None
    written = byte_range(target)
    checks: list[PrimExpr] | None = []
    if others:
        checks = None if written is None else no_overlap_checks(written, others.values())
    if checks is None:
        return None
    checks = [*trip_checks, *checks]
    swapped: Stmt = For(j, loop.min, loop.extent, loop.kind, store, loop.thread_binding,
                        loop.annotations, span=loop.span)
    for inner in reversed(ks):
        swapped = For(inner.loop_var, inner.min, inner.extent, inner.kind, swapped,
                      inner.thread_binding, inner.annotations, span=inner.span)
    steps: list[Stmt] = []
    if init is not None:
        init_loop = For(j, loop.min, loop.extent, loop.kind, init, loop.thread_binding,
                        loop.annotations, span=loop.span)
        steps.append(copy_with_fresh_vars(init_loop))
    steps.append(copy_with_fresh_vars(swapped))
    fast_body: Stmt = steps[0] if len(steps) == 1 else SeqStmt(tuple(steps))
    readonly = [b.data for b in others.values()]
    fast = AttrStmt(
        (target.data, *readonly), NOALIAS_ATTR, IntImm(as_dtype("int32"), 1), fast_body
    )
    return IfThenElse(all_of(checks), fast, loop, span=loop.span) if checks else fast


def _chunk_width(extent: int) -> int | None:
    for width in (1024, 512, 256, 128, 64, 32, 16):
        if extent % width == 0 and extent // width >= MIN_PARALLEL_CHUNKS:
            return width
    return None


def _interchange_in_chunks(loop: For, local_data: set[int]) -> Stmt | None:
    """A parallel ``j`` loop over the nest: parallel chunks of columns, each chunk's nest
    interchanged. Chunks write disjoint columns, and within one every column still sees its
    updates in ``k`` order, so this is the serial rewrite applied per chunk."""
    if not (isinstance(loop.extent, IntImm) and isinstance(loop.min, IntImm)):
        return None
    if loop.min.value != 0 or loop.thread_binding is not None:
        return None
    width = _chunk_width(loop.extent.value)
    if width is None:
        return None
    j = loop.loop_var
    chunk, column = Var(f"{j.name}_chunk", j.dtype), Var(f"{j.name}_in", j.dtype)
    step = IntImm(j.dtype, width)
    body = copy_with_fresh_vars(loop.body, {j: Add(Mul(chunk, step), column)})
    zero = IntImm(j.dtype, 0)
    inner = interchange_loop(For(column, zero, step, ForKind.SERIAL, body), local_data)
    if inner is None:
        return None
    chunks = IntImm(j.dtype, loop.extent.value // width)
    return For(chunk, zero, chunks, ForKind.PARALLEL, inner, None, loop.annotations,
               span=loop.span)


def interchange_nests(stmt: Stmt, local_data: set[int]) -> Stmt:
    """``stmt`` with every qualifying nest inside it interchanged (the pass on a statement)."""
    return VersionedLoopRewriter(local_data, interchange_loop).visit_stmt(stmt)


@function_pass("interchange_reductions", opt_level=1)
def _interchange_reductions(func: PrimFunc) -> PrimFunc:
    """Interchange strided reduction nests on a run-time no-overlap test (module doc)."""
    return rewrite_versioned_loops(func, interchange_loop)


interchange_reductions: FunctionPass = _interchange_reductions
"""The ``interchange_reductions`` pass (a :class:`FunctionPass`)."""
