"""``register_transpose``: the shuffle rounds transposing square tiles in vector registers.

Each round is evaluated lane by lane on symbolic rows (every lane traced back to the row
and element it came from): the columns must be the tile's columns for every element type
and lane count, and the rounds within a 128-bit lane must be x86 unpacks (one instruction
each), not the element-granular block swaps that take two shuffles each."""

from __future__ import annotations

from typing import Any

import pytest

from irbuilder.ir import PrimExpr, Shuffle, Var
from lowering.late.register_transpose import (
    transpose_bindings,
    transpose_from_halves,
    unpack_round,
)

UNPCKLPS_8 = (0, 8, 1, 9, 4, 12, 5, 13)
UNPCKHPS_8 = (2, 10, 3, 11, 6, 14, 7, 15)


def _tracer(bindings: list[tuple[Var, PrimExpr]], leaves: dict[int, tuple[int, int]],
            width: dict[int, int]) -> Any:
    """``lane(expr, i)``: the (row, element) lane ``i`` of ``expr`` holds; ``leaves`` maps a
    leaf variable to (row, first element), ``width`` a leaf to its lanes."""
    bound = {id(var): value for var, value in bindings}

    def lane(expr: PrimExpr, index: int) -> tuple[int, int]:
        if id(expr) in bound:
            return lane(bound[id(expr)], index)
        if isinstance(expr, Var):
            row, first = leaves[id(expr)]
            assert index < width[id(expr)]
            return row, first + index
        assert isinstance(expr, Shuffle)
        source = expr.indices[index]
        first_vec, second = expr.vectors
        lanes = first_vec.dtype.lanes
        return lane(first_vec, source) if source < lanes else lane(second, source - lanes)

    return lane


@pytest.mark.parametrize("dtype", ["float32", "float64", "int8", "int16", "uint8", "bool"])
@pytest.mark.parametrize("lanes", [2, 4, 8, 16, 32])
def test_bindings_transpose_every_type_and_width(dtype: str, lanes: int) -> None:
    rows = [Var(f"r{k}", f"{dtype}x{lanes}") for k in range(lanes)]
    bindings, columns = transpose_bindings(list(rows), "t")
    lane = _tracer(bindings, {id(r): (k, 0) for k, r in enumerate(rows)},
                   {id(r): lanes for r in rows})
    assert len(columns) == lanes
    for k, column in enumerate(columns):
        assert [lane(column, c) for c in range(lanes)] == [(c, k) for c in range(lanes)]
    # log2(L) rounds of L shuffles whichever way the rounds are split
    assert len(bindings) == lanes * (lanes.bit_length() - 1)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int16", "int8"])
@pytest.mark.parametrize("lanes", [4, 8, 16, 32])
def test_half_loaded_tiles_transpose_every_type(dtype: str, lanes: int) -> None:
    h = lanes // 2
    halves = {(k, p): Var(f"r{k}_{p}", f"{dtype}x{h}") for k in range(lanes) for p in range(2)}
    bindings, columns = transpose_from_halves(lambda k, p: halves[(k, p)], lanes, "t")
    lane = _tracer(bindings, {id(v): (k, p * h) for (k, p), v in halves.items()},
                   {id(v): h for v in halves.values()})
    for k, column in enumerate(columns):
        assert [lane(column, c) for c in range(lanes)] == [(c, k) for c in range(lanes)]


def test_rounds_within_128_bit_lanes_are_unpacks() -> None:
    """float32 rows of 8 lanes (AVX2): the two rounds inside the 128-bit lanes are
    unpcklps/unpckhps masks, the last one swaps whole 128-bit halves."""
    rows = [Var(f"r{k}", "float32x8") for k in range(8)]
    bindings, _ = transpose_bindings(list(rows), "t")
    masks = [value.indices for _, value in bindings if isinstance(value, Shuffle)]
    assert set(masks[:16]) == {UNPCKLPS_8, UNPCKHPS_8}
    assert set(masks[16:]) == {(0, 1, 2, 3, 8, 9, 10, 11), (4, 5, 6, 7, 12, 13, 14, 15)}
    h = 4
    halves = {(k, p): Var(f"h{k}_{p}", "float32x4") for k in range(8) for p in range(2)}
    bindings, _ = transpose_from_halves(lambda k, p: halves[(k, p)], 8, "t")
    in_lane = [value.indices for _, value in bindings
               if isinstance(value, Shuffle) and value.indices != tuple(range(2 * h))]
    assert len(in_lane) == 16 and set(in_lane) == {UNPCKLPS_8, UNPCKHPS_8}


def test_unpack_round_pairs_rows_half_a_block_apart() -> None:
    rows: list[PrimExpr] = [Var(f"r{k}", "int16x16") for k in range(8)]
    out = unpack_round(rows, 16)
    for i in range(4):
        low, high = out[2 * i], out[2 * i + 1]
        assert isinstance(low, Shuffle) and isinstance(high, Shuffle)
        assert low.vectors == (rows[i], rows[i + 4]) and high.vectors == (rows[i], rows[i + 4])
        # punpcklwd / punpckhwd: the low / high four words of each 128-bit lane, interleaved
        assert low.indices[:8] == (0, 16, 1, 17, 2, 18, 3, 19)
        assert high.indices[8:] == (12, 28, 13, 29, 14, 30, 15, 31)
