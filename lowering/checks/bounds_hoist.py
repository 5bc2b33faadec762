"""One range test per loop nest for the asserts of ``bounds_check=True``.

:func:`lowering.checks.bounds_check.insert_bounds_checks` puts an ``IndexError`` assert before
every access. Inside a loop nest most indices are affine in the loop variables, so the
smallest and largest value an index takes over the whole nest are affine expressions of
values fixed before the nest starts. This module tests those extremes once, before the
nest, and runs a copy of the nest without the asserts the test covers when it passes::

    if <every covered index stays in bounds over the whole nest>:
        <the nest, covered asserts removed>     # vectorizes like an unchecked build
    else:
        <the nest, every assert in place>       # the first bad access raises as before

The rewrite is exact: the copy without asserts runs only when none of them could fail, and
otherwise the original nest runs and raises at the same access with the same message after
the same writes. A test that folds to true at compile time (constant loop bounds and
shapes) drops the asserts outright; one that folds to false keeps the nest as it is.

An index is covered at a loop when it is a sum of constant multiples of the nest's loop
variables (loops with bounds fixed before the nest) and of values fixed before the nest
(variables, casts and products of them, but no loads); a ``T.min``/``T.max`` of such
indices (a vector access's first and last lane) is covered through both operands. An index
reading memory, or using a variable bound inside the nest (a ``let``, a triangular loop's
bound), is tried again at the inner loops, where more of it is fixed.
"""

from __future__ import annotations

from irbuilder.ir import (
    GE,
    LT,
    Allocate,
    And,
    AssertStmt,
    BufferLoad,
    Call,
    Cast,
    For,
    IfThenElse,
    IntImm,
    Let,
    LetStmt,
    Max,
    Min,
    Mul,
    Not,
    Or,
    PrimExpr,
    SeqStmt,
    Stmt,
    StmtExprMutator,
    Var,
    as_dtype,
    const,
    post_order_visit,
    seq,
    structural_equal,
)
from irbuilder.ir.linear_form import supports_linear, to_linear

from ..analysis import free_vars
from ..arith import Analyzer, ExprSimplifier
from ..transforms.unroll import copy_with_fresh_vars

__all__ = ["NestRange", "WithoutAsserts", "hoist_bounds_checks"]

_I64 = as_dtype("int64")
_LIMIT = 1 << 63
"""Bound on the magnitudes of a hoisted int64 expression's terms, so evaluating it cannot
overflow."""


def hoist_bounds_checks(body: Stmt) -> Stmt:
    """``body`` with each loop nest versioned on one range test of its covered asserts."""
    return _Hoister().visit_stmt(body)


def _asserts(node: Stmt) -> list[AssertStmt]:
    found: list[AssertStmt] = []
    post_order_visit(node, lambda n: found.append(n) if isinstance(n, AssertStmt) else None)
    return found


def _bound_inside(node: Stmt) -> tuple[dict[Var, For], set[Var]]:
    """The loops of ``node`` by variable, and every variable ``node`` binds."""
    loops: dict[Var, For] = {}
    bound: set[Var] = set()

    def visit(n: object) -> None:
        if isinstance(n, For):
            loops[n.loop_var] = n
            bound.add(n.loop_var)
        elif isinstance(n, (LetStmt, Let)):
            bound.add(n.var)
        elif isinstance(n, Allocate):
            bound.add(n.buffer_var)

    post_order_visit(node, visit)
    return loops, bound


