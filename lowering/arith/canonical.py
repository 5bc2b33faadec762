"""Canonical form of affine integer expressions: ``sum(coef * atom) + constant``.

An *atom* is any sub-expression that is not an ``Add``/``Sub``/constant-``Mul``
(a variable, a load, ``x // 4``, ``i * j``...). Atoms are merged up to structural
equality, so ``i*16 + j + 4 - 4`` becomes ``{i: 16, j: 1} + 0``.

Overflow stance: add, subtract and multiply by a constant form the ring of
integers modulo ``2**bits``, so regrouping them is exact under wrap-around
semantics: a linear form is *congruent* to the expression it came from, for every
value of the atoms. It is *equal* to it (as a mathematical integer) whenever its
value provably fits in the dtype (see :meth:`Analyzer.linear_bound`); the
rewrites that need equality (division, comparison) check that first.
Coefficients and the constant are kept reduced to the dtype's range.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from irbuilder.ir import (
    Add,
    DataType,
    IntImm,
    Mul,
    PrimExpr,
    Sub,
    Var,
    post_order_visit,
    structural_equal,
    structural_hash,
)

from .fold import wrap_int

__all__ = ["LinearForm", "from_linear", "linear_coefficient", "supports_linear", "to_linear"]


def supports_linear(dtype: DataType) -> bool:
    """Whether canonical linear forms are used for ``dtype`` (signed scalar integers)."""
    return dtype.is_int and dtype.is_scalar


@dataclass
class LinearForm:
    """``sum(coef * atom) + const`` over a signed integer dtype; terms keep first-seen order."""

    dtype: DataType
    terms: list[tuple[PrimExpr, int]] = field(default_factory=list)
    const: int = 0
    wrap: bool = True
    """Reduce coefficients to the dtype's range (False: exact mathematical sums)."""
    _index: dict[int, list[int]] = field(default_factory=dict, repr=False)

    def copy(self) -> LinearForm:
        """An independent copy."""
        out = LinearForm(self.dtype, list(self.terms), self.const, self.wrap)
        out._index = {h: list(v) for h, v in self._index.items()}
        return out

    def add_term(self, atom: PrimExpr, coef: int) -> None:
        """Add ``coef * atom``, merging with a structurally equal atom."""
        # A free Var is structurally equal only to itself: key it by identity (negated so it
        # never meets a structural hash, which is non-negative) instead of hashing it.
        key = ~id(atom) if type(atom) is Var else structural_hash(atom)
        slots = self._index.setdefault(key, [])
        for slot in slots:
            existing, old = self.terms[slot]
            if existing is atom or structural_equal(existing, atom):
                self.terms[slot] = (existing, self._reduce(old + coef))
                return
        slots.append(len(self.terms))
        self.terms.append((atom, self._reduce(coef)))

    def _reduce(self, value: int) -> int:
        return wrap_int(value, self.dtype) if self.wrap else value

    def add_form(self, other: LinearForm, scale: int = 1) -> None:
        """Add ``scale * other``."""
        for atom, coef in other.terms:
            self.add_term(atom, coef * scale)
        self.const = self._reduce(self.const + other.const * scale)

    def scaled(self, scale: int) -> LinearForm:
        """``scale * self`` as a new form."""
        out = LinearForm(self.dtype, wrap=self.wrap)
        out.add_form(self, scale)
        return out

    def live_terms(self) -> list[tuple[PrimExpr, int]]:
        """Terms whose coefficient is not zero."""
        return [(atom, coef) for atom, coef in self.terms if coef != 0]

    @property
    def is_const(self) -> bool:
        return not self.live_terms()


def to_linear(expr: PrimExpr) -> LinearForm:
    """The linear form of a signed scalar integer expression (see module docstring)."""
    if not supports_linear(expr.dtype):
        raise TypeError(f"no linear form for {expr.dtype} expressions")
    form = LinearForm(expr.dtype)
    _collect(expr, 1, form)
    return form


def linear_coefficient(expr: PrimExpr, var: PrimExpr) -> int | None:
    """The constant factor of ``var`` in ``expr`` (0 when absent), or None when ``var``
    appears inside a non-linear term (``i * j``, ``j // 2``, a load at ``j``, ...) or
    ``expr`` has no linear form."""
    if not supports_linear(expr.dtype):
        return None
    coef = 0
    for atom, factor in to_linear(expr).live_terms():
        if atom is var:
            coef += factor
        elif _mentions(atom, var):
            return None
    return coef


def _mentions(expr: PrimExpr, var: PrimExpr) -> bool:
    found = False

    def visit(node: object) -> None:
        nonlocal found
        found = found or node is var

    post_order_visit(expr, visit)
    return found


def _collect(expr: PrimExpr, scale: int, form: LinearForm) -> None:
    if isinstance(expr, IntImm):
        form.const = wrap_int(form.const + scale * expr.value, form.dtype)
    elif isinstance(expr, Add):
        _collect(expr.a, scale, form)
        _collect(expr.b, scale, form)
    elif isinstance(expr, Sub):
        _collect(expr.a, scale, form)
        _collect(expr.b, -scale, form)
    elif isinstance(expr, Mul) and isinstance(expr.b, IntImm):
        _collect(expr.a, scale * expr.b.value, form)
    elif isinstance(expr, Mul) and isinstance(expr.a, IntImm):
        _collect(expr.b, scale * expr.a.value, form)
    else:
        form.add_term(expr, scale)


def _term(atom: PrimExpr, coef: int) -> PrimExpr:
    return atom if coef == 1 else Mul(atom, IntImm(atom.dtype, coef))


def from_linear(form: LinearForm) -> PrimExpr:
    """Build the expression of ``form``: terms in order, then the constant.

    A negative coefficient after the first term becomes a subtraction
    (``i - j*2``); a leading negative term is put after a positive constant
    (``5 - i``) when there is one.
    """
    dtype = form.dtype
    terms = form.live_terms()
    const = form.const
    if not terms:
        return IntImm(dtype, const)
    result: PrimExpr
    first_atom, first_coef = terms[0]
    if first_coef < 0 and const > 0:
        result = IntImm(dtype, const)
        const = 0
        rest = terms
    else:
        result = _term(first_atom, first_coef)
        rest = terms[1:]
    for atom, coef in rest:
        if coef < 0 and coef != dtype.min_value:
            result = Sub(result, _term(atom, -coef))
        else:
            result = Add(result, _term(atom, coef))
    if const > 0:
        result = Add(result, IntImm(dtype, const))
    elif const < 0 and const != dtype.min_value:
        result = Sub(result, IntImm(dtype, -const))
    elif const != 0:
        result = Add(result, IntImm(dtype, const))
    return result
