"""Whether two accesses of a ``T.parallel`` body can meet in two different iterations.

See :mod:`lowering.checks.race_check` for the rule; :class:`PairCheck` implements it with the
arithmetic of :mod:`lowering.arith` (bounds from the loops and conditions, canonical
linear forms of the indices).
"""

from __future__ import annotations

from dataclasses import dataclass

from irbuilder.ir import (
    EQ,
    LT,
    Buffer,
    BufferLoad,
    Call,
    CallKind,
    Cast,
    FloorDiv,
    FloorMod,
    For,
    IntImm,
    Mul,
    PrimExpr,
    Var,
    post_order_visit,
    structural_equal,
)

from ..analysis import substitute_expr
from ..arith import Analyzer, IntBound, LinearForm, from_linear, supports_linear, to_linear
from ..transforms.flatten_buffer import flat_index
from .race_accesses import Access, InnerLoop, has_memory, mentions
from .race_digits import Digit, covers, pinned_digits

__all__ = ["PairCheck", "same_layout"]


@dataclass
class _Side:
    """One access as executed by one iteration (its loop vars renamed for the second)."""

    indices: tuple[PrimExpr, ...]
    conds: tuple[PrimExpr, ...]
    p: Var
    loops: tuple[InnerLoop, ...]
    buffer: Buffer


