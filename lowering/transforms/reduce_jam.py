"""Several outputs of a dot-product reduction share one lane-split loop (part of
``vectorize_reductions``).

``C[i, j] += A[i, k] * B[j, k]`` (a matmul with ``B`` transposed, a dense layer) reduces a
contiguous row per output: ``vectorize_reductions`` gives each output its lanes, loading
``A``'s row again for every ``j``. With 32 vector registers there is room for the lanes of
four outputs at once, so the ``j`` loop is unrolled by four and jammed into the reduction::

    for j_jam in range(N // 4):
        for k in range(K):                  # marked: the jammed updates, in lanes
            C[i, 4*j_jam + u] += A[i, k] * B[4*j_jam + u, k]      for u in 0..3
    for j_rest in range(N % 4): <the j loop's body>

``A[i, k]`` is loaded once for four outputs. Every output keeps its own lanes, in the same
order: with ``fp_contract=False`` the result is bit-identical to the unjammed split (which
outputs are computed side by side changes nothing); with contraction (the default) LLVM may
fuse a different one of the first two products of a lane, as it may on any target. On the
Zen 5 host: a 512^3 transposed-``B`` matmul 1.73 -> 1.53 ms, an int8 dense layer 1.33 ->
1.07 ms, a float dense layer 2.48 -> 2.32 ms. With 16 registers (AVX2) four outputs' lanes
spill: two outputs share a loop there (:func:`jam_factor`).
``PassContext(config={"vectorize_reductions": {"jam": n}})`` sets the factor.

The jam shares an operand among outputs whose own operand is read again by a loop around
them (``B``'s rows, once per ``i``). Outputs whose rows are each read once (a batched
matrix-vector product) are left alone: nothing but ``x`` to share, and on AVX2 two outputs'
64 lanes spill (64 x 512^2 float32 as AVX2 code: 1.6 ms jammed, 1.3 ms not).

Applied to a serial ``j`` loop of constant bounds whose body is one marked reduction loop
(an init guarded by its first iteration, then one update) when that loop is lane-split on
its own, the update's element moves with ``j``, some load of its value does not depend on
``j`` (the operand the outputs share) and the reduction's bounds do not depend on ``j``.
"""

from __future__ import annotations

from collections.abc import Callable

from irbuilder.ir import (
    BufferStore,
    For,
    ForKind,
    IfThenElse,
    IntImm,
    PrimExpr,
    SeqStmt,
    Stmt,
    StmtExprMutator,
    Var,
    seq,
)

from ..analysis import substitute
from ..analysis.loads import LoadCollector
from ..analysis.vars import depends_on
from ..arith.canonical import linear_coefficient
from ..target import Target
from .lower_blocks import REDUCTION_ANNOTATION
from .unroll import copy_with_fresh_vars

__all__ = ["jam_factor", "jam_reduction_columns"]


def jam_factor(target: Target) -> int:
    """Outputs per jammed reduction: 4 with 32 vector registers (AVX-512), 2 with AVX2's 16
    (a 512^3 transposed-``B`` matmul 2.27 -> 2.17 ms, an int8 dense layer 2.42 -> 2.20 ms;
    four outputs spill), else 1."""
    if target.has_feature("avx512f"):
        return 4
    return 2 if target.has_feature("avx2") else 1


def _shared_operand(value: PrimExpr, j: Var) -> bool:
    found = LoadCollector()
    found.visit_expr(value)
    return any(not depends_on(load, j) for load in found.loads)


Splits = Callable[[For], bool]
"""Whether a reduction loop is lane-split on its own."""


def _reused(update: BufferStore, j: Var, outer: list[Var]) -> bool:
    """Whether every operand load of ``update`` that moves with ``j`` is read again by some
    loop around the ``j`` loop (a loop variable it does not depend on)."""
    found = LoadCollector()
    found.visit_expr(update.value)
    return all(any(not depends_on(load, v) for v in outer)
               for load in found.loads
               if depends_on(load, j) and load.buffer.data is not update.buffer.data)


def jam_columns(loop: For, jam: int, splits: Splits, outer: list[Var] | None = None,
                ) -> Stmt | None:
    """``loop`` (the ``j`` loop, inside the loops of ``outer``) with its reduction jammed
    ``jam`` times (module doc), or None."""
    inner = loop.body
    if not (
        jam > 1 and loop.kind is ForKind.SERIAL and isinstance(inner, For)
        and isinstance(loop.min, IntImm) and isinstance(loop.extent, IntImm)
        and loop.extent.value >= jam and REDUCTION_ANNOTATION in inner.annotations
    ):
        return None
    j = loop.loop_var
    body = inner.body
    if not isinstance(body, SeqStmt) or len(body.seq) != 2:
        return None
    init, update = body.seq
    if not (isinstance(init, IfThenElse) and init.else_case is None):
        return None
    if not isinstance(update, BufferStore) or len(update.indices) != 1:
        return None
    if linear_coefficient(update.indices[0], j) in (None, 0):
        return None
    if not _shared_operand(update.value, j):
        return None
    if outer is not None and not _reused(update, j, outer):
        return None  # each output's row is read once: a stream, jammed only at a cost
    if depends_on(inner.min, j) or depends_on(inner.extent, j) or depends_on(init.condition, j):
        return None
    if not splits(inner):
        return None
    groups, rest = divmod(loop.extent.value, jam)
    ity = j.dtype
    group = Var(f"{j.name}_jam", ity)
    columns = [loop.min.value + u for u in range(jam)]

    def at(stmt: Stmt, u: int) -> Stmt:
        return substitute(stmt, {j: group * jam + columns[u]})

    inits = [at(init.then_case, u) for u in range(jam)]
    updates = [at(update, u) for u in range(jam)]
    jammed_body = seq([IfThenElse(init.condition, seq(inits), span=init.span), *updates])
    reduction = For(inner.loop_var, inner.min, inner.extent, inner.kind, jammed_body,
                    inner.thread_binding, inner.annotations, span=inner.span)
    out: list[Stmt] = [
        For(group, IntImm(ity, 0), IntImm(ity, groups), ForKind.SERIAL, reduction,
            span=loop.span)
    ]
    if rest:
        left = Var(f"{j.name}_rest", ity)
        start = loop.min.value + groups * jam
        out.append(For(left, IntImm(ity, 0), IntImm(ity, rest), ForKind.SERIAL,
                       copy_with_fresh_vars(inner, {j: left + start}), span=loop.span))
    return seq(out)


class _Jammer(StmtExprMutator):
    def __init__(self, jam: int, splits: Splits) -> None:
        self.jam, self.splits = jam, splits
        self.outer: list[Var] = []

    def visit_expr(self, expr: PrimExpr) -> PrimExpr:
        return expr  # loops are statements: skip expression trees

    def visit_for_(self, stmt: For) -> Stmt:
        self.outer.append(stmt.loop_var)
        try:
            new = self.generic_mutate(stmt)
        finally:
            self.outer.pop()
        assert isinstance(new, For)
        jammed = jam_columns(new, self.jam, self.splits, list(self.outer))
        return new if jammed is None else jammed


def jam_reduction_columns(body: Stmt, jam: int, splits: Splits) -> Stmt:
    """``body`` with every qualifying ``j`` loop jammed (module doc)."""
    if jam <= 1:
        return body
    return _Jammer(jam, splits).visit_stmt(body)
