"""numba twins of ``benchmarks/tvm_style.py``'s kernels: the fastest plain form a numba user
writes (``prange`` over the independent axis, ``fastmath`` where the kernel allows it, loops
reordered so the inner one is contiguous). Imported only when numba is importable."""

# ruff: noqa: E501, E741, E702 - kernel sources kept close to the TVMScript ones
from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit, prange

fm = dict(parallel=True, fastmath=True, cache=False)

@njit(**fm)
def nb_layernorm(A, G, B, O):
    n, m = A.shape
    for i in prange(n):
        s = np.float32(0); s2 = np.float32(0)
        for j in range(m):
            s += A[i, j]; s2 += A[i, j] * A[i, j]
        mu = s / m; r = np.float32(1) / np.sqrt(s2 / m - mu * mu + np.float32(1e-5))
        for j in range(m):
            O[i, j] = (A[i, j] - mu) * r * G[j] + B[j]
@njit(**fm)
def nb_colsum(A, B):
    n, m = A.shape
    nb = 64
    for jb in prange(m // nb):
        acc = np.zeros(nb, np.float32)
        for i in range(n):
            for j in range(nb):
                acc[j] += A[i, jb * nb + j]
        for j in range(nb):
            B[jb * nb + j] = acc[j]
@njit(**fm)
def nb_maxpool(A, O):
    C, H, W = O.shape
    for c in prange(C):
        for h in range(H):
            for w in range(W):
                m = np.float32(-3.4e38)
                for kh in range(3):
                    for kw in range(3):
                        m = max(m, A[c, h * 2 + kh, w * 2 + kw])
                O[c, h, w] = m
@njit(**fm)
def nb_bmm(A, B, C):
    for b in prange(16):
        for i in range(256):
            for j in range(256):
                C[b, i, j] = 0
            for k in range(256):
                a = A[b, i, k]
                for j in range(256):
                    C[b, i, j] += a * B[b, k, j]
@njit(**fm)
def nb_depthwise(A, W, O):
    C, H, Wd = O.shape
    for c in prange(C):
        for h in range(H):
            for w in range(Wd):
                O[c, h, w] = 0
            for kh in range(3):
                for kw in range(3):
                    wt = W[c, kh, kw]
                    for w in range(Wd):
                        O[c, h, w] += A[c, h + kh, w + kw] * wt
@njit(**fm)
def nb_bias_relu(A, b, O):
    for i in prange(A.shape[0]):
        for j in range(A.shape[1]):
            O[i, j] = max(A[i, j] + b[j], np.float32(0))
@njit(**fm)
def nb_matvec(A, x, y):
    for i in prange(A.shape[0]):
        acc = np.float32(0)
        for j in range(A.shape[1]):
            acc += A[i, j] * x[j]
        y[i] = acc
@njit(**fm)
def nb_dot(a, b, out):
    n = a.shape[0]; nch = 64; ch = n // nch
    parts = np.zeros(nch, np.float32)
    for c in prange(nch):
        s = np.float32(0)
        for k in range(c * ch, (c + 1) * ch):
            s += a[k] * b[k]
        parts[c] = s
    out[0] = parts.sum()
@njit(**fm)
def nb_cumsum(A, O):
    for i in prange(A.shape[0]):
        s = np.float32(0)
        for j in range(A.shape[1]):
            s += A[i, j]; O[i, j] = s
@njit(**fm)
def nb_argmax(A, O):
    for i in prange(A.shape[0]):
        b = A[i, 0]; ix = 0
        for j in range(1, A.shape[1]):
            if A[i, j] > b:
                b = A[i, j]; ix = j
        O[i] = ix
@njit(**fm)
def nb_add_bcast(A, b, O):
    for n in prange(8):
        for c in range(64):
            bc = b[c]
            for h in range(56):
                for w in range(56):
                    O[n, c, h, w] = A[n, c, h, w] + bc
@njit(**fm)
def nb_mm(A, B, C):
    n = A.shape[0]
    for i in prange(n):
        for j in range(n):
            C[i, j] = 0
        for k in range(n):
            a = A[i, k]
            for j in range(n):
                C[i, j] += a * B[k, j]
@njit(**fm)
def nb_conv(X, W, Y):
    F, C = W.shape[0], W.shape[1]
    H, Wd = Y.shape[2], Y.shape[3]
    for f in prange(F):
        for h in range(H):
            for w in range(Wd):
                Y[0, f, h, w] = 0
        for c in range(C):
            for kh in range(3):
                for kw in range(3):
                    wt = W[f, c, kh, kw]
                    for h in range(H):
                        ih = h + kh - 1
                        if ih < 0 or ih >= H:
                            continue
                        for w in range(Wd):
                            iw = w + kw - 1
                            if iw >= 0 and iw < Wd:
                                Y[0, f, h, w] += X[0, c, ih, iw] * wt
@njit(**fm)
def nb_mean(A, B):
    for i in prange(A.shape[0]):
        s = np.float32(0)
        for j in range(A.shape[1]):
            s += A[i, j]
        B[i] = s / np.float32(A.shape[1])
@njit(**fm)
def nb_i8(A, B, C):
    for i in prange(A.shape[0]):
        C[i] = A[i] + B[i]
@njit(**fm)
def nb_u8(A, B):
    for i in prange(A.shape[0]):
        for j in range(A.shape[1]):
            B[i, j] = np.float32(A[i, j]) * np.float32(0.00392156863)
@njit(**fm)
def nb_perm(A, B):
    for j in prange(A.shape[0]):
        for k in range(A.shape[1]):
            for i in range(A.shape[2]):
                B[i, j, k] = A[j, k, i]
@njit(**fm)
def nb_dense(X, W, b, Y):
    for i in prange(X.shape[0]):
        for j in range(W.shape[0]):
            s = np.float32(0)
            for k in range(X.shape[1]):
                s += X[i, k] * W[j, k]
            Y[i, j] = max(s + b[j], np.float32(0))
@njit(**fm)
def nb_avg(A, O):
    for c in prange(O.shape[0]):
        for h in range(O.shape[1]):
            for w in range(O.shape[2]):
                O[c, h, w] = (A[c, 2*h, 2*w] * np.float32(0.25) + A[c, 2*h, 2*w+1] * np.float32(0.25)) + (A[c, 2*h+1, 2*w] * np.float32(0.25) + A[c, 2*h+1, 2*w+1] * np.float32(0.25))
@njit(**fm)
def nb_bn(X, M, V, Y):
    for nc in prange(X.shape[0] * X.shape[1]):
        n = nc // X.shape[1]; c = nc % X.shape[1]
        m = M[c]; r = np.float32(1) / np.sqrt(V[c] + np.float32(1e-5))
        for h in range(X.shape[2]):
            for w in range(X.shape[3]):
                Y[n, c, h, w] = (X[n, c, h, w] - m) * r

def numba_twins() -> dict[str, Any]:
    """Kernel name -> numba function (float16 output has no twin: numba lacks the type)."""
    twins = dict(
        layernorm=nb_layernorm, colsum=nb_colsum, colsum_block=nb_colsum, maxpool=nb_maxpool,
        batch_matmul=nb_bmm, depthwise=nb_depthwise, bias_relu=nb_bias_relu, matvec=nb_matvec,
        dot_block=nb_dot, cumsum=nb_cumsum, argmax_rows=nb_argmax,
        add_nchw_bcast=nb_add_bcast,
    )
    twins.update(
        block_matmul_plain=nb_mm, conv_pad=nb_conv, mean_last=nb_mean, int8_add=nb_i8,
        u8_to_f32=nb_u8, permute3=nb_perm, dense_bias_relu=nb_dense, avgpool=nb_avg,
        batchnorm=nb_bn,
    )
    return twins