class PairCheck:
    """Decides whether accesses ``a`` (iteration ``p``) and ``b`` (iteration ``p'``) can
    touch the same element in different iterations."""

    def __init__(
        self,
        loop: For,
        enclosing: tuple[InnerLoop, ...],
        a: Access,
        b: Access,
        layout: str,
        written: set[Var],
    ) -> None:
        self.loop = loop
        self.written = written
        self.analyzer = Analyzer()
        p = loop.loop_var
        q = Var(p.name + "'", p.dtype)
        rename: dict[Var, PrimExpr] = {p: q}
        for inner in b.loops:
            rename[inner.var] = Var(inner.var.name + "'", inner.var.dtype)
        self.inner: set[Var] = {p, q, *(lp.var for lp in a.loops), *(lp.var for lp in b.loops)}
        self.inner.update(v for v in rename.values() if isinstance(v, Var))

        def renamed(e: PrimExpr) -> PrimExpr:
            return substitute_expr(e, rename)

        b_loops = tuple(
            InnerLoop(rename[lp.var], renamed(lp.min), renamed(lp.extent))  # type: ignore[arg-type]
            for lp in b.loops
        )
        self.layout = layout
        self.a = _Side(_indices(a, layout), a.conds, p, a.loops, a.buffer)
        self.b = _Side(
            tuple(renamed(i) for i in _indices(b, layout)),
            tuple(renamed(c) for c in b.conds),
            q,
            b_loops,
            b.buffer,
        )
        an = self.analyzer
        for outer in enclosing:  # the same value in both iterations
            an.bind_range(outer.var, outer.min, outer.extent)
        an.bind_range(p, loop.min, loop.extent)
        an.bind_range(q, loop.min, loop.extent)
        for side in (self.a, self.b):
            for lp in side.loops:  # symbolic too: k in range(n - 1) proves k + 1 < n
                an.bind_symbolic_range(lp.var, lp.min, lp.extent)
        for side in (self.a, self.b):
            for cond in side.conds:
                an.add_constraint(cond)

    def independent(self) -> bool:
        if self._pinned():
            return True
        if any(self._separates(ia, ib) for ia, ib in zip(self.a.indices, self.b.indices)):
            return True
        if self._digits_separate():
            return True
        if self.layout == "nd" and len(self.a.indices) > 1:
            # Dimensions may only separate together: B[f // 64, f % 64] is B_flat[f].
            flat_a = _flat(self.a.buffer, self.a.indices)
            flat_b = _flat(self.b.buffer, self.b.indices)
            return flat_a is not None and flat_b is not None and self._separates(flat_a, flat_b)
        return False

    def _digits_separate(self) -> bool:
        """Whether the dimensions together pin every digit of the iteration variable
        (:mod:`lowering.checks.race_digits`)."""
        pinned: set[Digit] = set()
        for ia, ib in zip(self.a.indices, self.b.indices):
            pinned |= pinned_digits(
                self.analyzer,
                ia,
                self.a.p,
                ib,
                self.b.p,
                lambda e: _varies(e, self.written),
            )
        extent = self.analyzer.const_int_bound(self.loop.extent).hi
        return bool(pinned) and covers(pinned, extent)

    def _always_run(self) -> bool:
        """Whether both accesses run in every iteration (no condition, no inner loop that
        may be empty)."""
        if self.a.conds or self.b.conds:
            return False
        loops = (*self.a.loops, *self.b.loops)
        return all(self.analyzer.const_int_bound(lp.extent).lo >= 1 for lp in loops)

    def same_element_always(self) -> bool:
        """Whether both accesses always touch one fixed element, in every iteration."""
        if not self._always_run():
            return False
        for ia, ib in zip(self.a.indices, self.b.indices):
            if not (self._fixed(ia) and self._fixed(ib)):
                return False
            diff = self.analyzer.compare(ia, ib)
            if diff is None or diff != IntBound.point(0):
                return False
        return self.analyzer.const_int_bound(self.loop.extent).lo >= 2

    def _fixed(self, index: PrimExpr) -> bool:
        """Whether ``index`` is one value for the whole loop (no loop var of the loop or
        inside it with a non-zero coefficient, no load, no call)."""
        if has_memory(index):
            return False
        if not supports_linear(index.dtype):
            return not mentions(index, self.inner)
        return not any(mentions(atom, self.inner) for atom, _ in to_linear(index).live_terms())

    def definite_offset(self) -> int | None:
        """``k`` when iteration ``p + k`` always meets iteration ``p`` (no conditions, one
        dimension ``c*p + r`` against ``c*p' + r'`` with ``r - r'`` a multiple of ``c``,
        every other dimension the same element), else None."""
        if not self._always_run():
            return None
        extent = self.analyzer.const_int_bound(self.loop.extent).lo
        offset: int | None = None
        for ia, ib in zip(self.a.indices, self.b.indices):
            if has_memory(ia) or has_memory(ib) or not supports_linear(ia.dtype):
                return None
            if ia.dtype != ib.dtype:
                return None
            split_a, split_b = self._split(ia, self.a.p), self._split(ib, self.b.p)
            if split_a is None or split_b is None:
                return None
            (sa, ra), (sb, rb) = split_a, split_b
            if not (isinstance(sa, int) and isinstance(sb, int) and sa == sb):
                return None
            diff = self.analyzer.compare(ra, rb)
            if diff is None or not diff.is_point:
                return None
            if sa == 0:
                if diff.lo != 0:
                    return None
                continue
            if diff.lo % sa != 0 or offset is not None:
                return None
            offset = diff.lo // sa
        if offset is None or offset == 0 or abs(offset) >= extent:
            return None
        return offset

    def certain(self) -> bool:
        """Whether the two accesses provably meet in two different iterations."""
        return self.same_element_always() or self.definite_offset() is not None

    def _pinned(self) -> bool:
        """Both accesses run only when ``p == e`` for one loop-invariant ``e``."""
        pa, pb = self._pin(self.a), self._pin(self.b)
        return pa is not None and pb is not None and structural_equal(pa, pb)

    def _pin(self, side: _Side) -> PrimExpr | None:
        for cond in side.conds:
            if isinstance(cond, EQ):
                for var, other in ((cond.a, cond.b), (cond.b, cond.a)):
                    if var is side.p and not mentions(other, self.inner) and not has_memory(other):
                        return other
        bound = self.analyzer.const_int_bound(side.p)
        if bound.is_point:
            return IntImm(side.p.dtype, bound.lo)
        return None

    def _separates(self, ia: PrimExpr, ib: PrimExpr) -> bool:
        if ia.dtype != ib.dtype or not supports_linear(ia.dtype):
            return False
        ia, ib = self._exact_divisions(ia), self._exact_divisions(ib)
        if _varies(ia, self.written) or _varies(ib, self.written):
            return False  # a load of memory the loop writes may differ between iterations
        diff = self.analyzer.compare(ia, ib)
        if diff is not None and (diff.lo > 0 or diff.hi < 0):
            return True  # never the same element
        split_a, split_b = self._split(ia, self.a.p), self._split(ib, self.b.p)
        if split_a is None or split_b is None:
            return False
        (stride_a, rest_a), (stride_b, rest_b) = split_a, split_b
        if isinstance(stride_a, int) and isinstance(stride_b, int):
            if stride_a != stride_b or stride_a == 0:
                return False
            bound = self.analyzer.compare(rest_a, rest_b)
            if bound is not None and max(-bound.lo, bound.hi) < abs(stride_a):
                return True
            return abs(stride_a) == 1 and self._multiple_of_extent(rest_a, rest_b)
        if isinstance(stride_a, int) or isinstance(stride_b, int):
            return False
        if not structural_equal(stride_a, stride_b):
            return False
        return self._below(rest_a, stride_a, self.a) and self._below(rest_b, stride_b, self.b)

    def _exact_divisions(self, index: PrimExpr) -> PrimExpr:
        """``index`` with each ``(c*Q + R) // c`` and ``(c*Q + R) % c`` whose ``R`` lies in
        one block ``[k*c, (k+1)*c)`` as ``Q + k`` and ``R - k*c``. Exact for mathematical
        integers, which index arithmetic is assumed to be (docs/race-check.md, "Limits"); the
        simplifier cannot assume it where ``Q`` is unbounded: TOPI's scans over a symbolic
        extent index column ``j`` as ``(j + 3*(k + 1)) % 3`` with ``k < n - 1``."""
        if not supports_linear(index.dtype):
            return index
        form = to_linear(index, wrap=False)
        out = LinearForm(index.dtype, wrap=False)
        out.const = form.const
        changed = False
        for atom, coef in form.live_terms():
            exact = self._exact_division(atom)
            if exact is None:
                out.add_term(atom, coef)
            else:
                out.add_form(exact, coef)
                changed = True
        return from_linear(out) if changed else index

    def _exact_division(self, atom: PrimExpr) -> LinearForm | None:
        if not isinstance(atom, (FloorDiv, FloorMod)) or not supports_linear(atom.a.dtype):
            return None
        c = _divisor(atom)
        if c == 0 and not mentions(atom.b, self.inner) and not _varies(atom.b, self.written):
            return self._exact_symbolic_division(atom)
        if c <= 0:
            return None
        dividend = to_linear(self._exact_divisions(atom.a), wrap=False)
        quotient = LinearForm(atom.dtype, wrap=False)
        remainder = LinearForm(atom.dtype, wrap=False)
        for term, coef in dividend.live_terms():
            if coef % c == 0:
                quotient.add_term(term, coef // c)
            else:
                remainder.add_term(term, coef)
        quotient.const, remainder.const = divmod(dividend.const, c)
        bound = self.analyzer.linear_bound(remainder)
        if bound is None or bound.lo // c != bound.hi // c:
            return None
        block = bound.lo // c
        if isinstance(atom, FloorDiv):
            quotient.add_const(block)
            return quotient
        remainder.add_const(-block * c)
        return remainder

    def _exact_symbolic_division(self, atom: FloorDiv | FloorMod) -> LinearForm | None:
        """:meth:`_exact_division` by a loop-invariant ``d`` that is not a constant:
        ``(X*d + R) // d`` is ``X`` and ``% d`` is ``R`` when ``0 <= R < d``, or when ``R`` is
        0 (any ``d`` but 0, and a division by 0 raises before the access): TOPI's scans
        along a symbolic last axis index ``B[(v*n + k) // n, (v*n + k) % n]``."""
        d = atom.b
        dividend = to_linear(self._exact_divisions(atom.a), wrap=False)
        quotient = LinearForm(atom.dtype, wrap=False)
        remainder = LinearForm(atom.dtype, wrap=False)
        remainder.const = dividend.const
        for term, coef in dividend.live_terms():
            factor = _cofactor(term, d)
            if factor is None:
                remainder.add_term(term, coef)
            else:
                quotient.add_term(factor, coef)
        if not quotient.live_terms():
            return None
        if not (remainder.is_const and remainder.const == 0):
            rest = from_linear(remainder)
            if self.analyzer.const_int_bound(rest).lo < 0 or not self.analyzer.prove(
                    LT(rest, d)):
                return None
        return quotient if isinstance(atom, FloorDiv) else remainder

    def _multiple_of_extent(self, rest_a: PrimExpr, rest_b: PrimExpr) -> bool:
        """Whether ``rest_a - rest_b`` is a multiple of the loop's extent ``S`` (every term
        ``x * S``): then ``p - p'`` would be one too, and ``|p - p'| < S`` makes it 0
        (``B[j*n + i]`` for ``i`` over ``T.parallel(n)``)."""
        if not _is_zero(self.loop.min):
            return False
        extent = self.loop.extent
        diff = LinearForm(rest_a.dtype, wrap=False)
        diff.add_form(to_linear(rest_a))
        diff.add_form(to_linear(rest_b), -1)
        terms = diff.live_terms()
        if diff.const != 0 or not terms:
            return False
        return all(
            isinstance(atom, Mul)
            and (structural_equal(atom.a, extent) or structural_equal(atom.b, extent))
            for atom, _ in terms
        )

    def _split(self, index: PrimExpr, p: Var) -> tuple[int | PrimExpr, PrimExpr] | None:
        """``index`` as ``stride * p + rest``: an int stride, or a symbolic loop-invariant
        one (``p * n``); None when ``p`` appears any other way."""
        form = to_linear(index)
        stride: int | PrimExpr = 0
        rest = LinearForm(form.dtype)
        rest.const = form.const
        for atom, coef in form.live_terms():
            if atom is p:
                if not isinstance(stride, int):
                    return None
                stride += coef
                continue
            factor = _symbolic_factor(atom, p)
            if factor is not None and not mentions(factor, self.inner) and coef == 1:
                if stride != 0:
                    return None
                stride = factor
                continue
            widened = self._split_widening(atom, p)
            if widened is not None and isinstance(stride, int):
                inner_stride, inner_rest = widened
                stride += coef * inner_stride
                rest.add_term(inner_rest, coef)
                continue
            if mentions(atom, {p}):
                return None
            rest.add_term(atom, coef)
        return stride, from_linear(rest)

    def _split_widening(self, atom: PrimExpr, p: Var) -> tuple[int, PrimExpr] | None:
        """``Cast(int64, c*p + r)`` as ``c`` and ``Cast(int64, r)`` (indices do not
        overflow, see docs/race-check.md); None for anything else."""
        if not (isinstance(atom, Cast) and supports_linear(atom.dtype)):
            return None
        source = atom.value.dtype
        if not (supports_linear(source) and source.bits <= atom.dtype.bits):
            return None
        split = self._split(atom.value, p)
        if split is None:
            return None
        stride, rest = split
        if not isinstance(stride, int):
            return None
        return stride, Cast(atom.dtype, rest)

    def _below(self, rest: PrimExpr, stride: PrimExpr, side: _Side) -> bool:
        """``0 <= rest < stride``: a constant range below the stride's least value, or one
        inner loop var running over ``range(stride)``."""
        bound = self.analyzer.const_int_bound(rest)
        if bound.lo >= 0 and bound.hi < self.analyzer.const_int_bound(stride).lo:
            return True
        for lp in side.loops:
            if rest is lp.var:
                lo = self.analyzer.const_int_bound(lp.min)
                return lo.lo >= 0 and _is_zero(lp.min) and structural_equal(lp.extent, stride)
        return False


def _varies(expr: PrimExpr, written: set[Var]) -> bool:
    """Whether ``expr`` loads memory the loop writes, or calls out (not a loop invariant)."""
    found = False

    def visit(node: object) -> None:
        nonlocal found
        if isinstance(node, BufferLoad) and node.buffer.data in written:
            found = True
        elif isinstance(node, Call) and node.kind in (CallKind.EXTERN, CallKind.BUILTIN):
            found = found or node.op not in ("likely", "if_then_else")

    post_order_visit(expr, visit)
    return found


def _is_zero(expr: PrimExpr) -> bool:
    return isinstance(expr, IntImm) and expr.value == 0


def _cofactor(term: PrimExpr, d: PrimExpr) -> PrimExpr | None:
    """``X`` of ``term == X * d`` (or ``d * X``), else None."""
    if isinstance(term, Mul):
        if structural_equal(term.b, d):
            return term.a
        if structural_equal(term.a, d):
            return term.b
    return None


def _symbolic_factor(atom: PrimExpr, p: Var) -> PrimExpr | None:
    """``S`` of ``atom == p * S`` (or ``S * p``) with ``S`` free of ``p``."""
    if not isinstance(atom, Mul):
        return None
    if atom.a is p and not mentions(atom.b, {p}):
        return atom.b
    if atom.b is p and not mentions(atom.a, {p}):
        return atom.a
    return None


def _indices(access: Access, layout: str) -> tuple[PrimExpr, ...]:
    if layout == "nd":
        return tuple(_merge_divmod(i) for i in access.indices)
    flat = _flat(access.buffer, access.indices)
    return () if flat is None else (flat,)  # no index: nothing separates


def _flat(buffer: Buffer, indices: tuple[PrimExpr, ...]) -> PrimExpr | None:
    """The row-major element offset with div/mod pairs recombined (None if not scalar)."""
    if len(indices) != len(buffer.shape) or not all(i.dtype.is_scalar for i in indices):
        return None
    return _merge_divmod(flat_index(buffer, indices))


def _merge_divmod(index: PrimExpr) -> PrimExpr:
    """``index`` with every ``(x // k) * (c*k) + (x % k) * c`` (``k > 0``) replaced by
    ``c * x``: floor division and modulo recombine exactly, so a fused loop's split
    indices are seen as the loop var again."""
    if not supports_linear(index.dtype):
        return index
    form = to_linear(index)
    merged = False
    while (pair := _divmod_pair(form)) is not None:
        div, mod, coef = pair
        form.add_term(div, -coef * _divisor(div))
        form.add_term(mod, -coef)
        form.add_form(to_linear(div.a), coef)
        merged = True
    return from_linear(form) if merged else index


def _divisor(node: FloorDiv | FloorMod) -> int:
    return node.b.value if isinstance(node.b, IntImm) else 0


def _same_residue(y: PrimExpr, x: PrimExpr, k: int) -> bool:
    """Whether ``y % k == x % k``: ``x`` is ``y`` or ``y % m`` with ``k`` dividing ``m``."""
    if structural_equal(y, x):
        return True
    m = _divisor(x) if isinstance(x, FloorMod) else 0
    return m > 0 and m % k == 0 and isinstance(x, FloorMod) and structural_equal(y, x.a)


def _divmod_pair(form: LinearForm) -> tuple[FloorDiv, FloorMod, int] | None:
    terms = form.live_terms()
    for div, div_coef in terms:
        if not (isinstance(div, FloorDiv) and _divisor(div) > 0):
            continue
        for mod, mod_coef in terms:
            if (
                isinstance(mod, FloorMod)
                and _divisor(mod) == _divisor(div)
                and div_coef == mod_coef * _divisor(div)
                and supports_linear(div.a.dtype)
                and _same_residue(mod.a, div.a, _divisor(div))
            ):
                return div, mod, mod_coef
    return None


def same_layout(buffers: list[Buffer]) -> bool:
    first = buffers[0]
    return all(
        b is first
        or (
            len(b.shape) == len(first.shape)
            and all(structural_equal(x, y) for x, y in zip(b.shape, first.shape))
            and len(b.strides) == len(first.strides)
            and all(structural_equal(x, y) for x, y in zip(b.strides, first.strides))
            and structural_equal(b.elem_offset, first.elem_offset)
        )
        for b in buffers
    )
