"""Inverting a consumer's load indices, for reverse_compute_inline.

A consumer ``C[f(v)] = g(B[h_0(v), ..., h_n(v)])`` can be folded into the producer of ``B``
when ``h`` is an injective affine map of C's iter vars ``v``: each producer instance ``p``
(the point of ``B`` it writes) then stands for the consumer instance ``v = h^-1(p)``, when
that lies in C's domain. This module detects ``h`` in the structure TVM's iterator maps
use (iterators, split into digits, sums of digits fused into new iterators by a ``//`` or
``%``), builds ``h^-1`` in the spelling TVM's inverse map gives (``(p1 + p0 * 128) // 64 %
32``), and checks the result exhaustively: ``h^-1(h(v)) == v`` over C's domain with
``h(v)`` inside the producer's domain, and ``h(h^-1(p)) == p`` wherever ``h^-1(p)`` is in
C's domain. Anything else (symbolic domains, too many points, a shape not understood) is
refused by returning None.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from irbuilder.ir import (
    GE,
    LT,
    Add,
    And,
    FloorDiv,
    FloorMod,
    IntImm,
    IterVar,
    Mul,
    PrimExpr,
    Sub,
    Var,
    const,
)
from lowering.analysis.substitute import substitute_expr

from .affine import IterSplit, IterSum, detect

__all__ = ["Inverse", "invert_load"]

_MAX_POINTS = 1 << 21


@dataclass(eq=False)
class _Mark:
    """An iterator over ``[0, extent)``: an iter var, or a fused sum of splits; the digits
    of it that the store indices give are collected in ``contributions``."""

    extent: int
    parts: tuple[IterSplit, ...] = ()
    contributions: list[tuple[int, int, PrimExpr]] = field(default_factory=list)


class _Marks:
    """The rules under which :func:`affine.detect` reads a consumer's load indices as
    TVM's iterator maps do: an iter var of extent 1 is its constant, any other a whole
    iterator; a ``//`` or ``%`` of a sum of several pieces first fuses the sum into a new
    iterator (one per distinct sum: the same sum under two indices is one iterator, split
    between them), then splits it, rounding a piece that does not divide up (the inverse is
    verified exhaustively afterwards)."""

    def __init__(self, units: dict[Var, int]) -> None:
        self.units = units
        self.by_source: dict[Var, _Mark] = {}  # the iter vars' marks, then fused ones
        self.fused: list[_Mark] = []
        self.by_parts: dict[tuple[tuple[int, int, int, int], ...], Var] = {}

    def add(self, var: Var, extent: int) -> None:
        self.by_source[var] = _Mark(extent)

    def mark(self, split: IterSplit) -> _Mark:
        return self.by_source[split.source]

    def detect(self, expr: PrimExpr) -> IterSum | None:
        return detect(expr, {}, leaf=self._leaf, div_mod=self._div_mod)

    def _leaf(self, var: Var) -> IterSum | None:
        if var in self.units:
            return IterSum((), self.units[var])
        mark = self.by_source.get(var)
        if mark is None:
            return None
        return IterSum((IterSplit(var, mark.extent, 1, mark.extent, 1),), 0)

    def _div_mod(self, inner: IterSum, c: int, is_div: bool) -> IterSum | None:
        split = self._as_split(inner)
        if split is None:
            return None
        source, lo, ext = split.source, split.lower_factor, split.extent
        source_extent = split.source_extent
        if is_div:
            if c >= ext:
                return None
            return IterSum((IterSplit(source, source_extent, lo * c, -(-ext // c), 1),), 0)
        if c >= ext:
            return IterSum((split,), 0)
        return IterSum((IterSplit(source, source_extent, lo, c, 1),), 0)

    def _as_split(self, inner: IterSum) -> IterSplit | None:
        pieces = inner.digits()
        if pieces is None or not pieces:
            return None
        if len(pieces) == 1:
            return pieces[0]
        extent = 1
        for piece in pieces:
            extent *= piece.extent
        key = tuple((id(p.source), p.lower_factor, p.extent, p.scale) for p in pieces)
        source = self.by_parts.get(key)
        if source is None:
            # a fused iterator is named by a var of its own, which no expression uses
            source = self.by_parts[key] = Var("fused", pieces[0].source.dtype)
            mark = self.by_source[source] = _Mark(extent, parts=tuple(pieces))
            self.fused.append(mark)
        return IterSplit(source, extent, 1, extent, 1)


def _digit_values(marks: _Marks, pieces: Sequence[IterSplit], value: PrimExpr) -> None:
    """Give each piece of a mixed-radix number its digit of ``value``."""
    dtype = value.dtype
    for k, piece in enumerate(pieces):
        if len(pieces) == 1:
            digit = value
        elif k == len(pieces) - 1:
            digit = value if piece.scale == 1 else FloorDiv(value, const(piece.scale, dtype))
        else:
            shifted = value if piece.scale == 1 else FloorDiv(value, const(piece.scale, dtype))
            digit = FloorMod(shifted, const(piece.extent, dtype))
        marks.mark(piece).contributions.append((piece.lower_factor, piece.extent, digit))


def _mark_value(mark: _Mark) -> PrimExpr | None:
    """The mark's value from its digits, lowest first; None unless they tile it."""
    expected = 1
    value: PrimExpr | None = None
    for lower, extent, digit in sorted(mark.contributions, key=lambda c: c[0]):
        if lower != expected:
            return None
        expected *= extent
        term = digit if lower == 1 else Mul(digit, const(lower, digit.dtype))
        value = term if value is None else Add(value, term)
    if expected < mark.extent:
        return None
    return value


