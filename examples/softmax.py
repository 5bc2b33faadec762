"""Row-wise softmax with the max subtracted first (numerically stable), scratch buffers for
the row maximum and sum."""

from __future__ import annotations

import numpy as np
from _timing import report

import tvmscript
from tvmscript import tir as T

ROWS, COLS = 64, 256


@T.prim_func
def softmax(A: T.Buffer((ROWS, COLS), "float32"), B: T.Buffer((ROWS, COLS), "float32")) -> None:
    row_max = T.alloc_buffer((ROWS,), "float32")
    row_sum = T.alloc_buffer((ROWS,), "float32")
    for i in range(ROWS):
        row_max[i] = A[i, 0]
        for j in range(1, COLS):
            row_max[i] = T.max(row_max[i], A[i, j])
        row_sum[i] = T.float32(0)
        for j in range(COLS):
            B[i, j] = T.exp(A[i, j] - row_max[i])
            row_sum[i] = row_sum[i] + B[i, j]
        for j in range(COLS):
            B[i, j] = B[i, j] / row_sum[i]


def numpy_softmax(a: np.ndarray) -> np.ndarray:
    e = np.exp(a - a.max(axis=1, keepdims=True))
    result: np.ndarray = e / e.sum(axis=1, keepdims=True)
    return result


def main() -> None:
    kernel = tvmscript.build(softmax)
    a = np.random.default_rng(0).standard_normal((ROWS, COLS)).astype(np.float32) * 4
    b = np.empty_like(a)
    kernel(a, b)
    np.testing.assert_allclose(b, numpy_softmax(a), rtol=1e-5, atol=1e-7)
    print("softmax matches numpy")
    report(f"softmax {ROWS}x{COLS}", lambda: kernel(a, b), lambda: numpy_softmax(a))


if __name__ == "__main__":
    main()
