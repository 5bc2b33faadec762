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

Applied top-down to SERIAL loops without annotations whose body compares the loop variable
itself (``j < t``, ``t <= j``, ``j > t``, ``j >= t``, anywhere: a ``T.if_then_else``, a
``T.Select``, an ``if``):

* with constant bounds and constant thresholds ``t`` strictly inside the loop: at most
  :data:`MAX_PARTS` parts of at least :data:`MIN_PART` iterations each, except that a loop
  of at least :data:`PEEL_FROM` iterations may peel shorter first and last parts (a stencil's
  border columns: the 2046-column interior of a 2048 x 2048 five-point stencil then runs
  without the border test, 0.86 -> 0.52 ms on the Zen 5 host);
* with one threshold ``t`` that the loop does not change (its variables are defined outside
  the loop, it reads no memory: a causal mask's ``j <= i``), or symbolic bounds: two parts
  cut at ``min(max(t, lo), hi)``, either possibly empty.

A comparison of ``var + e`` (``e`` without ``var``) with ``s`` is one of ``var`` with
``t = s - e``: a split's guard ``io * 64 + ii < n`` cuts the ``ii`` loop at ``n - io * 64``.
When ``t`` is an expression of the loops inside the loop with constant bounds, sweeping fewer
than :func:`window_limit` values (:data:`MIN_PART`, or an eighth of a long loop: a padded
convolution's ``1 <= h + rh``, ``h + rh < 113``, a 31-tap window's ``15 <= x + r``), it
ranges over ``[t_lo, t_hi]``: the comparison is decided on the parts below ``t_lo`` and from
``t_hi`` (+1 for ``<=``, ``>``), and the part in between keeps it. Such a test runs once per
element of the window, so a loop of any length may peel short first and last parts for it: a
128 x 112 x 112 depthwise 3 x 3 convolution padded by ``T.if_then_else`` went from 0.62 to
0.27 ms on the Zen 5 host (numba, skipping the borders by hand: 0.49).

The parts are then offered to the pass again (loops inside them split too), except those
shorter than :data:`MIN_PART` (a border row of a window: little time, and every split there
would copy the row's loops again).
"""

from __future__ import annotations

import itertools

from irbuilder.ir import (
    GE,
    GT,
    LE,
    LT,
    Add,
    And,
    Call,
    CmpOp,
    For,
    ForKind,
    IfThenElse,
    IntImm,
    Max,
    Min,
    Or,
    PrimExpr,
    PrimFunc,
    SeqStmt,
    Stmt,
    StmtExprMutator,
    Sub,
    Var,
    as_dtype,
    post_order_visit,
    seq,
    structural_equal,
)

from ..analysis.loads import reads_memory
from ..analysis.vars import depends_on, free_vars
from ..arith.analyzer import Analyzer
from ..arith.canonical import linear_coefficient
from ..arith.rewrite import simplify_expr
from ..pass_infra import FunctionPass, function_pass
from ..transforms.unroll import copy_with_fresh_vars

__all__ = [
    "MAX_PARTS",
    "MIN_PART",
    "PEEL_FROM",
    "WINDOW_SHARE",
    "partition_loop",
    "partition_loops",
    "window_limit",
]

MAX_PARTS = 4
"""Most parts one loop is split into (three thresholds): code size grows with each."""

MIN_PART = 16
"""Fewest iterations of a part: a padded row's single border elements are better left to
LLVM, which keeps the condition and vectorizes the whole row with masked loads (a 58 x 58
padded plane: 0.069 ms as one loop, 0.124 ms split into 1 + 56 + 1)."""

PEEL_FROM = 256
"""Fewest iterations of a loop whose first and last parts may be shorter than
:data:`MIN_PART` (peeled): its long middle part then runs without the test."""

_BOOL = as_dtype("bool")


def _sides(cmp: CmpOp, var: Var) -> tuple[PrimExpr, bool] | None:
    """``(t, var_left)`` when ``cmp`` compares ``var + e`` (``e`` without ``var``, possibly
    absent) with an expression without ``var``: ``t`` is that expression minus ``e``, the
    threshold ``var`` itself is compared with; ``var_left`` says on which side."""
    for side, other, var_left in ((cmp.a, cmp.b, True), (cmp.b, cmp.a, False)):
        if not depends_on(side, var) or depends_on(other, var):
            continue
        if side is var:
            return other, var_left
        if side.dtype != var.dtype or linear_coefficient(side, var) != 1:
            return None
        rest = simplify_expr(Sub(side, var))
        if depends_on(rest, var):
            return None
        return simplify_expr(Sub(other, rest)), var_left
    return None


def _cut(cmp: CmpOp, var: Var) -> tuple[PrimExpr, bool] | None:
    """``(at, holds_below)``: the first value of ``var`` at which ``cmp`` (``var + e``
    against an expression without ``var``) may change, and its value below it."""
    found = _sides(cmp, var)
    if found is None:
        return None
    other, var_left = found
    if other.dtype != var.dtype or not isinstance(cmp, (LT, LE, GT, GE)):
        return None
    # var < cut holds below it; the others are its negation or its mirror
    holds_below = isinstance(cmp, (LT, LE)) == var_left
    # var < t, t > var, var >= t, t <= var change at t; var <= t, t >= var, var > t,
    # t < var at t + 1
    if isinstance(cmp, (LT, GE)) == var_left:
        return other, holds_below
    if isinstance(other, IntImm):
        return IntImm(other.dtype, other.value + 1), holds_below
    return Add(other, IntImm(other.dtype, 1)), holds_below


def _cuts(body: Stmt, var: Var) -> list[PrimExpr]:
    """Each distinct threshold of ``var`` in ``body`` (structurally), in first-seen order."""
    found: list[PrimExpr] = []

    def visit(node: object) -> None:
        if isinstance(node, (LT, LE, GT, GE)):
            cut = _cut(node, var)
            if cut is not None and not any(structural_equal(cut[0], seen) for seen in found):
                found.append(cut[0])

    post_order_visit(body, visit)
    return found


Ranges = dict[int, tuple[Var, int, int]]
"""Loops inside a partitioned loop with constant bounds: id of the variable -> (variable,
first value, last value)."""


def _inner_ranges(body: Stmt) -> Ranges:
    found: Ranges = {}

    def visit(node: object) -> None:
        if (isinstance(node, For) and isinstance(node.min, IntImm)
                and isinstance(node.extent, IntImm) and node.extent.value > 0):
            first = node.min.value
            found[id(node.loop_var)] = (node.loop_var, first, first + node.extent.value - 1)

    post_order_visit(body, visit)
    return found


def _window(cmp: PrimExpr, var: Var, ranges: Ranges, extent: int) -> tuple[int, int, bool] | None:
    """``(lo, hi, holds_below)`` for a comparison of ``var + e`` with ``s`` whose threshold
    ``t = s - e`` is a constant or ranges over fewer than :func:`window_limit` constants as
    the loops inside vary (a convolution window's ``1 <= h + rh``): the comparison is
    ``holds_below`` for every value of ``var`` below ``lo``, the opposite from ``hi`` on, and
    may take either value in between. None for any other comparison."""
    if not isinstance(cmp, (LT, LE, GT, GE)) or not cmp.a.dtype.is_integer:
        return None
    cut = _cut(cmp, var)
    if cut is None:
        return None
    at, holds_below = cut
    if isinstance(at, IntImm):
        return at.value, at.value, holds_below
    if not _within_loops(at, ranges):
        return None
    analyzer = Analyzer()
    for v in free_vars(at):
        _, first, last = ranges[id(v)]
        analyzer.bind_range(v, IntImm(v.dtype, first), IntImm(v.dtype, last - first + 1))
    bound = analyzer.const_int_bound(at)
    if bound.hi - bound.lo >= window_limit(extent):
        return None  # no window: the threshold sweeps the loop (a triangle's i + j < n)
    return bound.lo, bound.hi, holds_below


WINDOW_SHARE = 8
"""A window may span up to this share of the loop it cuts (:func:`window_limit`)."""


def window_limit(extent: int) -> int:
    """Fewest values a window's threshold may not sweep in a loop of ``extent`` iterations:
    :data:`MIN_PART`, or an eighth of the loop when that is more. A wide window in a long
    loop still leaves most of the loop decided: a 1-D depthwise convolution with 31 taps over
    4000 columns (padding ``15 <= x + r``, ``x + r < 4015``) runs its 3970 middle columns
    without the tests (256 channels on the Zen 2 host: 15 -> 3 ms, TVM 0.27 3.2); a
    threshold sweeping most of the loop would leave nothing decided."""
    return max(MIN_PART, extent // WINDOW_SHARE)


def _within_loops(threshold: PrimExpr, ranges: Ranges) -> bool:
    """Whether ``threshold`` depends only on the loops inside (and reads no memory)."""
    names = free_vars(threshold)
    return bool(names) and all(id(v) in ranges for v in names) and not reads_memory(threshold)


class _DecidePart(StmtExprMutator):
    """Every comparison with a window (``windows``: :func:`_windows` of the body) that the
    part ``[start, end)`` of the variable's values lies outside becomes its value there."""

    def __init__(self, windows: Windows, start: int, end: int) -> None:
        self.windows, self.start, self.end = windows, start, end

    def visit_expr(self, expr: PrimExpr) -> PrimExpr:
        window = self.windows.get(id(expr))
        if window is not None:
            low, high, holds_below = window
            if self.end <= low:
                return IntImm(_BOOL, int(holds_below), span=expr.span)
            if self.start >= high:
                return IntImm(_BOOL, int(not holds_below), span=expr.span)
        new = super().visit_expr(expr)
        # drop the decided operands that no longer matter (`True and x` is `x`), which the
        # printed IR could not show: TVMScript's `and` of a constant folds when parsed
        if isinstance(new, (And, Or)):
            identity = int(isinstance(new, And))
            for kept, other in ((new.b, new.a), (new.a, new.b)):
                if isinstance(other, IntImm) and other.value == identity:
                    return kept
        return _decided_choice(new)


Windows = dict[int, tuple[int, int, bool]]
"""The comparisons of a loop body with a window (:func:`_window`), by identity."""


def _windows(body: Stmt, var: Var, ranges: Ranges, extent: int) -> Windows:
    found: Windows = {}

    def visit(node: object) -> None:
        if isinstance(node, (LT, LE, GT, GE)):
            window = _window(node, var, ranges, extent)
            if window is not None:
                found[id(node)] = window

    post_order_visit(body, visit)
    return found


def _decided_choice(expr: PrimExpr) -> PrimExpr:
    """``T.if_then_else`` of a decided condition is the operand it chooses (it evaluates
    only that one): the passes between this one and the late ``simplify`` (the register
    tiles of a convolution whose padding was inlined) see the load, not a builtin call."""
    if (isinstance(expr, Call) and expr.op == "if_then_else" and len(expr.args) == 3
            and isinstance(expr.args[0], IntImm)):
        return expr.args[1] if expr.args[0].value else expr.args[2]
    return expr


class _Decide(StmtExprMutator):
    """Every comparison of ``var`` against ``cut`` becomes ``below``: its value on a part
    that lies below the cut if True, at or above it if False."""

    def __init__(self, var: Var, cut: PrimExpr, below: bool) -> None:
        self.var, self.cut, self.below = var, cut, below

    def visit_expr(self, expr: PrimExpr) -> PrimExpr:
        if isinstance(expr, (LT, LE, GT, GE)):
            cut = _cut(expr, self.var)
            if cut is not None and structural_equal(cut[0], self.cut):
                return IntImm(_BOOL, int(cut[1] == self.below), span=expr.span)
        return _decided_choice(super().visit_expr(expr))

    def visit_if_then_else_(self, stmt: IfThenElse) -> Stmt:
        return _decided_branch(self.generic_mutate(stmt))


def _decided_branch(stmt: Stmt) -> Stmt:
    """An ``if`` on a decided condition is the branch it takes (nothing for a false one
    without ``else``): the passes before the late ``simplify`` see the part's loop as a
    plain loop (a last chunk's guard ``if c * W + k < n``: its row loop then runs in vector
    lanes), and a part that does nothing is dropped (:func:`_does_nothing`)."""
    if isinstance(stmt, IfThenElse) and isinstance(stmt.condition, IntImm):
        if stmt.condition.value:
            return stmt.then_case
        return stmt.else_case if stmt.else_case is not None else SeqStmt(())
    return stmt


def _does_nothing(part: Stmt) -> bool:
    """A part's loop whose body is empty (every statement under a false test)."""
    return isinstance(part, For) and isinstance(part.body, SeqStmt) and not part.body.seq


def _part(loop: For, start: PrimExpr, extent: PrimExpr, body: Stmt) -> For:
    var = loop.loop_var
    fresh = Var(var.name, var.dtype)
    shifted = fresh if isinstance(start, IntImm) and start.value == 0 else Add(fresh, start)
    return For(fresh, IntImm(var.dtype, 0), extent, ForKind.SERIAL,
               copy_with_fresh_vars(body, {var: shifted}), span=loop.span)


def _constant_parts(loop: For, windows: Windows) -> Stmt | None:
    var = loop.loop_var
    assert isinstance(loop.min, IntImm) and isinstance(loop.extent, IntImm)
    lo, hi = loop.min.value, loop.min.value + loop.extent.value
    inside = sorted({c for low, high, _ in windows.values() for c in (low, high) if lo < c < hi})
    if not inside or len(inside) >= MAX_PARTS:
        return None
    bounds = [lo, *inside, hi]
    spans = list(itertools.pairwise(bounds))
    # a window's comparison is tested once per iteration of the loops inside: short parts
    # pay there too (its undecided part is shorter than MIN_PART by definition)
    windowed = any(low != high for low, high, _ in windows.values())
    middle = spans[1:-1] if hi - lo >= PEEL_FROM else spans
    if not windowed and any(end - start < MIN_PART for start, end in middle):
        return None
    parts: list[Stmt] = []
    for start, end in spans:
        decided = _DecidePart(windows, start, end).visit_stmt(loop.body)
        parts.append(_part(loop, IntImm(var.dtype, start), IntImm(var.dtype, end - start),
                           decided))
    return seq(parts)


def _symbolic_parts(loop: For, cut: PrimExpr) -> Stmt | None:
    """Two parts, below and from ``min(max(cut, lo), hi)``, when ``cut`` is invariant."""
    if reads_memory(cut):
        return None
    outside = set(free_vars(loop))
    if not all(v in outside for v in free_vars(cut)):
        return None  # a variable defined inside the loop
    lo = loop.min
    hi = loop.min + loop.extent
    at = simplify_expr(Min(Max(cut, lo), hi))
    var = loop.loop_var
    below = _part(loop, lo, simplify_expr(at - lo), _Decide(var, cut, True).visit_stmt(loop.body))
    above = _part(loop, at, simplify_expr(hi - at), _Decide(var, cut, False).visit_stmt(loop.body))
    return seq([part for part in (below, above) if not _does_nothing(part)])


def partition_loop(loop: For) -> Stmt | None:
    """``loop`` split at its comparisons' thresholds (module doc), or None."""
    if loop.kind is not ForKind.SERIAL or loop.annotations or loop.thread_binding is not None:
        return None
    cuts = _cuts(loop.body, loop.loop_var)
    constant_loop = isinstance(loop.min, IntImm) and isinstance(loop.extent, IntImm)
    if constant_loop:
        ranges = _inner_ranges(loop.body)
        if all(isinstance(c, IntImm) or _within_loops(c, ranges) for c in cuts):
            assert isinstance(loop.extent, IntImm)
            windows = _windows(loop.body, loop.loop_var, ranges, loop.extent.value)
            return _constant_parts(loop, windows) if windows else None
    if len(cuts) != 1:
        return None
    return _symbolic_parts(loop, cuts[0])


def _compared_vars(body: Stmt) -> set[int]:
    """Ids of the variables in a side of a comparison anywhere in ``body`` (one walk: the
    loops of the others are not searched)."""
    found: set[int] = set()

    def visit(node: object) -> None:
        if isinstance(node, (LT, LE, GT, GE)):
            for side in (node.a, node.b):
                found.update(id(v) for v in free_vars(side))

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
        # each part, and the loops inside, offered again; not those inside a peeled part
        # shorter than MIN_PART (a border row of a window: little time, many copies)
        pieces = list(parts.seq) if isinstance(parts, SeqStmt) else [parts]
        out: list[Stmt] = []
        for piece in pieces:
            if not _peeled(piece):
                self.compared |= _compared_vars(piece)  # the parts' loops have fresh vars
                piece = self.visit_stmt(piece)
            out.append(piece)
        return seq(out)


def _peeled(part: Stmt) -> bool:
    return (isinstance(part, For) and isinstance(part.extent, IntImm)
            and part.extent.value < MIN_PART)


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
