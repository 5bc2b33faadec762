"""numba twins of ``benchmarks/tvm_style3.py``'s kernels: the fastest plain form a numba user
writes (``prange`` over the independent axis, ``fastmath`` where the kernel allows it, loops
reordered so the inner one is contiguous, tiles where the access is strided, rows paired
where the work per row is triangular). Imported only when numba is importable."""

# ruff: noqa: E741, E702 - kernel sources kept close to the TVMScript ones
from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit, prange

fm = dict(parallel=True, fastmath=True, cache=False)


@njit(**fm)
def nb_gelu_tanh(A, O):
    c = np.float32(0.7978845608); k = np.float32(0.044715); h = np.float32(0.5)
    for i in prange(A.shape[0]):
        for j in range(A.shape[1]):
            x = A[i, j]
            O[i, j] = h * x * (np.float32(1) + np.tanh(c * (x + k * x * x * x)))
@njit(**fm)
def nb_silu(A, O):
    for i in prange(A.shape[0]):
        for j in range(A.shape[1]):
            x = A[i, j]
            O[i, j] = x / (np.float32(1) + np.exp(-x))
@njit(**fm)
def nb_rmsnorm(A, G, O):
    m = A.shape[1]
    for i in prange(A.shape[0]):
        s = np.float32(0)
        for j in range(m):
            s += A[i, j] * A[i, j]
        r = np.float32(1) / np.sqrt(s / np.float32(m) + np.float32(1e-6))
        for j in range(m):
            O[i, j] = A[i, j] * r * G[j]
@njit(**fm)
def nb_attn_scores(Q, K, S):
    H, n, d = Q.shape
    for hi in prange(H * n):
        h = hi // n; i = hi % n
        for j in range(K.shape[1]):
            s = np.float32(0)
            for k in range(d):
                s += Q[h, i, k] * K[h, j, k]
            S[h, i, j] = s * np.float32(0.125)
@njit(**fm)
def nb_conv_nhwc(X, W, Y):
    _, H, Wd, F = Y.shape
    C = X.shape[3]
    for h in prange(H):
        acc = np.empty(F, np.float32)
        for w in range(Wd):
            for f in range(F):
                acc[f] = 0
            for rh in range(3):
                for rw in range(3):
                    for c in range(C):
                        x = X[0, h + rh, w + rw, c]
                        for f in range(F):
                            acc[f] += x * W[rh, rw, c, f]
            for f in range(F):
                Y[0, h, w, f] = acc[f]
@njit(**fm)
def nb_gap(X, O):
    N, C, H, W = X.shape
    inv = np.float32(1.0 / (H * W))
    for nc in prange(N * C):
        n = nc // C; c = nc % C
        s = np.float32(0)
        for h in range(H):
            for w in range(W):
                s += X[n, c, h, w]
        O[n, c] = s * inv
@njit(parallel=True, cache=False)  # no fastmath: it assumes no infinities
def nb_causal_mask(A, O):
    m = A.shape[1]
    ninf = np.float32(-np.inf)
    for i in prange(A.shape[0]):
        e = min(i + 1, m)
        for j in range(e):
            O[i, j] = A[i, j]
        for j in range(e, m):
            O[i, j] = ninf
