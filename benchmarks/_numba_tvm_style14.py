"""numba twins of ``benchmarks/tvm_style14.py``'s kernels: the fastest plain form a numba
user writes (``prange`` over the independent axis, ``fastmath`` on the float kernels a
reassociation may reorder; the integer kernels need none). The weight-transposed GEMV and the
GEMM accumulate an output row over k (unit stride in the weight); the depthwise
convolutions accumulate a row with the padding taken out of the loop bounds; the histogram
keeps one private row of bins per chunk; the CSR SpMV and segment sum loop over each row's
own range. The float16 kernels have no twin: numba lacks the type. Imported only when numba
is importable."""

# ruff: noqa: E741 - kernel sources kept close to the TVMScript ones

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba import njit, prange

fm = dict(parallel=True, fastmath=True, cache=False)
par = dict(parallel=True, cache=False)


@njit(**fm)
def nb_bgemv_t(x, W, y):
    nb, K = x.shape
    N = W.shape[2]
    # 8 batches on 2 cores: split the columns too so every task streams whole rows of W
    nt = 8
    cw = (N + nt - 1) // nt
    for t in prange(nb * nt):
        b, c = t // nt, t % nt
        j0, j1 = c * cw, min(N, (c + 1) * cw)
        acc = np.zeros(j1 - j0, np.float32)
        for k in range(K):
            xv = x[b, k]
            for j in range(j0, j1):
                acc[j - j0] += xv * W[b, k, j]
        y[b, j0:j1] = acc


@njit(**fm)
def nb_gemm_bias_res(A, B, bias, R, O):
    M, K = A.shape
    N = B.shape[1]
    for i in prange(M):
        acc = np.zeros(N, np.float32)
        for k in range(K):
            a = A[i, k]
            for j in range(N):
                acc[j] += a * B[k, j]
        for j in range(N):
            O[i, j] = acc[j] + bias[j] + R[i, j]


@njit(**fm)
def nb_dwconv5x5(data, kernel, out):
    C, H, W = out.shape[1], out.shape[2], out.shape[3]
    for t in prange(C * H):
        c, y = t // H, t % H
        row = np.zeros(W, np.float32)
        for ky in range(5):
            iy = y + ky - 2
            if iy < 0 or iy >= H:
                continue
            for kx in range(5):
                x0, x1 = max(0, 2 - kx), min(W, W + 2 - kx)
                w = kernel[c, 0, ky, kx]
                for x in range(x0, x1):
                    row[x] += data[0, c, iy, x + kx - 2] * w
        out[0, c, y, :] = row


@njit(**par)
def nb_maxpool_argmax(A, V, I):
    C, H, W = V.shape
    Wi = A.shape[2]
    for t in prange(C * H):
        c, y = t // H, t % H
        for x in range(W):
            mv = np.float32(-3.4028234663852886e38)
            mi = 0
            for dy in range(2):
                for dx in range(2):
                    a = A[c, 2 * y + dy, 2 * x + dx]
                    if a > mv:
                        mv = a
                        mi = (2 * y + dy) * Wi + 2 * x + dx
            V[c, y, x] = mv
            I[c, y, x] = mi


