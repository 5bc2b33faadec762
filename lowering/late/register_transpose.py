"""Square matrices transposed in vector registers: rounds of two-vector shuffles.

An ``L x L`` tile held as ``L`` row vectors becomes its ``L`` columns in ``log2(L)`` rounds;
each round swaps the off-diagonal blocks of one size between pairs of rows
(:func:`transpose_round`). ``transpose_tiles`` (copy nests), ``row_columns`` and
``row_vectorize`` (rows in vector lanes) build their tiles with these.
"""

from __future__ import annotations

from collections.abc import Callable

from irbuilder.ir import PrimExpr, Shuffle, Var

__all__ = [
    "HALF_LOADS_MIN_BITS",
    "transpose_bindings",
    "transpose_from_halves",
    "transpose_round",
    "transpose_shuffles",
]


def transpose_shuffles(rows: list[PrimExpr]) -> list[PrimExpr]:
    """The columns of the square matrix whose rows are ``rows`` (``L`` vectors of ``L``
    lanes, ``L`` a power of two): ``log2(L)`` rounds of :func:`transpose_round`."""
    d = 1
    while d < len(rows):
        rows = transpose_round(rows, d)
        d *= 2
    return rows


def transpose_round(rows: list[PrimExpr], d: int, lanes: int | None = None) -> list[PrimExpr]:
    """Swap the ``d x d`` off-diagonal blocks of every ``2d x 2d`` block of the matrix whose
    rows are ``rows``: element ``(k, c)`` moves to ``(k ^ d, c ^ d)`` where bit ``d`` of
    ``k`` and ``c`` differ. Rows ``k`` and ``k + d`` (bit ``d`` of ``k`` clear) become two
    shuffles of the pair. ``lanes`` (the vectors' width) may exceed the row count: each
    run of ``2d`` lanes is then paired alike (the in-lane rounds of
    :func:`transpose_from_halves`)."""
    if lanes is None:
        lanes = len(rows)
    out = list(rows)
    for k in range(len(rows)):
        if k & d:
            continue
        low = [c if not c & d else lanes + c - d for c in range(lanes)]
        high = [c + d if not c & d else lanes + c for c in range(lanes)]
        out[k] = Shuffle((rows[k], rows[k + d]), tuple(low))
        out[k + d] = Shuffle((rows[k], rows[k + d]), tuple(high))
    return out


def transpose_bindings(
    rows: list[PrimExpr], name: str
) -> tuple[list[tuple[Var, PrimExpr]], list[PrimExpr]]:
    """:func:`transpose_shuffles` with every round's vectors bound to variables (a round
    reads each vector of the one before twice): the ``(var, value)`` bindings in order, and
    the columns (the last round's variables)."""
    bindings: list[tuple[Var, PrimExpr]] = []
    current = list(rows)
    d, round_no = 1, 0
    while d < len(current):
        named: list[PrimExpr] = []
        for k, expr in enumerate(transpose_round(current, d)):
            var = Var(f"{name}_t{round_no}_{k}", expr.dtype)
            bindings.append((var, expr))
            named.append(var)
        current, d, round_no = named, d * 2, round_no + 1
    return bindings, current


HALF_LOADS_MIN_BITS = 256
"""Narrowest tile rows (bits) read as two half loads (:func:`transpose_from_halves`): an
AVX2 or AVX-512 register's 128-bit halves, which an insert from memory fills."""


def transpose_from_halves(
    half_row: Callable[[int, int], PrimExpr], lanes: int, name: str
) -> tuple[list[tuple[Var, PrimExpr]], list[PrimExpr]]:
    """:func:`transpose_bindings` of the ``lanes x lanes`` tile whose row ``k``, columns
    ``p * h`` to ``p * h + h - 1`` (``h = lanes / 2``), is the vector ``half_row(k, p)``:
    the round swapping halves (the one that crosses the vector's 128-bit lanes, and x86's
    only shuffle port on Intel cores) is done by the loads instead: vector ``(p, u)`` is
    the halves ``p`` of rows ``u`` and ``u + h`` side by side, which x86 builds as a load
    and an insert from memory (no shuffle). Then ``log2(h)`` rounds within the halves make
    columns ``p * h`` to ``p * h + h - 1``. The rounds of a transpose commute, so the
    columns are those of :func:`transpose_bindings`, at two thirds of its shuffles for 8
    lanes."""
    h = lanes // 2
    bindings: list[tuple[Var, PrimExpr]] = []
    columns: list[PrimExpr] = []
    for p in range(2):
        current: list[PrimExpr] = []
        for u in range(h):
            value = Shuffle((half_row(u, p), half_row(u + h, p)), tuple(range(lanes)))
            var = Var(f"{name}_h{p}_{u}", value.dtype)
            bindings.append((var, value))
            current.append(var)
        d, round_no = h // 2, 0
        while d >= 1:
            named: list[PrimExpr] = []
            for k, expr in enumerate(transpose_round(current, d, lanes)):
                var = Var(f"{name}_t{round_no}_{p * h + k}", expr.dtype)
                bindings.append((var, expr))
                named.append(var)
            current, d, round_no = named, d // 2, round_no + 1
        columns.extend(current)
    return bindings, columns
