"""The ``version_gathers`` and ``version_accumulator_nests`` passes: loops run on a no-overlap
fast path that LLVM can vectorize.

``for i: O[i] = T[I[i]]`` cannot be vectorized as written: the parameters are arbitrary
numpy arrays (overlapping arguments keep sequential semantics), and LLVM's own run-time
alias checks need the address range of every access, which a data-dependent index like
``T[I[i]]`` does not have. Here the whole buffers' ranges are known, so the loop is
versioned on a cheap test -- each written parameter buffer is disjoint from every other
parameter buffer the loop touches -- and the fast copy is wrapped in
``AttrStmt(node=data_vars, attr_key=NOALIAS_ATTR, value=k)``: the first ``k`` data vars are
written, the rest only read. Code generation gives the accesses of those buffers scoped
no-alias metadata inside the attribute, so LLVM forms hardware gathers. When the test fails
(overlapping arrays) the original loop runs. Both copies perform the same operations in the
same order on the same memory, so results are bit-identical.

Applied to innermost SERIAL loops with a constant trip count of at least
:data:`MIN_TRIP_COUNT` whose body only stores, binds and branches (no loops, allocations,
asserts or extern calls), that load at a data-dependent index (an index reading memory)
and store only at indices that read no memory (scatters keep their conflicts).

``version_accumulator_nests`` gives the same fast path to a loop nest holding a short
accumulation into a parameter array: ``O[c, h, w] = T.max(O[c, h, w], A[...])`` over a 3x3
window (:func:`short_accumulator`: fewer than ``promote_accumulators``' ``MIN_TRIP_COUNT``
steps, which that pass leaves alone because a test per window would stop LLVM vectorizing
the loop around it). Inside the region LLVM knows ``O`` does not alias ``A``: it keeps the
accumulator in a register and vectorizes the ``w`` loop. The outermost serial loop of the
nest takes the test (inside a ``T.parallel`` loop, the loop of its body), so it runs once
per nest. On the Zen 5 host: a 64 x 112 x 112 max pool 0.177 -> 0.143 ms (AVX-512 code),
with ``interchange_reductions`` leaving such windows in place a depthwise 3x3 convolution
0.156 -> 0.089 ms (AVX2 code) and 0.083 -> 0.068 ms (AVX-512). Applied to SERIAL loops
whose body stores, binds, branches and loops (serial or unrolled), with no allocations,
asserts or extern calls. Buffers the function allocates itself (a TE padding stage's
output, read by the window) overlap no parameter and no other allocation: they join the
region without a test. Left out, LLVM stored the accumulator after every step of a
depthwise ``NCHW[x]c`` window read from such a padded copy and did not vectorize the
channel block (64 x 56 x 56 on the Zen 5 host: 0.64 ms, on a loaded machine; in the region
0.21 ms on the same loaded machine, 0.030 quiet; numba 0.30).
"""

from __future__ import annotations

from irbuilder.ir import (
    AttrStmt,
    Buffer,
    BufferLoad,
    BufferStore,
    Call,
    CallKind,
    For,
    ForKind,
    IfThenElse,
    IntImm,
    LetStmt,
    PrimExpr,
    PrimFunc,
    SeqStmt,
    Stmt,
    StmtExprVisitor,
    Var,
    as_dtype,
    post_order_visit,
    structural_equal,
)

from ..analysis.loads import LoadCollector, reads_memory
from ..analysis.vars import depends_on
from ..pass_infra import FunctionPass, function_pass
from ..transforms.unroll import copy_with_fresh_vars
from .promote import MIN_TRIP_COUNT as PROMOTE_MIN_TRIP_COUNT
from .versioning import (
    NOALIAS_ATTR,
    ByteRange,
    LoopRewriter,
    all_of,
    byte_range,
    disjoint,
    is_noalias_version,
    rewrite_loops,
)

__all__ = [
    "MIN_TRIP_COUNT",
    "NOALIAS_ATTR",
    "is_noalias_version",
    "short_accumulator",
    "version_accumulator_nests",
    "version_gathers",
    "version_loop",
    "version_nest",
]

MIN_TRIP_COUNT = 64
"""Shorter loops are not worth the test and the second copy."""

_U64 = as_dtype("uint64")


