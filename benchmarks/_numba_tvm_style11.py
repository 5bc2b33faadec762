"""numba twins of ``benchmarks/tvm_style11.py``'s kernels: the fastest plain form a numba
user writes (``prange`` over the independent axis, ``fastmath`` where the kernel allows it,
none where integer or rounding semantics matter; the convolutions accumulate an output row
with the padding tested per tap, the scatter-add walks the rows serially in column slices
as the TVMScript does). Imported only when numba is importable."""

# ruff: noqa: E741 - kernel sources kept close to the TVMScript ones

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba import njit, prange

from benchmarks._numba_tvm_style5 import nb_matmul  # row of accumulators in C's dtype

fm = dict(parallel=True, fastmath=True, cache=False)


@njit(**fm)
def nb_conv3d_ncdhw(data, kernel, out):
    F, C = kernel.shape[0], kernel.shape[1]
    D, H, W = out.shape[2], out.shape[3], out.shape[4]
    for t in prange(F * D * H):
        f, zy = t // (D * H), t % (D * H)
        z, y = zy // H, zy % H
        row = np.zeros(W, np.float32)
        for c in range(C):
            for kz in range(3):
                iz = z + kz - 1
                if iz < 0 or iz >= D:
                    continue
                for ky in range(3):
                    iy = y + ky - 1
                    if iy < 0 or iy >= H:
                        continue
                    for kx in range(3):
                        w = kernel[f, c, kz, ky, kx]
                        for x in range(W):
                            ix = x + kx - 1
                            if 0 <= ix < W:
                                row[x] += data[0, c, iz, iy, ix] * w
        out[0, f, z, y, :] = row


@njit(**fm)
def nb_dwconv1d_nwc(data, w, out):
    N, L, C = out.shape
    K = w.shape[0]
    for t in prange(N * L):
        n, y = t // L, t % L
        acc = np.zeros(C, np.float32)
        for k in range(K):
            iy = y + k - K // 2
            if 0 <= iy < L:
                for c in range(C):
                    acc[c] += data[n, iy, c] * w[k, 0, c]
        out[n, y, :] = acc


@njit(**fm)
def nb_bn_train_stats(data, mean, var):
    N, C, H, W = data.shape
    inv = np.float32(1.0 / (N * H * W))
    for c in prange(C):
        s = np.float32(0)
        for n in range(N):
            for y in range(H):
                for x in range(W):
                    s += data[n, c, y, x]
        m = s * inv
        q = np.float32(0)
        for n in range(N):
            for y in range(H):
                for x in range(W):
                    d = data[n, c, y, x] - m
                    q += d * d
        mean[c] = m
        var[c] = q * inv


@njit(**fm)
def nb_lrn(data, out):
    N, C, H, W = data.shape
    for t in prange(N * C):
        n, c = t // C, t % C
        lo, hi = max(c - 2, 0), min(c + 2, C - 1)
        for y in range(H):
            for x in range(W):
                s = np.float32(0)
                for k in range(lo, hi + 1):
                    v = data[n, k, y, x]
                    s += v * v
                d = np.float32(2) + np.float32(1e-4) * s / np.float32(5)
                out[n, c, y, x] = data[n, c, y, x] / d ** np.float32(0.75)


@njit(**fm)
def nb_space_to_depth(data, out):
    C = data.shape[1]
    Co, H, W = out.shape[1], out.shape[2], out.shape[3]
    for t in prange(Co * H):
        co, y = t // H, t % H
        c, by, bx = co % C, co // (2 * C), (co % (2 * C)) // C
        for x in range(W):
            out[0, co, y, x] = data[0, c, 2 * y + by, 2 * x + bx]


@njit(parallel=True, cache=False)
def nb_gather_axis1(A, idx, out):
    n, m = idx.shape
    for i in prange(n):
        for j in range(m):
            out[i, j] = A[i, idx[i, j]]


