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
