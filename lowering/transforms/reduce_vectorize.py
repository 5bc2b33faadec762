"""The ``vectorize_reductions`` pass: declared reductions accumulate in lanes.

A loop that ``lower_blocks`` annotated ``{"tvmscript.reduction": kind}`` drives a block
reduction (or a ``Reduce``): its update ``B[i] = B[i] <op> x(k)`` is declared commutative
and associative, so its order may change -- but only to one fixed by the IR, never by LLVM
(no reassociation flags are given). The loop

    for k in range(m, m + n):
        if k == m: <init>               # a block's init, when present
        B[i] = B[i] <op> x(k)

becomes (``L`` = :func:`reduction_lanes` of the dtype: 64 for 4-byte, 32 for 8-byte
elements, the same on every target)::

    <init with k = m>                   # guarded by n > 0 when n is symbolic
    if <B[i] overlaps no array x reads> and n >= L:
        lanes = T.decl_buffer((L,))
        for l in T.vectorized(L): lanes[l] = x(m + l)
        for ko in range(1, n // L):
            for l in T.vectorized(L): lanes[l] = lanes[l] <op> x(m + ko * L + l)
        for h in (L/2, L/4, ..., 1):     # pairwise combine, fixed order
            for l in T.vectorized(h): lanes[l] = lanes[l] <op> lanes[l + h]
        B[i] = B[i] <op> lanes[0]
        for r in range(n % L): B[i] = B[i] <op> x(m + n // L * L + r)
    else:
        <the loop, in source order>

Lane ``l`` sums elements ``l, l + L, l + 2L, ...`` in order, then the lanes combine as a
balanced tree: the result depends only on the data and ``L`` (not on thread count, run or
target). A sum or product of one accumulator over a constant extent of at least
:data:`PARALLEL_SPLIT_EXTENT` that no parallel loop encloses (a whole-array dot product)
is cut into :data:`PARALLEL_CHUNKS` equal chunks (a multiple of ``L`` each) reduced by a
``T.parallel`` loop, each chunk in lanes as above into its own partial, and then
``B[i] = B[i] <op> partial[0] <op> ... <op> partial[C - 1]`` in order, followed by the
elements after the last chunk in source order: a fixed order again, the same for any
number of threads (one core's bandwidth is not the machine's).
Rounding error of a float sum is at most about ``(n / L + log2 L) * eps * sum|x|``
instead of ``n * eps * sum|x|`` for the sequential loop (docs/performance.md). The
accumulators of one loop (outputs jammed by ``reduce_jam``, a block's several outputs) that
share a kind and a dtype fold side by side, the halves of all of them in one vector per
step (:func:`_fold_together`): the same operations on the same lanes, so the same bits, for
a few shuffles per step instead of one per accumulator and step.

Applied to sum and product of any numeric dtype and to min/max. Integer min/max are exact
in any order. Float min/max (``T.max`` is ``a if a > b else b``) are exact in any order
too except for NaN and signed zeros, whose results depend on the order; so their lanes also
sum ``x - x`` (0 for a finite element, NaN for a NaN or an infinity) and the lane result is
used only when that sum is not NaN and the combined result is not zero: otherwise the loop
runs again in source order (it has not written ``B`` yet). Float min/max therefore give the
source order's bits always. Loops *without* the annotation whose update is an integer sum,
product, min or max (wrap-around arithmetic is associative) are vectorized the same way,
as a plain loop's bits are unchanged.
A loop whose body updates several accumulators (a block with two outputs: ``S[i] += x``
and ``Q[i] += x * x``, or a max beside a sum, marked by ``lower_blocks`` with the kinds in
store order) gets one lane buffer per accumulator, all filled by the same vector loop (the
loads of ``x`` are shared) and combined as above; ``L`` is that of the widest dtype. No
update's ``x`` may read any accumulator, and two accumulators of different kinds must not
be one element (tested at run time for arrays); with a float min/max among them, the
guard above covers every update: all lanes are kept, or the loop runs in source order.
Every load of ``x`` must step by 0 or 1 elements per ``k`` (strided reductions are left to
``interchange_reductions``), ``x`` must not read ``B``, and ``x`` must have no side
effects. ``PassContext(config={"vectorize_reductions": {"enabled": False}})`` (what
``build(..., strict_reductions=True)`` sets) keeps every reduction in source order.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

from irbuilder.ir import (
    EQ,
    GE,
    GT,
    NE,
    Add,
    Allocate,
    And,
    Buffer,
    BufferLoad,
    BufferStore,
    DataType,
    DeclBuffer,
    FloatImm,
    FloorDiv,
    FloorMod,
    For,
    ForKind,
    IfThenElse,
    IntImm,
    Mul,
    PrimExpr,
    PrimFunc,
    Ramp,
    SeqStmt,
    Shuffle,
    Stmt,
    Sub,
    Var,
    as_dtype,
    make_data_var,
    seq,
    structural_equal,
)

from ..analysis import substitute, substitute_expr
from ..analysis.loads import LoadCollector, LocalAllocations, reads_memory
from ..analysis.vars import depends_on
from ..arith import simplify_expr
from ..late.versioning import LoopRewriter, all_of, element_range, no_overlap_checks, rewrite_loops
from ..pass_infra import FunctionPass, PassContext, function_pass
from ..target import as_target
from .lower_blocks import LANE_COMBINERS, REDUCTION_ANNOTATION
from .reduce_jam import jam_factor, jam_reduction_columns

__all__ = ["reduction_lanes", "vectorize_reductions"]

_BOOL = as_dtype("bool")


def reduction_lanes(dtype: DataType) -> int:
    """Partial accumulators of a reduction of ``dtype``: 256 bytes of them, at most 64."""
    return min(64, max(1, 256 // dtype.itemsize))


MIN_SPLIT_EXTENT = 64
"""Shortest constant extent split into lanes; a shorter reduction keeps its source order.
TVM computes every reduction in source order, and the small shapes of its tests and
schedules (16, 32 steps) then give TVM's bits; from 64 steps (a head of attention scores)
the lanes pay."""


def short_reduction_lanes(lanes: int, extent: int) -> int:
    """Lanes of a reduction of constant ``extent`` (at least :data:`MIN_SPLIT_EXTENT`):
    ``lanes`` (:func:`reduction_lanes`) when the extent is at least twice that, else halved
    until it is (a 64-step float32 dot product: 32 lanes, two steps each). A function of
    the dtype and the extent alone, so the order stays the same on every target and thread
    count."""
    while lanes > 1 and extent < 2 * lanes:
        lanes //= 2
    return lanes


PARALLEL_SPLIT_EXTENT = 1 << 20
"""Shortest constant extent of a reduction that no parallel loop encloses which is cut into
chunks reduced in parallel (module doc): a chunk of 32K elements and more amortises the
thread pool's dispatch."""

