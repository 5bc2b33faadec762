"""A vectorized loop variable cast to a wider integer type stays a ramp (``vectorize_loop``'s
``_widened_ramp``): a row picked by an int64 index table reads its columns with one vector
load, not a gather. Other casts of ramps (after arithmetic that may wrap, or narrowing)
keep the lane-wise cast."""

from __future__ import annotations

import numpy as np
import pytest

import lowering
import tvmscript
from lowering.target import Target
from tvmscript import tir as T

AVX512 = Target("llvm -mcpu=znver4")
AVX2 = Target("llvm -mcpu=znver3")


@T.prim_func
def rows_by_int64_index(Idx: T.Buffer((64,), "int64"), E: T.Buffer((1024, 128), "float32"),
                        Out: T.Buffer((64, 128), "float32")):
    for b in range(64):
        for d in T.vectorized(128):
            Out[b, d] = E[Idx[b], d]


@T.prim_func
def widened_values(A: T.Buffer((32,), "int64"), B: T.Buffer((32,), "uint64")):
    for i in T.vectorized(32):
        A[i] = T.Cast("int64", i - 16) * T.int64(3000000000)
        B[i] = T.Cast("uint64", i - 16)


@T.prim_func
def wrapping_product(A: T.Buffer((16,), "int64")):
    for i in T.vectorized(16):
        A[i] = T.Cast("int64", i * 200000000)  # int32 arithmetic that wraps, then widened


def _lowered(func: object, target: Target) -> str:
    return lowering.lower(func, target=target).script()


@pytest.mark.parametrize("target", [AVX2, AVX512], ids=["znver3", "znver4"])
def test_an_int64_row_index_reads_contiguous_columns(target: Target) -> None:
    text = _lowered(rows_by_int64_index, target)
    assert 'E_flat[T.Ramp(Idx_flat[b] * T.int64(128) + T.Cast("int64", d_outer' in text
    assert "T.Broadcast(Idx_flat" not in text
    if target.missing_on_host():
        pytest.skip(f"the host lacks {', '.join(target.missing_on_host())}")
    kernel = tvmscript.build(rows_by_int64_index, target=target, cache=False)
    assert "gather" not in kernel.get_source("asm")
    rng = np.random.default_rng(1)
    index = rng.integers(0, 1024, 64).astype("int64")
    table = rng.standard_normal((1024, 128)).astype("float32")
    out = np.zeros((64, 128), "float32")
    kernel(index, table, out)
    np.testing.assert_array_equal(out, table[index])


def test_widened_loop_values_equal_the_scalar_casts() -> None:
    a = np.zeros(32, "int64")
    b = np.zeros(32, "uint64")
    tvmscript.build(widened_values, target=AVX2, cache=False)(a, b)
    lanes = np.arange(32, dtype=np.int64) - 16
    np.testing.assert_array_equal(a, lanes * 3000000000)
    np.testing.assert_array_equal(b, lanes.astype("uint64"))


def test_a_cast_after_wrapping_arithmetic_stays_lane_wise() -> None:
    assert 'T.Cast("int64x16"' in _lowered(wrapping_product, AVX2)
    a = np.zeros(16, "int64")
    tvmscript.build(wrapping_product, target=AVX2, cache=False)(a)
    want = (np.arange(16, dtype=np.int64) * 200000000).astype("int32").astype("int64")
    np.testing.assert_array_equal(a, want)
