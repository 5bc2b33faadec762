"""The ``partition_loops`` pass: a loop comparing its variable with constants is split where
the comparisons change value, each part without them.

A concatenation written as one block, ``O[i, j] = T.if_then_else(j < 512, A[i, j],
B[i, j - 512])``, reaches LLVM as a select between two addresses per element, which it
vectorizes with gathers (on the Zen 5 host 1.2-1.4 ms for 4096 x 1024 float32, against 0.26
ms for numba's two contiguous copies). The loop's iterations ``[0, 1024)`` split at the
comparisons' thresholds::

    for j in range(512):
        O[i * 1024 + j] = A[i * 512 + j]             # j < 512 is True throughout
    for j in range(512):
        O[i * 1024 + (j + 512)] = B[i * 512 + (j + 512) - 512]

Each part runs the same iterations in the same order with every comparison replaced by the
value it has on the whole part, so the rewrite is exact; the late ``simplify`` folds the
constant conditions and the index arithmetic.

Applied top-down to SERIAL loops without annotations with constant bounds, whose body
compares the loop variable itself (``j < c``, ``c <= j``, ``j > c``, ``j >= c`` with ``c`` a
constant, anywhere: a ``T.if_then_else``, a ``T.Select``, an ``if``) at thresholds strictly
inside the loop, at most :data:`MAX_PARTS` parts of at least :data:`MIN_PART` iterations
each; the parts are then offered to the pass again (loops inside them split too).
"""

from __future__ import annotations

import itertools

from irbuilder.ir import (
    GE,
    GT,
    LE,
    LT,
    Add,
    CmpOp,
    For,
    ForKind,
    IntImm,
    PrimExpr,
    PrimFunc,
    Stmt,
    StmtExprMutator,
    Var,
    as_dtype,
    post_order_visit,
    seq,
)

from ..pass_infra import FunctionPass, function_pass
from ..transforms.unroll import copy_with_fresh_vars

__all__ = ["MAX_PARTS", "MIN_PART", "partition_loop", "partition_loops"]

MAX_PARTS = 4
"""Most parts one loop is split into (three thresholds): code size grows with each."""

MIN_PART = 16
"""Fewest iterations of a part: a padded row's single border elements are better left to
LLVM, which keeps the condition and vectorizes the whole row with masked loads (a 58 x 58
padded plane: 0.069 ms as one loop, 0.124 ms split into 1 + 56 + 1)."""

_BOOL = as_dtype("bool")


def _threshold(cmp: CmpOp, var: Var) -> int | None:
    """The first value of ``var`` at which ``cmp`` (``var`` against a constant) may change."""
    a, b = cmp.a, cmp.b
    if a is var and isinstance(b, IntImm):
        const, var_left = b.value, True
    elif b is var and isinstance(a, IntImm):
        const, var_left = a.value, False
    else:
        return None
    # var < c, c > var, var >= c, c <= var change at c; var <= c, c >= var, var > c,
    # c < var at c + 1
    if isinstance(cmp, (LT, GE)):
        return const if var_left else const + 1
    if isinstance(cmp, (LE, GT)):
        return const + 1 if var_left else const
    return None


def _thresholds(body: Stmt, var: Var, lo: int, hi: int) -> list[int]:
    found: set[int] = set()

    def visit(node: object) -> None:
        if isinstance(node, (LT, LE, GT, GE)):
            at = _threshold(node, var)
            if at is not None and lo < at < hi:
                found.add(at)

    post_order_visit(body, visit)
    return sorted(found)


def _value(cmp: CmpOp, var: Var, at: int) -> bool:
    a = at if cmp.a is var else cmp.a.value  # type: ignore[attr-defined]
    b = at if cmp.b is var else cmp.b.value  # type: ignore[attr-defined]
    if isinstance(cmp, LT):
        return bool(a < b)
    if isinstance(cmp, LE):
        return bool(a <= b)
    if isinstance(cmp, GT):
        return bool(a > b)
    return bool(a >= b)


class _Decide(StmtExprMutator):
    """Every comparison of ``var`` with a constant becomes its value at ``at`` (the same on
    the whole part)."""

    def __init__(self, var: Var, at: int) -> None:
        self.var, self.at = var, at

    def visit_expr(self, expr: PrimExpr) -> PrimExpr:
        if isinstance(expr, (LT, LE, GT, GE)) and _threshold(expr, self.var) is not None:
            return IntImm(_BOOL, int(_value(expr, self.var, self.at)), span=expr.span)
        return super().visit_expr(expr)


def partition_loop(loop: For) -> Stmt | None:
    """``loop`` split at its comparisons' thresholds (module doc), or None."""
    if (loop.kind is not ForKind.SERIAL or loop.annotations or loop.thread_binding is not None
            or not isinstance(loop.min, IntImm) or not isinstance(loop.extent, IntImm)):
        return None
    var = loop.loop_var
    lo, hi = loop.min.value, loop.min.value + loop.extent.value
    cuts = _thresholds(loop.body, var, lo, hi)
    if not cuts or len(cuts) >= MAX_PARTS:
        return None
    bounds = [lo, *cuts, hi]
    if any(end - start < MIN_PART for start, end in itertools.pairwise(bounds)):
        return None
    parts: list[Stmt] = []
    for start, end in itertools.pairwise(bounds):
        decided = _Decide(var, start).visit_stmt(loop.body)
        fresh = Var(var.name, var.dtype)
        shifted = fresh if start == 0 else Add(fresh, IntImm(var.dtype, start))
        body = copy_with_fresh_vars(decided, {var: shifted})
        parts.append(For(fresh, IntImm(var.dtype, 0), IntImm(var.dtype, end - start),
                         ForKind.SERIAL, body, span=loop.span))
    return seq(parts)


def _compared_vars(body: Stmt) -> set[int]:
    """Ids of the variables compared with a constant anywhere in ``body`` (one walk: the
    loops of the others are not searched)."""
    found: set[int] = set()

    def visit(node: object) -> None:
        if isinstance(node, (LT, LE, GT, GE)):
            for side, other in ((node.a, node.b), (node.b, node.a)):
                if isinstance(side, Var) and isinstance(other, IntImm):
                    found.add(id(side))

    post_order_visit(body, visit)
    return found


class _Partition(StmtExprMutator):
    def __init__(self, compared: set[int]) -> None:
        self.compared = compared

    def visit_expr(self, expr: PrimExpr) -> PrimExpr:
        return expr

    def visit_for_(self, stmt: For) -> Stmt:
        if id(stmt.loop_var) not in self.compared:
            return self.generic_mutate(stmt)
        parts = partition_loop(stmt)
        if parts is None:
            return self.generic_mutate(stmt)
        return self.visit_stmt(parts)  # each part, and the loops inside, offered again


@function_pass("partition_loops", opt_level=1)
def _partition_loops(func: PrimFunc) -> PrimFunc:
    """Split loops at the constant thresholds their variable is compared with (module
    doc)."""
    compared = _compared_vars(func.body)
    if not compared:
        return func
    body = _Partition(compared).visit_stmt(func.body)
    return func if body is func.body else func.with_body(body)


partition_loops: FunctionPass = _partition_loops
"""The ``partition_loops`` pass (a :class:`FunctionPass`)."""