@dataclass(frozen=True)
class Inverse:
    """``values[k]``: the consumer's k-th iter var as an expression of the producer's
    iter vars; ``predicate``: when that point is in the consumer's domain (None: always)."""

    values: tuple[PrimExpr, ...]
    predicate: PrimExpr | None


def _constant_domain(iter_vars: Sequence[IterVar]) -> list[tuple[int, int]] | None:
    out: list[tuple[int, int]] = []
    for iv in iter_vars:
        lo, ext = iv.dom.min, iv.dom.extent
        if not isinstance(lo, IntImm) or not isinstance(ext, IntImm) or ext.value <= 0:
            return None
        out.append((lo.value, ext.value))
    return out


def invert_load(
    consumer: Sequence[IterVar],
    load_indices: Sequence[PrimExpr],
    producer: Sequence[IterVar],
    store_indices: Sequence[PrimExpr],
) -> Inverse | None:
    """The inverse of the consumer's load ``B[load_indices]`` against the producer's store
    ``B[store_indices]``, or None when not provably exact."""
    cdom = _constant_domain(consumer)
    pdom = _constant_domain(producer)
    if cdom is None or pdom is None or len(load_indices) != len(store_indices):
        return None
    store_vars = [Var(f"p{k}", index.dtype) for k, index in enumerate(store_indices)]
    units: dict[Var, int] = {}
    marks = _Marks(units)
    for iv, (lo, ext) in zip(consumer, cdom):
        if ext == 1:
            units[iv.var] = lo
        elif lo != 0:
            return None
        else:
            marks.add(iv.var, ext)
    sums = [marks.detect(index) for index in load_indices]
    if any(s is None for s in sums):
        return None
    for found, out in zip(sums, store_vars):
        assert found is not None
        pieces = found.digits()
        if pieces is None:
            return None
        if not pieces:
            continue
        if len(pieces) == 1 and pieces[0].scale != 1:
            return None
        value: PrimExpr = out
        if found.base > 0:
            value = Sub(out, const(found.base, out.dtype))
        elif found.base < 0:
            value = Add(out, const(-found.base, out.dtype))
        _digit_values(marks, pieces, value)
    for mark in reversed(marks.fused):
        if not mark.contributions:
            return None
        fused_value = _mark_value(mark)
        if fused_value is None:
            return None
        _digit_values(marks, mark.parts, fused_value)
    values: list[PrimExpr] = []
    for iv in consumer:
        if iv.var in units:
            values.append(const(units[iv.var], iv.var.dtype))
            continue
        got = _mark_value(marks.by_source[iv.var])
        if got is None:
            return None
        values.append(substitute_expr(got, dict(zip(store_vars, store_indices))))
    return _verify(consumer, cdom, load_indices, producer, pdom, store_indices, values)


def _grid(doms: list[tuple[int, int]]) -> list[NDArray[np.int64]] | None:
    total = 1
    for _, ext in doms:
        total *= ext
    if total > _MAX_POINTS:
        return None
    axes = [np.arange(lo, lo + ext, dtype=np.int64) for lo, ext in doms]
    return [g.ravel() for g in np.meshgrid(*axes, indexing="ij")] if axes else []


def _eval(expr: PrimExpr, env: dict[int, NDArray[np.int64]]) -> NDArray[np.int64] | None:
    if isinstance(expr, IntImm):
        return np.asarray(expr.value, dtype=np.int64)
    if isinstance(expr, Var):
        return env.get(id(expr))
    if isinstance(expr, (Add, Sub, Mul, FloorDiv, FloorMod)):
        a, b = _eval(expr.a, env), _eval(expr.b, env)
        if a is None or b is None:
            return None
        if isinstance(expr, Add):
            return a + b
        if isinstance(expr, Sub):
            return a - b
        if isinstance(expr, Mul):
            return a * b
        if np.any(b == 0):
            return None
        return a // b if isinstance(expr, FloorDiv) else a % b
    return None