class NestRange:
    """Extremes of index expressions over the iterations of one loop nest."""

    def __init__(self, root: For) -> None:
        self.loops, self.bound = _bound_inside(root)
        self.analyzer = Analyzer()
        # Loops whose bounds are fixed before the nest: their variables range over a box.
        self.box = {
            var: loop for var, loop in self.loops.items()
            if self._fixed(loop.min) and self._fixed(loop.extent)
        }

    def _fixed(self, expr: PrimExpr) -> bool:
        """Whether ``expr`` has the same value everywhere in the nest (reads no memory)."""
        if any(v in self.bound for v in free_vars(expr)):
            return False
        found: list[bool] = []
        post_order_visit(expr, lambda n: found.append(True)
                         if isinstance(n, (BufferLoad, Call)) else None)
        return not found

    def condition(self, cond: PrimExpr) -> PrimExpr | None:
        """An int64 condition, fixed before the nest, implying ``cond`` in every iteration;
        None when ``cond`` is not a range check of covered indices."""
        if isinstance(cond, Or) and isinstance(cond.a, Not):
            cond = cond.b  # `not guard or check`: the check alone is sufficient
        if not (isinstance(cond, And) and isinstance(cond.a, GE) and isinstance(cond.b, LT)):
            return None
        low, high = cond.a, cond.b
        if not (isinstance(low.b, IntImm) and low.b.value == 0 and self._fixed(high.b)):
            return None
        lo = self.extreme(low.a, lowest=True)
        hi = self.extreme(high.a, lowest=False)
        if lo is None or hi is None:
            return None
        return And(GE(lo, const(0, "int64")), LT(hi, _wide(high.b)))

    def extreme(self, expr: PrimExpr, lowest: bool) -> PrimExpr | None:
        """The smallest (``lowest``) or largest value of ``expr`` over the nest, as an int64
        expression fixed before the nest; None when not an affine index of the nest."""
        if isinstance(expr, (Min, Max)):
            a, b = self.extreme(expr.a, lowest), self.extreme(expr.b, lowest)
            if a is None or b is None:
                return None
            # min over the nest of min(a, b) is min(min a, min b); its max is at most
            # min(max a, max b): the same operator, applied to the operands' extremes.
            return Min(a, b) if isinstance(expr, Min) else Max(a, b)
        if not supports_linear(expr.dtype):
            return None
        form = to_linear(expr)
        total: PrimExpr = const(form.const, "int64")
        magnitude = abs(form.const)
        for atom, coef in form.live_terms():
            term = self._term(atom, coef, lowest)
            if term is None:
                return None
            total = total + term[0]
            magnitude += term[1]
        # Every value above is computed in int64 and none can overflow.
        return total if magnitude < _LIMIT else None

    def _term(self, atom: PrimExpr, coef: int, lowest: bool) -> tuple[PrimExpr, int] | None:
        """The extreme of ``coef * atom`` and a bound on its magnitude."""
        var = _loop_var(atom)
        if var is not None and var in self.box:
            first, last = self._span(var)
            return _scaled(first if lowest == (coef > 0) else last, coef), abs(coef) << 31
        if self._fixed(atom):
            size = self._magnitude(atom)
            return (_scaled(_wide(atom), coef), abs(coef) * size) if size else None
        if isinstance(atom, Mul):
            # A loop variable times a value fixed before the nest (``k * n`` with a
            # symbolic ``n``): the extremes are at the loop's first or last value,
            # whichever the sign of the factor picks.
            for v, x in ((atom.a, atom.b), (atom.b, atom.a)):
                var = _loop_var(v)
                if var is None or var not in self.box or not self._fixed(x):
                    continue
                size = self._magnitude(x)
                if not size:
                    return None
                first, last = self._span(var)
                factor = _scaled(_wide(x), coef)
                pick = Min if lowest else Max
                return pick(first * factor, last * factor), (abs(coef) * size) << 31
        return None

    def _span(self, var: Var) -> tuple[PrimExpr, PrimExpr]:
        """The first and last value of a box loop's variable, as int64."""
        loop = self.box[var]
        first = _wide(loop.min)
        # The variable has the loop's dtype: however far the extent reaches, its values
        # stay in that dtype's range (clamping keeps the int64 arithmetic small).
        top = const(var.dtype.max_value, "int64")
        return first, Min(first + _wide(loop.extent) - const(1, "int64"), top)

    def _magnitude(self, expr: PrimExpr) -> int:
        """A bound on ``|expr|`` (0 when ``expr`` is wider than 32 bits or not an integer)."""
        if not (expr.dtype.is_integer and expr.dtype.is_scalar) or expr.dtype.bits > 32:
            return 0
        bound = self.analyzer.const_int_bound(expr)
        return max(abs(bound.lo), abs(bound.hi), 1)


def _loop_var(atom: PrimExpr) -> Var | None:
    """``atom`` as a loop variable, seeing through widening integer casts."""
    while isinstance(atom, Cast) and atom.dtype.is_int and atom.value.dtype.is_integer \
            and atom.value.dtype.bits < atom.dtype.bits:
        atom = atom.value
    return atom if isinstance(atom, Var) else None


def _scaled(expr: PrimExpr, coef: int) -> PrimExpr:
    return expr if coef == 1 else expr * const(coef, "int64")


def _wide(expr: PrimExpr) -> PrimExpr:
    return expr if expr.dtype == _I64 else Cast(_I64, expr)


class WithoutAsserts(StmtExprMutator):
    """Removes the given assert statements (by identity)."""

    def __init__(self, drop: set[int]) -> None:
        self.drop = drop

    def visit_expr(self, expr: PrimExpr) -> PrimExpr:
        return expr

    def visit_assert_stmt_(self, node: AssertStmt) -> Stmt:
        return seq([]) if id(node) in self.drop else node

    def visit_seq_stmt_(self, node: SeqStmt) -> Stmt:
        kept = [self.visit_stmt(s) for s in node.seq if id(s) not in self.drop]
        if len(kept) == len(node.seq) and all(a is b for a, b in zip(kept, node.seq)):
            return node
        return seq(kept)


class _Hoister(StmtExprMutator):
    """Versions every loop nest (outermost loop first) on its covered asserts."""

    def visit_for_(self, node: For) -> Stmt:
        asserts = _asserts(node.body)
        if not asserts:
            return node
        nest = NestRange(node)
        covered: set[int] = set()
        tests: list[PrimExpr] = []
        for check in asserts:
            cond = nest.condition(check.condition)
            if cond is not None:
                covered.add(id(check))
                if not any(structural_equal(cond, t) for t in tests):
                    tests.append(cond)
        if not covered:
            return self.generic_mutate(node)
        test = ExprSimplifier().visit_expr(_all(tests))
        if isinstance(test, IntImm) and not test.value:
            return self.generic_mutate(node)  # some access is out of bounds: keep checking
        fast = self.generic_mutate(WithoutAsserts(covered).visit_stmt(node))
        if isinstance(test, IntImm):
            return fast
        # Both copies define the nest's variables: the fast one gets fresh objects.
        return IfThenElse(test, copy_with_fresh_vars(fast), node, span=node.span)


def _all(conds: list[PrimExpr]) -> PrimExpr:
    out = conds[0]
    for cond in conds[1:]:
        out = And(out, cond)
    return out
