"""Layer normalisation over the last axis: y = (x - mean) / sqrt(var + eps) * gamma + beta."""

from __future__ import annotations

import numpy as np
from _timing import report

import tvmscript
from tvmscript import tir as T

ROWS, COLS = 64, 256
EPS = 1e-5


@T.prim_func
def layernorm(
    X: T.Buffer((ROWS, COLS), "float32"),
    gamma: T.Buffer((COLS,), "float32"),
    beta: T.Buffer((COLS,), "float32"),
    Y: T.Buffer((ROWS, COLS), "float32"),
) -> None:
    mean = T.alloc_buffer((ROWS,), "float32")
    var = T.alloc_buffer((ROWS,), "float32")
    for i in range(ROWS):
        mean[i] = T.float32(0)
        for j in range(COLS):
            mean[i] = mean[i] + X[i, j]
        mean[i] = mean[i] / T.float32(COLS)
        var[i] = T.float32(0)
        for j in range(COLS):
            var[i] = var[i] + (X[i, j] - mean[i]) * (X[i, j] - mean[i])
        var[i] = var[i] / T.float32(COLS)
        for j in range(COLS):
            Y[i, j] = (X[i, j] - mean[i]) / T.sqrt(var[i] + T.float32(EPS)) * gamma[j] + beta[j]


def numpy_layernorm(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray) -> np.ndarray:
    mean = x.mean(axis=1, keepdims=True)
    var = x.var(axis=1, keepdims=True)
    result: np.ndarray = (x - mean) / np.sqrt(var + EPS) * gamma + beta
    return result


def main() -> None:
    kernel = tvmscript.build(layernorm)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((ROWS, COLS)).astype(np.float32)
    gamma = rng.random(COLS, dtype=np.float32)
    beta = rng.random(COLS, dtype=np.float32)
    y = np.empty_like(x)
    kernel(x, gamma, beta, y)
    np.testing.assert_allclose(y, numpy_layernorm(x, gamma, beta), rtol=1e-4, atol=1e-5)
    print("layernorm matches numpy")
    report(f"layernorm {ROWS}x{COLS}", lambda: kernel(x, gamma, beta, y),
           lambda: numpy_layernorm(x, gamma, beta))


if __name__ == "__main__":
    main()