def _verify(
    consumer: Sequence[IterVar],
    cdom: list[tuple[int, int]],
    load_indices: Sequence[PrimExpr],
    producer: Sequence[IterVar],
    pdom: list[tuple[int, int]],
    store_indices: Sequence[PrimExpr],
    values: list[PrimExpr],
) -> Inverse | None:
    cgrid, pgrid = _grid(cdom), _grid(pdom)
    if cgrid is None or pgrid is None:
        return None
    # the points the producer writes
    penv = {id(iv.var): g for iv, g in zip(producer, pgrid)}
    shape = pgrid[0].shape if pgrid else ()
    written: list[NDArray[np.int64]] = []
    for index in store_indices:
        got = _eval(index, penv)
        if got is None:
            return None
        written.append(np.broadcast_to(got, shape))
    # over the consumer's domain: the load hits a written point and inverts back
    cenv = {id(iv.var): g for iv, g in zip(consumer, cgrid)}
    cshape = cgrid[0].shape if cgrid else ()
    loaded: list[NDArray[np.int64]] = []
    for index in load_indices:
        got = _eval(index, cenv)
        if got is None:
            return None
        loaded.append(np.broadcast_to(got, cshape))
    if not _all_in(loaded, written):
        return None
    # the inverse, evaluated at the producer instance writing each loaded point
    flat_w = _flatten(written, written)
    flat_l = _flatten(loaded, written)
    if flat_w is None or flat_l is None:
        return None
    order = np.argsort(flat_w, kind="stable")
    pick = order[np.searchsorted(flat_w[order], flat_l)]
    at = {key: np.broadcast_to(g, shape)[pick] for key, g in penv.items()}
    for iv, value in zip(consumer, values):
        back = _eval(value, at)
        if back is None or not np.array_equal(np.broadcast_to(back, cshape), cenv[id(iv.var)]):
            return None
    # over the producer's domain: where the inverse is in the consumer's domain, it is exact
    inside = np.ones(shape, dtype=bool)
    conjuncts: list[PrimExpr] = []
    inv_env: dict[int, NDArray[np.int64]] = {}
    for iv, (lo, ext), value in zip(consumer, cdom, values):
        got = _eval(value, penv)
        if got is None:
            return None
        got = np.broadcast_to(got, shape)
        inv_env[id(iv.var)] = got
        if np.any(got < lo):
            conjuncts.append(GE(_canonical(value), const(lo, value.dtype)))
        if np.any(got >= lo + ext):
            conjuncts.append(LT(_canonical(value), const(lo + ext, value.dtype)))
        inside &= (got >= lo) & (got < lo + ext)
    for index, out in zip(load_indices, written):
        forward = _eval(index, inv_env)
        if forward is None:
            return None
        if not np.array_equal(np.broadcast_to(forward, shape)[inside], out[inside]):
            return None
    predicate: PrimExpr | None = None
    for part in conjuncts:
        predicate = part if predicate is None else And(predicate, part)
    return Inverse(tuple(values), predicate)


def _flatten(
    points: list[NDArray[np.int64]], frame: list[NDArray[np.int64]]
) -> NDArray[np.int64] | None:
    """Points as single integers, in a mixed radix spanning the ``frame`` points' box."""
    flat = np.zeros(points[0].shape if points else (), dtype=np.int64)
    for coord, ref in zip(points, frame):
        lo, hi = (int(ref.min()), int(ref.max())) if ref.size else (0, 0)
        if np.any(coord < lo) or np.any(coord > hi):
            return None
        flat = flat * (hi - lo + 1) + (coord - lo)
    return flat


def _all_in(points: list[NDArray[np.int64]], frame: list[NDArray[np.int64]]) -> bool:
    flat_p, flat_f = _flatten(points, frame), _flatten(frame, frame)
    return flat_p is not None and flat_f is not None and bool(np.all(np.isin(flat_p, flat_f)))


def _canonical(expr: PrimExpr) -> PrimExpr:
    """A sum of scaled vars with the largest coefficient first (``vi * 16 + vm``), as TVM's
    simplifier orders it; any other expression unchanged."""
    terms: list[tuple[int, Var]] = []

    def collect(node: PrimExpr) -> bool:
        if isinstance(node, Add):
            return collect(node.a) and collect(node.b)
        if isinstance(node, Var):
            terms.append((1, node))
            return True
        if isinstance(node, Mul) and isinstance(node.a, Var) and isinstance(node.b, IntImm):
            terms.append((node.b.value, node.a))
            return True
        return False

    if not collect(expr) or len(terms) < 2:
        return expr
    out: PrimExpr | None = None
    for coef, var in sorted(terms, key=lambda t: -t[0]):
        term: PrimExpr = var if coef == 1 else Mul(var, const(coef, var.dtype))
        out = term if out is None else Add(out, term)
    assert out is not None
    return out
