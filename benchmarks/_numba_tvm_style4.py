"""numba twins of ``benchmarks/tvm_style4.py``'s kernels: the fastest plain form a numba user
writes (``prange`` over the independent axis, ``fastmath`` where the kernel allows it, loops
reordered so the inner one is contiguous, borders peeled off the padded convolution, the
transposed convolution scattered rather than gathered through ``floordiv``). Imported only
when numba is importable."""

# ruff: noqa: E741, E702 - kernel sources kept close to the TVMScript ones
from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba import njit, prange

fm = dict(parallel=True, fastmath=True, cache=False)


@njit(**fm)
def nb_bmv(A, x, y):
    B, n, m = A.shape
    for bi in prange(B * n):
        b = bi // n; i = bi % n
        s = np.float32(0)
        for k in range(m):
            s += A[b, i, k] * x[b, k]
        y[b, i] = s
@njit(**fm)
def nb_xent(L, Y, O):
    m = L.shape[1]
    for i in prange(L.shape[0]):
        mx = L[i, 0]  # fastmath assumes no infinities: start from the first logit
        for j in range(1, m):
            mx = max(mx, L[i, j])
        s = np.float32(0)
        for j in range(m):
            s += np.exp(L[i, j] - mx)
        O[i] = np.log(s) + mx - L[i, Y[i]]
@njit(**fm)
def nb_one_hot(Y, O):
    m = O.shape[1]
    for i in prange(O.shape[0]):
        for j in range(m):
            O[i, j] = 0
        y = Y[i]
        if 0 <= y < m:
            O[i, y] = 1
@njit(**fm)
def nb_embedding_bag(I, E, O):
    d = E.shape[1]
    for b in prange(I.shape[0]):
        for j in range(d):
            O[b, j] = 0
        for k in range(I.shape[1]):
            r = I[b, k]
            for j in range(d):
                O[b, j] += E[r, j]
@njit(**fm)
def nb_instnorm(X, G, Bt, Y):
    N, C, H, W = X.shape
    inv = np.float32(1.0 / (H * W))
    for nc in prange(N * C):
        n = nc // C; c = nc % C
        s = np.float32(0); q = np.float32(0)
        for h in range(H):
            for w in range(W):
                v = X[n, c, h, w]
                s += v; q += v * v
        m = s * inv
        r = np.float32(1) / np.sqrt(q * inv - m * m + np.float32(1e-5))
        g = G[c] * r; bt = Bt[c]
        for h in range(H):
            for w in range(W):
                Y[n, c, h, w] = (X[n, c, h, w] - m) * g + bt
@njit(parallel=True, cache=False)  # a max: nothing to reassociate
def nb_maxpool2(X, Y):
    N, C, H, W = Y.shape
    for nc in prange(N * C):
        n = nc // C; c = nc % C
        for h in range(H):
            for w in range(W):
                Y[n, c, h, w] = max(max(X[n, c, 2 * h, 2 * w], X[n, c, 2 * h, 2 * w + 1]),
                                    max(X[n, c, 2 * h + 1, 2 * w], X[n, c, 2 * h + 1, 2 * w + 1]))
@njit(**fm)
def nb_rgb_gray(I, O):
    for i in prange(I.shape[0]):
        for j in range(I.shape[1]):
            v = (np.int32(I[i, j, 0]) * 77 + np.int32(I[i, j, 1]) * 150
                 + np.int32(I[i, j, 2]) * 29 + 128)
            O[i, j] = np.uint8(v >> 8)
@njit(parallel=True, cache=False)
def nb_prefix_max(A, O):
    m = A.shape[1]
    for i in prange(A.shape[0]):
        c = A[i, 0]
        O[i, 0] = c
        for j in range(1, m):
            c = max(c, A[i, j])
            O[i, j] = c
@njit(**fm)
def nb_sqdist(X, Y, D):
    n, d = X.shape
    m = Y.shape[0]
    yy = np.empty(m, np.float32)
    for j in prange(m):
        s = np.float32(0)
        for k in range(d):
            s += Y[j, k] * Y[j, k]
        yy[j] = s
    for i in prange(n):
        xx = np.float32(0)
        for k in range(d):
            xx += X[i, k] * X[i, k]
        for j in range(m):
            s = np.float32(0)
            for k in range(d):
                s += X[i, k] * Y[j, k]
            D[i, j] = max(xx + yy[j] - np.float32(2) * s, np.float32(0))
