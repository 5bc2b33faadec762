"""Column spans of a row group whose reduction loop's bounds depend on the row.

A triangular matrix-vector product runs ``for j in range(i + 1)`` in row ``i``: the rows of
a group of ``count`` rows ``first .. first + count - 1`` (computed together by
``vectorize_row_reductions``, one row per vector lane) reduce over different columns. Each
row's columns ``[lo(u), hi(u))`` are cut into three spans, run in this order so that every
row still takes its columns in ascending order:

* the row's **head** ``[lo(u), min(L, hi(u)))``, one row at a time (scalar),
* the **common** span ``[L, max(L, H))`` of all rows, in vector lanes,
* the row's **tail** ``[max(L, H), hi(u))``, one row at a time,

with ``L = max lo(u)`` and ``H = min hi(u)``. A row ending before ``L`` is done after its
head (the common span is then empty: ``H <= hi(u) < L``). ``lo`` and ``hi`` are affine in
the row, so ``L`` and ``H`` are their values at the group's first or last row, by the sign
of the row's coefficient. A bound may also be a ``T.min``/``T.max`` of such bounds (a last
chunk cut short, ``T.min(n - c * W, W)``, which ``partition_loops`` makes of a guard ``if c
* W + k < n``): ``L`` and ``H`` are then the same ``min``/``max`` of their operands' values,
exact for ``H`` of a ``min`` and ``L`` of a ``max``, otherwise a bound on the safe side
(``L`` no lower, ``H`` no higher: the heads and tails take what the common span leaves). A
bound that does not depend on the row gives no heads (``lo``) or no tails (``hi``).
"""

from __future__ import annotations

from irbuilder.ir import (
    For,
    ForKind,
    IntImm,
    LetStmt,
    Max,
    Min,
    PrimExpr,
    Stmt,
    Var,
    rebuild,
)

from ..analysis.loads import reads_memory
from ..analysis.substitute import substitute_expr
from ..analysis.vars import depends_on
from ..arith.canonical import linear_coefficient
from ..arith.rewrite import simplify_expr
from ..transforms.unroll import copy_with_fresh_vars

__all__ = ["RowSpans", "affine_in_row", "row_end"]


def row_end(loop: For) -> PrimExpr:
    """The end of ``loop``'s columns, ``min + extent`` simplified: ``T.max(i - 30, 0)`` to
    ``T.min(n - i, 64)`` is the extent ``T.min(..) - T.max(..)``, whose end is the ``min``."""
    return simplify_expr(loop.min + loop.extent)


def affine_in_row(bound: PrimExpr, row: Var) -> bool:
    """Whether ``bound`` is affine in ``row`` (or free of it), or a ``min``/``max`` of such
    bounds, and reads no memory."""
    if reads_memory(bound):
        return False
    if isinstance(bound, (Min, Max)):
        return affine_in_row(bound.a, row) and affine_in_row(bound.b, row)
    return linear_coefficient(bound, row) is not None


class RowSpans:
    """The spans (module doc) of the rows ``first + u``, ``u < count``, of ``loop`` (the
    reduction loop of row ``row``); :attr:`start` and :attr:`extent` are the common span's
    placeholders, bound by :meth:`bind` around the group's body."""

    def __init__(self, loop: For, row: Var, first: PrimExpr, count: int) -> None:
        self.loop, self.row, self.first, self.count = loop, row, first, count
        jdt = loop.loop_var.dtype
        self.lo = loop.min
        self.hi = row_end(loop)
        self.start = Var(f"{loop.loop_var.name}_from", jdt)
        self.extent = Var(f"{loop.loop_var.name}_count", jdt)

    def _at(self, bound: PrimExpr, u: int | PrimExpr) -> PrimExpr:
        if isinstance(u, int):
            row_at = self.first if u == 0 else self.first + IntImm(self.first.dtype, u)
        else:
            row_at = self.first + u
        return substitute_expr(bound, {self.row: row_at})

    def _extreme(self, bound: PrimExpr, largest: bool) -> PrimExpr:
        if isinstance(bound, (Min, Max)) and depends_on(bound, self.row):
            return type(bound)(self._extreme(bound.a, largest), self._extreme(bound.b, largest))
        coefficient = linear_coefficient(bound, self.row)
        assert coefficient is not None
        last = (coefficient >= 0) == largest
        return self._at(bound, self.count - 1 if last else 0)

    def bind(self, body: Stmt) -> Stmt:
        """``body`` with the common span's start and extent bound."""
        start = self._extreme(self.lo, largest=True)
        end = self._extreme(self.hi, largest=False)
        zero = IntImm(self.extent.dtype, 0)
        return LetStmt(self.start, start,
                       LetStmt(self.extent, Max(end - self.start, zero), body))

    def common_loop(self) -> For:
        """The reduction loop over the common span (the same body)."""
        common: For = rebuild(self.loop, {"min": self.start, "extent": self.extent})
        return common

    def _per_row(self, lane: Var, begin: PrimExpr, extent: PrimExpr, tag: str) -> Stmt:
        j = self.loop.loop_var
        step = Var(f"{j.name}_{tag}", j.dtype)
        zero = IntImm(j.dtype, 0)
        body = copy_with_fresh_vars(self.loop.body, {self.row: self.first + lane,
                                                      j: begin + step})
        return For(step, zero, Max(extent, zero), ForKind.SERIAL, body, span=self.loop.span)

    def heads(self, lane: Var) -> Stmt | None:
        """Row ``first + lane``'s head loop, or None when ``lo`` does not depend on the row."""
        if not depends_on(self.lo, self.row):
            return None
        lo, hi = self._at(self.lo, lane), self._at(self.hi, lane)
        return self._per_row(lane, lo, Min(self.start, hi) - lo, "head")

    def tails(self, lane: Var) -> Stmt | None:
        """Row ``first + lane``'s tail loop, or None when ``hi`` does not depend on the row."""
        if not depends_on(self.hi, self.row):
            return None
        begin = self.start + self.extent
        return self._per_row(lane, begin, self._at(self.hi, lane) - begin, "tail")