PARALLEL_CHUNKS = 32
"""Chunks of a parallel-split reduction: a constant, so the order (and the bits) do not
depend on the number of threads."""


def _combine(kind: str, a: PrimExpr, b: PrimExpr) -> PrimExpr:
    return LANE_COMBINERS[kind](a, b)


def _conjuncts(cond: PrimExpr) -> list[PrimExpr]:
    if isinstance(cond, And):
        return [*_conjuncts(cond.a), *_conjuncts(cond.b)]
    return [cond]


def _is_first_iteration_test(init: Stmt, loop: For) -> bool:
    """``init`` is ``if ... and k == min and ...: S``: it runs only at the first iteration."""
    if not isinstance(init, IfThenElse) or init.else_case is not None:
        return False
    var = loop.loop_var
    for term in _conjuncts(init.condition):
        if isinstance(term, EQ) and term.a is var and structural_equal(term.b, loop.min):
            return True
    return False


def _steps_by_at_most_one(index: PrimExpr, var: Var) -> bool:
    step = simplify_expr(Sub(substitute_expr(index, {var: Add(var, IntImm(var.dtype, 1))}), index))
    return isinstance(step, IntImm) and step.value in (0, 1)


def exact_kind(loop: For) -> str | None:
    """The reduction kind of an unannotated loop whose lane split keeps its exact bits:
    ``B[i] = B[i] <op> x`` over integers (sum, product, min, max)."""
    body = loop.body
    if not isinstance(body, BufferStore) or body.value.dtype.lanes != 1:
        return None
    dtype = body.value.dtype
    for kind, op in LANE_COMBINERS.items():
        if isinstance(body.value, op):
            # Float min/max lanes would keep the bits too (guarded), but a plain float row
            # loop is better served by jam_parallel_reductions, which interleaves the
            # rows' scalar chains (the max with the sum after it, as in a softmax).
            if dtype.is_int or dtype.is_uint:
                return kind
    return None


@dataclass(frozen=True)
class _Update:
    """One update ``store.buffer[i] = store.buffer[i] <kind> x`` of a reduction loop."""

    kind: str
    store: BufferStore
    x: PrimExpr


