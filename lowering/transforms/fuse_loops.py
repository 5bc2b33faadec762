"""The ``fuse_contiguous_loops`` pass: two perfectly nested loops walking memory contiguously
become one loop (after flattening, before unrolling and vectorizing).

An elementwise block over an NCHW tensor lowers to ``for c, h, w in T.grid(C, H, W)`` with
flat indices ``... + h * W + w``. With a small ``W`` that is not a multiple of the vector
width (28, 14, 7), LLVM unrolls the ``w`` loop whole and vectorizes ``h`` instead, with
gathers and scatters a row apart: on the Zen 5 host a 16 x 128 x 28 x 28 scale-and-shift
took 0.41 ms that way against 0.064 ms as one contiguous loop. Whenever every index the
two loops reach is linear in both variables with ``coefficient(h) == W * coefficient(w)``
(``h * W + w`` walks memory as one variable ``hw`` would), the pair becomes::

    for h_w in range(H * W):
        <body, each index with h := 0 and w := h_w>

Every iteration performs the same statements on the same elements in the same order (the
index of iteration ``(h, w)`` equals that of ``h_w = h * W + w``), so the rewrite is exact.

Loops driving one declared block reduction (both annotated by ``lower_blocks`` with the
same ``tvmscript.reduction`` kind) fuse too, their init guard ``h == 0 and w == 0``
becoming ``h_w == 0``: a reduction over ``c, h, w`` of 16 x 32 x 32 is then one loop of
16384 that ``vectorize_reductions`` splits into lanes, where its innermost 32 were too few
(on the Zen 5 host a group-norm statistic went from 2.15 to about 0.3 ms). The pass runs
before ``unroll_loop`` and ``vectorize_reductions`` for that.

Applied bottom-up to pairs of SERIAL loops without annotations (or with the same reduction
annotation), starting at 0, with
constant extents whose product fits the loop variable's type, when ``h`` and ``w`` occur
nowhere else in the inner loop's body (not in a value, a condition, a binding, another
loop's bounds or a vector index). A loop whose trip count varies between iterations of the
outer one is never formed: the inner extent is a constant.
"""

from __future__ import annotations

from irbuilder.ir import (
    EQ,
    And,
    BufferLoad,
    BufferStore,
    For,
    ForKind,
    IntImm,
    PrimExpr,
    PrimFunc,
    Stmt,
    StmtExprMutator,
    Var,
)

from ..analysis.substitute import substitute_expr
from ..analysis.vars import depends_on
from ..arith.canonical import linear_coefficient
from ..arith.rewrite import simplify_expr
from ..pass_infra import FunctionPass, function_pass
from .lower_blocks import REDUCTION_ANNOTATION

__all__ = ["fuse_contiguous_loops", "fuse_loop_pair"]


class _NotContiguous(Exception):
    """Stops the rewrite at the first index that does not walk memory as one loop."""