@njit(parallel=True, cache=False)
def nb_index_add_rows(X, idx, A, out):
    M, D = out.shape
    N = A.shape[0]
    for i in prange(M):
        out[i, :] = X[i, :]
    for j0 in prange(D // 16):
        for i in range(N):
            r = idx[i]
            for j in range(j0 * 16, j0 * 16 + 16):
                out[r, j] += A[i, j]


@njit(**fm)
def nb_causal_softmax(S, O):
    nb, n, m = S.shape
    for t in prange(nb * n):
        b, i = t // n, t % n
        mx = np.float32(-3.4028234663852886e38)
        for j in range(i + 1):
            mx = max(mx, S[b, i, j] * np.float32(0.125))
        s = np.float32(0)
        for j in range(i + 1):
            e = math.exp(S[b, i, j] * np.float32(0.125) - mx)
            O[b, i, j] = e
            s += e
        r = np.float32(1) / s
        for j in range(i + 1):
            O[b, i, j] *= r
        for j in range(i + 1, m):
            O[b, i, j] = 0


@njit(parallel=True, cache=False)
def nb_reflect_pad(data, out):
    C, H, W = data.shape[1], data.shape[2], data.shape[3]
    Ho = out.shape[2]
    for t in prange(C * Ho):
        c, y = t // Ho, t % Ho
        iy = y - 2
        iy = -iy if iy < 0 else (2 * (H - 1) - iy if iy >= H else iy)
        out[0, c, y, 2:W + 2] = data[0, c, iy, :]
        out[0, c, y, 0] = data[0, c, iy, 2]
        out[0, c, y, 1] = data[0, c, iy, 1]
        out[0, c, y, W + 2] = data[0, c, iy, W - 2]
        out[0, c, y, W + 3] = data[0, c, iy, W - 3]


@njit(parallel=True, cache=False)
def nb_resize_nearest(data, out):
    N, C, H, W = out.shape
    Hi, Wi = data.shape[2], data.shape[3]
    src = np.empty(W, np.int64)
    for x in range(W):
        v = np.int64(math.floor(np.float32(0.7) * np.float32(x) + np.float32(1e-5)))
        src[x] = min(max(v, 0), Wi - 1)
    for t in prange(N * C):
        n, c = t // C, t % C
        for y in range(H):
            v = np.int64(math.floor(np.float32(0.7) * np.float32(y) + np.float32(1e-5)))
            iy = min(max(v, 0), Hi - 1)
            for x in range(W):
                out[n, c, y, x] = data[n, c, iy, src[x]]


@njit(parallel=True, cache=False)
def nb_blend_u16(A, B, w, O):
    n, m = A.shape
    sixteen, eight = np.uint16(16), np.uint16(8)
    for i in prange(n):
        for j in range(m):
            O[i, j] = np.uint16(A[i, j] * w[j] + B[i, j] * (sixteen - w[j]) + eight) >> np.uint16(4)


@njit(**fm)
def nb_mean_all(data, out):
    flat = data.reshape(-1)
    n = flat.size
    chunks = 64
    part = np.zeros(chunks, np.float32)
    width = (n + chunks - 1) // chunks
    for q in prange(chunks):
        s = np.float32(0)
        for k in range(q * width, min(n, (q + 1) * width)):
            s += flat[k]
        part[q] = s
    out[()] = part.sum() / np.float32(n)


@njit(parallel=True, cache=False)
def nb_leaky_clip_u8(X, O):
    N, C, H, W = X.shape
    for t in prange(N * C * H):
        n, c, y = t // (C * H), (t // H) % C, t % H
        for x in range(W):
            v = X[n, c, y, x]
            v = v if v > 0 else v * np.float32(0.1)
            r = np.rint(v * np.float32(64) + np.float32(128))
            O[n, c, y, x] = np.uint8(min(max(r, np.float32(0)), np.float32(255)))


def numba_twins() -> dict[str, Any]:
    """Kernel name -> numba function."""
    return dict(
        conv3d_ncdhw=nb_conv3d_ncdhw, dwconv1d_nwc=nb_dwconv1d_nwc,
        bn_train_stats=nb_bn_train_stats, lrn=nb_lrn, space_to_depth=nb_space_to_depth,
        gather_axis1=nb_gather_axis1, index_add_rows=nb_index_add_rows,
        matmul_f64=nb_matmul, causal_softmax=nb_causal_softmax,
        reflect_pad=nb_reflect_pad, resize_nearest=nb_resize_nearest, blend_u16=nb_blend_u16,
        mean_all=nb_mean_all, leaky_clip_u8=nb_leaky_clip_u8,
    )