@njit(**fm)
def nb_transpose_add(A, C, B):
    n = A.shape[0]; t = 32
    for jb in prange(n // t):
        for ib in range(n // t):
            for j in range(jb * t, jb * t + t):
                for i in range(ib * t, ib * t + t):
                    B[j, i] = A[i, j] + C[j, i]
@njit(**fm)
def nb_conv1x1(X, W, Y):
    _, F, H, Wd = Y.shape
    C = X.shape[1]
    for f in prange(F):
        for h in range(H):
            for w in range(Wd):
                Y[0, f, h, w] = 0
        for c in range(C):
            wc = W[f, c]
            for h in range(H):
                for w in range(Wd):
                    Y[0, f, h, w] += wc * X[0, c, h, w]
@njit(**fm)
def nb_layernorm(A, G, Bt, O):
    m = A.shape[1]
    for i in prange(A.shape[0]):
        s = np.float32(0)
        for j in range(m):
            s += A[i, j]
        mu = s / np.float32(m)
        q = np.float32(0)
        for j in range(m):
            d = A[i, j] - mu
            q += d * d
        r = np.float32(1) / np.sqrt(q / np.float32(m) + np.float32(1e-5))
        for j in range(m):
            O[i, j] = (A[i, j] - mu) * r * G[j] + Bt[j]
@njit(**fm)
def nb_dequant(A, Zp, S, O):
    for i in prange(A.shape[0]):
        z = Zp[i]; s = S[i]
        for j in range(A.shape[1]):
            O[i, j] = np.float32(np.int32(A[i, j]) - z) * s
@njit(**fm)
def nb_colmax(A, B):
    n, m = A.shape
    nb = 256
    for jb in prange(m // nb):
        j0 = jb * nb
        for j in range(j0, j0 + nb):
            B[j] = A[0, j]
        for i in range(1, n):
            for j in range(j0, j0 + nb):
                B[j] = max(B[j], A[i, j])
@njit(**fm)
def nb_outer(a, b, O):
    for i in prange(a.shape[0]):
        x = a[i]
        for j in range(b.shape[0]):
            O[i, j] = x * b[j]
@njit(**fm)
def nb_stencil5(A, B):
    n, m = A.shape
    h = np.float32(0.5); q = np.float32(0.125)
    for i in prange(n):
        if i == 0 or i == n - 1:
            for j in range(m):
                B[i, j] = A[i, j]
            continue
        B[i, 0] = A[i, 0]; B[i, m - 1] = A[i, m - 1]
        for j in range(1, m - 1):
            B[i, j] = h * A[i, j] + q * (A[i - 1, j] + A[i + 1, j] + A[i, j - 1] + A[i, j + 1])
@njit(fastmath=True, cache=False)
def _tril_row_dot(L, x, i):
    s = np.float32(0)
    for j in range(i + 1):
        s += L[i, j] * x[j]
    return s
@njit(**fm)
def nb_trmv_lower(L, x, y):
    n = L.shape[0]
    for p in prange(n // 2):
        y[p] = _tril_row_dot(L, x, p)
        y[n - 1 - p] = _tril_row_dot(L, x, n - 1 - p)
@njit(**fm)
def nb_downsample2(A, O):
    for i in prange(O.shape[0]):
        for j in range(O.shape[1]):
            O[i, j] = A[2 * i, 2 * j]
@njit(**fm)
def nb_resize_bilinear(A, O):
    C, Hi, Wi = A.shape
    Ho, Wo = O.shape[1], O.shape[2]
    x0 = np.empty(Wo, np.int64); x1 = np.empty(Wo, np.int64); dx = np.empty(Wo, np.float32)
    half = np.float32(0.5); zero = np.float32(0)
    for w in range(Wo):
        s = max((np.float32(w) + half) * half - half, zero)
        f = np.floor(s)
        x0[w] = int(f); x1[w] = min(int(f) + 1, Wi - 1); dx[w] = s - f
    for ch in prange(C * Ho):
        c = ch // Ho; h = ch % Ho
        s = max((np.float32(h) + half) * half - half, zero)
        f = np.floor(s)
        y0 = int(f); y1 = min(y0 + 1, Hi - 1); dy = s - f
        for w in range(Wo):
            a = A[c, y0, x0[w]] * (np.float32(1) - dx[w]) + A[c, y0, x1[w]] * dx[w]
            b = A[c, y1, x0[w]] * (np.float32(1) - dx[w]) + A[c, y1, x1[w]] * dx[w]
            O[c, h, w] = a * (np.float32(1) - dy) + b * dy
@njit(**fm)
def nb_exp_sqrt_log(A, B, C, O):
    for i in prange(A.shape[0]):
        for j in range(A.shape[1]):
            O[i, j] = np.exp(A[i, j]) * np.sqrt(B[i, j]) + np.log(C[i, j])
@njit(**fm)
def nb_rowvar(A, V):
    m = A.shape[1]
    for i in prange(A.shape[0]):
        s = np.float32(0)
        for j in range(m):
            s += A[i, j]
        mu = s / np.float32(m)
        q = np.float32(0)
        for j in range(m):
            d = A[i, j] - mu
            q += d * d
        V[i] = q / np.float32(m)
@njit(**fm)
def nb_rowsum_i8(A, O):
    for i in prange(A.shape[0]):
        s = np.int32(0)
        for j in range(A.shape[1]):
            s += np.int32(A[i, j])
        O[i] = s


def numba_twins() -> dict[str, Any]:
    """Kernel name -> numba function (the float16 matmul has no twin: numba lacks the type)."""
    return dict(
        gelu_tanh=nb_gelu_tanh, silu_block=nb_silu, rmsnorm=nb_rmsnorm,
        attn_scores_block=nb_attn_scores, conv_nhwc_block=nb_conv_nhwc, gap_block=nb_gap,
        causal_mask_block=nb_causal_mask, transpose_add=nb_transpose_add,
        conv1x1_block=nb_conv1x1, layernorm_topi=nb_layernorm, dequant_i8=nb_dequant,
        colmax_block=nb_colmax, outer=nb_outer, stencil5_block=nb_stencil5,
        trmv_lower=nb_trmv_lower, downsample2=nb_downsample2,
        resize_bilinear2x=nb_resize_bilinear, exp_sqrt_log_block=nb_exp_sqrt_log,
        rowvar_2pass=nb_rowvar, rowsum_i8_i32=nb_rowsum_i8,
    )
