"""The benchmark kernels of ``kernels.py`` with symbolic dimensions (``n = T.int32()`` and
``T.match_buffer``): the same loop nests, shapes known only at run time."""

# ruff: noqa: E501 - TVMScript sources: one statement per line, the suite's buffer names
from __future__ import annotations

from tvmscript import tir as T


@T.prim_func
def vadd(a: T.handle, b: T.handle, c: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n,), "float32")
    B = T.match_buffer(b, (n,), "float32")
    C = T.match_buffer(c, (n,), "float32")
    for io in T.parallel(n // 4096):
        for ii in T.vectorized(4096):
            C[io * 4096 + ii] = A[io * 4096 + ii] + B[io * 4096 + ii]


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
def softmax(a: T.handle, b: T.handle):
    m, n = T.int32(), T.int32()
    A = T.match_buffer(a, (m, n), "float32")
    B = T.match_buffer(b, (m, n), "float32")
    for i in T.parallel(m):
        mx = T.decl_buffer((1,), "float32")
        s = T.decl_buffer((1,), "float32")
        mx[0] = A[i, 0]
        for j in range(n):
            mx[0] = T.max(mx[0], A[i, j])
        s[0] = T.float32(0)
        for j in range(n):
            B[i, j] = T.exp(A[i, j] - mx[0])
            s[0] = s[0] + B[i, j]
        for j in T.vectorized(n):
            B[i, j] = B[i, j] / s[0]


@T.prim_func
def transpose(a: T.handle, b: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n, n), "float32")
    B = T.match_buffer(b, (n, n), "float32")
    for io in T.parallel(n // 32):
        for jo in range(n // 32):
            for i in range(32):
                for j in range(32):
                    B[jo * 32 + j, io * 32 + i] = A[io * 32 + i, jo * 32 + j]


@T.prim_func
def matmul_naive(a: T.handle, b: T.handle, c: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n, n), "float32")
    B = T.match_buffer(b, (n, n), "float32")
    C = T.match_buffer(c, (n, n), "float32")
    for i in range(n):
        for j in range(n):
            C[i, j] = T.float32(0)
            for k in range(n):
                C[i, j] = C[i, j] + A[i, k] * B[k, j]


@T.prim_func
def conv2d(x: T.handle, w: T.handle, y: T.handle):
    h, wd = T.int32(), T.int32()
    Y = T.match_buffer(y, (1, 64, h, wd), "float32")
    X = T.match_buffer(x, (1, 64, h + 2, wd + 2), "float32")
    W = T.match_buffer(w, (64, 64, 3, 3), "float32")
    for kb in T.parallel(8):
        for i in range(h):
            for jb in range(wd // 8):
                acc = T.decl_buffer((8, 8), "float32")
                for kk in range(8):
                    for j in T.vectorized(8):
                        acc[kk, j] = T.float32(0)
                for c in range(64):
                    for di in range(3):
                        for dj in range(3):
                            for kk in T.unroll(8):
                                for j in T.vectorized(8):
                                    acc[kk, j] = acc[kk, j] + W[kb * 8 + kk, c, di, dj] * X[0, c, i + di, jb * 8 + j + dj]
                for kk in range(8):
                    for j in T.vectorized(8):
                        Y[0, kb * 8 + kk, i, jb * 8 + j] = acc[kk, j]


@T.prim_func
def stencil(a: T.handle, b: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n, n), "float32")
    B = T.match_buffer(b, (n, n), "float32")
    for i in T.parallel(n - 2):
        for j in T.vectorized(n - 2):
            B[i + 1, j + 1] = T.float32(0.2) * (
                A[i + 1, j + 1] + A[i, j + 1] + A[i + 2, j + 1] + A[i + 1, j] + A[i + 1, j + 2]
            )


SYMBOLIC_KERNELS = {
    "vadd": vadd,
    "rowsum": rowsum,
    "softmax": softmax,
    "transpose": transpose,
    "matmul_naive": matmul_naive,
    "conv2d": conv2d,
    "stencil": stencil,
}