class _Body(StmtExprVisitor):
    """Buffers a loop body reads and writes, and whether it is simple enough to version.
    With ``nests``, serial loops may occur, and the accumulators of short accumulation
    nests (:func:`short_accumulator`) are collected."""

    def __init__(self, nests: bool = False) -> None:
        self.ok = True
        self.nests = nests
        self.accumulators: list[Var] = []
        self.gathers = False
        self.buffers: dict[int, list[Buffer]] = {}
        self.written: dict[int, Var] = {}
        self.order: list[Var] = []

    def _touch(self, buffer: Buffer) -> None:
        key = id(buffer.data)
        if key not in self.buffers:
            self.buffers[key] = []
            self.order.append(buffer.data)
        if not any(b is buffer for b in self.buffers[key]):
            self.buffers[key].append(buffer)

    def visit_stmt(self, stmt: Stmt) -> None:
        if self.nests and isinstance(stmt, For):
            if stmt.kind not in (ForKind.SERIAL, ForKind.UNROLLED) or stmt.thread_binding:
                self.ok = False
                return
            accumulator = short_accumulator(stmt)
            if accumulator is not None:
                self.accumulators.append(accumulator)
            super().visit_stmt(stmt)
            return
        if not isinstance(stmt, (BufferStore, SeqStmt, LetStmt, IfThenElse)):
            self.ok = False  # loops, allocations, asserts, evaluates, attributes
            return
        super().visit_stmt(stmt)

    def visit_buffer_store_(self, stmt: BufferStore) -> None:
        self._touch(stmt.buffer)
        self.written[id(stmt.buffer.data)] = stmt.buffer.data
        if any(reads_memory(i) for i in stmt.indices):
            self.ok = False
        self.generic_visit(stmt)

    def visit_buffer_load_(self, node: BufferLoad) -> None:
        self._touch(node.buffer)
        if any(reads_memory(i) for i in node.indices):
            self.gathers = True
        self.generic_visit(node)

    def visit_call_(self, node: Call) -> None:
        if node.kind is CallKind.EXTERN:
            self.ok = False
        self.generic_visit(node)


def _range(buffers: list[Buffer]) -> ByteRange | None:
    """The memory of a data var seen through ``buffers`` (all the same flat view), or None."""
    first = buffers[0]
    for buffer in buffers:
        if byte_range(buffer) is None or buffer.dtype != first.dtype:
            return None
        if not structural_equal(buffer.shape[0], first.shape[0]):
            return None
    return byte_range(first)


def version_loop(loop: For, local_data: set[int]) -> Stmt | None:
    """The loop versioned on its buffers not overlapping (see module doc), or None."""
    if loop.kind is not ForKind.SERIAL:
        return None
    if not (isinstance(loop.extent, IntImm) and loop.extent.value >= MIN_TRIP_COUNT):
        return None
    body = _Body()
    body.visit_stmt(loop.body)
    if not (body.ok and body.gathers):
        return None
    return _versioned(loop, body, local_data)


def short_accumulator(loop: For) -> Var | None:
    """The data var of ``B`` when ``loop`` (and the constant loops nested in it) is a short
    accumulation ``B[e] = f(B[e], ...)`` (after a block's guarded init of ``B[e]``, if
    any): fewer than ``promote_accumulators``' ``MIN_TRIP_COUNT`` iterations in all, ``e``
    independent of the loops."""
    trips, variables = 1, []
    stmt: Stmt = loop
    while isinstance(stmt, For):
        if not isinstance(stmt.extent, IntImm) or stmt.kind not in (
            ForKind.SERIAL, ForKind.UNROLLED
        ):
            return None
        trips *= stmt.extent.value
        variables.append(stmt.loop_var)
        stmt = stmt.body
    if (
        isinstance(stmt, SeqStmt) and len(stmt.seq) == 2 and isinstance(stmt.seq[0], IfThenElse)
        and stmt.seq[0].else_case is None and isinstance(stmt.seq[0].then_case, BufferStore)
        and isinstance(stmt.seq[1], BufferStore)
        and stmt.seq[0].then_case.buffer.data is stmt.seq[1].buffer.data
        and len(stmt.seq[0].then_case.indices) == 1 and len(stmt.seq[1].indices) == 1
        and structural_equal(stmt.seq[0].then_case.indices[0], stmt.seq[1].indices[0])
    ):
        stmt = stmt.seq[1]  # a block's init, guarded by the first iteration, then the update
    if not isinstance(stmt, BufferStore) or trips >= PROMOTE_MIN_TRIP_COUNT:
        return None
    if len(stmt.indices) != 1 or any(depends_on(stmt.indices[0], v) for v in variables):
        return None
    found = LoadCollector(traps_are_effects=True)
    found.visit_expr(stmt.value)
    if found.impure or not any(
        load.buffer.data is stmt.buffer.data and len(load.indices) == 1
        and structural_equal(load.indices[0], stmt.indices[0])
        for load in found.loads
    ):
        return None
    return stmt.buffer.data


