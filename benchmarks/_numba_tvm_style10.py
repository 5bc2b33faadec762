"""numba twins of ``benchmarks/tvm_style10.py``'s kernels: the fastest plain form a numba
user writes (``prange`` over the independent axis, ``fastmath`` where the kernel allows it;
the convolutions accumulate an output row with the padding tested per tap, the column
reductions walk rows with a row of accumulators). Imported only when numba is importable."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba import njit, prange

fm = dict(parallel=True, fastmath=True, cache=False)


@njit(**fm)
def nb_conv2d_s2(data, kernel, out):
    F, C = kernel.shape[0], kernel.shape[1]
    H, W = out.shape[2], out.shape[3]
    Hi, Wi = data.shape[2], data.shape[3]
    for t in prange(F * H):
        f, y = t // H, t % H
        row = np.zeros(W, np.float32)
        for c in range(C):
            for ky in range(3):
                iy = 2 * y + ky - 1
                if iy < 0 or iy >= Hi:
                    continue
                for kx in range(3):
                    w = kernel[f, c, ky, kx]
                    for x in range(W):
                        ix = 2 * x + kx - 1
                        if 0 <= ix < Wi:
                            row[x] += data[0, c, iy, ix] * w
        out[0, f, y, :] = row


@njit(**fm)
def nb_dwconv_s2(data, kernel, out):
    C, H, W = out.shape[1], out.shape[2], out.shape[3]
    Hi, Wi = data.shape[2], data.shape[3]
    for t in prange(C * H):
        c, y = t // H, t % H
        row = np.zeros(W, np.float32)
        for ky in range(3):
            iy = 2 * y + ky - 1
            if iy < 0 or iy >= Hi:
                continue
            for kx in range(3):
                w = kernel[c, 0, ky, kx]
                for x in range(W):
                    ix = 2 * x + kx - 1
                    if 0 <= ix < Wi:
                        row[x] += data[0, c, iy, ix] * w
        out[0, c, y, :] = row


@njit(**fm)
def nb_conv2d_dilated(data, kernel, out):
    F, C = kernel.shape[0], kernel.shape[1]
    H, W = out.shape[2], out.shape[3]
    for t in prange(F * H):
        f, y = t // H, t % H
        row = np.zeros(W, np.float32)
        for c in range(C):
            for ky in range(3):
                for kx in range(3):
                    w = kernel[f, c, ky, kx]
                    for x in range(W):
                        row[x] += data[0, c, y + 2 * ky, x + 2 * kx] * w
        out[0, f, y, :] = row


@njit(**fm)
def nb_softmax_axis0(A, B):
    n, m = A.shape
    chunks = 16
    width = (m + chunks - 1) // chunks
    for q in prange(chunks):
        lo = q * width
        hi = min(m, lo + width)
        mx = np.full(hi - lo, np.float32(-3.4028234663852886e38))
        for i in range(n):
            for j in range(lo, hi):
                mx[j - lo] = max(mx[j - lo], A[i, j])
        s = np.zeros(hi - lo, np.float32)
        for i in range(n):
            for j in range(lo, hi):
                s[j - lo] += math.exp(A[i, j] - mx[j - lo])
        for i in range(n):
            for j in range(lo, hi):
                B[i, j] = math.exp(A[i, j] - mx[j - lo]) / s[j - lo]


@njit(**fm)
def nb_matmul_tn(A, B, C):
    K, n = A.shape
    m = B.shape[1]
    for i in prange(n):
        row = np.zeros(m, np.float32)
        for k in range(K):
            a = A[k, i]
            for j in range(m):
                row[j] += a * B[k, j]
        C[i, :] = row


@njit(**fm)
def nb_avgpool_exclude_pad(data, out):
    N, C, H, W = out.shape
    Hi, Wi = data.shape[2], data.shape[3]
    for t in prange(N * C):
        n, c = t // C, t % C
        for y in range(H):
            y0, y1 = max(2 * y - 1, 0), min(2 * y + 1, Hi - 1)
            for x in range(W):
                x0, x1 = max(2 * x - 1, 0), min(2 * x + 1, Wi - 1)
                s = np.float32(0)
                for iy in range(y0, y1 + 1):
                    for ix in range(x0, x1 + 1):
                        s += data[n, c, iy, ix]
                out[n, c, y, x] = s / np.float32((y1 - y0 + 1) * (x1 - x0 + 1))


@njit(parallel=True, cache=False)
def nb_requantize_i8(A, B):
    n, m = A.shape
    for i in prange(n):
        for j in range(m):
            v = (np.int64(A[i, j]) * np.int64(1288490189) + (np.int64(1) << 33)) >> 34
            B[i, j] = np.int8(min(max(v + 3, -128), 127))


@njit(**fm)
def nb_sum_axis1(A, B):
    nb, K, m = A.shape
    for b in prange(nb):
        row = np.zeros(m, np.float32)
        for k in range(K):
            for j in range(m):
                row[j] += A[b, k, j]
        B[b, :] = row


@njit(**fm)
def nb_maxpool_nhwc(data, out):
    N, H, W, C = out.shape
    Hi, Wi = data.shape[1], data.shape[2]
    for t in prange(N * H):
        n, y = t // H, t % H
        for x in range(W):
            acc = np.full(C, np.float32(-3.4028234663852886e38))
            for ky in range(3):
                iy = 2 * y + ky - 1
                if iy < 0 or iy >= Hi:
                    continue
                for kx in range(3):
                    ix = 2 * x + kx - 1
                    if ix < 0 or ix >= Wi:
                        continue
                    for c in range(C):
                        acc[c] = max(acc[c], data[n, iy, ix, c])
            out[n, y, x, :] = acc


@njit(**fm)
def nb_dwconv_nhwc(data, kernel, out):
    N, H, W, C = out.shape
    for t in prange(N * H):
        n, y = t // H, t % H
        for x in range(W):
            acc = np.zeros(C, np.float32)
            for ky in range(3):
                iy = y + ky - 1
                if iy < 0 or iy >= H:
                    continue
                for kx in range(3):
                    ix = x + kx - 1
                    if ix < 0 or ix >= W:
                        continue
                    for c in range(C):
                        acc[c] += data[n, iy, ix, c] * kernel[ky, kx, c, 0]
            out[n, y, x, :] = acc


@njit(parallel=True, cache=False)
def nb_argmax_axis0(A, idx):
    n, m = A.shape
    chunks = 32
    width = (m + chunks - 1) // chunks
    for q in prange(chunks):
        lo = q * width
        hi = min(m, lo + width)
        best = A[0, lo:hi].copy()
        arg = np.zeros(hi - lo, np.int32)
        for i in range(1, n):
            for j in range(lo, hi):
                if A[i, j] > best[j - lo]:
                    best[j - lo] = A[i, j]
                    arg[j - lo] = i
        idx[lo:hi] = arg


@njit(parallel=True, cache=False)
def nb_qdense_u8s8(A, W, C):
    # dot products along k: LLVM's loop vectorizer turns the int16 products into pmaddwd
    n, K = A.shape
    m = W.shape[0]
    for i in prange(n):
        for j in range(m):
            s = np.int32(0)
            for k in range(K):
                s += np.int32(np.int16(A[i, k]) * np.int16(W[j, k]))
            C[i, j] = s


@njit(parallel=True, cache=False)
def nb_bmm_int8(A, B, C):
    nb, n, K = A.shape
    m = B.shape[2]
    for bi in prange(nb * n):
        b, i = bi // n, bi % n
        row = np.zeros(m, np.int32)
        for k in range(K):
            a = np.int16(A[b, i, k])
            for j in range(m):
                row[j] += np.int32(a * np.int16(B[b, k, j]))
        C[b, i, :] = row


def numba_twins() -> dict[str, Any]:
    """Kernel name -> numba function."""
    return dict(
        conv2d_s2=nb_conv2d_s2, dwconv_s2=nb_dwconv_s2, conv2d_dilated=nb_conv2d_dilated,
        softmax_axis0=nb_softmax_axis0, matmul_tn_block=nb_matmul_tn,
        avgpool_exclude_pad=nb_avgpool_exclude_pad, requantize_i8=nb_requantize_i8,
        sum_axis1_block=nb_sum_axis1, maxpool_nhwc=nb_maxpool_nhwc,
        dwconv_nhwc=nb_dwconv_nhwc, argmax_axis0=nb_argmax_axis0,
        qdense_u8s8=nb_qdense_u8s8, bmm_int8=nb_bmm_int8,
    )
