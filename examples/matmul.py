"""Matrix multiply C = A @ B: a reduction block with an init, in TVMScript's block form."""

from __future__ import annotations

import numpy as np
from _timing import report

import tvmscript
from tvmscript import tir as T

M, K, N = 128, 96, 64


@T.prim_func
def matmul(
    A: T.Buffer((M, K), "float32"),
    B: T.Buffer((K, N), "float32"),
    C: T.Buffer((M, N), "float32"),
) -> None:
    for i, j, k in T.grid(M, N, K):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


def main() -> None:
    kernel = tvmscript.build(matmul)
    rng = np.random.default_rng(0)
    a = rng.random((M, K), dtype=np.float32)
    b = rng.random((K, N), dtype=np.float32)
    c = np.empty((M, N), np.float32)
    kernel(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)
    print("matmul matches numpy")
    report(f"matmul {M}x{K} @ {K}x{N}", lambda: kernel(a, b, c), lambda: np.matmul(a, b, out=c))


if __name__ == "__main__":
    main()