def _as_update(stmt: Stmt, kind: str) -> _Update | None:
    op = LANE_COMBINERS.get(kind)
    if op is None or not isinstance(stmt, BufferStore) or len(stmt.indices) != 1:
        return None
    if not isinstance(stmt.value, op):
        return None
    (index,) = stmt.indices
    for acc, x in ((stmt.value.a, stmt.value.b), (stmt.value.b, stmt.value.a)):
        if (
            isinstance(acc, BufferLoad)
            and acc.buffer.data is stmt.buffer.data
            and len(acc.indices) == 1
            and structural_equal(acc.indices[0], index)
        ):
            return _Update(kind, stmt, x)
    return None


def _split_update(loop: For, kind: str | None = None) -> tuple[Stmt | None, list[_Update]] | None:
    """(init, the updates) of a reduction loop's body, or None. ``kind`` (one kind, or
    several joined by ``,`` in store order, as ``lower_blocks`` writes them) defaults to the
    loop's annotation."""
    body = loop.body
    stmts = list(body.seq) if isinstance(body, SeqStmt) else [body]
    init: Stmt | None = None
    if len(stmts) >= 2 and isinstance(stmts[0], IfThenElse):
        init = stmts.pop(0)
        if not _is_first_iteration_test(init, loop):
            return None
    if kind is None:
        declared = loop.annotations.get(REDUCTION_ANNOTATION)
        kind = declared if isinstance(declared, str) else None
    if kind is None:
        return None
    kinds = kind.split(",")
    if len(kinds) == 1:
        kinds *= len(stmts)
    if len(kinds) != len(stmts):
        return None
    updates = [_as_update(stmt, k) for stmt, k in zip(stmts, kinds)]
    if any(update is None for update in updates):
        return None
    return init, [update for update in updates if update is not None]


def _reads_and_checks(
    updates: list[_Update], var: Var, local_data: set[int]
) -> list[PrimExpr] | None:
    """The run-time no-overlap tests under which ``updates`` may run in lanes, or None when
    they never may: an accumulator index that moves with ``var``, an ``x`` with effects or
    a load that strides by more than one element or reads an accumulator."""
    loads = []
    for update in updates:
        (index,) = update.store.indices
        if depends_on(index, var):
            return None
        found = LoadCollector(traps_are_effects=True)
        found.visit_expr(update.x)
        if found.impure:
            return None
        loads.extend(found.loads)
    accumulators = {id(update.store.buffer.data) for update in updates}
    if any(
        id(load.buffer.data) in accumulators
        or len(load.indices) != 1
        or not _steps_by_at_most_one(load.indices[0], var)
        for load in loads
    ):
        return None
    checks: list[PrimExpr] = []
    for i, update in enumerate(updates):
        if id(update.store.buffer.data) in local_data:
            continue  # the function's own allocation overlaps no array
        written = element_range(update.store.buffer, update.store.indices[0])
        # Two accumulators of different kinds must not be one element: the lanes would
        # then combine a max into a sum (lower_blocks proved it for block buffers; two
        # parameter arrays may still alias).
        others = [other.store.buffer for other in updates[i + 1 :] if other.kind != update.kind]
        found_checks = no_overlap_checks(written, [load.buffer for load in loads] + others,
                                         local_data)
        if found_checks is None:
            return None
        checks.extend(found_checks)
    return checks


