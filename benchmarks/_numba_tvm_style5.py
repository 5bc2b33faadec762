"""numba twins of ``benchmarks/tvm_style5.py``'s kernels: the fastest plain form a numba user
writes (``prange`` over the independent axis, ``fastmath`` where the kernel allows it, the
matmul as i-k-j with a row accumulator, the convolution's output row accumulated along
``x``). Imported only when numba is importable."""

# ruff: noqa: E741, E702 - kernel sources kept close to the TVMScript ones
from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit, prange

fm = dict(parallel=True, fastmath=True, cache=False)


@njit(**fm)
def nb_sumsq(A, O):
    for i in prange(A.shape[0]):
        s = np.float32(0)
        for j in range(A.shape[1]):
            s += A[i, j] * A[i, j]
        O[i] = s
@njit(**fm)
def nb_batch_rowmax(A, O):
    B, n, m = A.shape
    for bi in prange(B * n):
        b = bi // n; i = bi % n
        v = np.float32(-3.4e38)
        for j in range(m):
            v = max(v, A[b, i, j])
        O[b, i] = v
@njit(**fm)
def nb_matmul(A, B, C):
    n, K = A.shape
    m = B.shape[1]
    for i in prange(n):
        row = np.zeros(m, C.dtype)  # float32 here, float64 for set 11's matmul_f64
        for k in range(K):
            a = A[i, k]
            for j in range(m):
                row[j] += a * B[k, j]
        C[i, :] = row
@njit(**fm)
def nb_matmul_nt(A, B, C):
    n, K = A.shape
    m = B.shape[0]
    for i in prange(n):
        for j in range(m):
            s = np.float32(0)
            for k in range(K):
                s += A[i, k] * B[j, k]
            C[i, j] = s
@njit(**fm)
def nb_conv2d(X, W, Y):
    F, C, KH, KW = W.shape
    H, Wd = Y.shape[2], Y.shape[3]
    for f in prange(F):
        for y in range(H):
            row = np.zeros(Wd, np.float32)
            for c in range(C):
                for ky in range(KH):
                    for kx in range(KW):
                        w = W[f, c, ky, kx]
                        for x in range(Wd):
                            row[x] += X[0, c, y + ky, x + kx] * w
            Y[0, f, y, :] = row
@njit(**fm)
def nb_mean_last(A, O):
    B, n, m = A.shape
    for bi in prange(B * n):
        b = bi // n; i = bi % n
        s = np.float32(0)
        for j in range(m):
            s += A[b, i, j]
        O[b, i] = s / np.float32(m)
@njit(**fm)
def nb_cosine(A, B, O):
    for i in prange(A.shape[0]):
        d = np.float32(0); na = np.float32(0); nb = np.float32(0)
        for j in range(A.shape[1]):
            a = A[i, j]; b = B[i, j]
            d += a * b; na += a * a; nb += b * b
        O[i] = d / np.sqrt(max(na * nb, np.float32(1e-16)))


def numba_twins() -> dict[str, Any]:
    """Kernel name -> numba function."""
    return dict(
        sumsq_into_output=nb_sumsq, sumsq_range=nb_sumsq, batch_rowmax=nb_batch_rowmax,
        matmul_local=nb_matmul, matmul_nt_local=nb_matmul_nt, conv2d_local=nb_conv2d,
        mean_last_grid=nb_mean_last, cosine_let=nb_cosine,
    )
