"""Constant-interval bounds of integer expressions under known variable ranges and facts.

:class:`Analyzer` keeps a scoped map from Vars to :class:`IntBound` intervals (from
loop ranges, let values and constraints such as ``T.assume(i < n)``) and a scoped
list of conditions known to be true. A condition that reads memory (a buffer load,
an extern call) holds only until that memory may change: :meth:`Analyzer.forget_memory`
drops it, also from the facts an enclosing scope restores. Bounds are computed on
mathematical integers and then checked against the dtype: a node whose mathematical
range does not fit may have wrapped around, so its bound becomes the whole dtype
range. Every bound returned is therefore sound for the wrapped value the program
computes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from irbuilder.ir import (
    EQ,
    GE,
    GT,
    LE,
    LT,
    NE,
    Add,
    And,
    BufferLoad,
    Call,
    CallKind,
    Cast,
    CmpOp,
    DataType,
    Div,
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
    Select,
    SizeVar,
    StmtExprVisitor,
    Sub,
    Var,
    const,
    structural_equal,
    trunc_div,
)
from irbuilder.ir.linear_form import LinearForm, from_linear, supports_linear, to_linear

__all__ = ["Analyzer", "IntBound", "MayChange", "memory_read"]

MayChange = Callable[[Var], bool]
"""Whether the memory at a data var may have changed (a store's aliasing rule)."""


class _MemoryRead(StmtExprVisitor):
    def __init__(self) -> None:
        self.data_vars: set[Var] = set()
        self.unknown = False

    def visit_buffer_load_(self, node: BufferLoad) -> None:
        self.data_vars.add(node.buffer.data)
        self.generic_visit(node)

    def visit_call_(self, node: Call) -> None:
        # An extern sees whatever memory its pointer arguments (or globals) reach.
        if node.kind in (CallKind.EXTERN, CallKind.PURE_EXTERN):
            self.unknown = True
        self.generic_visit(node)


def memory_read(expr: PrimExpr) -> set[Var] | None:
    """The data vars whose memory ``expr`` reads; None when it may read any memory."""
    found = _MemoryRead()
    found.visit_expr(expr)
    return None if found.unknown else found.data_vars


def _still_holds(read: set[Var] | None, may_change: MayChange | None) -> bool:
    """Whether a fact reading ``read`` (see :func:`memory_read`) survives the stores."""
    if read is not None and not read:
        return True  # reads no memory
    if read is None or may_change is None:
        return False  # any store may change what an extern reads
    return not any(may_change(v) for v in read)


@dataclass(frozen=True)
class IntBound:
    """The closed interval ``[lo, hi]`` of mathematical integers."""

    lo: int
    hi: int

    @staticmethod
    def of_dtype(dtype: DataType) -> IntBound:
        """The full range of an integer or bool dtype."""
        return IntBound(int(dtype.min_value), int(dtype.max_value))

    @staticmethod
    def point(value: int) -> IntBound:
        return IntBound(value, value)

    @property
    def is_point(self) -> bool:
        return self.lo == self.hi

    def fits(self, dtype: DataType) -> bool:
        """Whether every value of the interval is representable in ``dtype``."""
        return dtype.min_value <= self.lo and self.hi <= dtype.max_value

    def intersect(self, other: IntBound) -> IntBound:
        return IntBound(max(self.lo, other.lo), min(self.hi, other.hi))

    def union(self, other: IntBound) -> IntBound:
        return IntBound(min(self.lo, other.lo), max(self.hi, other.hi))


def _mul(a: IntBound, b: IntBound) -> IntBound:
    products = (a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi)
    return IntBound(min(products), max(products))


def _floordiv(a: IntBound, b: IntBound) -> IntBound | None:
    if b.lo <= 0 <= b.hi:
        return None
    quotients = (a.lo // b.lo, a.lo // b.hi, a.hi // b.lo, a.hi // b.hi)
    return IntBound(min(quotients), max(quotients))


def _truncdiv_bound(a: IntBound, b: IntBound) -> IntBound | None:
    if b.lo <= 0 <= b.hi:
        return None
    quotients = [trunc_div(x, y) for x in (a.lo, a.hi) for y in (b.lo, b.hi)]
    if a.lo < 0 < a.hi:
        quotients.append(0)
    return IntBound(min(quotients), max(quotients))


class Analyzer:
    """Bounds and simple proofs over integer expressions, with scoped facts."""

    def __init__(self) -> None:
        self._bounds: dict[Var, IntBound] = {}
        self._facts: list[PrimExpr] = []
        # Every forget_memory so far: a scope's exit re-applies those made inside it
        # to the facts it restores (a store in a branch or loop outlives the scope).
        self._forgotten: list[MayChange | None] = []
        # memory_read of each fact, by identity (the fact kept alive beside it): facts are
        # re-checked at every store and scope exit, re-walking them dominated simplify.
        self._reads: dict[int, tuple[PrimExpr, set[Var] | None]] = {}
        # var -> (lowest, highest) value as expressions, from bind_symbolic_range
        self._symbolic: dict[Var, tuple[PrimExpr, PrimExpr]] = {}

    def _read_by(self, fact: PrimExpr) -> set[Var] | None:
        hit = self._reads.get(id(fact))
        if hit is not None and hit[0] is fact:
            return hit[1]
        read = memory_read(fact)
        self._reads[id(fact)] = (fact, read)
        return read

    def _surviving(self, facts: list[PrimExpr], may_change: MayChange | None) -> list[PrimExpr]:
        return [f for f in facts if _still_holds(self._read_by(f), may_change)]

    def _reads_memory(self, facts: list[PrimExpr]) -> bool:
        """Whether any of ``facts`` reads memory (only those can be forgotten)."""
        for fact in facts:
            read = self._read_by(fact)
            if read is None or read:
                return True
        return False

    # -- facts ------------------------------------------------------------
    def bind(self, var: Var, bound: IntBound) -> None:
        """Record (intersecting any existing bound) that ``var`` lies in ``bound``."""
        old = self._bounds.get(var)
        self._bounds[var] = bound if old is None else old.intersect(bound)

    @contextmanager
    def scope(self) -> Iterator[None]:
        """Facts recorded inside the ``with`` block are forgotten at its end."""
        bounds = dict(self._bounds)
        symbolic = dict(self._symbolic)
        facts = list(self._facts)
        mark = len(self._forgotten)
        try:
            yield
        finally:
            self._bounds = bounds
            self._symbolic = symbolic
            if len(self._forgotten) > mark and self._reads_memory(facts):
                for may_change in self._forgotten[mark:]:
                    if not facts:
                        break
                    facts = self._surviving(facts, may_change)
            self._facts = facts

    @property
    def has_memory_facts(self) -> bool:
        """Whether a known fact reads memory. Without one, :meth:`forget_memory` has nothing
        to do: every such fact of an enclosing scope is gone already (forgotten by a store
        recorded in this scope) and stays gone at the scope's exit."""
        return self._reads_memory(self._facts)

    def forget_memory(self, may_change: MayChange | None) -> None:
        """Drop the facts reading memory that may have changed (``None``: any memory).

        Var bounds stay: a bound derived from a loaded value is the value's dtype range,
        true of whatever the memory holds.
        """
        self._forgotten.append(may_change)
        if self._reads_memory(self._facts):
            self._facts = self._surviving(self._facts, may_change)

    def bind_range(self, var: Var, begin: PrimExpr, extent: PrimExpr) -> None:
        """Record ``begin <= var < begin + extent`` (as far as constant bounds tell)."""
        if not (var.dtype.is_integer and var.dtype.is_scalar):
            return
        lo = self.const_int_bound(begin)
        ext = self.const_int_bound(extent)
        self.bind(var, IntBound(lo.lo, lo.hi + ext.hi - 1))

    def bind_symbolic_range(self, var: Var, begin: PrimExpr, extent: PrimExpr) -> None:
        """:meth:`bind_range`, keeping ``begin <= var <= begin + extent - 1`` as expressions
        too: comparisons then substitute them (``k < n`` and ``a < 32`` prove ``32 * k + a <
        32 * n``). The values are read as mathematical integers, as TVM's analyzer reads
        loop indices: the loop's extent is a valid (non-overflowing) extent."""
        self.bind_range(var, begin, extent)
        if var.dtype.is_integer and var.dtype.is_scalar and supports_linear(var.dtype):
            size = to_linear(extent)
            terms = size.live_terms()
            if size.const == 0 and len(terms) == 1 and terms[0][1] > 0:
                atom = terms[0][0]
                if isinstance(atom, Var):
                    # inside the loop it runs: ``32 * n >= 1``, so ``n >= 1``
                    self.bind(atom, IntBound(1, IntBound.of_dtype(atom.dtype).hi))
            last = LinearForm(var.dtype, wrap=False)
            last.add_form(to_linear(begin))
            last.add_form(to_linear(extent))
            last.add_const(-1)
            self._symbolic[var] = (begin, from_linear(last))

    def add_constraint(self, cond: PrimExpr) -> None:
        """Record that the bool ``cond`` holds (tightening var bounds where possible)."""
        if isinstance(cond, And):
            self.add_constraint(cond.a)
            self.add_constraint(cond.b)
            return
        if isinstance(cond, IntImm):
            return
        self._facts.append(cond)
        if isinstance(cond, CmpOp) and supports_linear(cond.a.dtype):
            self._constrain_compare(cond)

    def _constrain_compare(self, cond: CmpOp) -> None:
        # Rewrite `a op b` as `coef * v + rest op 0` with a single Var v of
        # coefficient +-1, and tighten v's bound from rest's bound.
        form_a, form_b = to_linear(cond.a), to_linear(cond.b)
        if self.linear_bound(form_a) is None or self.linear_bound(form_b) is None:
            return  # a side's linear form may differ from its wrapped value
        diff = self._difference_of(form_a, form_b)
        live = diff.live_terms()
        candidates = [(a, c) for a, c in live if isinstance(a, Var) and c in (1, -1)]
        if len(candidates) != 1:
            return
        var, coef = candidates[0]
        assert isinstance(var, Var)
        rest = LinearForm(diff.dtype, wrap=False)
        for atom, c in live:
            if atom is not var:
                rest.add_term(atom, c)
        rest.const = diff.const
        rb = self._math_bound(rest)
        # coef*v + rest (op) 0  <=>  v (op') -rest / coef
        op = type(cond)
        if coef == -1:
            op = {LT: GT, LE: GE, GT: LT, GE: LE, EQ: EQ, NE: NE}[op]
        neg = IntBound(-rb.hi, -rb.lo) if coef == 1 else rb
        # for coef == -1: -v + rest op 0  <=>  v op' rest
        if op is LT:
            self.bind(var, IntBound(var.dtype.min_value, neg.hi - 1))  # type: ignore[arg-type]
        elif op is LE:
            self.bind(var, IntBound(var.dtype.min_value, neg.hi))  # type: ignore[arg-type]
        elif op is GT:
            self.bind(var, IntBound(neg.lo + 1, var.dtype.max_value))  # type: ignore[arg-type]
        elif op is GE:
            self.bind(var, IntBound(neg.lo, var.dtype.max_value))  # type: ignore[arg-type]
        elif op is EQ:
            self.bind(var, neg)

    def is_known(self, cond: PrimExpr) -> bool:
        """Whether ``cond`` is structurally one of the recorded facts."""
        # structural_equal of expressions of two classes is False: test the class inline.
        cls = type(cond)
        return any(
            f is cond or (type(f) is cls and structural_equal(f, cond)) for f in self._facts
        )

    # -- bounds -----------------------------------------------------------
    def const_int_bound(self, expr: PrimExpr) -> IntBound:
        """A sound interval for the value of an integer or bool scalar expression."""
        dtype = expr.dtype
        if not (dtype.is_integer or dtype.is_bool) or dtype.is_vector:
            raise TypeError(f"const_int_bound needs a scalar integer or bool, got {dtype}")
        bound = self._bound(expr)
        if bound is None or not bound.fits(dtype):
            return IntBound.of_dtype(dtype)
        return bound

    def linear_bound(self, form: LinearForm) -> IntBound | None:
        """The bound of a linear form's mathematical value, or None if it may not fit."""
        total = self._math_bound(form)
        return total if total.fits(form.dtype) else None

    def _math_bound(self, form: LinearForm) -> IntBound:
        total = IntBound.point(form.const)
        for atom, coef in form.live_terms():
            part = _mul(self.const_int_bound(atom), IntBound.point(coef))
            total = IntBound(total.lo + part.lo, total.hi + part.hi)
        return total

    @staticmethod
    def _difference_of(form_a: LinearForm, form_b: LinearForm) -> LinearForm:
        """``a - b`` as an exact (unwrapped) linear form, from the linear forms of a and b."""
        diff = LinearForm(form_a.dtype, wrap=False)
        diff.add_form(form_a)
        diff.add_form(form_b, -1)
        return diff

    def _bound(self, expr: PrimExpr) -> IntBound | None:
        if isinstance(expr, IntImm):
            return IntBound.point(expr.value)
        if isinstance(expr, Var):
            known = self._bounds.get(expr)
            base = IntBound.of_dtype(expr.dtype)
            if isinstance(expr, SizeVar):
                base = IntBound(0, base.hi)
            return base if known is None else base.intersect(known)
        if expr.dtype.is_bool:
            return IntBound(0, 1)
        if isinstance(expr, (Add, Sub, Mul, Min, Max, FloorDiv, FloorMod, Div, Mod)):
            a = self.const_int_bound(expr.a)
            b = self.const_int_bound(expr.b)
            return self._binary(expr, a, b)
        if isinstance(expr, Select):
            return self.const_int_bound(expr.true_value).union(
                self.const_int_bound(expr.false_value)
            )
        if isinstance(expr, Cast):
            source = expr.value.dtype
            if (source.is_integer or source.is_bool) and source.is_scalar:
                inner = self.const_int_bound(expr.value)
                return inner if inner.fits(expr.dtype) else None
            return None
        if isinstance(expr, Let):
            if expr.var.dtype.is_integer and expr.var.dtype.is_scalar:
                with self.scope():
                    self.bind(expr.var, self.const_int_bound(expr.value))
                    return self.const_int_bound(expr.body)
            return None
        if isinstance(expr, Call) and expr.kind is CallKind.BUILTIN and expr.op == "likely":
            return self.const_int_bound(expr.args[0])
        if isinstance(expr, (BufferLoad, Call)):
            return None
        return None

    @staticmethod
    def _binary(expr: PrimExpr, a: IntBound, b: IntBound) -> IntBound | None:
        if isinstance(expr, Add):
            return IntBound(a.lo + b.lo, a.hi + b.hi)
        if isinstance(expr, Sub):
            return IntBound(a.lo - b.hi, a.hi - b.lo)
        if isinstance(expr, Mul):
            return _mul(a, b)
        if isinstance(expr, Min):
            return IntBound(min(a.lo, b.lo), min(a.hi, b.hi))
        if isinstance(expr, Max):
            return IntBound(max(a.lo, b.lo), max(a.hi, b.hi))
        if isinstance(expr, FloorDiv):
            return _floordiv(a, b)
        if isinstance(expr, Div):
            return _truncdiv_bound(a, b)
        if isinstance(expr, FloorMod):
            if b.lo > 0:
                if a.lo >= 0 and a.hi < b.lo:
                    return a
                return IntBound(0, b.hi - 1)
            return None
        if isinstance(expr, Mod):
            if b.lo > 0:
                if a.lo >= 0 and a.hi < b.lo:
                    return a
                limit = b.hi - 1
                return IntBound(-limit if a.lo < 0 else 0, limit if a.hi > 0 else 0)
            return None
        return None

    # -- proofs -----------------------------------------------------------
    def compare(self, a: PrimExpr, b: PrimExpr) -> IntBound | None:
        """A bound of ``a - b`` as mathematical integers, or None if unknown.

        Uses the linear forms of both sides, so common terms cancel
        (``i + 1`` versus ``i`` gives exactly 1).
        """
        if not (supports_linear(a.dtype) and a.dtype == b.dtype):
            if (a.dtype.is_integer or a.dtype.is_bool) and a.dtype == b.dtype and a.dtype.is_scalar:
                ab, bb = self.const_int_bound(a), self.const_int_bound(b)
                return IntBound(ab.lo - bb.hi, ab.hi - bb.lo)
            return None
        la, lb = to_linear(a), to_linear(b)
        if self.linear_bound(la) is None or self.linear_bound(lb) is None:
            ab, bb = self.const_int_bound(a), self.const_int_bound(b)
            return IntBound(ab.lo - bb.hi, ab.hi - bb.lo)
        return self._math_bound(self._difference_of(la, lb))

    def prove(self, cond: PrimExpr) -> bool | None:
        """True/False when ``cond`` (a scalar bool) is provably so, else None."""
        if isinstance(cond, IntImm):
            return bool(cond.value)
        if self.is_known(cond):
            return True
        if isinstance(cond, Not):
            inner = self.prove(cond.a)
            return None if inner is None else not inner
        if isinstance(cond, And):
            pa, pb = self.prove(cond.a), self.prove(cond.b)
            if pa is False or pb is False:
                return False
            return True if (pa and pb) else None
        if isinstance(cond, Or):
            pa, pb = self.prove(cond.a), self.prove(cond.b)
            if pa or pb:
                return True
            return False if (pa is False and pb is False) else None
        if isinstance(cond, Call) and cond.kind is CallKind.BUILTIN and cond.op == "likely":
            return self.prove(cond.args[0])
        if isinstance(cond, CmpOp) and cond.a.dtype.is_scalar:
            return self._prove_compare(cond)
        return None

    def _symbolic_difference(self, a: PrimExpr, b: PrimExpr) -> IntBound | None:
        """A bound of ``a - b`` with each var of :meth:`bind_symbolic_range` replaced by its
        highest value where it adds and its lowest where it subtracts (and the reverse for
        the low end), so that symbolic terms may cancel."""
        if not (self._symbolic and supports_linear(a.dtype) and a.dtype == b.dtype):
            return None
        diff = self._difference_of(to_linear(a), to_linear(b))
        ends: list[int] = []
        for upper in (False, True):
            form = LinearForm(diff.dtype, wrap=False)
            form.add_const(diff.const)
            for atom, coef in diff.live_terms():
                known = self._symbolic_ends(atom)
                if known is None:
                    form.add_term(atom, coef)
                    continue
                end = known[1] if (coef > 0) == upper else known[0]
                form.add_form(to_linear(end), coef)
            total = self._math_bound(form)
            ends.append(total.hi if upper else total.lo)
        return IntBound(ends[0], ends[1])

    def _symbolic_ends(self, atom: PrimExpr) -> tuple[PrimExpr, PrimExpr] | None:
        if isinstance(atom, Var):
            return self._symbolic.get(atom)
        if isinstance(atom, FloorMod) and self.const_int_bound(atom.b).lo > 0:
            # ``x % n`` of a positive ``n`` lies in [0, n - 1]
            last = LinearForm(atom.dtype, wrap=False)
            last.add_form(to_linear(atom.b))
            last.add_const(-1)
            return const(0, atom.dtype), from_linear(last)
        if isinstance(atom, FloorDiv) and isinstance(atom.b, Var):
            return self._quotient_ends(atom)
        return None

    def _quotient_ends(self, atom: FloorDiv) -> tuple[PrimExpr, PrimExpr] | None:
        """``x // n`` of a positive ``n`` and ``x`` in ``[lo, q * n + r]`` (``lo >= 0``,
        constant ``q``, ``r``): at least 0, at most ``q`` when ``r == 0``, ``q - 1`` when
        ``r < 0`` (``(32 * n - 1) // n == 31``), ``q + r`` when ``r > 0``."""
        divisor = atom.b
        assert isinstance(divisor, Var)
        ends = self._symbolic_ends(atom.a)
        if ends is None or self.const_int_bound(divisor).lo <= 0:
            return None
        if self.const_int_bound(ends[0]).lo < 0:
            return None
        form = to_linear(ends[1])
        terms = form.live_terms()
        if len(terms) > 1 or (terms and terms[0][0] is not divisor):
            return None
        q = terms[0][1] if terms else 0
        r = form.const
        top = q if r == 0 else (q - 1 if r < 0 else q + r)
        return const(0, atom.dtype), const(top, atom.dtype)

    def _prove_compare(self, cond: CmpOp) -> bool | None:
        d = self.compare(cond.a, cond.b)
        symbolic = self._symbolic_difference(cond.a, cond.b)
        if symbolic is not None:
            d = symbolic if d is None else d.intersect(symbolic)
        if d is None:
            return None
        if isinstance(cond, LT):
            return True if d.hi < 0 else (False if d.lo >= 0 else None)
        if isinstance(cond, LE):
            return True if d.hi <= 0 else (False if d.lo > 0 else None)
        if isinstance(cond, GT):
            return True if d.lo > 0 else (False if d.hi <= 0 else None)
        if isinstance(cond, GE):
            return True if d.lo >= 0 else (False if d.hi < 0 else None)
        if isinstance(cond, EQ):
            if d.is_point:
                return d.lo == 0
            return False if (d.lo > 0 or d.hi < 0) else None
        if isinstance(cond, NE):
            if d.is_point:
                return d.lo != 0
            return True if (d.lo > 0 or d.hi < 0) else None
        return None

    def can_prove(self, cond: PrimExpr) -> bool:
        """Whether ``cond`` provably holds."""
        return self.prove(cond) is True
