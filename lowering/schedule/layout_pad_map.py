"""Index maps that pad: TVM's ``IndexMap.NonSurjectiveInverse`` for constant shapes.

A map such as ``lambda i: [i // 4, i % 4]`` on a 14-element axis is no bijection: its
image misses two elements of the 4 x 4 result, the *padding*. :func:`analyze_padding`
finds, per index, the padded extent that makes the map a bijection (``i`` in ``[0, 16)``),
the new shape, the inverse (``i = axis0 * 4 + axis1``) and the predicate true exactly on
the padding (``axis0 == 3 and 2 <= axis1``, TVM's spelling).

Whatever is derived symbolically is then checked by enumeration (:func:`check_exhaustively`):
the map must be injective on the index box and land in the new shape, the predicate must
hold exactly off its image, and the inverse must give every index back. Maps whose boxes are
too large to enumerate are refused, so a wrong derivation can never reach a program.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from irbuilder.ir import (
    EQ,
    GE,
    GT,
    LE,
    LT,
    NE,
    Add,
    And,
    Cast,
    FloorDiv,
    FloorMod,
    IntImm,
    Max,
    Min,
    Mul,
    Not,
    Or,
    PrimExpr,
    Sub,
    Var,
    const,
)
from lowering.analysis.substitute import substitute_expr
from lowering.analysis.vars import depends_on
from lowering.arith.analyzer import Analyzer
from lowering.arith.rewrite import simplify_expr

from .affine import bindings_affine
from .layout import IndexMap, digits_inverse

__all__ = [
    "MAX_ENUMERATED",
    "Padding",
    "analyze_padding",
    "check_exhaustively",
    "evaluate",
    "linear_terms",
    "symbolic_row_major",
]

MAX_ENUMERATED = 1 << 22
"""Largest index box (or new shape) whose padding is checked by enumeration."""


@dataclass
class Padding:
    """A padded layout: ``shape``, ``inverse`` (old indices from ``axes``) and
    ``predicate`` (over ``axes``; None when the map pads nothing)."""

    shape: list[int]
    axes: list[Var]
    inverse: list[PrimExpr]
    predicate: PrimExpr | None


def evaluate(expr: PrimExpr, env: Mapping[Var, Any]) -> Any:
    """``expr`` on numpy arrays of indices (the integer forms an index map uses)."""
    if isinstance(expr, IntImm):
        return np.int64(expr.value)
    if isinstance(expr, Var):
        if expr not in env:
            raise ValueError(f"free variable {expr.name} in an index expression")
        return env[expr]
    if isinstance(expr, Cast):
        return evaluate(expr.value, env)
    if isinstance(expr, Not):
        return np.logical_not(evaluate(expr.a, env))
    binary = {
        Add: np.add,
        Sub: np.subtract,
        Mul: np.multiply,
        Min: np.minimum,
        Max: np.maximum,
        EQ: np.equal,
        NE: np.not_equal,
        LT: np.less,
        LE: np.less_equal,
        GT: np.greater,
        GE: np.greater_equal,
        And: np.logical_and,
        Or: np.logical_or,
    }
    for cls, fn in binary.items():
        if isinstance(expr, cls):
            return fn(evaluate(expr.a, env), evaluate(expr.b, env))
    if isinstance(expr, (FloorDiv, FloorMod)):
        a, b = evaluate(expr.a, env), evaluate(expr.b, env)
        if np.any(np.asarray(b) == 0):
            raise ValueError("division by zero in an index expression")
        return np.floor_divide(a, b) if isinstance(expr, FloorDiv) else np.mod(a, b)
    raise ValueError(f"cannot evaluate {type(expr).__name__} in an index expression")


def _offset_of(var: Var, exprs: Sequence[PrimExpr]) -> int | None:
    """The constant ``c`` when ``var`` appears only as ``var + c`` (0 when bare)."""
    seen: set[int] = set()

    def walk(expr: PrimExpr) -> bool:
        if isinstance(expr, Add) and isinstance(expr.b, IntImm) and expr.a is var:
            seen.add(expr.b.value)
            return True
        if expr is var:
            seen.add(0)
            return True
        if isinstance(expr, (IntImm, Var)):
            return True
        if isinstance(expr, (Add, Sub, Mul, FloorDiv, FloorMod)):
            return walk(expr.a) and walk(expr.b)
        if isinstance(expr, Cast):
            return walk(expr.value)
        return not depends_on(expr, var)

    if not all(walk(e) for e in exprs) or len(seen) > 1:
        return None
    value = next(iter(seen), 0)
    return value if value >= 0 else None


def _divisors_of(var: Var, exprs: Sequence[PrimExpr]) -> int:
    """The lcm of the constant divisors and moduli applied to expressions of ``var``."""
    found = 1

    def walk(expr: PrimExpr) -> None:
        nonlocal found
        if isinstance(expr, (FloorDiv, FloorMod)):
            if isinstance(expr.b, IntImm) and expr.b.value > 0 and depends_on(expr.a, var):
                found = math.lcm(found, expr.b.value)
        for child in ("a", "b", "value"):
            sub = getattr(expr, child, None)
            if isinstance(sub, PrimExpr):
                walk(sub)

    for expr in exprs:
        walk(expr)
    return found


def _right_padding(recovered: PrimExpr, end: int, extents: Mapping[Var, int]) -> PrimExpr:
    """The predicate ``end <= recovered`` in TVM's form for a two-digit split."""
    dtype = recovered.dtype
    if (
        isinstance(recovered, Add)
        and isinstance(recovered.a, Mul)
        and isinstance(recovered.a.a, Var)
        and isinstance(recovered.a.b, IntImm)
        and isinstance(recovered.b, Var)
        and extents.get(recovered.b) == recovered.a.b.value
        and end % recovered.a.b.value != 0
    ):
        step = recovered.a.b.value
        return And(
            EQ(recovered.a.a, const(end // step, dtype)),
            LE(const(end % step, dtype), recovered.b),
        )
    return LE(const(end, dtype), recovered)


def analyze_padding(
    initial: Sequence[Var], final: Sequence[PrimExpr], dims: Sequence[int]
) -> Padding | None:
    """The padded layout of ``final`` (a map of ``initial``) on the box ``dims``, or None
    when it is not an injective affine map padded at the ends of its indices."""
    if len(initial) != len(dims) or not initial:
        return None
    dtype = initial[0].dtype
    padded_vars: list[Var] = []
    offsets: list[int] = []
    padded_extents: list[int] = []
    vmap: dict[Var, PrimExpr] = {}
    analyzer = Analyzer()
    for var, dim in zip(initial, dims):
        offset = _offset_of(var, final)
        if offset is None:
            return None
        step = _divisors_of(var, final)
        padded = -(-(dim + offset) // step) * step
        fresh = Var(var.name + "_padded", var.dtype)
        analyzer.bind_range(fresh, const(0, var.dtype), const(padded, var.dtype))
        vmap[var] = fresh - offset if offset else fresh
        padded_vars.append(fresh)
        offsets.append(offset)
        padded_extents.append(padded)
    substituted = [simplify_expr(substitute_expr(e, vmap), analyzer) for e in final]
    sums = bindings_affine(substituted, dict(zip(padded_vars, padded_extents)))
    if sums is None or any(s.base != 0 for s in sums):
        return None
    if math.prod(s.extent for s in sums) != math.prod(padded_extents):
        return None
    shape = [s.extent for s in sums]
    axes = [Var(f"axis{k}", dtype) for k in range(len(sums))]
    recovered = digits_inverse(IndexMap(padded_vars, substituted), sums, axes)
    extents = dict(zip(axes, shape))
    inverse: list[PrimExpr] = []
    predicate: PrimExpr | None = None
    for rec, dim, offset, padded in zip(recovered, dims, offsets, padded_extents):
        inverse.append(rec - offset if offset else rec)
        pieces: list[PrimExpr] = []
        if offset:
            pieces.append(LT(rec, const(offset, dtype)))
        if dim + offset < padded:
            pieces.append(_right_padding(rec, dim + offset, extents))
        for piece in pieces:
            predicate = piece if predicate is None else Or(predicate, piece)
    return Padding(shape, axes, inverse, predicate)


def check_exhaustively(
    initial: Sequence[Var], final: Sequence[PrimExpr], dims: Sequence[int], found: Padding
) -> str | None:
    """None when ``found`` is right for every index of the box; else what is wrong."""
    if math.prod(dims) > MAX_ENUMERATED or math.prod(found.shape) > MAX_ENUMERATED:
        return (
            f"the index box ({math.prod(dims)} elements) is too large to check the padding "
            f"by enumeration (at most {MAX_ENUMERATED})"
        )
    grids = np.indices(tuple(dims), dtype=np.int64).reshape(len(dims), -1)
    env = {var: grids[k] for k, var in enumerate(initial)}
    mapped = [np.broadcast_to(evaluate(e, env), grids.shape[1:]) for e in final]
    for values, extent in zip(mapped, found.shape):
        if values.size and (values.min() < 0 or values.max() >= extent):
            return "the map sends an index outside the new shape"
    flat = np.ravel_multi_index(tuple(mapped), tuple(found.shape)) if mapped else np.zeros(1)
    if np.unique(flat).size != flat.size:
        return "the map sends two indices to one element"
    new_grid = np.indices(tuple(found.shape), dtype=np.int64).reshape(len(found.shape), -1)
    new_env = {var: new_grid[k] for k, var in enumerate(found.axes)}
    pad = (
        np.zeros(new_grid.shape[1:], dtype=bool)
        if found.predicate is None
        else np.broadcast_to(evaluate(found.predicate, new_env), new_grid.shape[1:])
    )
    image = np.zeros(new_grid.shape[1:], dtype=bool)
    image[flat] = True
    if not np.array_equal(pad, ~image):
        return "the padding predicate does not hold exactly off the map's image"
    for k, expr in enumerate(found.inverse):
        back = np.broadcast_to(evaluate(expr, new_env), new_grid.shape[1:])[flat]
        if not np.array_equal(back, grids[k]):
            return "the inverse map does not give the indices back"
    return None


def linear_terms(expr: PrimExpr, indices: Sequence[Var]) -> dict[Var, PrimExpr] | None:
    """``expr`` as ``sum(coefficient * index)`` (coefficients free of the indices)."""
    ids = {id(v) for v in indices}

    def free(e: PrimExpr) -> bool:
        return not any(depends_on(e, v) for v in indices)

    if isinstance(expr, Var) and id(expr) in ids:
        return {expr: const(1, expr.dtype)}
    if free(expr):
        return {} if isinstance(expr, IntImm) and expr.value == 0 else None
    if isinstance(expr, Add):
        a, b = linear_terms(expr.a, indices), linear_terms(expr.b, indices)
        if a is None or b is None:
            return None
        merged = dict(a)
        for var, coef in b.items():
            merged[var] = merged[var] + coef if var in merged else coef
        return merged
    if isinstance(expr, Mul):
        for x, y in ((expr.a, expr.b), (expr.b, expr.a)):
            if free(y):
                inner = linear_terms(x, indices)
                return None if inner is None else {v: c * y for v, c in inner.items()}
    return None


def symbolic_row_major(
    initial: Sequence[Var], final: Sequence[PrimExpr], shape: Sequence[PrimExpr]
) -> list[PrimExpr] | None:
    """The one-element shape when ``final`` is a single row-major linearization of the
    box ``shape`` (symbolic extents allowed): each index's coefficient is the product of
    the extents after it, extent-1 indices (always 0) aside. Such a map is a bijection onto
    ``[0, prod(shape))``, whatever the symbols' values."""
    if len(final) != 1 or len(initial) != len(shape):
        return None
    terms = linear_terms(final[0], initial)
    if terms is None:
        return None
    used = [
        (var, dim)
        for var, dim in zip(initial, shape)
        if not (isinstance(dim, IntImm) and dim.value == 1)
    ]
    unit = {
        id(var) for var, dim in zip(initial, shape) if isinstance(dim, IntImm) and dim.value == 1
    }
    if not used or any(id(var) in unit for var, _ in used):
        return None
    del unit  # an extent-1 index is always 0: its term adds nothing
    analyzer = Analyzer()
    stride: PrimExpr = const(1, initial[0].dtype)
    for var, dim in reversed(used):
        if var not in terms:
            return None
        coef = simplify_expr(terms[var], analyzer)
        gap = simplify_expr(coef - stride, analyzer)
        if not (isinstance(gap, IntImm) and gap.value == 0):
            return None
        stride = coef * dim
    return [stride]