def vectorize_reduction(
    loop: For, local_data: set[int], may_parallelize: bool = False
) -> Stmt | None:
    """The lane-split reduction of an annotated loop, or of a plain loop whose bits it
    keeps (see module doc), or None; with ``may_parallelize`` (no parallel loop encloses
    ``loop``) a long sum or product is cut into chunks reduced in parallel."""
    declared = loop.annotations.get(REDUCTION_ANNOTATION)
    kind = declared if isinstance(declared, str) else exact_kind(loop)
    if loop.kind is not ForKind.SERIAL or kind is None:
        return None
    parts = _split_update(loop, kind)
    if parts is None:
        return None
    init, updates = parts
    dtypes = [update.store.value.dtype for update in updates]
    if any(d.lanes != 1 or not (d.is_float or d.is_int or d.is_uint) for d in dtypes):
        return None
    var = loop.loop_var
    checks = _reads_and_checks(updates, var, local_data)
    if checks is None:
        return None
    lanes = min(reduction_lanes(dtype) for dtype in dtypes)
    extent = loop.extent
    static = isinstance(extent, IntImm)
    if isinstance(extent, IntImm):
        if extent.value < MIN_SPLIT_EXTENT:
            return None
        lanes = short_reduction_lanes(lanes, extent.value)
    if reads_memory(extent) or reads_memory(loop.min):
        return None  # evaluated several times below: it must not see the updates
    if not static:
        checks.append(GE(extent, IntImm(extent.dtype, lanes)))
    plain_body = seq([update.store for update in updates])
    plain_loop = For(
        var, loop.min, loop.extent, loop.kind, plain_body, loop.thread_binding,
        {k: v for k, v in loop.annotations.items() if k != REDUCTION_ANNOTATION},
        span=loop.span,
    )
    guarded = any(u.store.value.dtype.is_float and u.kind in ("max", "min") for u in updates)
    if (
        may_parallelize
        and isinstance(extent, IntImm)
        and extent.value >= PARALLEL_SPLIT_EXTENT
        and len(updates) == 1
        and updates[0].kind in ("sum", "prod")
    ):
        fast = _chunked(loop, updates[0], lanes)
    else:
        fast = _lane_split(loop, updates, lanes, _fresh_copy(plain_loop) if guarded else None)
    versioned: Stmt = IfThenElse(all_of(checks), fast, plain_loop, span=loop.span) if checks \
        else fast
    if init is None:
        return versioned
    first: Stmt = substitute(init, {var: loop.min})
    if not static:
        first = IfThenElse(GT(extent, IntImm(extent.dtype, 0)), first, span=init.span)
    return SeqStmt((first, versioned), span=loop.span)


def _fresh_copy(loop: For) -> For:
    """``loop`` with its own loop var (a var is defined at one place only)."""
    var = Var(loop.loop_var.name, loop.loop_var.dtype)
    return For(
        var, loop.min, loop.extent, loop.kind, substitute(loop.body, {loop.loop_var: var}),
        loop.thread_binding, loop.annotations, span=loop.span,
    )


def _accumulate(kind: str, buffer: Buffer, index: PrimExpr, value: PrimExpr) -> BufferStore:
    """``buffer[index] = buffer[index] <op> value``."""
    return BufferStore(buffer, _combine(kind, BufferLoad(buffer, (index,)), value), (index,))


def _fold_upper_half(kind: str, buf: Buffer, half: PrimExpr, lane: Var) -> Stmt:
    """``buf[lane] = buf[lane] <op> buf[lane + half]``."""
    return _accumulate(kind, buf, lane, BufferLoad(buf, (Add(lane, half),)))


def _local_buffer(name: str, dtype: DataType, lanes: int) -> Buffer:
    data = make_data_var(name, dtype, "local")
    return Buffer(name, data, (IntImm(as_dtype("int32"), lanes),), dtype, scope="local")


