"""A chain of ``T.compute`` tensors, returned as a value, and its bufferization explained.

Tensors are values: the kernel never allocates by hand. Bufferization decides where each
tensor lives (fused into its consumer, computed in place in a dead operand, in the output
parameter, or in a new buffer), and ``tvmscript.explain_bufferization`` says what it
decided and why, quoting the source lines. The returned tensor is allocated by the call.
"""

from __future__ import annotations

import numpy as np
from _timing import report

import tvmscript
from tvmscript import tir as T

ROWS, COLS = 128, 64


@T.prim_func
def relu_energy(
    A: T.Buffer((ROWS, COLS), "float32"), bias: T.Buffer((COLS,), "float32")
) -> T.Buffer:
    k = T.reduce_axis(0, COLS)
    shifted = T.compute((ROWS, COLS), lambda i, j: A[i, j] + bias[j])
    relu = T.compute((ROWS, COLS), lambda i, j: T.max(shifted[i, j], T.float32(0)))
    scaled = T.compute((ROWS, COLS), lambda i, j: relu[i, j] * T.float32(0.5))
    # relu is read by two computes: it cannot be fused away, so it needs storage.
    total = T.compute((ROWS,), lambda i: T.sum(scaled[i, k] * relu[i, k], axis=k))
    return total


def numpy_version(a: np.ndarray, bias: np.ndarray) -> np.ndarray:
    relu = np.maximum(a + bias, 0)
    total: np.ndarray = (relu * 0.5 * relu).sum(axis=1)
    return total


def main() -> None:
    tvmscript.explain_bufferization(relu_energy)
    kernel = tvmscript.build(relu_energy)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((ROWS, COLS)).astype(np.float32)
    bias = rng.standard_normal(COLS).astype(np.float32)
    total = kernel(a, bias)  # the returned tensor, allocated per call
    np.testing.assert_allclose(total, numpy_version(a, bias), rtol=1e-4, atol=1e-4)
    print("compute chain matches numpy")
    report(f"compute chain {ROWS}x{COLS}", lambda: kernel(a, bias),
           lambda: numpy_version(a, bias))


if __name__ == "__main__":
    main()
