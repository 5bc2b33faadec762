"""Affine integer expressions in canonical form: ``sum(coef * atom) + constant``.

An *atom* is any sub-expression that is not an ``Add``/``Sub``/constant-``Mul`` (a variable,
a load, ``x // 4``, ``i * j``...). Atoms are merged up to structural equality and keep the
order in which they first appear, so ``i*16 + j + 4 - 4`` becomes ``{i: 16, j: 1} + 0``.

Overflow stance: add, subtract and multiply by a constant form the ring of integers modulo
``2**bits``, so regrouping them is exact under wrap-around semantics. A *wrapping* form
(the simplifier's) keeps coefficients reduced to the dtype's range and is congruent to the
expression it came from for every value of the atoms; the rewrites that need equality as
mathematical integers check the bound first (``Analyzer.linear_bound``). An *exact* form
(``wrap=False``, block region arithmetic) keeps unbounded coefficients.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .dtype import DataType
from .expr import Add, IntImm, Mul, PrimExpr, Sub, Var
from .int_arith import wrap_int
from .structural import structural_equal, structural_hash

__all__ = ["LinearForm", "from_linear", "supports_linear", "to_linear"]


def supports_linear(dtype: DataType) -> bool:
    """Whether wrapping linear forms are used for ``dtype`` (signed scalar integers)."""
    return dtype.is_int and dtype.is_scalar


@dataclass
class LinearForm:
    """``sum(coef * atom) + const`` over an integer dtype; terms keep first-seen order."""

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

    def add_const(self, value: int) -> None:
        """Add the constant ``value``."""
        self.const = self._reduce(self.const + value)

    def _reduce(self, value: int) -> int:
        return wrap_int(value, self.dtype) if self.wrap else value

    def add_form(self, other: LinearForm, scale: int = 1) -> None:
        """Add ``scale * other``."""
        for atom, coef in other.terms:
            self.add_term(atom, coef * scale)
        self.add_const(other.const * scale)

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


def to_linear(expr: PrimExpr, *, wrap: bool = True) -> LinearForm:
    """The linear form of an integer expression: wrapping (signed scalar integers only, see
    :func:`supports_linear`) or, with ``wrap=False``, exact (any integer dtype)."""
    if wrap and not supports_linear(expr.dtype):
        raise TypeError(f"no wrapping linear form for {expr.dtype} expressions")
    form = LinearForm(expr.dtype, wrap=wrap)
    _collect(expr, 1, form)
    return form


def _collect(expr: PrimExpr, scale: int, form: LinearForm) -> None:
    if isinstance(expr, IntImm):
        form.add_const(scale * expr.value)
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

    A negative coefficient after the first term becomes a subtraction (``i - j*2``); a
    leading negative term is put after a positive constant (``5 - i``) when there is one.
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