class _Reindex(StmtExprMutator):
    """Rewrites every scalar index reaching ``outer``/``inner`` whose coefficients walk
    memory contiguously; raises :class:`_NotContiguous` at the first index that does not."""

    def __init__(self, outer: Var, inner: Var, inner_extent: int, fused: Var) -> None:
        self.outer, self.inner, self.extent, self.fused = outer, inner, inner_extent, fused

    def _index(self, index: PrimExpr) -> PrimExpr:
        if not (depends_on(index, self.outer) or depends_on(index, self.inner)):
            return index
        if index.dtype.lanes != 1:
            raise _NotContiguous
        a = linear_coefficient(index, self.outer)
        b = linear_coefficient(index, self.inner)
        if a is None or b is None or a != b * self.extent:
            raise _NotContiguous
        zero = IntImm(self.outer.dtype, 0)
        return simplify_expr(substitute_expr(index, {self.outer: zero, self.inner: self.fused}))

    def _first(self, expr: PrimExpr, var: Var) -> bool:
        return (isinstance(expr, EQ) and expr.a is var and isinstance(expr.b, IntImm)
                and expr.b.value == 0)

    def visit_expr(self, expr: PrimExpr) -> PrimExpr:
        if isinstance(expr, And):
            # a reduction's init guard ``... and h == 0 and w == 0``: the first iteration
            # of both loops is the first of the fused one
            terms = _conjuncts(expr)
            firsts = [t for t in terms if self._first(t, self.outer) or self._first(t, self.inner)]
            if len(firsts) == 2 and not self._first(firsts[0], self.inner):
                rest = [self.visit_expr(t) for t in terms if not any(t is f for f in firsts)]
                fused: PrimExpr = EQ(self.fused, IntImm(self.fused.dtype, 0))
                for term in reversed(rest):
                    fused = And(term, fused)
                return fused
        return super().visit_expr(expr)

    def visit_buffer_load_(self, node: BufferLoad) -> PrimExpr:
        indices = tuple(self._index(self.visit_expr(i)) for i in node.indices)
        return BufferLoad(node.buffer, indices, span=node.span)

    def visit_buffer_store_(self, stmt: BufferStore) -> Stmt:
        value = self.visit_expr(stmt.value)
        indices = tuple(self._index(self.visit_expr(i)) for i in stmt.indices)
        return BufferStore(stmt.buffer, value, indices, span=stmt.span)


def _conjuncts(expr: PrimExpr) -> list[PrimExpr]:
    if isinstance(expr, And):
        return _conjuncts(expr.a) + _conjuncts(expr.b)
    return [expr]


def _plain(loop: For) -> bool:
    return (
        loop.kind is ForKind.SERIAL
        and set(loop.annotations) <= {REDUCTION_ANNOTATION}
        and loop.thread_binding is None
        and isinstance(loop.min, IntImm)
        and loop.min.value == 0
        and isinstance(loop.extent, IntImm)
        and loop.extent.value >= 1
    )


def fuse_loop_pair(outer: For) -> For | None:
    """``outer`` and the loop forming its whole body as one loop (module doc), or None."""
    inner = outer.body
    if not (isinstance(inner, For) and _plain(outer) and _plain(inner)):
        return None
    if dict(outer.annotations) != dict(inner.annotations):
        return None  # both loops drive the same declared reduction, or neither does
    h, w = outer.loop_var, inner.loop_var
    if h.dtype != w.dtype:
        return None
    assert isinstance(outer.extent, IntImm) and isinstance(inner.extent, IntImm)
    count = outer.extent.value * inner.extent.value
    if count >= 1 << (h.dtype.bits - 1):
        return None
    fused = Var(f"{h.name}_{w.name}", w.dtype)
    try:
        body = _Reindex(h, w, inner.extent.value, fused).visit_stmt(inner.body)
    except _NotContiguous:
        return None
    if depends_on(body, h) or depends_on(body, w):
        return None
    return For(fused, IntImm(w.dtype, 0), IntImm(w.dtype, count), ForKind.SERIAL, body,
               annotations=inner.annotations, span=outer.span)


class _Fuse(StmtExprMutator):
    def visit_expr(self, expr: PrimExpr) -> PrimExpr:
        return expr

    def visit_for_(self, stmt: For) -> Stmt:
        visited = self.generic_mutate(stmt)  # inner pairs first
        assert isinstance(visited, For)
        fused = fuse_loop_pair(visited)
        return visited if fused is None else fused


@function_pass("fuse_contiguous_loops", opt_level=1)
def _fuse_contiguous_loops(func: PrimFunc) -> PrimFunc:
    """Fuse perfectly nested serial loops that walk memory as one loop (module doc)."""
    body = _Fuse().visit_stmt(func.body)
    return func if body is func.body else func.with_body(body)


fuse_contiguous_loops: FunctionPass = _fuse_contiguous_loops
"""The ``fuse_contiguous_loops`` pass (a :class:`FunctionPass`)."""