def version_nest(loop: For, local_data: set[int]) -> Stmt | None:
    """The nest ``loop`` versioned on its buffers not overlapping when it holds a short
    accumulation into a parameter array (see the module doc), or None."""
    if loop.kind is not ForKind.SERIAL:
        return None
    body = _Body(nests=True)
    body.visit_stmt(loop.body)
    if not body.ok or all(id(v) in local_data for v in body.accumulators):
        return None
    return _versioned(loop, body, local_data)


def _versioned(loop: For, body: _Body, local_data: set[int]) -> Stmt | None:
    """``if <the shared buffers of body do not overlap>: <noalias copy> else: loop``."""
    shared = [v for v in body.order if id(v) not in local_data]
    written = [v for v in shared if id(v) in body.written]
    if not written or len(shared) < 2:
        return None
    ranges: dict[int, ByteRange] = {}
    for var in shared:
        span = _range(body.buffers[id(var)])
        if span is None:
            return None
        ranges[id(var)] = span
    tests: list[PrimExpr] = []
    done: set[tuple[int, int]] = set()
    for w in written:
        for other in shared:
            pair = (min(id(w), id(other)), max(id(w), id(other)))
            if other is w or pair in done:
                continue
            done.add(pair)
            tests.append(disjoint(ranges[id(w)], ranges[id(other)]))
    readonly = [v for v in shared if id(v) not in body.written]
    # The function's own allocations alias no parameter and no other allocation: they take
    # part in the region without a test (a padded copy of the input, read by the window).
    own = [v for v in body.order if id(v) in local_data]
    own_written = [v for v in own if id(v) in body.written]
    own_read = [v for v in own if id(v) not in body.written]
    fast = AttrStmt(
        tuple(written + own_written + readonly + own_read),
        NOALIAS_ATTR,
        IntImm(as_dtype("int32"), len(written) + len(own_written)),
        copy_with_fresh_vars(loop),
    )
    return IfThenElse(all_of(tests), fast, loop, span=loop.span)


class _Versioner(LoopRewriter):
    def rewrite(self, loop: For) -> Stmt | None:
        return version_loop(loop, self.local_data)

    def done(self, stmt: Stmt) -> bool:
        return is_noalias_version(stmt)


class _NestVersioner(_Versioner):
    inner_first = False  # the outermost loop of the nest takes the test

    def rewrite(self, loop: For) -> Stmt | None:
        return version_nest(loop, self.local_data)


@function_pass("version_gathers", opt_level=1)
def _version_gathers(func: PrimFunc) -> PrimFunc:
    """Version gather loops on a run-time no-overlap test (see the module doc)."""
    return rewrite_loops(func, _Versioner)


version_gathers: FunctionPass = _version_gathers
"""The ``version_gathers`` pass (a :class:`FunctionPass`)."""


@function_pass("version_accumulator_nests", opt_level=1)
def _version_accumulator_nests(func: PrimFunc) -> PrimFunc:
    """Version loop nests holding short accumulations on a run-time no-overlap test (see
    the module doc)."""
    found: list[For] = []
    post_order_visit(func.body, lambda n: found.append(n) if isinstance(n, For) else None)
    if not any(short_accumulator(loop) is not None for loop in found):
        return func  # the common case, decided without the nest walks
    return rewrite_loops(func, _NestVersioner)


version_accumulator_nests: FunctionPass = _version_accumulator_nests
"""The ``version_accumulator_nests`` pass (a :class:`FunctionPass`)."""