def _lane_split(
    loop: For, updates: list[_Update], lanes: int, source_order: Stmt | None,
    assign: bool = False,
) -> Stmt:
    """The lanes, one buffer per update, filled by one vector loop; with ``source_order``
    (some update is a float min/max), the guard of the module doc: the lane results are
    kept only when no element of a guarded update was NaN or infinite and its result is not
    zero, otherwise ``source_order`` runs. With ``assign`` the folded lanes are stored into
    the accumulator instead of combined with it (a chunk's partial)."""
    ity = loop.loop_var.dtype
    var = loop.loop_var

    def imm(value: int) -> IntImm:
        return IntImm(ity, value)

    def vector_loop(width: int, body_of: Callable[[Var], list[Stmt]]) -> Stmt:
        lane = Var("l", ity)
        body = seq(body_of(lane))
        if width == 1:
            return substitute(body, {lane: imm(0)})
        return For(lane, imm(0), imm(width), ForKind.VECTORIZED, body)

    def at(x: PrimExpr, k: PrimExpr) -> PrimExpr:
        return substitute_expr(x, {var: k})

    bufs = [_local_buffer(f"{u.store.buffer.name}_lanes", u.store.value.dtype, lanes)
            for u in updates]
    chks: list[Buffer | None] = [
        _local_buffer(f"{u.store.buffer.name}_finite", u.store.value.dtype, lanes)
        if source_order is not None and u.store.value.dtype.is_float and u.kind in ("max", "min")
        else None
        for u in updates
    ]

    def first(lane: Var) -> list[Stmt]:
        out: list[Stmt] = []
        for u, buf, chk in zip(updates, bufs, chks):
            value = at(u.x, Add(loop.min, lane))
            out.append(BufferStore(buf, value, (lane,)))
            if chk is not None:
                out.append(BufferStore(chk, Sub(value, value), (lane,)))
        return out

    def update(lane: Var) -> list[Stmt]:
        out: list[Stmt] = []
        for u, buf, chk in zip(updates, bufs, chks):
            value = at(u.x, Add(base, lane))
            out.append(_accumulate(u.kind, buf, lane, value))
            if chk is not None:
                out.append(_accumulate("sum", chk, lane, Sub(value, value)))
        return out

    def fold(half: int, lane: Var) -> list[Stmt]:
        out: list[Stmt] = []
        for u, buf, chk in zip(updates, bufs, chks):
            out.append(_fold_upper_half(u.kind, buf, imm(half), lane))
            if chk is not None:
                out.append(_fold_upper_half("sum", chk, imm(half), lane))
        return out

    ko = Var("ko", ity)
    full = FloorDiv(loop.extent, imm(lanes))
    base = Add(loop.min, Mul(ko, imm(lanes)))
    steps: list[Stmt] = [
        vector_loop(lanes, first),
        For(ko, imm(1), Sub(full, imm(1)), ForKind.SERIAL, vector_loop(lanes, update)),
    ]
    together = source_order is None and len(updates) > 1 and lanes > 1 and len(
        {(u.kind, u.store.value.dtype) for u in updates}) == 1
    if together:
        folds, results, temps = _fold_together(updates[0].kind, bufs, lanes, ity)
        steps.extend(folds)
    else:
        half = lanes // 2
        while half >= 1:
            steps.append(vector_loop(half, functools.partial(fold, half)))
            half //= 2
        results, temps = [BufferLoad(buf, (imm(0),)) for buf in bufs], []
    rest = Var("r", ity)
    start = Add(loop.min, Mul(full, imm(lanes)))
    tail: list[Stmt] = [
        BufferStore(u.store.buffer, result, u.store.indices) if assign
        else _accumulate(u.kind, u.store.buffer, u.store.indices[0], result)
        for u, result in zip(updates, results)
    ]
    tail.append(For(
        rest, imm(0), FloorMod(loop.extent, imm(lanes)), ForKind.SERIAL,
        seq([_accumulate(u.kind, u.store.buffer, u.store.indices[0], at(u.x, Add(start, rest)))
                for u in updates]),
    ))
    if source_order is None:
        steps.extend(tail)
    else:
        exact: list[PrimExpr] = []
        for u, buf, chk in zip(updates, bufs, chks):
            if chk is None:
                continue
            finite = BufferLoad(chk, (imm(0),))
            combined = _combine(u.kind, BufferLoad(u.store.buffer, u.store.indices),
                                BufferLoad(buf, (imm(0),)))
            exact.append(And(EQ(finite, finite), NE(combined, FloatImm(combined.dtype, 0.0))))
        steps.append(IfThenElse(all_of(exact), SeqStmt(tuple(tail)), source_order))
    body: Stmt = SeqStmt(tuple(steps))
    local = bufs + [b for b in chks if b is not None] + temps
    for buf in local[::-1]:
        body = DeclBuffer(buf, body)
    for buf in local[::-1]:
        body = Allocate(buf.data, buf.dtype, buf.shape[0], IntImm(_BOOL, 1), body)
    return body


def _chunked(loop: For, update: _Update, lanes: int) -> Stmt:
    """The parallel-split form of the module doc: ``partial[c]`` = chunk ``c`` in lanes
    under a ``T.parallel`` loop, then the partials and the elements after the last chunk
    combined into the accumulator in order."""
    assert isinstance(loop.extent, IntImm)
    ity = loop.loop_var.dtype
    dtype = update.store.value.dtype

    def imm(value: int) -> IntImm:
        return IntImm(ity, value)

    size = loop.extent.value // PARALLEL_CHUNKS // lanes * lanes
    data = make_data_var(f"{update.store.buffer.name}_chunks", dtype, "global")
    partial = Buffer(data.name, data, (imm(PARALLEL_CHUNKS),), dtype)
    chunk = Var("chunk", ity)
    into_partial = _Update(
        update.kind,
        BufferStore(partial, _combine(update.kind, BufferLoad(partial, (chunk,)), update.x),
                    (chunk,)),
        update.x,
    )
    piece = For(loop.loop_var, Add(loop.min, Mul(chunk, imm(size))), imm(size),
                ForKind.SERIAL, into_partial.store)
    chunks = For(chunk, imm(0), imm(PARALLEL_CHUNKS), ForKind.PARALLEL,
                 _lane_split(piece, [into_partial], lanes, None, assign=True))
    which = Var("c", ity)
    combine = For(which, imm(0), imm(PARALLEL_CHUNKS), ForKind.SERIAL, _accumulate(
        update.kind, update.store.buffer, update.store.indices[0],
        BufferLoad(partial, (which,))))
    rest = Var("r", ity)
    done = PARALLEL_CHUNKS * size
    after = For(rest, imm(0), imm(loop.extent.value - done), ForKind.SERIAL, _accumulate(
        update.kind, update.store.buffer, update.store.indices[0],
        substitute_expr(update.x, {loop.loop_var: Add(loop.min, Add(imm(done), rest))})))
    body = DeclBuffer(partial, SeqStmt((chunks, combine, after)))
    return Allocate(data, dtype, partial.shape[0], IntImm(_BOOL, 1), body)


