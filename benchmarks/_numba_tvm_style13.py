"""numba twins of ``benchmarks/tvm_style13.py``'s kernels: the fastest plain form a numba
user writes (``prange`` over the independent axis, ``fastmath`` everywhere: every kernel
here is float arithmetic a reassociation may reorder; the dense layers take one output
column per task so a batch-1 layer still runs on every core, each output a contiguous dot
product; the convolutions accumulate an output row with the padding taken out of the loop
bounds, or, on the small 7 x 7 and 14 x 14 planes, a whole plane over a padded copy (one
long contiguous loop per tap); the softmaxes keep the exponentials in the output). Imported
only when numba is importable."""

# ruff: noqa: E741 - kernel sources kept close to the TVMScript ones

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba import njit, prange

from benchmarks._numba_tvm_style3 import nb_attn_scores, nb_layernorm  # dots, two-pass rows
from benchmarks._numba_tvm_style10 import nb_dwconv_nhwc  # pad 1, a channel vector per pixel

fm = dict(parallel=True, fastmath=True, cache=False)


@njit(**fm)
def nb_dense_nt(X, W, B, O):
    n, K = X.shape
    m = W.shape[0]
    for j in prange(m):
        b = B[j]
        for i in range(n):
            s = np.float32(0)
            for k in range(K):
                s += X[i, k] * W[j, k]
            O[i, j] = s + b


@njit(**fm)
def nb_dense_gelu(X, W, B, O):
    n, K = X.shape
    m = W.shape[0]
    r, h = np.float32(0.7071067811865476), np.float32(0.5)
    for j in prange(m):
        b = B[j]
        for i in range(n):
            s = np.float32(0)
            for k in range(K):
                s += X[i, k] * W[j, k]
            y = s + b
            O[i, j] = y * (h + math.erf(y * r) * h)


@njit(**fm)
def nb_gap(data, out):
    C, H, W = data.shape[1], data.shape[2], data.shape[3]
    inv = np.float32(1.0 / (H * W))
    for c in prange(C):
        s = np.float32(0)
        for y in range(H):
            for x in range(W):
                s += data[0, c, y, x]
        out[0, c, 0, 0] = s * inv


@njit(**fm)
def nb_conv_plane(data, kernel, out):
    """Stride 1, pad ``KH // 2``, small planes (7 x 7, 14 x 14): the input padded once, one
    output plane per task accumulated over the padded width (``W + 2p`` columns, the extra
    ones dropped at the end), so each tap is one long contiguous multiply-add loop."""
    F, C, KH, KW = kernel.shape
    H, W = out.shape[2], out.shape[3]
    p = KH // 2
    Wp = W + 2 * p
    xp = np.zeros((C, (H + 2 * p) * Wp + 2 * p), np.float32)
    for c in prange(C):
        for y in range(H):
            for x in range(W):
                xp[c, (y + p) * Wp + x + p] = data[0, c, y, x]
    for f in prange(F):
        acc = np.zeros(H * Wp, np.float32)
        for c in range(C):
            for ky in range(KH):
                for kx in range(KW):
                    w = kernel[f, c, ky, kx]
                    o = ky * Wp + kx
                    for q in range(H * Wp):
                        acc[q] += xp[c, q + o] * w
        for y in range(H):
            for x in range(W):
                out[0, f, y, x] = acc[y * Wp + x]


@njit(**fm)
def nb_conv_bias_relu(data, kernel, bias, out):
    nb_conv_plane(data, kernel, out)
    F = out.shape[1]
    for f in prange(F):
        b = bias[0, f, 0, 0]
        for y in range(out.shape[2]):
            for x in range(out.shape[3]):
                out[0, f, y, x] = max(out[0, f, y, x] + b, np.float32(0))


