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
that depends on ``j`` is contiguous in it or 2 to 4 elements apart (:data:`STRIDED_LOADS`: a
stride-2 convolution's input, which LLVM loads as an interleaved group), and some load walks
memory with a stride other than one element as ``k`` advances (otherwise the original loop
already streams). The function's own arrays the nest reads (a padding stage's output) join
the no-overlap region's list untested: they never overlap a parameter, and LLVM then needs no
run-time checks of its own to vectorize the row (a 3 x 3 stride-2 convolution of 64 to 128
channels on 56 x 56 with TOPI's padding stage: 36 -> 3.8 ms on an Intel AVX-512 host; TOPI's
padded stride-1 convolutions 2x faster too).

A ``j`` loop too short for a vector row of its own (the 8-wide ``oc_block`` of an
``NCHW[x]c`` convolution) is taken together with the loops around it that continue its
row: ``for ow: for oc_block: (init); for ic, kh, kw: update`` becomes ``for ow, oc_block:
init`` then ``for ic, kh, kw: for ow, oc_block: update``, when the group is the smallest
that sweeps a contiguous run of at least 16 elements (at most :data:`MAX_COLUMN_GROUP`),
the innermost loop one vector statement: a TE ``conv2d_NCHWc`` of 64 channels over
56 x 56 went from 87-102 ms to 1.9 ms on the Zen 5 host, AVX-512 and AVX2 code alike
(numba 8.7). Integer division and modulo by a non-zero constant (the layout's
``ic // 8``, ``ic % 8``) cannot trap and do not stop the rewrite.

A row read through a division of its variable -- TOPI's transposed convolution keeps the
dilation's parity test inside the reduction, ``Y[o, t] += select((t - k) % 2 == 0 and ...,
X[c, (t - k) // 2], 0) * W[c, o, k]`` -- is no contiguous load either way round. The
``interchange_divided_reductions`` pass (before ``split_divided_loops`` and
``partition_loops``) takes such a ``j`` loop alone (from 0, its extent a multiple of the one
divisor ``d`` in 2..4 of ``(j + e) // d`` and ``(j + e) % d``, ``e`` free of ``j``), and
puts it inside split as ``j = d * q + r``: a loop over ``q`` whose body is the update once
per remainder ``r``, where ``(d * q + r - k) // d`` is ``q + (r - k) // d`` (contiguous) and
``(d * q + r - k) % d`` is ``(r - k) % d``; the short reduction loops those divisions read
(``k``, at most :data:`MAX_DIVIDED_COPIES` copies in all) are unrolled so the tests are
constants and the dead terms ``0 * W[c, o, k]`` plain multiplications (kept: ``0 * inf`` is
NaN). The per-element order is unchanged (exact), under the same run-time no-overlap test.
A 32 x 4098 output over 64 channels and 4 taps: 12.8 -> 1.7 ms on an Intel AVX-512 host
(numba's scattering twin 2.8), AVX2 code 10.9 -> 3.1.
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
    Evaluate,
    FloorDiv,
    FloorMod,
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
    post_order_visit,
    seq,
    structural_equal,
)

from ..analysis.loads import LoadCollector, reads_memory
from ..analysis.vars import depends_on
from ..arith.canonical import linear_coefficient
from ..pass_infra import FunctionPass, function_pass
from ..transforms.simplify import simplify_stmt
from ..transforms.unroll import copy_with_fresh_vars
from ..transforms.vectorize import CannotVectorize, vectorize_for
from .alias_version import short_accumulator
from .divided_loops import MAX_DIVISOR, dividend_divisors, substitute_quotient
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
    "interchange_divided_reductions",
    "interchange_nests",
    "interchange_reductions",
    "split_reduction_nest",
    "split_reduction_nests",
]

MIN_INNER_TRIP_COUNT = 16
"""Shorter ``j`` loops would not fill a vector: leave them alone."""

STRIDED_LOADS = (2, 3, 4)
"""Strides (in elements, along the row) of the loads an interchanged row may read besides
contiguous ones: a strided convolution's input, ``P[c, 2 * x + rx]``. LLVM loads such a
row as an interleaved group (whole vectors, then shuffles)."""

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


def interchange_loop(loop: For, local_data: set[int], divided: bool = False) -> Stmt | None:
    """The versioned, interchanged nest (see the module doc), or None when it does not apply;
    ``divided``: only a ``j`` loop whose loads read ``(j + e) // d`` (the module doc's last
    paragraphs), split by ``d`` as it goes inside."""
    if loop.kind is ForKind.PARALLEL and not divided:
        return _interchange_in_chunks(loop, local_data)
    if loop.kind is not ForKind.SERIAL:
        return None
    found_nest = _reduction_under_columns(loop)
    if found_nest is None:
        return None
    columns, (init, ks, store) = found_nest
    divisor: int | None = None
    if divided:
        divisor = _column_divisor(loop, columns, store)
        if divisor is None:
            return None
    # Symbolic trip counts are tested at run time (the fast copy runs when they qualify);
    # a group of column loops has constant extents, its length is checked by _dense_columns.
    trip_checks: list[PrimExpr] = []
    if len(columns) == 1:
        if isinstance(loop.extent, IntImm):
            if loop.extent.value < MIN_INNER_TRIP_COUNT:
                return None
        elif reads_memory(loop.extent) or not loop.extent.dtype.is_int:
            return None
        else:
            trip_checks.append(GE(loop.extent, IntImm(loop.extent.dtype, MIN_INNER_TRIP_COUNT)))
    if divisor is None and short_accumulator(ks[0]) is not None:
        # A reduction of a few steps (a 3x3 window) stays in place: with the nest in a
        # no-overlap region (version_accumulator_nests) LLVM keeps the accumulator in a
        # register and vectorizes the j loop around it. Interchanged, every step loads
        # and stores the row: a 3x3 depthwise convolution of 64 x 112 x 112 took 0.156 ms
        # against 0.089 (AVX2 code on the Zen 5 host; AVX-512: 0.083 and 0.068). A
        # divided row does not vectorize around it: it goes inside whatever its length.
        return None
    j = columns[-1].loop_var
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
        if any(depends_on(inner.min, c.loop_var) or depends_on(inner.extent, c.loop_var)
               for c in columns):
            return None
        # Interchanged, the j loop's start is evaluated once per k and the k loop's once in
        # all: a start reading memory the nest writes would see other values.
        if reads_memory(inner.min):
            return None
    if reads_memory(loop.min):
        return None
    target = store.buffer
    if len(store.indices) != 1:
        return None
    if store.value.dtype.lanes != 1 or target.dtype.lanes != 1:
        return None
    (index,) = store.indices
    if (
        any(depends_on(index, k.loop_var) for k in ks)
        or linear_coefficient(index, j) != 1
        or reads_memory(index)
        or not _dense_columns(index, columns)
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
    local_reads: dict[int, Buffer] = {}  # the function's own: never overlap a parameter
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
        if coef_j is None and divisor is not None:
            coef_j = _quotient_coefficient(at, j, divisor)
        if coef_j is None or coef_j not in (0, 1, *STRIDED_LOADS):
            return None
        if any(linear_coefficient(at, c.loop_var) is None for c in columns[:-1]):
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
        else:
            local_reads.setdefault(id(load.buffer.data), load.buffer)
    if not (reads_self and strided_in_k):
        return None
    written = byte_range(target)
    checks: list[PrimExpr] | None = []
    if others and id(target.data) not in local_data:  # an allocation overlaps no parameter
        checks = None if written is None else no_overlap_checks(written, others.values())
    if checks is None:
        return None
    checks = [*trip_checks, *checks]
    if divisor is None:
        swapped = _nest(_row(store, columns), ks)
    else:
        swapped = _divided_nest(store, loop, divisor, ks)
    steps: list[Stmt] = []
    if init is not None:
        steps.append(copy_with_fresh_vars(_row(init, columns)))
    steps.append(copy_with_fresh_vars(swapped))
    fast_body: Stmt = steps[0] if len(steps) == 1 else SeqStmt(tuple(steps))
    readonly = [b.data for b in (*others.values(), *local_reads.values())]
    fast = AttrStmt(
        (target.data, *readonly), NOALIAS_ATTR, IntImm(as_dtype("int32"), 1), fast_body
    )
    return IfThenElse(all_of(checks), fast, loop, span=loop.span) if checks else fast


MAX_COLUMN_GROUP = 4096
"""Elements of the row a group of column loops (``ow, oc_block`` of an ``NCHW[x]c``
convolution) sweeps per reduction step: beyond this the row leaves the first-level caches
between steps."""


def _reduction_under_columns(
    loop: For,
) -> tuple[list[For], tuple[BufferStore | None, list[For], BufferStore]] | None:
    """The column loops (``loop`` and the loops perfectly nested in it that the accumulated
    element's index depends on) and :func:`split_reduction_nests` of the innermost one."""
    columns = [loop]
    while True:
        parts = split_reduction_nests(columns[-1])
        if parts is None:
            # ``for ow: for oc_block: init; for k...: update``: the init sits below ``ow``
            if not isinstance(columns[-1].body, For):
                return None
            columns.append(columns[-1].body)
            continue
        _, ks, store = parts
        if len(store.indices) != 1 or not depends_on(store.indices[0], ks[0].loop_var):
            return columns, parts
        columns.append(ks[0])


def _dense_columns(index: PrimExpr, columns: list[For]) -> bool:
    """Whether a group of column loops is the smallest one that sweeps a contiguous run of
    ``index`` of at least :data:`MIN_INNER_TRIP_COUNT` elements (at most
    :data:`MAX_COLUMN_GROUP`): every loop of a constant extent, each outer loop's step the
    whole extent of the loops inside it, the innermost loop at least four wide (a vector)
    but shorter than the minimum (a loop that long is interchanged alone: its row of
    accumulators fits in registers, which a wider group's would not). A single loop is the
    plain case (no condition)."""
    if len(columns) == 1:
        return True
    stride = 1
    inner_run = 1
    for column in reversed(columns):
        extent = column.extent
        if (
            column.kind is not ForKind.SERIAL
            or not isinstance(extent, IntImm)
            or not isinstance(column.min, IntImm)
            or linear_coefficient(index, column.loop_var) != stride
        ):
            return False
        inner_run = stride
        stride *= extent.value
    innermost = columns[-1].extent
    assert isinstance(innermost, IntImm)
    return (
        4 <= innermost.value < MIN_INNER_TRIP_COUNT
        and inner_run < MIN_INNER_TRIP_COUNT <= stride <= MAX_COLUMN_GROUP
    )


def _row(store: BufferStore, columns: list[For]) -> Stmt:
    """``store`` inside copies of the column loops; the innermost of a group (a vector's
    width: 4, 8 or 16 elements) as one vector statement. Left to LLVM, the 8-wide channel
    block of an ``NCHW[x]c`` row was vectorized across ``ow`` instead, lanes 8 elements
    apart, with shuffles to put them together: 32 ms against 6 for the AVX2 code."""
    if len(columns) > 1:
        inner = columns[-1]
        assert isinstance(inner.extent, IntImm)  # _dense_columns
        if inner.extent.value in (4, 8, 16):
            lanes = For(inner.loop_var, inner.min, inner.extent, ForKind.VECTORIZED, store,
                        span=inner.span)
            try:
                vector = vectorize_for(lanes, max_width=inner.extent.value, strict=True)
            except CannotVectorize:
                pass
            else:
                return _nest(vector, columns[:-1])
    return _nest(store, columns)


MAX_DIVIDED_COPIES = 16
"""Most copies of the update a divided nest's inner loop body holds (remainders of ``j``
times the unrolled reduction steps)."""


def _column_divisor(loop: For, columns: list[For], store: BufferStore) -> int | None:
    """The one divisor ``d`` of the update's ``(j + e) // d`` and ``(j + e) % d`` when the
    ``j`` loop is alone, from 0 to a multiple of ``d``, else None."""
    if (
        len(columns) != 1
        or loop.annotations
        or loop.thread_binding is not None
        or not isinstance(loop.min, IntImm)
        or loop.min.value != 0
        or not isinstance(loop.extent, IntImm)
    ):
        return None
    divisors = dividend_divisors(store.value, loop.loop_var)
    if len(divisors) != 1:
        return None
    (d,) = divisors
    if not 2 <= d <= MAX_DIVISOR or loop.extent.value % d:
        return None
    return d


def _quotient_coefficient(index: PrimExpr, j: Var, d: int) -> int | None:
    """The coefficient of ``q`` in ``index`` with ``j = d * q + r``, the same for every
    remainder ``r``, or None (``(j - k) // 2`` is ``q + (r - k) // 2``: 1)."""
    q = Var(f"{j.name}_q", j.dtype)
    found: set[int | None] = set()
    for r in range(d):
        probe = substitute_quotient(Evaluate(index), j, d, q, r)
        assert isinstance(probe, Evaluate)
        found.add(linear_coefficient(probe.value, q))
    return found.pop() if len(found) == 1 else None


def _divided_nest(store: BufferStore, loop: For, d: int, ks: list[For]) -> Stmt:
    """The reduction loops around a loop over ``q`` (``j = d * q + r``) whose body is the
    update once per remainder ``r``; a short reduction loop the divisions read (the
    kernel's ``k`` in ``(j - k) % 2``) unrolled, so the tests become constants."""
    j = loop.loop_var
    assert isinstance(loop.extent, IntImm)
    q = Var(f"{j.name}_q", j.dtype)
    copies = [substitute_quotient(store, j, d, q, r) for r in range(d)]
    body: Stmt = For(q, IntImm(j.dtype, 0), IntImm(j.dtype, loop.extent.value // d),
                     ForKind.SERIAL, seq(copies), span=loop.span)
    budget = MAX_DIVIDED_COPIES // d
    for inner in reversed(ks):
        extent = inner.extent
        if (
            isinstance(extent, IntImm)
            and isinstance(inner.min, IntImm)
            and extent.value <= budget
            and _divides(body, inner.loop_var)
        ):
            budget //= extent.value
            start = inner.min.value
            body = simplify_stmt(seq([
                copy_with_fresh_vars(body, {inner.loop_var: IntImm(inner.loop_var.dtype, v)})
                for v in range(start, start + extent.value)
            ]))
        else:
            body = _nest(body, [inner])
    return body


def _divides(stmt: Stmt, var: Var) -> bool:
    """Whether ``var`` occurs in a division or modulo by a constant inside ``stmt``."""
    found = False

    def visit(node: object) -> None:
        nonlocal found
        if (not found and isinstance(node, (FloorDiv, FloorMod))
                and isinstance(node.b, IntImm)):
            found = depends_on(node.a, var)

    post_order_visit(stmt, visit)
    return found


def _nest(body: Stmt, loops: list[For]) -> Stmt:
    """``body`` inside copies of ``loops`` (outermost first)."""
    for loop in reversed(loops):
        body = For(loop.loop_var, loop.min, loop.extent, loop.kind, body, loop.thread_binding,
                   loop.annotations, span=loop.span)
    return body


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


def _interchange_divided(loop: For, local_data: set[int]) -> Stmt | None:
    return interchange_loop(loop, local_data, divided=True)


@function_pass("interchange_divided_reductions", opt_level=1)
def _interchange_divided_reductions(func: PrimFunc) -> PrimFunc:
    """Interchange reduction nests whose column loop is read divided (module doc), before
    ``split_divided_loops`` and ``partition_loops`` see the inner loop."""
    return rewrite_versioned_loops(func, _interchange_divided)


interchange_divided_reductions: FunctionPass = _interchange_divided_reductions
"""The ``interchange_divided_reductions`` pass (a :class:`FunctionPass`)."""
