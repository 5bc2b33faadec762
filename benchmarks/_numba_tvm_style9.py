"""numba twins of ``benchmarks/tvm_style9.py``'s kernels: the fastest plain form a numba user
writes (``prange`` over the independent axis, ``fastmath`` where the kernel allows it; the
convolutions accumulate an output row of 56 x 8 with the padding tested per tap, the
reductions keep scalar accumulators). Imported only when numba is importable."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba import njit, prange

fm = dict(parallel=True, fastmath=True, cache=False)


@njit(**fm)
def nb_conv2d_nchwc(data, kernel, out):
    for t in prange(8 * 56):
        q, oh = t // 56, t % 56
        acc = np.zeros((56, 8), np.float32)
        for c in range(8):
            for kh in range(3):
                ih = oh + kh - 1
                if ih < 0 or ih >= 56:
                    continue
                for kw in range(3):
                    for ow in range(56):
                        iw = ow + kw - 1
                        if iw < 0 or iw >= 56:
                            continue
                        for i in range(8):
                            d = data[0, c, ih, iw, i]
                            for o in range(8):
                                acc[ow, o] += d * kernel[q, c, kh, kw, i, o]
        out[0, q, oh] = acc


@njit(**fm)
def nb_dwconv_nchwc(data, kernel, out):
    for t in prange(8 * 56):
        q, oh = t // 56, t % 56
        acc = np.zeros((56, 8), np.float32)
        for kh in range(3):
            ih = oh + kh - 1
            if ih < 0 or ih >= 56:
                continue
            for kw in range(3):
                for ow in range(56):
                    iw = ow + kw - 1
                    if iw < 0 or iw >= 56:
                        continue
                    for o in range(8):
                        acc[ow, o] += data[0, q, ih, iw, o] * kernel[q, 0, kh, kw, 0, o]
        out[0, q, oh] = acc


@njit(**fm)
def nb_depth_to_space(data, out):
    for t in prange(16 * 224):
        c, y = t // 224, t % 224
        for x in range(224):
            out[0, c, y, x] = data[0, ((y % 2) * 2 + x % 2) * 16 + c, y // 2, x // 2]


@njit(**fm)
def nb_gelu_erf(x, out):
    n, m = x.shape
    for i in prange(n):
        for j in range(m):
            v = x[i, j]
            erf = math.erf(v * np.float32(0.70710678118654757))
            out[i, j] = np.float32(0.5) * v * (np.float32(1) + erf)


@njit(**fm)
def nb_lstm_gates(g, c, c_next, h_next):
    n, h = c.shape
    for i in prange(n):
        for j in range(h):
            ig = 1 / (1 + np.exp(-g[i, j]))
            fg = 1 / (1 + np.exp(-g[i, j + h]))
            og = 1 / (1 + np.exp(-g[i, j + 2 * h]))
            cn = fg * c[i, j] + ig * np.tanh(g[i, j + 3 * h])
            c_next[i, j] = cn
            h_next[i, j] = og * np.tanh(cn)


@njit(**fm)
def nb_global_maxpool(data, out):
    n, ch, hh, ww = data.shape
    for t in prange(n * ch):
        b, c = t // ch, t % ch
        m = np.float32(-3.4028234663852886e38)
        for y in range(hh):
            for x in range(ww):
                m = max(m, data[b, c, y, x])
        out[b, c, 0, 0] = m


@njit(**fm)
def nb_flip_last(data, out):
    n, m = data.shape
    for i in prange(n):
        for j in range(m):
            out[i, j] = data[i, m - 1 - j]


@njit(**fm)
def nb_im2col(data, col):
    for r in prange(576):
        c, kh, kw = r // 9, r % 9 // 3, r % 3
        for y in range(56):
            iy = y + kh - 1
            for x in range(56):
                ix = x + kw - 1
                if 0 <= iy < 56 and 0 <= ix < 56:
                    col[r, y * 56 + x] = data[0, c, iy, ix]
                else:
                    col[r, y * 56 + x] = 0


@njit(**fm)
def nb_strided_slice(data, out):
    n, m = out.shape
    for i in prange(n):
        for j in range(m):
            out[i, j] = data[2 * i + 1, 3 * j]


@njit(**fm)
def nb_log_softmax(x, out):
    n, m = x.shape
    for i in prange(n):
        mx = np.float32(-3.4028234663852886e38)
        for j in range(m):
            mx = max(mx, x[i, j])
        s = np.float32(0)
        for j in range(m):
            s += np.exp(x[i, j] - mx)
        ls = np.log(s)
        for j in range(m):
            out[i, j] = x[i, j] - mx - ls


@njit(**fm)
def nb_group_conv2d(data, kernel, out):
    for t in prange(64 * 56):
        f, y = t // 56, t % 56
        g = f // 16
        row = np.zeros(56, np.float32)
        for c in range(16):
            for kh in range(3):
                iy = y + kh - 1
                if iy < 0 or iy >= 56:
                    continue
                for kw in range(3):
                    w = kernel[f, c, kh, kw]
                    lo = max(0, 1 - kw)
                    hi = min(56, 57 - kw)
                    for x in range(lo, hi):
                        row[x] += data[0, g * 16 + c, iy, x + kw - 1] * w
        out[0, f, y] = row


@njit(**fm)
def nb_conv2d_transpose(data, kernel, out):
    # out[o, y, x] sums data[c, iy, ix] * kernel[c, o, kh, kw] over 2 * iy - 1 + kh == y
    for t in prange(32 * 64):
        o, y = t // 64, t % 64
        row = np.zeros(64, np.float32)
        for kh in range(4):
            if (y + 1 - kh) % 2 != 0:
                continue
            iy = (y + 1 - kh) // 2
            if iy < 0 or iy >= 32:
                continue
            for c in range(64):
                for kw in range(4):
                    w = kernel[c, o, kh, kw]
                    for x in range((kw + 1) % 2, 64, 2):
                        ix = (x + 1 - kw) // 2
                        if 0 <= ix < 32:
                            row[x] += data[0, c, iy, ix] * w
        out[0, o, y] = row


def numba_twins() -> dict[str, Any]:
    """Kernel name -> numba function."""
    return dict(conv2d_nchwc=nb_conv2d_nchwc, dwconv_nchwc=nb_dwconv_nchwc,
                depth_to_space=nb_depth_to_space, gelu_erf=nb_gelu_erf,
                lstm_gates=nb_lstm_gates, global_maxpool=nb_global_maxpool,
                flip_last=nb_flip_last, im2col=nb_im2col, strided_slice=nb_strided_slice,
                log_softmax=nb_log_softmax, group_conv2d=nb_group_conv2d,
                conv2d_transpose=nb_conv2d_transpose)
