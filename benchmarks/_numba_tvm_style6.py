"""numba twins of ``benchmarks/tvm_style6.py``'s kernels: the fastest plain form a numba user
writes (``prange`` over the independent axis, ``fastmath`` where the kernel allows it, the
matmul as i-k-j with a row accumulator, the convolution's output row accumulated along ``x``
with the padding tested per tap, the sum as numba's ``prange`` reduction). Imported only when numba
is importable."""

# ruff: noqa: E741, E702 - kernel sources kept close to the TVMScript ones
from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit, prange

from benchmarks._numba_tvm_style5 import nb_matmul  # the same i-k-j matmul

fm = dict(parallel=True, fastmath=True, cache=False)


@njit(**fm)
def nb_softmax(A, O):
    n, m = A.shape
    for i in prange(n):
        mx = np.float32(-3.4028234663852886e38)
        for j in range(m):
            mx = max(mx, A[i, j])
        s = np.float32(0)
        for j in range(m):
            e = np.exp(A[i, j] - mx)
            O[i, j] = e
            s += e
        r = np.float32(1) / s
        for j in range(m):
            O[i, j] = O[i, j] * r
@njit(**fm)
def nb_conv2d_pad(X, W, Y):
    F, C, KH, KW = W.shape
    H, Wd = Y.shape[2], Y.shape[3]
    for f in prange(F):
        for y in range(H):
            row = np.zeros(Wd, np.float32)
            for c in range(C):
                for ky in range(KH):
                    yy = y + ky - 1
                    if yy < 0 or yy >= H:
                        continue
                    for kx in range(KW):
                        w = W[f, c, ky, kx]
                        lo = max(0, 1 - kx); hi = min(Wd, Wd + 1 - kx)
                        for x in range(lo, hi):
                            row[x] += X[0, c, yy, x + kx - 1] * w
            Y[0, f, y, :] = row
@njit(**fm)
def nb_add_bcast(A, B, O):
    n, m = A.shape
    for i in prange(n):
        for j in range(m):
            O[i, j] = A[i, j] + B[j]
@njit(**fm)
def _sum(A):
    s = np.float32(0)
    for k in prange(A.shape[0]):  # numba's parallel reduction: partial sums per thread
        s += A[k]
    return s
def nb_sum(A, B):
    B[0] = _sum(A)
@njit(**fm)
def nb_maxpool(X, P):
    C, H, Wd = P.shape[1], P.shape[2], P.shape[3]
    for cy in prange(C * H):
        c = cy // H; y = cy % H
        for x in range(Wd):
            v = np.float32(-3.4028234663852886e38)
            for ky in range(3):
                for kx in range(3):
                    v = max(v, X[0, c, 2 * y + ky, 2 * x + kx])
            P[0, c, y, x] = v
@njit(**fm)
def nb_layout(A, O):
    CO, H, Wd, CI = O.shape[1], O.shape[2], O.shape[3], O.shape[4]
    for cy in prange(CO * H):
        co = cy // H; y = cy % H
        for x in range(Wd):
            for ci in range(CI):
                O[0, co, y, x, ci] = A[0, co * CI + ci, y, x]
@njit(**fm)
def nb_argmax(A, idx, val):
    for i in prange(A.shape[0]):
        best = A[i, 0]; bi = 0
        for k in range(1, A.shape[1]):
            if A[i, k] > best:
                best = A[i, k]; bi = k
        idx[i] = bi; val[i] = best


def numba_twins() -> dict[str, Any]:
    """Kernel name -> numba function."""
    return dict(
        matmul_sched=nb_matmul, softmax_sched=nb_softmax, conv2d_pad_sched=nb_conv2d_pad,
        add_bcast_where=nb_add_bcast, sum_rfactor=nb_sum, maxpool_where=nb_maxpool,
        layout_nchw16c=nb_layout, argmax_tuple=nb_argmax,
    )
