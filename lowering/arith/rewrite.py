"""Bottom-up expression simplification: folding, identities, canonical affine forms.

:class:`ExprSimplifier` is a mutator that simplifies every expression it visits
under the facts of its :class:`Analyzer`. It knows nothing of statements except
how to walk them; :mod:`lowering.transforms.simplify` adds the statement rules and the facts
that loops, lets, asserts and branches provide.
"""

from __future__ import annotations

import math

from irbuilder.ir import (
    EQ,
    GE,
    GT,
    LE,
    LT,
    NE,
    Add,
    And,
    BinaryOp,
    Broadcast,
    Call,
    CallKind,
    Cast,
    CmpOp,
    Div,
    FloatImm,
    FloorDiv,
    FloorMod,
    IntImm,
    Let,
    Max,
    Min,
    Mod,
    Mul,
    Not,
    Or,
    PrimExpr,
    Ramp,
    Select,
    StmtExprMutator,
    Sub,
    Var,
    as_dtype,
    rebuild,
    structural_equal,
)
from irbuilder.ir.int_arith import wrap_int
from irbuilder.ir.linear_form import LinearForm, from_linear, supports_linear, to_linear
from irbuilder.ir.traps import may_trap

from .analyzer import Analyzer, IntBound
from .fold import fold_node

__all__ = ["ExprSimplifier", "simplify_expr"]

_BOOL = as_dtype("bool")
_FLIP: dict[type, type[CmpOp]] = {LT: GE, LE: GT, GT: LE, GE: LT, EQ: NE, NE: EQ}
_MAX_REWRITES = 4


def _is_const(expr: PrimExpr, value: int | float) -> bool:
    return isinstance(expr, (IntImm, FloatImm)) and expr.value == value


def _same(a: PrimExpr, b: PrimExpr) -> bool:
    return a is b or structural_equal(a, b)


def _true() -> IntImm:
    return IntImm(_BOOL, 1)


def _false() -> IntImm:
    return IntImm(_BOOL, 0)