@njit(**fm)
def nb_cosine(A, B, O):
    m = A.shape[1]
    for i in prange(A.shape[0]):
        ab = np.float32(0); aa = np.float32(0); bb = np.float32(0)
        for j in range(m):
            a = A[i, j]; b = B[i, j]
            ab += a * b; aa += a * a; bb += b * b
        O[i] = ab / np.sqrt(max(aa * bb, np.float32(1e-16)))
@njit(**fm)
def nb_sat_add_i16(A, B, O):
    for i in prange(A.shape[0]):
        for j in range(A.shape[1]):
            O[i, j] = np.int16(min(max(np.int32(A[i, j]) + np.int32(B[i, j]), -32768), 32767))
@njit(**fm)
def nb_axpy_f64(X, Y, Z):
    for i in prange(X.shape[0]):
        Z[i] = 2.5 * X[i] + Y[i]
@njit(**fm)
def nb_softplus(A, B):
    one = np.float32(1); zero = np.float32(0)
    for i in prange(A.shape[0]):
        for j in range(A.shape[1]):
            x = A[i, j]
            B[i, j] = max(x, zero) + np.log(one + np.exp(-abs(x)))
@njit(**fm)
def nb_quantize_i8(A, S, O):
    lo = np.float32(-128); hi = np.float32(127)
    for i in prange(A.shape[0]):
        inv = np.float32(1) / S[i]
        for j in range(A.shape[1]):
            O[i, j] = np.int8(min(max(np.rint(A[i, j] * inv), lo), hi))
@njit(**fm)
def nb_dwconv_pad(X, W, Y):
    _, C, H, Wd = Y.shape
    for c in prange(C):
        for h in range(H):
            for w in range(Wd):
                Y[0, c, h, w] = 0
            for rh in range(3):
                ih = h + rh - 1
                if ih < 0 or ih >= H:
                    continue
                for rw in range(3):
                    wt = W[c, 0, rh, rw]
                    for w in range(max(0, 1 - rw), min(Wd, Wd + 1 - rw)):
                        Y[0, c, h, w] += X[0, c, ih, w + rw - 1] * wt
@njit(**fm)
def nb_adaptive_avgpool(X, O):
    N, C, H, W = X.shape
    OH, OW = O.shape[2], O.shape[3]
    for nc in prange(N * C):
        n = nc // C; c = nc % C
        for oh in range(OH):
            h0 = oh * H // OH; h1 = ((oh + 1) * H + OH - 1) // OH
            for ow in range(OW):
                w0 = ow * W // OW; w1 = ((ow + 1) * W + OW - 1) // OW
                s = np.float32(0)
                for h in range(h0, h1):
                    for w in range(w0, w1):
                        s += X[n, c, h, w]
                O[n, c, oh, ow] = s / np.float32((h1 - h0) * (w1 - w0))
@njit(**fm)
def nb_dense_gelu(X, W, Bias, O):
    n, K = X.shape
    m = W.shape[1]
    r = np.float32(0.7071067811865476); h = np.float32(0.5); one = np.float32(1)
    for i in prange(n):
        for j in range(m):
            O[i, j] = Bias[j]
        for k in range(K):
            x = X[i, k]
            for j in range(m):
                O[i, j] += x * W[k, j]
        for j in range(m):
            c = O[i, j]
            O[i, j] = h * c * (one + math.erf(c * r))
@njit(**fm)
def nb_convt1d(X, W, Y):
    C, L = X.shape
    O, K = W.shape[1], W.shape[2]
    for o in prange(O):
        for t in range(Y.shape[1]):
            Y[o, t] = 0
        for c in range(C):
            for k in range(K):
                wt = W[c, o, k]
                for l in range(L):
                    Y[o, 2 * l + k] += X[c, l] * wt


def numba_twins() -> dict[str, Any]:
    """Kernel name -> numba function (the float16 SwiGLU has no twin: numba lacks the type)."""
    return dict(
        bmv_block=nb_bmv, xent_rows=nb_xent, one_hot_block=nb_one_hot,
        embedding_bag=nb_embedding_bag, instnorm_block=nb_instnorm,
        maxpool2_block=nb_maxpool2, rgb_gray_u8=nb_rgb_gray, prefix_max=nb_prefix_max,
        sqdist_block=nb_sqdist, cosine_rows=nb_cosine, sat_add_i16_block=nb_sat_add_i16,
        axpy_f64_sym=nb_axpy_f64, softplus_sym_block=nb_softplus, quantize_i8=nb_quantize_i8,
        dwconv_pad_block=nb_dwconv_pad, adaptive_avgpool=nb_adaptive_avgpool,
        dense_gelu_block=nb_dense_gelu, convt1d_block=nb_convt1d,
    )