@njit(**fm)
def nb_stem_conv(data, kernel, out):
    """Stride 2, pad 3: one output row per task."""
    F, C, KH, KW = kernel.shape
    H, W = out.shape[2], out.shape[3]
    Hi, Wi = data.shape[2], data.shape[3]
    for t in prange(F * H):
        f, y = t // H, t % H
        row = np.zeros(W, np.float32)
        for c in range(C):
            for ky in range(KH):
                iy = 2 * y + ky - 3
                if iy < 0 or iy >= Hi:
                    continue
                for kx in range(KW):
                    x0 = max(0, (3 - kx + 1) // 2)
                    x1 = min(W, (Wi + 3 - kx + 1) // 2)
                    w = kernel[f, c, ky, kx]
                    for x in range(x0, x1):
                        row[x] += data[0, c, iy, 2 * x + kx - 3] * w
        out[0, f, y, :] = row


@njit(**fm)
def nb_maxpool_s2(data, out):
    C, H, W = out.shape[1], out.shape[2], out.shape[3]
    Hi, Wi = data.shape[2], data.shape[3]
    for t in prange(C * H):
        c, y = t // H, t % H
        row = np.full(W, np.float32(-3.4028234663852886e38))
        for ky in range(3):
            iy = 2 * y + ky - 1
            if iy < 0 or iy >= Hi:
                continue
            for kx in range(3):
                x0 = max(0, (1 - kx + 1) // 2)
                x1 = min(W, (Wi + 1 - kx + 1) // 2)
                for x in range(x0, x1):
                    row[x] = max(row[x], data[0, c, iy, 2 * x + kx - 1])
        out[0, c, y, :] = row


@njit(**fm)
def nb_dwconv_nchw(data, kernel, out):
    C, H, W = out.shape[1], out.shape[2], out.shape[3]
    for t in prange(C * H):
        c, y = t // H, t % H
        row = np.zeros(W, np.float32)
        for ky in range(3):
            iy = y + ky - 1
            if iy < 0 or iy >= H:
                continue
            for kx in range(3):
                x0, x1 = max(0, 1 - kx), min(W, W + 1 - kx)
                w = kernel[c, 0, ky, kx]
                for x in range(x0, x1):
                    row[x] += data[0, c, iy, x + kx - 1] * w
        out[0, c, y, :] = row


@njit(**fm)
def nb_pwconv(data, kernel, out):
    F, C = kernel.shape[0], kernel.shape[1]
    H, W = out.shape[2], out.shape[3]
    for t in prange(F * H):
        f, y = t // H, t % H
        row = np.zeros(W, np.float32)
        for c in range(C):
            w = kernel[f, c, 0, 0]
            for x in range(W):
                row[x] += data[0, c, y, x] * w
        out[0, f, y, :] = row


@njit(**fm)
def nb_softmax_rows(A, O):
    m = A.shape[-1]
    A2 = A.reshape(-1, m)
    O2 = O.reshape(-1, m)
    for i in prange(A2.shape[0]):
        mx = np.float32(-3.4028234663852886e38)
        for j in range(m):
            mx = max(mx, A2[i, j])
        s = np.float32(0)
        for j in range(m):
            e = math.exp(A2[i, j] - mx)
            O2[i, j] = e
            s += e
        r = np.float32(1) / s
        for j in range(m):
            O2[i, j] *= r


@njit(**fm)
def nb_bn_relu(data, gamma, beta, mean, var, out):
    C, H, W = data.shape[1], data.shape[2], data.shape[3]
    for c in prange(C):
        sc = gamma[c] / np.sqrt(var[c] + np.float32(1e-5))
        sh = beta[c] - mean[c] * sc
        for y in range(H):
            for x in range(W):
                out[0, c, y, x] = max(data[0, c, y, x] * sc + sh, np.float32(0))


def numba_twins() -> dict[str, Any]:
    """Kernel name -> numba function."""
    return dict(
        dense_fc1000=nb_dense_nt, dense_fc1000_b64=nb_dense_nt, gap_2048_7x7=nb_gap,
        conv3x3_c512_7x7=nb_conv_plane, conv3x3_c256_14x14_relu=nb_conv_bias_relu,
        stem_conv7x7_s2=nb_stem_conv, maxpool3x3_s2=nb_maxpool_s2,
        dwconv3x3_nchw_112=nb_dwconv_nchw, dwconv3x3_nhwc_112=nb_dwconv_nhwc,
        pwconv_32_64_112=nb_pwconv, bert_fc1_gelu=nb_dense_gelu, layernorm_768=nb_layernorm,
        attn_scores_384=nb_attn_scores, softmax_384=nb_softmax_rows,
        softmax_1000=nb_softmax_rows, softmax_1000_b64=nb_softmax_rows, bn_relu_56=nb_bn_relu,
        vit_qkv_197=nb_dense_nt,
    )