def _fold_together(
    kind: str, bufs: list[Buffer], lanes: int, ity: DataType
) -> tuple[list[Stmt], list[PrimExpr], list[Buffer]]:
    """The pairwise folds of several accumulators' lanes done side by side: each step
    combines lane ``l`` with lane ``l + half`` of every accumulator, as the separate folds
    do (same operations, same operands, same order: the same bits), but the halves of all
    accumulators sit in one vector, so a step costs a few shuffles for all of them instead
    of a shuffle per accumulator (four outputs of a dot product jammed together: their
    64-lane trees become one). Returns the steps, each accumulator's folded value and the
    step buffers to allocate."""
    count = len(bufs)
    dtype = bufs[0].dtype

    def ramp(width: int) -> Ramp:
        return Ramp(IntImm(ity, 0), IntImm(ity, 1), width)

    sources: list[PrimExpr] = [BufferLoad(buf, (ramp(lanes),)) for buf in bufs]
    steps: list[Stmt] = []
    temps: list[Buffer] = []
    width = lanes
    while width > 1:
        half = width // 2
        low = [o * width + lane for o in range(count) for lane in range(half)]
        high = [i + half for i in low]
        step = _local_buffer(f"{bufs[0].name}_fold{half}", dtype, count * half)
        value = _combine(kind, Shuffle(tuple(sources), tuple(low)),
                         Shuffle(tuple(sources), tuple(high)))
        steps.append(BufferStore(step, value, (ramp(count * half),)))
        temps.append(step)
        sources = [BufferLoad(step, (ramp(count * half),))]
        width = half
    results: list[PrimExpr] = [BufferLoad(temps[-1], (IntImm(ity, o),)) for o in range(count)]
    return steps, results, temps


class _Vectorizer(LoopRewriter):
    def __init__(self, local_data: set[int]) -> None:
        super().__init__(local_data)
        self.parallel_depth = 0

    def visit_for_(self, stmt: For) -> Stmt:
        parallel = int(stmt.kind is ForKind.PARALLEL)
        self.parallel_depth += parallel
        try:
            new = self.generic_mutate(stmt)
        finally:
            self.parallel_depth -= parallel
        out = self.rewrite(new)
        return new if out is None else out

    def rewrite(self, loop: For) -> Stmt | None:
        return vectorize_reduction(loop, self.local_data, self.parallel_depth == 0)


@function_pass("vectorize_reductions", opt_level=1)
def _vectorize_reductions(func: PrimFunc) -> PrimFunc:
    """Declared reductions accumulate in a fixed number of lanes (see module doc)."""
    ctx = PassContext.current()
    enabled = ctx.option("vectorize_reductions", "enabled")
    if enabled is not None and not enabled:
        return func
    jam = ctx.option("vectorize_reductions", "jam")
    if jam is None:
        jam = jam_factor(as_target(ctx.target))
    elif not isinstance(jam, int) or isinstance(jam, bool) or jam < 1:
        raise TypeError(f"vectorize_reductions option jam must be an int >= 1, got {jam!r}")
    if jam > 1:
        finder = LocalAllocations()
        finder.visit_stmt(func.body)
        local = finder.vars
        body = jam_reduction_columns(
            func.body, jam, lambda loop: vectorize_reduction(loop, local) is not None
        )
        func = func if body is func.body else func.with_body(body)
    return rewrite_loops(func, _Vectorizer)


vectorize_reductions: FunctionPass = _vectorize_reductions
"""The ``vectorize_reductions`` pass (a :class:`FunctionPass`)."""
