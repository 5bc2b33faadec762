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
target). Rounding error of a float sum is at most about ``(n / L + log2 L) * eps * sum|x|``
instead of ``n * eps * sum|x|`` for the sequential loop (docs/performance.md).

Applied to sum and product of any numeric dtype, min/max of integers (float min/max keep
source order: ``T.max`` is ``a if a > b else b``, whose NaN and signed-zero results depend on
the order). Every load of ``x`` must step by 0 or 1 elements per ``k`` (strided reductions
are left to ``interchange_reductions``), ``x`` must not read ``B``, and ``x`` must have no
side effects. ``PassContext(config={"vectorize_reductions": {"enabled": False}})`` (what
``build(..., strict_reductions=True)`` sets) keeps every reduction in source order.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from irbuilder.ir import (
    EQ,
    GE,
    GT,
    Add,
    Allocate,
    And,
    Buffer,
    BufferLoad,
    BufferStore,
    DataType,
    DeclBuffer,
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
    Sub,
    Var,
    as_dtype,
    make_data_var,
    structural_equal,
)

from ..analysis import substitute, substitute_expr
from ..analysis.loads import LoadCollector, reads_memory
from ..analysis.vars import depends_on
from ..arith import simplify_expr
from ..late.versioning import LoopRewriter, all_of, element_range, no_overlap_checks, rewrite_loops
from ..pass_infra import FunctionPass, PassContext, function_pass
from .lower_blocks import LANE_COMBINERS, REDUCTION_ANNOTATION

__all__ = ["reduction_lanes", "vectorize_reductions"]

_BOOL = as_dtype("bool")


