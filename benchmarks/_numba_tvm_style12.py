"""numba twins of ``benchmarks/tvm_style12.py``'s kernels: the fastest plain form a numba
user writes (``prange`` over the independent axis, ``fastmath`` where the kernel allows it,
none where integer, rounding or summation-order semantics matter; the scans run rows in
parallel and columns in parallel slices, the stencils one output row per task, the
popcount is the bit-twiddling form LLVM recognizes as ``ctpop``, the binary and float
matmuls accumulate a row of outputs). Imported only when numba is importable."""

# ruff: noqa: E741 - kernel sources kept close to the TVMScript ones

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba import njit, prange

fm = dict(parallel=True, fastmath=True, cache=False)
par = dict(parallel=True, cache=False)


@njit(**par)
def nb_integral_image_u8(I, S):
    n, m = I.shape
    for i in prange(n):
        s = np.int32(0)
        for j in range(m):
            s += np.int32(I[i, j])
            S[i, j] = s
    for j0 in prange(m // 64):
        for i in range(1, n):
            for j in range(j0 * 64, j0 * 64 + 64):
                S[i, j] += S[i - 1, j]


@njit(**par)
def nb_erode3x3_u8(A, B):
    h, w = B.shape
    for i in prange(h):
        for j in range(w):
            r = A[i, j]
            for di in range(3):
                for dj in range(3):
                    r = min(r, A[i + di, j + dj])
            B[i, j] = r


@njit(**par)
def nb_median3x3_u8(A, B):
    h, w = B.shape
    for i in prange(h):
        v = np.empty(9, np.uint8)
        for j in range(w):
            for di in range(3):
                for dj in range(3):
                    v[di * 3 + dj] = A[i + di, j + dj]
            for p in range(5):
                for q in range(p + 1, 9):
                    lo = min(v[p], v[q])
                    v[q] = max(v[p], v[q])
                    v[p] = lo
            B[i, j] = v[4]


@njit(**fm)
def nb_sobel_mag_u8(A, mag):
    h, w = mag.shape
    for i in prange(h):
        for j in range(w):
            gx = (np.float32(A[i, j + 2]) - np.float32(A[i, j])
                  + np.float32(2) * (np.float32(A[i + 1, j + 2]) - np.float32(A[i + 1, j]))
                  + np.float32(A[i + 2, j + 2]) - np.float32(A[i + 2, j]))
            gy = (np.float32(A[i + 2, j]) - np.float32(A[i, j])
                  + np.float32(2) * (np.float32(A[i + 2, j + 1]) - np.float32(A[i, j + 1]))
                  + np.float32(A[i + 2, j + 2]) - np.float32(A[i, j + 2]))
            mag[i, j] = math.sqrt(gx * gx + gy * gy)


@njit(**fm)
def nb_grid_sample_bilinear(data, grid, out):
    N, C, H, W = data.shape
    for t in prange(N * H):
        n, h = t // H, t % H
        for w in range(W):
            x = (grid[n, 0, h, w] + np.float32(1)) * np.float32(63.5)
            y = (grid[n, 1, h, w] + np.float32(1)) * np.float32(63.5)
            fx0, fy0 = math.floor(x), math.floor(y)
            x0, y0 = int(fx0), int(fy0)
            ax, ay = x - fx0, y - fy0
            w00 = (np.float32(1) - ax) * (np.float32(1) - ay)
            w01 = ax * (np.float32(1) - ay)
            w10 = (np.float32(1) - ax) * ay
            w11 = ax * ay
            iny0, iny1 = 0 <= y0 < H, 0 <= y0 + 1 < H
            inx0, inx1 = 0 <= x0 < W, 0 <= x0 + 1 < W
            for c in range(C):
                s = np.float32(0)
                if iny0 and inx0:
                    s += data[n, c, y0, x0] * w00
                if iny0 and inx1:
                    s += data[n, c, y0, x0 + 1] * w01
                if iny1 and inx0:
                    s += data[n, c, y0 + 1, x0] * w10
                if iny1 and inx1:
                    s += data[n, c, y0 + 1, x0 + 1] * w11
                out[n, c, h, w] = s


@njit(**fm)
def nb_maxpool3d_ncdhw(data, out):
    N, C, D, H, W = out.shape
    for t in prange(N * C * D):
        n, c, z = t // (C * D), (t // D) % C, t % D
        for y in range(H):
            for x in range(W):
                m = np.float32(-3.4028234663852886e38)
                for a in range(2):
                    for b in range(2):
                        for e in range(2):
                            m = max(m, data[n, c, 2 * z + a, 2 * y + b, 2 * x + e])
                out[n, c, z, y, x] = m


@njit(**fm)
def nb_attention_te(Q, K, V, O):
    B, S, D = Q.shape
    for t in prange(B * S):
        b, i = t // S, t % S
        s = np.empty(S, np.float32)
        mx = np.float32(-3.4028234663852886e38)
        for j in range(S):
            acc = np.float32(0)
            for k in range(D):
                acc += Q[b, i, k] * np.float32(0.125) * K[b, j, k]
            s[j] = acc
            mx = max(mx, acc)
        tot = np.float32(0)
        for j in range(S):
            s[j] = math.exp(s[j] - mx)
            tot += s[j]
        row = np.zeros(D, np.float32)
        for j in range(S):
            p = s[j] / tot
            for d in range(D):
                row[d] += p * V[b, j, d]
        O[b, i, :] = row


@njit(**fm)
def nb_einsum_nchw_kchw(X, W, out):
    N = X.shape[0]
    K = W.shape[0]
    L = X.shape[1] * X.shape[2] * X.shape[3]
    x2 = X.reshape(N, L)
    w2 = W.reshape(K, L)
    for n in prange(N):
        for k in range(K):
            acc = np.float32(0)
            for l in range(L):
                acc += x2[n, l] * w2[k, l]
            out[n, k] = acc


@njit(inline="always")
def _popcount32(x):
    x = x - ((x >> np.uint32(1)) & np.uint32(0x55555555))
    x = (x & np.uint32(0x33333333)) + ((x >> np.uint32(2)) & np.uint32(0x33333333))
    x = (x + (x >> np.uint32(4))) & np.uint32(0x0F0F0F0F)
    return np.int32(((x * np.uint32(0x01010101)) >> np.uint32(24)) & np.uint32(0x3F))


@njit(**par)
def nb_xnor_popcount(A, B, C):
    n, kw = A.shape
    m = B.shape[0]
    for i in prange(n):
        for j in range(m):
            acc = np.int32(0)
            for k in range(kw):
                acc += _popcount32(A[i, k] ^ B[j, k])
            C[i, j] = acc


@njit(**par)
def nb_q15_mul_i16(A, B, O):
    n, m = A.shape
    for i in prange(n):
        for j in range(m):
            p = (np.int32(A[i, j]) * np.int32(B[i, j]) + np.int32(16384)) >> np.int32(15)
            O[i, j] = np.int16(min(max(p, np.int32(-32768)), np.int32(32767)))


@njit(**fm)
def nb_layernorm_bwd(dy, x, gamma, mean, rstd, dx):
    n, m = x.shape
    inv = np.float32(1.0 / m)
    for i in prange(n):
        mu, rs = mean[i], rstd[i]
        sg = np.float32(0)
        sgx = np.float32(0)
        for j in range(m):
            g = dy[i, j] * gamma[j]
            sg += g
            sgx += g * ((x[i, j] - mu) * rs)
        a, b = sg * inv, sgx * inv
        for j in range(m):
            g = dy[i, j] * gamma[j]
            dx[i, j] = rs * (g - a - (x[i, j] - mu) * rs * b)


@njit(fastmath=True, cache=False)
def nb_tiny_axpby16(A, B, C):
    for i in range(16):
        for j in range(16):
            C[i, j] = np.float32(2) * A[i, j] + np.float32(3) * B[i, j]


@njit(**fm)
def nb_adam_step(p, grad, m, v, decay, lr, p_out, m_out, v_out):
    n, k = p.shape
    r = lr[0]
    for i in prange(n):
        for j in range(k):
            gw = grad[i, j] + decay[j] * p[i, j]
            mo = np.float32(0.9) * m[i, j] + np.float32(0.1) * gw
            vo = np.float32(0.999) * v[i, j] + np.float32(0.001) * gw * gw
            m_out[i, j] = mo
            v_out[i, j] = vo
            p_out[i, j] = p[i, j] - r * (mo * np.float32(10)) / (
                math.sqrt(vo * np.float32(1000)) + np.float32(1e-8))


@njit(**fm)
def nb_sum16m_chunks(a, out):
    n = a.size
    chunks = 60
    width = (n + chunks - 1) // chunks
    part = np.zeros(chunks, np.float32)
    for c in prange(chunks):
        s = np.float32(0)
        for k in range(c * width, min(n, (c + 1) * width)):
            s += a[k]
        part[c] = s
    t = np.float32(0)
    for c in range(chunks):
        t += part[c]
    out[0] = t


@njit(**fm)
def nb_complex_abs_strided(re, im, out):
    n, m = out.shape
    for i in prange(n):
        for j in range(m):
            out[i, j] = math.sqrt(re[i, j] * re[i, j] + im[i, j] * im[i, j])


def numba_twins() -> dict[str, Any]:
    """Kernel name -> numba function (the float16 softmax has no twin: numba lacks the type)."""
    return dict(
        integral_image_u8=nb_integral_image_u8, erode3x3_u8=nb_erode3x3_u8,
        median3x3_u8=nb_median3x3_u8, sobel_mag_u8=nb_sobel_mag_u8,
        grid_sample_bilinear=nb_grid_sample_bilinear, maxpool3d_ncdhw=nb_maxpool3d_ncdhw,
        attention_te=nb_attention_te, einsum_nchw_kchw=nb_einsum_nchw_kchw,
        xnor_popcount=nb_xnor_popcount, q15_mul_i16=nb_q15_mul_i16,
        layernorm_bwd=nb_layernorm_bwd, tiny_axpby16=nb_tiny_axpby16, adam_step=nb_adam_step,
        sum16m_chunks=nb_sum16m_chunks, complex_abs_strided=nb_complex_abs_strided,
    )
