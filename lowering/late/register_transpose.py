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
    "unpack_round",
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
    the columns (the last round's variables). Rows wider than one 128-bit lane of at least
    two elements are transposed within those lanes by :func:`unpack_round` first (each
    ``w x w`` block, ``w`` the elements of a lane, in place), then the blocks by
    :func:`transpose_round` at the lanes' granularity (``d >= w``): the rounds swap
    disjoint bits of the element positions, so together they transpose the matrix."""
    bindings: list[tuple[Var, PrimExpr]] = []
    columns = _square_rounds(list(rows), len(rows), _binder(bindings, name, 0))
    return bindings, columns


def _binder(bindings: list[tuple[Var, PrimExpr]], name: str,
            first: int) -> Callable[[int, list[PrimExpr]], list[PrimExpr]]:
    """``bind(round_no, exprs)``: each expression bound to a variable named after the round
    and its position (``first`` + its index), appended to ``bindings``; the variables."""

    def bind(round_no: int, exprs: list[PrimExpr]) -> list[PrimExpr]:
        named: list[PrimExpr] = []
        for k, expr in enumerate(exprs):
            var = Var(f"{name}_t{round_no}_{first + k}", expr.dtype)
            bindings.append((var, expr))
            named.append(var)
        return named

    return bind


def _square_rounds(rows: list[PrimExpr], lanes: int,
                   bind: Callable[[int, list[PrimExpr]], list[PrimExpr]]) -> list[PrimExpr]:
    """Transpose the square blocks of ``n = len(rows)`` rows and ``n`` lanes that vectors of
    ``lanes`` lanes hold side by side (``lanes`` = ``n``: one tile): unpack rounds inside
    the 128-bit lanes when the rows span whole lanes, then :func:`transpose_round` from the
    lanes' width on (see :func:`transpose_bindings`). Each round goes through ``bind``."""
    n = len(rows)
    width = _unpack_width(rows[0], n)
    current, round_no, d = rows, 0, 1
    if width:
        for _ in range(width.bit_length() - 1):
            current = bind(round_no, [out for g in range(0, n, width)
                                      for out in unpack_round(current[g:g + width], lanes)])
            round_no += 1
        d = width
    while d < n:
        current = bind(round_no, transpose_round(current, d, lanes))
        round_no, d = round_no + 1, d * 2
    return current


def _unpack_width(row: PrimExpr, count: int) -> int:
    """Elements of one 128-bit lane of ``row`` when the unpack rounds apply to square
    blocks of ``count`` rows of ``count`` elements: the blocks span whole lanes, of at least
    two elements; else 0."""
    bits = row.dtype.bits
    if bits < 8 or UNPACK_LANE_BITS % bits or bits * count < UNPACK_LANE_BITS:
        return 0
    width = UNPACK_LANE_BITS // bits
    return width if width >= 2 else 0


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
        current = _square_rounds(current, lanes, _binder(bindings, name, p * h))
        columns.extend(current)
    return bindings, columns


UNPACK_LANE_BITS = 128
"""Width of the lanes x86's unpack instructions interleave within (``unpcklps``,
``punpcklwd``, ...): halves of this width are transposed by :func:`unpack_round`."""


def unpack_round(rows: list[PrimExpr], lanes: int) -> list[PrimExpr]:
    """One round transposing, within each 128-bit lane of vectors of ``lanes`` elements, the
    ``w x w`` blocks held by the ``w = len(rows)`` rows (``w`` elements to a lane), as x86
    unpacks: outputs ``2i`` and ``2i + 1`` interleave the low and the high elements of each
    lane of rows ``i`` and ``i + w/2``. After ``log2(w)`` rounds row ``k`` holds, in each
    lane, that lane's column ``k`` of the block. Every shuffle is one unpack instruction
    (``unpcklps``, ``punpckhwd``, ...); the block swaps of :func:`transpose_round` at one
    element's granularity (``[0, 8, 2, 10, ...]``) are two shuffles each on x86 (AVX2
    code: 48 shuffles per two 8 x 8 half-loaded tiles with them, 32 with unpacks)."""
    w = len(rows)
    low = tuple(x for base in range(0, lanes, w) for t in range(w // 2)
                for x in (base + t, lanes + base + t))
    high = tuple(x for base in range(0, lanes, w) for t in range(w // 2, w)
                 for x in (base + t, lanes + base + t))
    out: list[PrimExpr] = list(rows)
    for i in range(w // 2):
        out[2 * i] = Shuffle((rows[i], rows[i + w // 2]), low)
        out[2 * i + 1] = Shuffle((rows[i], rows[i + w // 2]), high)
    return out