def reduction_lanes(dtype: DataType) -> int:
    """Partial accumulators of a reduction of ``dtype``: 256 bytes of them, at most 64."""
    return min(64, max(1, 256 // dtype.itemsize))


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


def _split_update(loop: For) -> tuple[Stmt | None, BufferStore, PrimExpr] | None:
    """(init, the update store, x) of a reduction loop's body, or None."""
    body = loop.body
    init: Stmt | None = None
    if isinstance(body, SeqStmt) and len(body.seq) == 2:
        init, body = body.seq
        if not _is_first_iteration_test(init, loop):
            return None
    if not isinstance(body, BufferStore) or len(body.indices) != 1:
        return None
    kind = loop.annotations.get(REDUCTION_ANNOTATION)
    op = LANE_COMBINERS.get(kind) if isinstance(kind, str) else None
    if op is None or not isinstance(body.value, op):
        return None
    (index,) = body.indices
    for acc, x in ((body.value.a, body.value.b), (body.value.b, body.value.a)):
        if (
            isinstance(acc, BufferLoad)
            and acc.buffer.data is body.buffer.data
            and len(acc.indices) == 1
            and structural_equal(acc.indices[0], index)
        ):
            return init, body, x
    return None


def vectorize_reduction(loop: For, local_data: set[int]) -> Stmt | None:
    """The lane-split reduction of an annotated loop (see module doc), or None."""
    kind = loop.annotations.get(REDUCTION_ANNOTATION)
    if loop.kind is not ForKind.SERIAL or not isinstance(kind, str):
        return None
    parts = _split_update(loop)
    if parts is None:
        return None
    init, store, x = parts
    dtype = store.value.dtype
    if dtype.lanes != 1 or not (dtype.is_float or dtype.is_int or dtype.is_uint):
        return None
    if dtype.is_float and kind in ("max", "min"):
        return None
    (index,) = store.indices
    var = loop.loop_var
    if depends_on(index, var):
        return None
    found = LoadCollector(traps_are_effects=True)
    found.visit_expr(x)
    if found.impure or any(load.buffer.data is store.buffer.data for load in found.loads):
        return None
    if any(
        len(load.indices) != 1 or not _steps_by_at_most_one(load.indices[0], var)
        for load in found.loads
    ):
        return None
    lanes = reduction_lanes(dtype)
    extent = loop.extent
    static = isinstance(extent, IntImm)
    if isinstance(extent, IntImm) and extent.value < 2 * lanes:
        return None
    if reads_memory(extent) or reads_memory(loop.min):
        return None  # evaluated several times below: it must not see the updates
    checks = no_overlap_checks(
        element_range(store.buffer, index), (load.buffer for load in found.loads), local_data
    )
    if checks is None:
        return None
    if not static:
        checks.append(GE(extent, IntImm(extent.dtype, lanes)))
    fast = _lane_split(loop, kind, store, x, lanes)
    plain_loop = For(
        var, loop.min, loop.extent, loop.kind, store, loop.thread_binding,
        {k: v for k, v in loop.annotations.items() if k != REDUCTION_ANNOTATION},
        span=loop.span,
    )
    versioned: Stmt = IfThenElse(all_of(checks), fast, plain_loop, span=loop.span) if checks \
        else fast
    if init is None:
        return versioned
    first: Stmt = substitute(init, {var: loop.min})
    if not static:
        first = IfThenElse(GT(extent, IntImm(extent.dtype, 0)), first, span=init.span)
    return SeqStmt((first, versioned), span=loop.span)


def _accumulate(kind: str, buffer: Buffer, index: PrimExpr, value: PrimExpr) -> BufferStore:
    """``buffer[index] = buffer[index] <op> value``."""
    return BufferStore(buffer, _combine(kind, BufferLoad(buffer, (index,)), value), (index,))


def _fold_upper_half(kind: str, buf: Buffer, half: PrimExpr, lane: Var) -> Stmt:
    """``buf[lane] = buf[lane] <op> buf[lane + half]``."""
    return _accumulate(kind, buf, lane, BufferLoad(buf, (Add(lane, half),)))


def _lane_split(loop: For, kind: str, store: BufferStore, x: PrimExpr, lanes: int) -> Stmt:
    dtype = store.value.dtype
    ity = loop.loop_var.dtype
    var = loop.loop_var

    def imm(value: int) -> IntImm:
        return IntImm(ity, value)

    data = make_data_var(f"{store.buffer.name}_lanes", dtype, "local")
    buf = Buffer(f"{store.buffer.name}_lanes", data, (IntImm(as_dtype("int32"), lanes),), dtype,
                 scope="local")

    def vector_loop(width: int, body_of: Callable[[Var], Stmt]) -> Stmt:
        lane = Var("l", ity)
        body = body_of(lane)
        if width == 1:
            return substitute(body, {lane: imm(0)})
        return For(lane, imm(0), imm(width), ForKind.VECTORIZED, body)

    def at(k: PrimExpr) -> PrimExpr:
        return substitute_expr(x, {var: k})

    ko = Var("ko", ity)
    full = FloorDiv(loop.extent, imm(lanes))
    base = Add(loop.min, Mul(ko, imm(lanes)))
    steps: list[Stmt] = [
        vector_loop(lanes, lambda lane: BufferStore(buf, at(Add(loop.min, lane)), (lane,))),
        For(
            ko, imm(1), Sub(full, imm(1)), ForKind.SERIAL,
            vector_loop(lanes, lambda lane: _accumulate(kind, buf, lane, at(Add(base, lane)))),
        ),
    ]
    half = lanes // 2
    while half >= 1:
        steps.append(vector_loop(half, functools.partial(_fold_upper_half, kind, buf, imm(half))))
        half //= 2
    target, (index,) = store.buffer, store.indices
    steps.append(_accumulate(kind, target, index, BufferLoad(buf, (imm(0),))))
    rest = Var("r", ity)
    start = Add(loop.min, Mul(full, imm(lanes)))
    steps.append(For(
        rest, imm(0), FloorMod(loop.extent, imm(lanes)), ForKind.SERIAL,
        _accumulate(kind, target, index, at(Add(start, rest))),
    ))
    body = DeclBuffer(buf, SeqStmt(tuple(steps)))
    return Allocate(data, dtype, IntImm(as_dtype("int32"), lanes), IntImm(_BOOL, 1), body)


class _Vectorizer(LoopRewriter):
    def rewrite(self, loop: For) -> Stmt | None:
        return vectorize_reduction(loop, self.local_data)


@function_pass("vectorize_reductions", opt_level=1)
def _vectorize_reductions(func: PrimFunc) -> PrimFunc:
    """Declared reductions accumulate in a fixed number of lanes (see module doc)."""
    enabled = PassContext.current().option("vectorize_reductions", "enabled")
    if enabled is not None and not enabled:
        return func
    return rewrite_loops(func, _Vectorizer)


vectorize_reductions: FunctionPass = _vectorize_reductions
"""The ``vectorize_reductions`` pass (a :class:`FunctionPass`)."""