@njit(**par)
def nb_max_unpool(V, I, O):
    C, H, W = V.shape
    Wo = O.shape[2]
    for c in prange(C):
        O[c] = 0
        for y in range(H):
            for x in range(W):
                p = I[c, y, x]
                O[c, p // Wo, p % Wo] = V[c, y, x]


@njit(**fm)
def nb_resize_bilinear_nhwc(A, O):
    N, n, C = A.shape[0], A.shape[1], A.shape[3]
    m = O.shape[1]
    r = np.float32(n / m)
    for t in prange(N * m):
        b, y = t // m, t % m
        sy = max((np.float32(y) + np.float32(0.5)) * r - np.float32(0.5), np.float32(0))
        y0 = int(math.floor(sy))  # noqa: RUF046 - an int in numba too
        y1 = min(y0 + 1, n - 1)
        ly = sy - np.float32(y0)
        for x in range(m):
            sx = max((np.float32(x) + np.float32(0.5)) * r - np.float32(0.5), np.float32(0))
            x0 = int(math.floor(sx))  # noqa: RUF046
            x1 = min(x0 + 1, n - 1)
            lx = sx - np.float32(x0)
            for c in range(C):
                top = A[b, y0, x0, c] * (np.float32(1) - lx) + A[b, y0, x1, c] * lx
                bot = A[b, y1, x0, c] * (np.float32(1) - lx) + A[b, y1, x1, c] * lx
                O[b, y, x, c] = top * (np.float32(1) - ly) + bot * ly


@njit(**fm)
def nb_iou(A, B, O):
    n, m = A.shape[0], B.shape[0]
    # columns of B as separate contiguous arrays so the inner loop vectorizes
    bx0, by0, bx1, by1 = B[:, 0].copy(), B[:, 1].copy(), B[:, 2].copy(), B[:, 3].copy()
    ab = (bx1 - bx0) * (by1 - by0)
    for i in prange(n):
        ax0, ay0, ax1, ay1 = A[i, 0], A[i, 1], A[i, 2], A[i, 3]
        aa = (ax1 - ax0) * (ay1 - ay0)
        for j in range(m):
            w = max(min(ax1, bx1[j]) - max(ax0, bx0[j]), np.float32(0))
            h = max(min(ay1, by1[j]) - max(ay0, by0[j]), np.float32(0))
            inter = w * h
            O[i, j] = inter / (aa + ab[j] - inter)


@njit(**fm)
def nb_pairwise_l1(X, Y, D):
    n, K = X.shape
    m = Y.shape[0]
    for i in prange(n):
        for j in range(m):
            s = np.float32(0)
            for k in range(K):
                s += abs(X[i, k] - Y[j, k])
            D[i, j] = s


@njit(**par)
def nb_hist(A, H):
    nt = 64
    chunk = A.shape[0] // nt
    part = np.zeros((nt, 256), np.int32)
    for t in prange(nt):
        for i in range(t * chunk, (t + 1) * chunk):
            part[t, A[i]] += 1
    for b in range(256):
        s = 0
        for t in range(nt):
            s += part[t, b]
        H[b] = s


@njit(**par)
def nb_top2(X, V, I):
    n, m = X.shape
    for i in prange(n):
        v0 = v1 = np.float32(-3.4028234663852886e38)
        i0 = i1 = 0
        for j in range(m):
            a = X[i, j]
            if a > v0:
                v1, i1 = v0, i0
                v0, i0 = a, j
            elif a > v1:
                v1, i1 = a, j
        V[i, 0], V[i, 1] = v0, v1
        I[i, 0], I[i, 1] = i0, i1


@njit(**fm)
def nb_einsum_bij_j(X, w, O):
    nb, ni, nj = X.shape
    for b in prange(nb):
        for i in range(ni):
            s = np.float32(0)
            for j in range(nj):
                s += X[b, i, j] * w[j]
            O[b, i] = s


@njit(**fm)
def nb_rope(x, cos, sin, O):
    S, Hh, D = x.shape
    h2 = D // 2
    for s in prange(S):
        for h in range(Hh):
            for d in range(h2):
                a, b = x[s, h, d], x[s, h, d + h2]
                c, sn = cos[s, d], sin[s, d]
                O[s, h, d] = a * c - b * sn
                O[s, h, d + h2] = b * c + a * sn


@njit(**fm)
def nb_channel_shuffle(data, out):
    N, C, H, W = data.shape
    half = C // 2
    for t in prange(N * C):
        n, c = t // C, t % C
        src = (c % 2) * half + c // 2
        for y in range(H):
            for x in range(W):
                out[n, c, y, x] = data[n, src, y, x]


@njit(**fm)
def nb_horner9(X, c, O):
    c0, c1, c2, c3, c4 = c[0], c[1], c[2], c[3], c[4]
    c5, c6, c7, c8, c9 = c[5], c[6], c[7], c[8], c[9]
    for i in prange(X.shape[0]):
        x = X[i]
        p = ((((c9 * x + c8) * x + c7) * x + c6) * x + c5) * x + c4
        O[i] = (((p * x + c3) * x + c2) * x + c1) * x + c0


@njit(**fm)
def _sumsq(a):
    s = np.float32(0)
    for i in prange(a.size):
        s += a[i] * a[i]
    return s


@njit(**fm)
def _scale(a, o, f):
    for i in prange(a.size):
        o[i] = a[i] * f


@njit(fastmath=True, cache=False)
def nb_clip_global_norm(g1, g2, g3, max_norm, o1, o2, o3):
    total = _sumsq(g1.ravel()) + _sumsq(g2) + _sumsq(g3.ravel())
    f = min(np.float32(1), max_norm[0] / np.sqrt(total))
    _scale(g1.ravel(), o1.ravel(), f)
    _scale(g2, o2, f)
    _scale(g3.ravel(), o3.ravel(), f)


@njit(**fm)
def nb_dwconv1d_k31(data, kernel, out):
    C, W = out.shape[1], out.shape[2]
    K = kernel.shape[2]
    p = K // 2
    for c in prange(C):
        row = np.zeros(W, np.float32)
        for k in range(K):
            x0, x1 = max(0, p - k), min(W, W + p - k)
            w = kernel[c, 0, k]
            for x in range(x0, x1):
                row[x] += data[0, c, x + k - p] * w
        out[0, c, :] = row


@njit(**par)
def nb_conv3x3_nhwc_i8(data, kernel, out):
    H, W, C = data.shape[1], data.shape[2], data.shape[3]
    F = kernel.shape[3]
    for y in prange(H):
        for x in range(W):
            acc = np.zeros(F, np.int32)
            for ky in range(3):
                iy = y + ky - 1
                if iy < 0 or iy >= H:
                    continue
                for kx in range(3):
                    ix = x + kx - 1
                    if ix < 0 or ix >= W:
                        continue
                    for c in range(C):
                        a = np.int32(data[0, iy, ix, c])
                        for f in range(F):
                            acc[f] += a * np.int32(kernel[ky, kx, c, f])
            out[0, y, x, :] = acc


@njit(**fm)
def nb_spmv(indptr, indices, data, x, y):
    for i in prange(y.shape[0]):
        s = np.float32(0)
        for k in range(indptr[i], indptr[i + 1]):
            s += data[k] * x[indices[k]]
        y[i] = s


@njit(**fm)
def nb_segment_sum(X, offsets, O):
    D = X.shape[1]
    for s in prange(O.shape[0]):
        acc = np.zeros(D, np.float32)
        for r in range(offsets[s], offsets[s + 1]):
            for d in range(D):
                acc[d] += X[r, d]
        O[s, :] = acc


@njit(**fm)
def nb_masked_mean(X, M, O):
    n, m = X.shape
    for i in prange(n):
        s = np.float32(0)
        c = np.float32(0)
        for j in range(m):
            mk = M[i, j]
            s += X[i, j] if mk != 0 else np.float32(0)
            c += np.float32(mk)
        O[i] = s / max(c, np.float32(1))


@njit(**par)
def nb_transpose(A, O):
    n, m = A.shape
    B = 32
    nbi = (n + B - 1) // B
    nbj = (m + B - 1) // B
    for t in prange(nbi * nbj):
        bi, bj = t // nbj, t % nbj
        for i in range(bi * B, min(n, bi * B + B)):
            for j in range(bj * B, min(m, bj * B + B)):
                O[j, i] = A[i, j]


@njit(**fm)
def nb_cmul(A, B, O):
    for i in prange(A.shape[0]):
        a0, a1, b0, b1 = A[i, 0], A[i, 1], B[i, 0], B[i, 1]
        O[i, 0] = a0 * b0 - a1 * b1
        O[i, 1] = a0 * b1 + a1 * b0


@njit(inline="always")
def _popcount32(v):
    v = np.uint32(v - ((v >> np.uint32(1)) & np.uint32(0x55555555)))
    v = np.uint32((v & np.uint32(0x33333333)) + ((v >> np.uint32(2)) & np.uint32(0x33333333)))
    v = np.uint32((v + (v >> np.uint32(4))) & np.uint32(0x0F0F0F0F))
    return np.uint32(v * np.uint32(0x01010101)) >> np.uint32(24)


@njit(**par)
def nb_bitmix(A, B, O):
    for i in prange(A.shape[0]):
        # numba widens uint32 arithmetic to 64 bits: wrap each step back to uint32
        a, b = A[i], B[i]
        h = np.uint32(a * np.uint32(2654435761))
        g = np.uint32(h ^ (h >> np.uint32(15)))
        r = np.uint32((g << np.uint32(7)) | (g >> np.uint32(25)))
        O[i] = np.uint32((r ^ b) + _popcount32(np.uint32(a & b)))


@njit(**fm)
def nb_f64_transcend(X, O):
    for i in prange(X.shape[0]):
        x = X[i]
        O[i] = (1.0 / (1.0 + math.exp(-x)) * math.tanh(x) + math.log(1.0 + math.exp(x)) * 0.5
                + math.erf(x))


def numba_twins() -> dict[str, Any]:
    """Kernel name -> numba function (the float16 kernels have no twin: numba lacks the type)."""
    return dict(
        bgemv_t=nb_bgemv_t, gemm_bias_res=nb_gemm_bias_res, dwconv5x5_nchw=nb_dwconv5x5,
        maxpool_argmax=nb_maxpool_argmax, max_unpool=nb_max_unpool,
        resize_bilinear_nhwc=nb_resize_bilinear_nhwc, iou_matrix=nb_iou,
        pairwise_l1=nb_pairwise_l1, hist_private=nb_hist, top2_rows=nb_top2,
        einsum_bij_j=nb_einsum_bij_j, rope_neox=nb_rope, channel_shuffle=nb_channel_shuffle,
        horner9=nb_horner9, clip_global_norm=nb_clip_global_norm, dwconv1d_k31=nb_dwconv1d_k31,
        conv3x3_nhwc_i8=nb_conv3x3_nhwc_i8, spmv_csr=nb_spmv, segment_sum=nb_segment_sum,
        masked_mean=nb_masked_mean, transpose_f64=nb_transpose, cmul_interleaved=nb_cmul,
        bitmix_u32=nb_bitmix, f64_transcend=nb_f64_transcend,
    )
