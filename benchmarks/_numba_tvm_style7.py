"""numba twins of ``benchmarks/tvm_style7.py``'s kernels: the fastest plain form a numba user
writes (``prange`` over rows or channels, ``fastmath``; the dense layer as a dot product of
rows, the transpose in 32 x 32 blocks). Imported only when numba is importable."""

# ruff: noqa: E741, E702 - kernel sources kept close to the TVMScript ones
from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit, prange

from benchmarks._numba_tvm_style5 import nb_matmul_nt as nb_dense  # rows . rows
from benchmarks._numba_tvm_style6 import nb_softmax

fm = dict(parallel=True, fastmath=True, cache=False)


@njit(**fm)
def nb_rowsum(A, S):
    for i in prange(A.shape[0]):
        s = np.float32(0)
        for j in range(A.shape[1]):
            s += A[i, j]
        S[i] = s
@njit(**fm)
def nb_rowmax(A, M):
    for i in prange(A.shape[0]):
        m = np.float32(-3.4028234663852886e38)
        for j in range(A.shape[1]):
            m = max(m, A[i, j])
        M[i] = m
@njit(**fm)
def nb_concat(A, B, O):
    for i in prange(A.shape[0]):
        for j in range(A.shape[1]):
            O[i, j] = A[i, j]
        for j in range(B.shape[1]):
            O[i, A.shape[1] + j] = B[i, j]
@njit(**fm)
def nb_batchnorm(X, mean, var, g, b, Y):
    for c in prange(X.shape[1]):
        s = g[c] / np.sqrt(var[c] + np.float32(1e-5)); m = mean[c]; bb = b[c]
        for h in range(X.shape[2]):
            for w in range(X.shape[3]):
                Y[0, c, h, w] = (X[0, c, h, w] - m) * s + bb
@njit(**fm)
def nb_reshape(A, O):
    for i in prange(A.shape[0]):
        for j in range(A.shape[1]):
            O[i, j // O.shape[2], j % O.shape[2]] = A[i, j]
@njit(**fm)
def nb_transpose(A, O):
    n = A.shape[0]
    for ib in prange(n // 32):
        for jb in range(n // 32):
            for i in range(ib * 32, ib * 32 + 32):
                for j in range(jb * 32, jb * 32 + 32):
                    O[j, i] = A[i, j]


def numba_twins() -> dict[str, Any]:
    """Kernel name -> numba function."""
    return dict(
        rowsum_split=nb_rowsum, rowmax_split_where=nb_rowmax, softmax_ms=nb_softmax,
        concat_fused=nb_concat, dense_pack=nb_dense, batchnorm_fused=nb_batchnorm,
        reshape_fused=nb_reshape, transpose_fused=nb_transpose,
    )
