"""Symbolic extents get the late stage's rewrites under run-time tests (jam with a leftover
loop, interchange on trip-count tests): IR under a pinned target, results vs the interpreter."""

from __future__ import annotations

import re

import numpy as np
import pytest
from pinned import AVX2, lower_for

import lowering
import tvmscript
from tvmscript import tir as T


@T.prim_func
def rowsum(a: T.handle, b: T.handle):
    m, n = T.int32(), T.int32()
    A = T.match_buffer(a, (m, n), "float32")
    B = T.match_buffer(b, (m,), "float32")
    for i in T.parallel(m):
        acc = T.decl_buffer((1,), "float32")
        acc[0] = T.float32(0)
        for j in range(n):
            acc[0] = acc[0] + A[i, j]
        B[i] = acc[0]


@T.prim_func
def matmul(a: T.handle, b: T.handle, c: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n, n), "float32")
    B = T.match_buffer(b, (n, n), "float32")
    C = T.match_buffer(c, (n, n), "float32")
    for i in range(n):
        for j in range(n):
            C[i, j] = T.float32(0)
            for k in range(n):
                C[i, j] = C[i, j] + A[i, k] * B[k, j]


def test_symbolic_parallel_reduction_is_jammed_with_a_leftover_loop() -> None:
    # rows in vector lanes (8 float32 on AVX2), the columns in tiles of 8, leftovers after
    text = lower_for(rowsum, AVX2).script()
    assert "for i_rows in T.parallel(m // 8):" in text
    assert "for j_tile in range(n // 8):" in text
    assert "for i_rest in range(m % 8):" in text
    with lowering.PassContext(disabled_passes={"vectorize_row_reductions"}):
        text = lower_for(rowsum, AVX2).script()
    assert "for i_jam in T.parallel(m // 4):" in text
    assert "for i_rest in range(m % 4):" in text


@pytest.mark.parametrize("m", [1, 2, 3, 4, 7, 8, 13])
def test_jammed_rowsum_matches_interpreter(m: int) -> None:
    A = np.random.default_rng(m).standard_normal((m, 37)).astype("float32")
    got, want = np.zeros(m, "float32"), np.zeros(m, "float32")
    tvmscript.build(rowsum)(A, got)
    tvmscript.build(rowsum, target="interp")(A, want)
    np.testing.assert_array_equal(got, want)  # each row's chain keeps its order: same bits


def test_symbolic_matmul_is_interchanged_under_trip_count_tests() -> None:
    text = lower_for(matmul, AVX2).script()
    # register tiles (tile_reduction_panels; with B's rows copied into panels when the tiled
    # rows are a multiple of 32 and far enough apart), the rows past a multiple of 4 and the
    # columns past a multiple of 16 after them, all under a no-overlap test; else the
    # interchange
    assert "if (n - n % 4) % 32 == 0 and (n - n % 16) % 16 == 0 and" in text
    assert "elif (n - n % 4) % 4 == 0 and (n - n % 16) % 16 == 0 and" in text
    assert "for i_rest in range(n % 4):" in text and "for j_rest in range(n % 16):" in text
    assert "if n >= 16 and n > 0 and" in text
    assert re.search(r"for k(_\d+)?, j(_\d+)? in T.grid\(n, n\):", text)


@pytest.mark.parametrize("n", [0, 1, 5, 15, 16, 17, 40])
def test_interchanged_matmul_matches_interpreter(n: int) -> None:
    rng = np.random.default_rng(n)
    A = rng.standard_normal((n, n)).astype("float32")
    B = rng.standard_normal((n, n)).astype("float32")
    got, want = np.zeros((n, n), "float32"), np.zeros((n, n), "float32")
    tvmscript.build(matmul, fp_contract=False)(A, B, got)
    tvmscript.build(matmul, target="interp")(A, B, want)
    np.testing.assert_array_equal(got, want)  # k ascending for every element: same bits


def test_overlapping_symbolic_matmul_takes_the_original_nest() -> None:
    n = 24
    rng = np.random.default_rng(2)
    A = rng.standard_normal((n, n)).astype("float32")
    got = A.copy()
    want = A.copy()
    tvmscript.build(matmul, fp_contract=False)(got, got, got)
    tvmscript.build(matmul, target="interp")(want, want, want)
    np.testing.assert_array_equal(got, want)
