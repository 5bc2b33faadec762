"""Vector loads at a small constant stride (``A[T.Ramp(b, s, L)]``, ``2 <= |s| <= 4``) are
a few contiguous loads and a shuffle (backend/codegen/strided.py). Each kernel is compared
with the reference interpreter for positive and negative strides, several element types and
lane counts, on pinned AVX2 and AVX-512 targets; the loads never leave the span the lanes
cover (the last vector ends at the highest lane)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tvmscript
from backend.codegen.strided import MAX_SHUFFLED_STRIDE
from tests.perf_codegen.pinned import AVX2, AVX512, needs_host_features
from tvmscript import tir as T

ROWS = 6


def strided_kernel(step: int, lanes: int, dtype: str) -> Any:
    """``O[i, j] = A[i, first + step * j]`` for ``j`` in lanes-wide vectors; ``first`` puts
    the lowest lane at column 0 (the start of the row) for negative steps too."""
    width = abs(step) * (lanes * 3 - 1) + 1  # three vectors per row, no spare column
    cols = lanes * 3
    first = 0 if step > 0 else width - 1

    @T.prim_func
    def kernel(A: T.Buffer((ROWS, width), dtype), Out: T.Buffer((ROWS, cols), dtype)):
        for i in range(ROWS):
            for jo in range(3):
                for ji in T.vectorized(lanes):
                    Out[i, jo * lanes + ji] = A[i, first + step * (jo * lanes + ji)]

    return kernel, width, cols


def _inputs(width: int, cols: int, dtype: str) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    a = (rng.standard_normal((ROWS, width)) * 50).astype(dtype)
    return a, np.zeros((ROWS, cols), dtype)


CASES = [
    (step, lanes, dtype)
    for step in (2, 3, 4, -2, -3, -4)
    for lanes, dtype in ((16, "float32"), (8, "float64"), (32, "int8"), (8, "float16"),
                         (4, "int64"))
]


@pytest.mark.parametrize("target", [AVX2, AVX512], ids=["znver3", "znver4"])
@pytest.mark.parametrize("step,lanes,dtype", CASES)
def test_strided_vector_loads_match_the_interpreter(target: Any, step: int, lanes: int,
                                                    dtype: str) -> None:
    needs = needs_host_features(target)
    if needs.args[0]:
        pytest.skip(needs.kwargs["reason"])
    kernel, width, cols = strided_kernel(step, lanes, dtype)
    a, out = _inputs(width, cols, dtype)
    assert "%strided" in tvmscript.build(kernel, target=target, opt_level=0).get_source("ll")
    built = tvmscript.build(kernel, target=target)
    built(a, out)
    want = np.zeros_like(out)
    tvmscript.build(kernel, target="interp")(a, want)
    np.testing.assert_array_equal(out, want)
    first = 0 if step > 0 else width - 1
    np.testing.assert_array_equal(out, a[:, first + step * np.arange(cols)])


def test_the_loads_stay_inside_the_lanes_span() -> None:
    # The row ends at the highest lane: a load past it would read the next row (or past
    # the array for the last row). The unoptimized IR shows the vectors' first elements.
    kernel, width, cols = strided_kernel(3, 16, "float32")
    ir = tvmscript.build(kernel, target=AVX2, opt_level=0).get_source("ll")
    assert ir.count("%strided") >= 3  # two pair shuffles and the pick, per vector
    a, out = _inputs(width, cols, "float32")
    tvmscript.build(kernel, target=AVX2)(a, out)
    np.testing.assert_array_equal(out, a[:, 3 * np.arange(cols)])


def test_a_larger_stride_keeps_per_lane_loads() -> None:
    kernel, width, cols = strided_kernel(MAX_SHUFFLED_STRIDE + 1, 8, "float32")
    ir = tvmscript.build(kernel, target=AVX2, opt_level=0).get_source("ll")
    assert "%strided" not in ir and "%gather" in ir
    a, out = _inputs(width, cols, "float32")
    tvmscript.build(kernel, target=AVX2)(a, out)
    np.testing.assert_array_equal(out, a[:, (MAX_SHUFFLED_STRIDE + 1) * np.arange(cols)])


def _ramp_lanes_ir(ir: str, lanes: int) -> list[str]:
    """The lines of the unoptimized IR that pick one lane of a vector of indices."""
    return [line for line in ir.splitlines() if f"extractelement <{lanes} x i" in line]


@pytest.mark.parametrize("target", [AVX2, AVX512], ids=["znver3", "znver4"])
@pytest.mark.parametrize("step", [MAX_SHUFFLED_STRIDE + 1, 57, -57, 3136])
def test_a_large_constant_stride_loads_each_lane_at_a_constant_offset(target: Any,
                                                                       step: int) -> None:
    # One scalar load per lane at `base + lane * step` elements: no vector of indices
    # whose lanes are extracted one by one (the NCHW -> NCHW16c layout transform: 2x).
    needs = needs_host_features(target)
    if needs.args[0]:
        pytest.skip(needs.kwargs["reason"])
    kernel, width, cols = strided_kernel(step, 16, "float32")
    ir = tvmscript.build(kernel, target=target, opt_level=0).get_source("ll")
    assert "%gather" in ir and not _ramp_lanes_ir(ir, 16)
    assert f"i64 {15 * step}" in ir  # the last lane's offset from the first
    a, out = _inputs(width, cols, "float32")
    tvmscript.build(kernel, target=target)(a, out)
    want = np.zeros_like(out)
    tvmscript.build(kernel, target="interp")(a, want)
    np.testing.assert_array_equal(out, want)
    first = 0 if step > 0 else width - 1
    np.testing.assert_array_equal(out, a[:, first + step * np.arange(cols)])


@T.prim_func
def _symbolic_stride(a: T.handle, o: T.handle, s: T.int32) -> None:
    A = T.match_buffer(a, (300,), "float32")
    Out = T.match_buffer(o, (2, 8), "float32")
    for r in range(2):
        Out[r, T.Ramp(0, 1, 8)] = A[T.Ramp(r * 100 + 53, s, 8)]
        A[T.Ramp(r * 100 + 40, s, 8)] = Out[r, T.Ramp(0, 1, 8)] * T.float32(2)


@pytest.mark.parametrize("stride", [1, 5, -5, 11])
def test_a_symbolic_stride_loads_and_stores_each_lane(stride: int) -> None:
    ir = tvmscript.build(_symbolic_stride, target=AVX2, opt_level=0).get_source("ll")
    assert not _ramp_lanes_ir(ir, 8)
    rng = np.random.default_rng(3)
    a = rng.standard_normal(300).astype("float32")
    want_a, want_o = a.copy(), np.zeros((2, 8), "float32")
    tvmscript.build(_symbolic_stride, target="interp")(want_a, want_o, stride)
    got_a, got_o = a.copy(), np.zeros((2, 8), "float32")
    tvmscript.build(_symbolic_stride, target=AVX2)(got_a, got_o, stride)
    np.testing.assert_array_equal(got_o, want_o)
    np.testing.assert_array_equal(got_a, want_a)
    for r in range(2):
        np.testing.assert_array_equal(got_o[r], a[r * 100 + 53 + stride * np.arange(8)])
