"""Quickstart: write a kernel in TVMScript, print its IR, compile it, call it on numpy arrays."""

import numpy as np

import tvmscript
from tvmscript import tir as T


@T.prim_func
def scaled_add(
    A: T.Buffer((1024,), "float32"),
    B: T.Buffer((1024,), "float32"),
    C: T.Buffer((1024,), "float32"),
    alpha: T.float32,
) -> None:
    for i in T.serial(1024):
        C[i] = A[i] * alpha + B[i]


@T.prim_func
def matmul(
    A: T.Buffer((128, 128), "float32"),
    B: T.Buffer((128, 128), "float32"),
    C: T.Buffer((128, 128), "float32"),
) -> None:
    for i, j, k in T.grid(128, 128, 128):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


def main() -> None:
    print(scaled_add.script())

    kernel = tvmscript.build(scaled_add)
    a = np.random.rand(1024).astype("float32")
    b = np.random.rand(1024).astype("float32")
    c = np.empty(1024, "float32")
    kernel(a, b, c, 2.0)
    np.testing.assert_allclose(c, a * 2.0 + b, rtol=1e-6)
    print("scaled_add matches numpy")

    mm = tvmscript.build(matmul)
    x = np.random.rand(128, 128).astype("float32")
    y = np.random.rand(128, 128).astype("float32")
    z = np.empty((128, 128), "float32")
    mm(x, y, z)
    np.testing.assert_allclose(z, x @ y, rtol=1e-4)
    print("matmul matches numpy")
    print(mm.get_source("tir"))


if __name__ == "__main__":
    main()
