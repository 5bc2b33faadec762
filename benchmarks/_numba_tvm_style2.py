"""numba twins of ``benchmarks/tvm_style2.py``'s kernels: the fastest plain form a numba user
writes (``prange`` over the independent axis, ``fastmath`` where the kernel allows it, loops
reordered so the inner one is contiguous, tiles where the access is strided). Imported only
when numba is importable."""

# ruff: noqa: E741, E702 - kernel sources kept close to the TVMScript ones
from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit, prange

fm = dict(parallel=True, fastmath=True, cache=False)


@njit(**fm)
def nb_softmax(A, O):
    n, m = A.shape
    for i in prange(n):
        mx = np.float32(-3.4e38)
        for j in range(m):
            mx = max(mx, A[i, j])
        s = np.float32(0)
        for j in range(m):
            e = np.exp(A[i, j] - mx)
            O[i, j] = e; s += e
        r = np.float32(1) / s
        for j in range(m):
            O[i, j] *= r
@njit(**fm)
def nb_sum_axis0(A, B):
    for j in prange(A.shape[1]):
        for k in range(A.shape[2]):
            B[j, k] = A[0, j, k]
        for i in range(1, A.shape[0]):
            for k in range(A.shape[2]):
                B[j, k] += A[i, j, k]
@njit(**fm)
def nb_sum(a, out):
    n = a.shape[0]; nch = 64; ch = n // nch
    parts = np.zeros(nch, np.float32)
    for c in prange(nch):
        s = np.float32(0)
        for k in range(c * ch, (c + 1) * ch):
            s += a[k]
        parts[c] = s
    out[0] = parts.sum()
@njit(**fm)
def nb_argmin(A, O):
    for i in prange(A.shape[0]):
        b = A[i, 0]; ix = 0
        for j in range(1, A.shape[1]):
            if A[i, j] < b:
                b = A[i, j]; ix = j
        O[i] = ix
@njit(**fm)
def nb_clip_where(A, B, O):
    for i in prange(A.shape[0]):
        for j in range(A.shape[1]):
            a = A[i, j]
            O[i, j] = min(a, np.float32(1)) if a > 0 else B[i, j] * np.float32(0.1)
@njit(**fm)
def nb_scale_shift(X, S, Bs, Y):
    N, C, H, W = X.shape
    for nc in prange(N * C):
        n = nc // C; c = nc % C
        s = S[c]; b = Bs[c]
        for h in range(H):
            for w in range(W):
                Y[n, c, h, w] = X[n, c, h, w] * s + b
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
def nb_dense_int8(A, B, C):
    n, K = A.shape
    m = B.shape[0]
    for i in prange(n):
        for j in range(m):
            s = np.int32(0)
            for k in range(K):
                s += np.int32(np.int16(A[i, k]) * np.int16(B[j, k]))
            C[i, j] = s
@njit(**fm)
def nb_pad(X, P):
    N, C, H, W = X.shape
    for nc in prange(N * C):
        n = nc // C; c = nc % C
        for w in range(W + 2):
            P[n, c, 0, w] = 0; P[n, c, H + 1, w] = 0
        for h in range(H):
            P[n, c, h + 1, 0] = 0; P[n, c, h + 1, W + 1] = 0
            for w in range(W):
                P[n, c, h + 1, w + 1] = X[n, c, h, w]
@njit(**fm)
def nb_upsample(A, O):
    N, C, H, W = A.shape
    for nc in prange(N * C):
        n = nc // C; c = nc % C
        for h in range(H):
            for w in range(W):
                v = A[n, c, h, w]
                O[n, c, 2 * h, 2 * w] = v; O[n, c, 2 * h, 2 * w + 1] = v
            for w in range(2 * W):
                O[n, c, 2 * h + 1, w] = O[n, c, 2 * h, w]
@njit(**fm)
def nb_concat(A, B, O):
    m = A.shape[1]
    for i in prange(A.shape[0]):
        for j in range(m):
            O[i, j] = A[i, j]
        for j in range(B.shape[1]):
            O[i, m + j] = B[i, j]