class ExprSimplifier(StmtExprMutator):
    """Simplifies expressions bottom-up under ``analyzer``'s facts.

    ``subst`` maps Vars to the expressions that replace them (used for lets
    of constants and loops of extent one).
    """

    def __init__(self, analyzer: Analyzer | None = None) -> None:
        self.analyzer = analyzer if analyzer is not None else Analyzer()
        self.subst: dict[Var, PrimExpr] = {}
        self._trap_memo: dict[int, tuple[PrimExpr, bool]] = {}
        # _arith's result per node (by identity, the node kept alive beside it): it depends on
        # the node alone, and later rounds meet the same unchanged nodes again.
        self._arith_memo: dict[int, tuple[PrimExpr, PrimExpr]] = {}

    def share_memos(self, other: ExprSimplifier) -> None:
        """Reuse ``other``'s memos of analyzer-independent results (a next round)."""
        self._trap_memo = other._trap_memo
        self._arith_memo = other._arith_memo

    # -- traversal ----------------------------------------------------------
    def visit_expr(self, expr: PrimExpr) -> PrimExpr:
        if isinstance(expr, Var):
            return self.subst.get(expr, expr)
        if isinstance(expr, Let):
            return self._visit_let(expr)
        node = self.generic_mutate(expr)
        for _ in range(_MAX_REWRITES):
            new = self.rewrite(node)
            if new is node:
                break
            node = new
        return node

    def _visit_let(self, expr: Let) -> PrimExpr:
        value = self.visit_expr(expr.value)
        if isinstance(value, (IntImm, FloatImm, Var)):
            saved = self.subst.get(expr.var)
            self.subst[expr.var] = value
            try:
                return self.visit_expr(expr.body)
            finally:
                if saved is None:
                    del self.subst[expr.var]
                else:
                    self.subst[expr.var] = saved
        with self.analyzer.scope():
            if value.dtype.is_integer and value.dtype.is_scalar:
                self.analyzer.bind(expr.var, self.analyzer.const_int_bound(value))
            body = self.visit_expr(expr.body)
        if value is expr.value and body is expr.body:
            return expr
        return Let(expr.var, value, body, span=expr.span)

    # -- rules --------------------------------------------------------------
    def rewrite(self, expr: PrimExpr) -> PrimExpr:
        """One round of rules on ``expr`` whose children are already simplified."""
        folded = fold_node(expr)
        if folded is not None:
            return folded
        if expr.dtype.is_vector:
            return self._rewrite_vector(expr)
        result = self._rewrite_scalar(expr)
        if result is expr and expr.dtype.is_bool and isinstance(expr, (CmpOp, And, Or, Not)):
            proved = self.analyzer.prove(expr)
            if proved is not None:
                return IntImm(_BOOL, 1 if proved else 0)
        return result

    def _rewrite_scalar(self, expr: PrimExpr) -> PrimExpr:
        if isinstance(expr, (Add, Sub, Mul)):
            return self._arith(expr)
        if isinstance(expr, (FloorDiv, FloorMod, Div, Mod)):
            return self._division(expr)
        if isinstance(expr, (Min, Max)):
            return self._min_max(expr)
        if isinstance(expr, CmpOp):
            if expr.a.dtype.is_integer and _same(expr.a, expr.b):
                return IntImm(_BOOL, 1 if isinstance(expr, (EQ, LE, GE)) else 0)
            return expr
        if isinstance(expr, (And, Or)):
            return self._logical(expr)
        if isinstance(expr, Not):
            inner = expr.a
            if isinstance(inner, Not):
                return inner.a
            if isinstance(inner, CmpOp) and inner.a.dtype.is_integer and inner.a.dtype.is_scalar:
                return _FLIP[type(inner)](inner.a, inner.b, span=expr.span)
            return expr
        if isinstance(expr, Select):
            proved = self.analyzer.prove(expr.condition)
            if proved is not None:
                return expr.true_value if proved else expr.false_value
            if _same(expr.true_value, expr.false_value):
                return expr.true_value
            return expr
        if isinstance(expr, Cast) and expr.value.dtype == expr.dtype:
            return expr.value
        if isinstance(expr, Call):
            return self._call(expr)
        return expr

    def _call(self, expr: Call) -> PrimExpr:
        if expr.kind is not CallKind.BUILTIN:
            return expr
        if expr.op == "likely" and len(expr.args) == 1:
            proved = self.analyzer.prove(expr.args[0])
            if proved is not None:
                return IntImm(_BOOL, 1 if proved else 0)
        if expr.op == "if_then_else" and len(expr.args) == 3:
            proved = self.analyzer.prove(expr.args[0])
            if proved is not None:
                return expr.args[1] if proved else expr.args[2]
        return expr

    def _arith(self, expr: Add | Sub | Mul) -> PrimExpr:
        hit = self._arith_memo.get(id(expr))
        if hit is not None and hit[0] is expr:
            return hit[1]
        result = self._arith_rules(expr)
        self._arith_memo[id(expr)] = (expr, result)
        if result is not expr and isinstance(result, (Add, Sub, Mul)):
            # A regrouped result is in canonical form already: regrouping it again (the
            # next rewrite round of this very node) would rebuild and compare an equal tree.
            self._arith_memo[id(result)] = (result, result)
        return result

    def _arith_rules(self, expr: Add | Sub | Mul) -> PrimExpr:
        """Regrouping and identities of +, -, *: a function of ``expr`` alone (no facts)."""
        a, b = expr.a, expr.b
        dtype = expr.dtype
        if dtype.is_integer and may_trap(expr, self._trap_memo):
            # Regrouping could cancel or zero out a division that must raise at run time
            # (x // y * 0, x // y - x // y): keep the expression as written.
            return expr
        if supports_linear(dtype):
            if isinstance(expr, Mul) and not isinstance(a, IntImm) and not isinstance(b, IntImm):
                return expr
            new = from_linear(_rejoin_quotients(to_linear(expr)))
            return expr if _same(new, expr) else new
        # identities valid for every type (floats included: x - 0.0 and x * 1.0 are exact)
        if isinstance(expr, Sub) and _is_const(b, 0):
            return a
        if isinstance(expr, Mul):
            if _is_const(b, 1):
                return a
            if _is_const(a, 1):
                return b
        if dtype.is_integer:
            if isinstance(expr, Add) and _is_const(b, 0):
                return a
            if isinstance(expr, Add) and _is_const(a, 0):
                return b
            if isinstance(expr, Mul) and (_is_const(a, 0) or _is_const(b, 0)):
                return IntImm(dtype, 0)
            if isinstance(expr, Sub) and _same(a, b):
                return IntImm(dtype, 0)
        return expr

    def _division(self, expr: FloorDiv | FloorMod | Div | Mod) -> PrimExpr:
        a, b = expr.a, expr.b
        dtype = expr.dtype
        if isinstance(expr, Div) and _is_const(b, 1):
            return a
        if not dtype.is_integer or not isinstance(b, IntImm):
            return expr
        c = b.value
        if c == 1:
            return a if isinstance(expr, (FloorDiv, Div)) else IntImm(dtype, 0)
        if c <= 0:
            return expr
        is_div = isinstance(expr, (FloorDiv, Div))
        if isinstance(expr, (Div, Mod)):
            # truncation equals flooring for a non-negative dividend
            if self.analyzer.const_int_bound(a).lo < 0:
                return expr
        bound = self.analyzer.const_int_bound(a)
        k = bound.lo // c
        if bound.hi // c == k:
            return IntImm(dtype, k) if is_div else self.rewrite_sub(a, k * c)
        if not supports_linear(dtype):
            return expr
        return self._linear_division(expr, a, c, is_div)

    def rewrite_sub(self, a: PrimExpr, value: int) -> PrimExpr:
        """``a - value`` simplified (``value`` fits the dtype)."""
        if value == 0:
            return a
        return self.rewrite(Sub(a, IntImm(a.dtype, value)))

    def _linear_division(self, expr: PrimExpr, a: PrimExpr, c: int, is_div: bool) -> PrimExpr:
        dtype = expr.dtype
        if isinstance(a, FloorDiv) and is_div and isinstance(expr, FloorDiv):
            inner = a.b
            if isinstance(inner, IntImm) and inner.value > 0:
                product = inner.value * c
                if product <= dtype.max_value:
                    return FloorDiv(a.a, IntImm(dtype, product))
        if isinstance(a, FloorMod) and not is_div and isinstance(expr, FloorMod):
            inner = a.b
            if isinstance(inner, IntImm) and inner.value > 0 and inner.value % c == 0:
                return FloorMod(a.a, IntImm(dtype, c))
        form = to_linear(a)
        if self.analyzer.linear_bound(form) is None:
            return expr
        quotient = LinearForm(dtype)
        remainder = LinearForm(dtype)
        for atom, coef in form.live_terms():
            if coef % c == 0:
                quotient.add_term(atom, coef // c)
            else:
                remainder.add_term(atom, coef)
        quotient.const = form.const // c
        remainder.const = form.const % c
        if quotient.is_const and quotient.const == 0:
            by_factor = self._divide_by_factor(form, c, is_div)
            return expr if by_factor is None else by_factor
        q_bound = self.analyzer.linear_bound(quotient)
        r_bound = self.analyzer.linear_bound(remainder)
        if q_bound is None or r_bound is None:
            return expr
        r_expr = from_linear(remainder)
        k = r_bound.lo // c
        if r_bound.hi // c == k:
            if is_div:
                quotient.const += k
                return from_linear(quotient)
            return self.rewrite_sub(r_expr, k * c)
        by_factor = self._divide_by_factor(remainder, c, is_div)
        if by_factor is not None:
            if not is_div:
                return by_factor
            return self.rewrite(Add(from_linear(quotient), by_factor))
        if not is_div:
            return FloorMod(r_expr, IntImm(dtype, c), span=expr.span)
        # floor((c*Q + R) / c) == Q + floor(R / c); every part fits the dtype
        return self.rewrite(Add(from_linear(quotient), FloorDiv(r_expr, IntImm(dtype, c))))

    def _divide_by_factor(self, form: LinearForm, c: int, is_div: bool) -> PrimExpr | None:
        """``(f*H + L) // c`` is ``H // (c/f)`` and ``(f*H + L) % c`` is ``f*(H % (c/f)) + L``
        when ``f`` divides ``c`` and ``0 <= L < f``: the index of a loop split by ``f`` read
        through the divisions of a fused loop (``(a*56 + b) // 3136`` with ``b < 56``)."""
        dtype = form.dtype
        terms = form.live_terms()
        factors = sorted({math.gcd(abs(coef), c) for _, coef in terms} - {1, c}, reverse=True)
        for f in factors:
            high = LinearForm(dtype)
            low = LinearForm(dtype)
            for atom, coef in terms:
                if coef % f == 0:
                    high.add_term(atom, coef // f)
                else:
                    low.add_term(atom, coef)
            low.const = form.const % f
            high.const = (form.const - low.const) // f
            low_bound = self.analyzer.linear_bound(low)
            if high.is_const or low_bound is None or low_bound.lo < 0 or low_bound.hi >= f:
                continue
            if self.analyzer.linear_bound(high.scaled(f)) is None:
                continue
            k = IntImm(dtype, c // f)
            if is_div:
                return self.rewrite(FloorDiv(from_linear(high), k))
            inner = self.rewrite(FloorMod(from_linear(high), k))
            return self.rewrite(Add(Mul(inner, IntImm(dtype, f)), from_linear(low)))
        return None

    def _min_max(self, expr: Min | Max) -> PrimExpr:
        a, b = expr.a, expr.b
        if _same(a, b):
            return a
        if not (expr.dtype.is_integer and expr.dtype.is_scalar):
            return expr
        diff: IntBound | None = self.analyzer.compare(a, b)
        if diff is None:
            return expr
        if diff.hi <= 0:
            return a if isinstance(expr, Min) else b
        if diff.lo >= 0:
            return b if isinstance(expr, Min) else a
        return expr

    @staticmethod
    def _logical(expr: And | Or) -> PrimExpr:
        a, b = expr.a, expr.b
        if _same(a, b):
            return a
        absorbing = 0 if isinstance(expr, And) else 1
        for side, other in ((a, b), (b, a)):
            if isinstance(side, IntImm):
                return side if side.value == absorbing else other
        return expr

    def _rewrite_vector(self, expr: PrimExpr) -> PrimExpr:
        """Lane-wise rules: Broadcast op Broadcast, Ramp +- Broadcast, Ramp * const."""
        if isinstance(expr, Ramp) and _is_const(expr.stride, 0):
            return Broadcast(expr.base, expr.lanes)
        if not isinstance(expr, BinaryOp):
            return expr
        a, b = expr.a, expr.b
        lanes = expr.dtype.lanes
        if isinstance(a, Broadcast) and isinstance(b, Broadcast):
            scalar = self.visit_expr(rebuild(expr, {"a": a.value, "b": b.value}))
            return Broadcast(scalar, lanes)
        if not expr.dtype.is_integer:
            return expr
        if isinstance(expr, (Add, Sub)):
            if isinstance(a, Ramp) and isinstance(b, Broadcast):
                base = self.visit_expr(rebuild(expr, {"a": a.base, "b": b.value}))
                return Ramp(base, a.stride, lanes)
            if isinstance(a, Broadcast) and isinstance(b, Ramp):
                base = self.visit_expr(rebuild(expr, {"a": a.value, "b": b.base}))
                stride = b.stride if isinstance(expr, Add) else self.visit_expr(0 - b.stride)
                return Ramp(base, stride, lanes)
            if isinstance(a, Ramp) and isinstance(b, Ramp):
                base = self.visit_expr(rebuild(expr, {"a": a.base, "b": b.base}))
                stride = self.visit_expr(rebuild(expr, {"a": a.stride, "b": b.stride}))
                return Ramp(base, stride, lanes)
        if isinstance(expr, Mul):
            ramp, scale = (a, b) if isinstance(a, Ramp) else (b, a)
            if isinstance(ramp, Ramp) and isinstance(scale, Broadcast):
                base = self.visit_expr(Mul(ramp.base, scale.value))
                stride = self.visit_expr(Mul(ramp.stride, scale.value))
                return Ramp(base, stride, lanes)
        return expr


def _rejoin_quotients(form: LinearForm) -> LinearForm:
    """``k*c*(x // c) + k*(x % c)`` is ``k*x`` (and so for ``Div``/``Mod``): what the
    index of a loop fused and split by a schedule becomes once flattened back."""
    remainders = [(atom, coef) for atom, coef in form.live_terms()
                  if isinstance(atom, (FloorMod, Mod)) and isinstance(atom.b, IntImm)
                  and atom.b.value > 0]
    if not remainders:
        return form
    for rem, coef in remainders:
        assert isinstance(rem, (FloorMod, Mod)) and isinstance(rem.b, IntImm)
        quotient_type = FloorDiv if isinstance(rem, FloorMod) else Div
        want = coef * rem.b.value
        for slot, (atom, q_coef) in enumerate(form.terms):
            if (type(atom) is quotient_type and isinstance(atom.b, IntImm)
                    and atom.b.value == rem.b.value and q_coef != 0
                    and q_coef == (wrap_int(want, form.dtype) if form.wrap else want)
                    and _same_remainder(atom.a, rem)):
                merged = form.copy()
                merged.terms[slot] = (atom, 0)
                merged.add_term(rem, -coef)
                merged.add_form(to_linear(atom.a), coef)
                return _rejoin_quotients(merged)
    return form


def _same_remainder(x: PrimExpr, rem: FloorMod | Mod) -> bool:
    """Whether ``x % c`` is ``rem`` (``rem = y % c``): ``x`` is ``y``, or ``y % m`` with ``c``
    dividing ``m`` (floor division: ``f % 3136 // 56 * 56 + f % 56`` is ``f % 3136``)."""
    if _same(x, rem.a):
        return True
    assert isinstance(rem.b, IntImm)
    return (isinstance(rem, FloorMod) and isinstance(x, FloorMod) and isinstance(x.b, IntImm)
            and x.b.value > 0 and x.b.value % rem.b.value == 0 and _same(x.a, rem.a))


def simplify_expr(expr: PrimExpr, analyzer: Analyzer | None = None) -> PrimExpr:
    """Simplify one expression (under ``analyzer``'s facts, if given) to a fixed point.

    One bottom-up pass can expose new opportunities above it (``(x + 16) // 2 // 2``
    folds its inner division first), so it repeats until nothing changes (at most 4 passes).
    """
    simplifier = ExprSimplifier(analyzer)
    for _ in range(4):
        new = simplifier.visit_expr(expr)
        if new is expr:
            break
        expr = new
    return expr
