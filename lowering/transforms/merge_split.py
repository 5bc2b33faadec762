"""The ``merge_split_loops`` pass: a fused loop that a schedule split again (with the
``T.where`` of a split that does not divide) is one loop again when its index is read
through divisions, so that ``split_divided_loops`` can then unfuse it into rows.

TVM prints an elementwise kernel over ``1000 x 999`` scheduled as fuse, split by 64,
parallel and vectorize as::

    for f0 in T.parallel(15610):
        for f1 in T.vectorized(64):
            if f0 * 64 + f1 < 999000:
                T_add[f0 * 64 + f1] = A[f0 * 64 + f1] + B[(f0 * 64 + f1) % 999]

Every vector of ``f1`` then tests whether its lanes cross a row of ``B`` (0.08 ms on the
Zen 5 host, numba's row loop 0.04). The pair walks ``x = f0 * 64 + f1`` over ``[0,
999000)`` in order, so it is the loop ``for x in T.parallel(999000)``, which the late stage
runs as 1000 parallel rows of 999 (0.04 ms). Same iterations in the same order; a
``T.parallel`` / ``T.vectorized`` pair promised independent iterations, so the merged loop
stays parallel.

Applied to a SERIAL or PARALLEL loop without annotations whose whole body is a SERIAL or
VECTORIZED loop without annotations (a serial one under a parallel one only when every
store is to its own element of an array the body does not read: nothing orders those
iterations then), both from 0 with constant extents, the inner body
optionally under ``if x < n`` (``n`` a constant), when once ``f0`` and ``f1`` are replaced
by ``x // B`` and ``x % B`` (``B`` the inner extent) and simplified no ``x // B`` or ``x %
B`` is left (the body used them only as ``x``), and the body divides ``x`` by constants the
way :func:`lowering.late.divided_loops.unfuse_divided_loop` takes (otherwise the split the
user wrote is kept).

A split *reduction* loop merges too: ``for k_0: for k_1 in T.vectorized(16): if k_0 * 16 +
k_1 < 1000:`` updating one block's accumulator (``lower_blocks`` marked ``k_0``, and
``k_1`` alike or left it vectorized), the init guard ``k_0 == 0 and k_1 == 0`` becoming
``k == 0``: one declared reduction loop of 1000 that ``vectorize_reductions`` runs in lanes
(a row maximum of 2048 x 1000: 1.0 -> 0.065 ms on the Zen 5 host; the 16 lanes of ``k_1``
could not hold a reduction, and the predicate kept the pair apart).
"""

from __future__ import annotations

from irbuilder.ir import (
    EQ,
    LT,
    And,
    BufferLoad,
    BufferStore,
    FloorDiv,
    FloorMod,
    For,
    ForKind,
    IfThenElse,
    IntImm,
    PrimExpr,
    PrimFunc,
    Stmt,
    StmtExprMutator,
    Var,
    post_order_visit,
)

from ..analysis.substitute import substitute
from ..arith.canonical import linear_coefficient
from ..late.divided_loops import MIN_UNFUSED, divided_vars
from ..pass_infra import FunctionPass, function_pass
from .lower_blocks import REDUCTION_ANNOTATION
from .simplify import simplify_stmt

__all__ = ["merge_split_loop", "merge_split_loops"]

def _writes_apart(body: Stmt, fused: Var) -> bool:
    """Whether no iteration of ``body`` can see another's effects: every store at an index
    linear in ``fused`` (a different element per iteration) into an array the body never
    reads. A serial inner loop under a parallel one promised nothing about its own
    iterations, which the merged parallel loop would run apart."""
    stores: list[BufferStore] = []
    loads: set[int] = set()

    def visit(node: object) -> None:
        if isinstance(node, BufferStore):
            stores.append(node)
        elif isinstance(node, BufferLoad):
            loads.add(id(node.buffer.data))

    post_order_visit(body, visit)
    return all(
        len(store.indices) == 1 and id(store.buffer.data) not in loads
        and linear_coefficient(store.indices[0], fused) not in (None, 0)
        for store in stores
    )


def _bounds(loop: For) -> int | None:
    if (loop.thread_binding is not None
            or not isinstance(loop.min, IntImm) or loop.min.value != 0
            or not isinstance(loop.extent, IntImm) or loop.extent.value <= 0):
        return None
    return loop.extent.value