@njit(**fm)
def nb_groupnorm(X, M, V):
    N, C, H, W = X.shape
    G = M.shape[1]; cg = C // G
    inv = np.float32(1.0 / (cg * H * W))
    for ng in prange(N * G):
        n = ng // G; g = ng % G
        s = np.float32(0); q = np.float32(0)
        for c in range(g * cg, (g + 1) * cg):
            for h in range(H):
                for w in range(W):
                    x = X[n, c, h, w]
                    s += x; q += x * x
        mu = s * inv
        M[n, g] = mu; V[n, g] = q * inv - mu * mu
@njit(**fm)
def nb_l2norm(A, O):
    for i in prange(A.shape[0]):
        s = np.float32(0)
        for j in range(A.shape[1]):
            s += A[i, j] * A[i, j]
        r = np.float32(1) / np.sqrt(s + np.float32(1e-12))
        for j in range(A.shape[1]):
            O[i, j] = A[i, j] * r
@njit(**fm)
def nb_logsumexp(A, O):
    for i in prange(A.shape[0]):
        mx = np.float32(-3.4e38)
        for j in range(A.shape[1]):
            mx = max(mx, A[i, j])
        s = np.float32(0)
        for j in range(A.shape[1]):
            s += np.exp(A[i, j] - mx)
        O[i] = mx + np.log(s)
@njit(**fm)
def nb_cumsum0(A, O):
    n, m = A.shape
    nb = 256
    for jb in prange(m // nb):
        j0 = jb * nb
        for j in range(j0, j0 + nb):
            O[0, j] = A[0, j]
        for i in range(1, n):
            for j in range(j0, j0 + nb):
                O[i, j] = O[i - 1, j] + A[i, j]
@njit(**fm)
def nb_conv1d(X, W, Y):
    w0, w1, w2, w3, w4, w5, w6 = W[0], W[1], W[2], W[3], W[4], W[5], W[6]
    for b in prange(Y.shape[0]):
        for i in range(Y.shape[1]):
            Y[b, i] = (X[b, i] * w0 + X[b, i + 1] * w1 + X[b, i + 2] * w2 + X[b, i + 3] * w3
                       + X[b, i + 4] * w4 + X[b, i + 5] * w5 + X[b, i + 6] * w6)
@njit(**fm)
def nb_transpose(A, B):
    n = A.shape[0]; t = 32
    for ib in prange(n // t):
        for jb in range(n // t):
            for i in range(ib * t, ib * t + t):
                for j in range(jb * t, jb * t + t):
                    B[i, j] = A[j, i]
@njit(**fm)
def nb_take(Tab, idx, O):
    for i in prange(idx.shape[0]):
        r = idx[i]
        for j in range(O.shape[1]):
            O[i, j] = Tab[r, j]
@njit(**fm)
def nb_bmm_small(A, B, C):
    for b in prange(A.shape[0]):
        for i in range(16):
            for j in range(16):
                C[b, i, j] = 0
            for k in range(16):
                a = A[b, i, k]
                for j in range(16):
                    C[b, i, j] += a * B[b, k, j]


def numba_twins() -> dict[str, Any]:
    """Kernel name -> numba function (float16 input has no twin: numba lacks the type)."""
    return dict(
        softmax_block=nb_softmax, sum_axis0_block=nb_sum_axis0, sum_block=nb_sum,
        argmin_rows=nb_argmin, clip_where=nb_clip_where, scale_shift_nchw=nb_scale_shift,
        matmul_nt_block=nb_matmul_nt, dense_int8=nb_dense_int8, pad_nchw=nb_pad,
        upsample2x=nb_upsample, concat_last=nb_concat, groupnorm_stats=nb_groupnorm,
        l2norm_rows=nb_l2norm, logsumexp_rows=nb_logsumexp, cumsum_axis0=nb_cumsum0,
        conv1d_block=nb_conv1d, transpose_block=nb_transpose, take_rows=nb_take,
        bmm_small_block=nb_bmm_small,
    )