def _reduction_kind(loop: For, inner: For) -> str | None:
    """The declared reduction both loops drive (``lower_blocks``' mark on the outer one and
    on the inner one or none on a vectorized inner one), or None."""
    kind = loop.annotations.get(REDUCTION_ANNOTATION)
    if not isinstance(kind, str) or set(loop.annotations) != {REDUCTION_ANNOTATION}:
        return None
    if inner.annotations == loop.annotations or (
            not inner.annotations and inner.kind is ForKind.VECTORIZED):
        return kind
    return None


class _FirstIteration(StmtExprMutator):
    """``x // B == 0 and x % B == 0`` (a split reduction's init guard, merged) is ``x == 0``."""

    def __init__(self, fused: Var, split: int) -> None:
        self.fused, self.split = fused, split

    def _part(self, expr: PrimExpr, kind: type[FloorDiv] | type[FloorMod]) -> bool:
        if not (isinstance(expr, EQ) and isinstance(expr.b, IntImm) and expr.b.value == 0):
            return False
        part = expr.a
        return (isinstance(part, kind) and part.a is self.fused
                and isinstance(part.b, IntImm) and part.b.value == self.split)

    def visit_expr(self, expr: PrimExpr) -> PrimExpr:
        if isinstance(expr, And) and (
                (self._part(expr.a, FloorDiv) and self._part(expr.b, FloorMod))
                or (self._part(expr.a, FloorMod) and self._part(expr.b, FloorDiv))):
            return EQ(self.fused, IntImm(self.fused.dtype, 0))
        return super().visit_expr(expr)


def merge_split_loop(loop: For) -> For | None:
    """``loop`` and its inner loop as one loop over the fused index (module doc), or None."""
    inner = loop.body
    if (loop.kind not in (ForKind.SERIAL, ForKind.PARALLEL) or not isinstance(inner, For)
            or inner.kind not in (ForKind.SERIAL, ForKind.VECTORIZED)):
        return None
    reduction = _reduction_kind(loop, inner)
    if reduction is None and (loop.annotations or inner.annotations):
        return None
    outer_extent, inner_extent = _bounds(loop), _bounds(inner)
    if outer_extent is None or inner_extent is None:
        return None
    dtype = loop.loop_var.dtype
    if inner.loop_var.dtype != dtype:
        return None
    fused = Var(f"{loop.loop_var.name}_{inner.loop_var.name}", dtype)
    split = IntImm(dtype, inner_extent)
    body = substitute(inner.body, {loop.loop_var: FloorDiv(fused, split),
                                        inner.loop_var: FloorMod(fused, split)})
    body = _FirstIteration(fused, inner_extent).visit_stmt(body)
    total = outer_extent * inner_extent
    if total > dtype.max_value:
        return None
    candidate = simplify_stmt(For(fused, IntImm(dtype, 0), IntImm(dtype, total), loop.kind,
                                  body, span=loop.span))
    if not isinstance(candidate, For) or candidate.loop_var is not fused:
        return None
    extent = total
    merged = candidate.body
    if isinstance(merged, IfThenElse) and merged.else_case is None:
        test = merged.condition
        if not (isinstance(test, LT) and test.a is fused and isinstance(test.b, IntImm)
                and 0 < test.b.value <= total):
            return None
        extent, merged = test.b.value, merged.then_case
    divisors = divided_vars(merged).get(id(fused), set())
    if inner_extent in divisors:
        return None
    if reduction is None:
        if not divisors:
            return None
        row = min(divisors)
        if row < MIN_UNFUSED or extent % row or any(d % row for d in divisors):
            return None
    if (loop.kind is ForKind.PARALLEL and inner.kind is ForKind.SERIAL
            and not _writes_apart(merged, fused)):
        return None
    marks = {REDUCTION_ANNOTATION: reduction} if reduction is not None else {}
    result = simplify_stmt(For(fused, IntImm(dtype, 0), IntImm(dtype, extent), loop.kind,
                               merged, annotations=marks, span=loop.span))
    return result if isinstance(result, For) else None


class _Merge(StmtExprMutator):
    def visit_expr(self, expr: PrimExpr) -> PrimExpr:
        return expr

    def visit_for_(self, stmt: For) -> Stmt:
        merged = merge_split_loop(stmt)
        return self.generic_mutate(stmt) if merged is None else merged


@function_pass("merge_split_loops", opt_level=1)
def _merge_split_loops(func: PrimFunc) -> PrimFunc:
    """Merge a split fused loop read through divisions (module doc)."""
    body = _Merge().visit_stmt(func.body)
    return func if body is func.body else func.with_body(body)


merge_split_loops: FunctionPass = _merge_split_loops
"""The ``merge_split_loops`` pass (a :class:`FunctionPass`)."""
