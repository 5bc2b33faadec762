"""numba twins of ``benchmarks/tvm_style15.py``'s kernels: the fastest plain form a numba
user writes (``prange`` over the independent axis, ``fastmath`` on the float kernels a
reassociation may reorder; the integer and argmin kernels need none). The stencils and
filters accumulate a whole output row with the padding taken out of the loop bounds, the
shifted input row taken as a slice (an index ``x + kx - r`` that may be negative keeps
numba's wraparound check in the loop and stops vectorization: 6x slower); the
mean over the middle axis and the softmax over axis 1 walk the reduced axis outermost so
the inner loop runs along the contiguous last axis; the batched 8 x 8 GEMM keeps one scalar
accumulator per element of C (no scratch row allocated per batch: 2x faster). Imported only
when numba is importable."""

# ruff: noqa: E741 - kernel sources kept close to the TVMScript ones

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba import njit, prange

fm = dict(parallel=True, fastmath=True, cache=False)
par = dict(parallel=True, cache=False)


@njit(**par)
def nb_nn_points(Q, P, D, I):
    n, m = Q.shape[0], P.shape[0]
    for i in prange(n):
        qx, qy, qz = Q[i, 0], Q[i, 1], Q[i, 2]
        best = np.float32(3.4028234663852886e38)
        bi = 0
        for j in range(m):
            dx = qx - P[j, 0]
            dy = qy - P[j, 1]
            dz = qz - P[j, 2]
            d = dx * dx + dy * dy + dz * dz
            if d < best:
                best = d
                bi = j
        D[i] = best
        I[i] = bi


@njit(**fm)
def nb_nbody(pos, mass, F):
    n = pos.shape[0]
    for i in prange(n):
        px, py, pz = pos[i, 0], pos[i, 1], pos[i, 2]
        ax = np.float32(0)
        ay = np.float32(0)
        az = np.float32(0)
        for j in range(n):
            dx = pos[j, 0] - px
            dy = pos[j, 1] - py
            dz = pos[j, 2] - pz
            r2 = dx * dx + dy * dy + dz * dz + np.float32(0.01)
            s = mass[j] / (r2 * math.sqrt(r2))
            ax += dx * s
            ay += dy * s
            az += dz * s
        F[i, 0] = ax * mass[i]
        F[i, 1] = ay * mass[i]
        F[i, 2] = az * mass[i]


@njit(**fm)
def nb_rgb_ycbcr(img, M, off, O):
    H, W = img.shape[0], img.shape[1]
    for y in prange(H):
        for x in range(W):
            r, g, b = img[y, x, 0], img[y, x, 1], img[y, x, 2]
            for c in range(3):
                O[y, x, c] = off[c] + M[c, 0] * r + M[c, 1] * g + M[c, 2] * b


@njit(**fm)
def nb_cdot_rows(A, B, O):
    n, K = A.shape[0], A.shape[1]
    for i in prange(n):
        re = np.float32(0)
        im = np.float32(0)
        for k in range(K):
            ar, ai, br, bi = A[i, k, 0], A[i, k, 1], B[i, k, 0], B[i, k, 1]
            re += ar * br - ai * bi
            im += ar * bi + ai * br
        O[i, 0] = re
        O[i, 1] = im


@njit(**fm)
def _filter_rows(A, Wt, O, scale):
    H, W = A.shape
    k = Wt.shape[0]
    r = k // 2
    for y in prange(H):
        row = np.zeros(W, np.float32)
        for ky in range(k):
            iy = y + ky - r
            if iy < 0 or iy >= H:
                continue
            for kx in range(k):
                x0, x1 = max(0, r - kx), min(W, W + r - kx)
                w = Wt[ky, kx]
                # slices keep the indices provably non-negative: no wraparound check, a vector loop
                dst = row[x0:x1]
                src = A[iy, x0 + kx - r:x1 + kx - r]
                for x in range(x1 - x0):
                    dst[x] += src[x] * w
        for x in range(W):
            O[y, x] = row[x] * scale


_ONES7 = np.ones((7, 7), np.float32)
_ONES3 = np.ones((3, 3), np.float32)


def nb_box7x7(A, O):
    _filter_rows(A, _ONES7, O, np.float32(1 / 49))


def nb_gauss11x11(A, Wt, O):
    _filter_rows(A, Wt, O, np.float32(1))


def nb_blur3(A, O):
    _filter_rows(A, _ONES3, O, np.float32(1 / 9))


@njit(**fm)
def nb_conv1d_dil(data, kernel, out):
    C, L = data.shape[1], data.shape[2]
    K = kernel.shape[2]
    for c in prange(C):
        row = np.zeros(L, np.float32)
        for k in range(K):
            sh = 2 * k - 62
            x0, x1 = max(0, -sh), min(L, L - sh)
            w = kernel[c, 0, k]
            dst = row[x0:x1]
            src = data[0, c, x0 + sh:x1 + sh]
            for x in range(x1 - x0):
                dst[x] += src[x] * w
        out[0, c, :] = row


@njit(**fm)
def nb_mean_axis1(X, O):
    A, K, B = X.shape
    for a in prange(A):
        acc = np.zeros(B, np.float32)
        for k in range(K):
            for b in range(B):
                acc[b] += X[a, k, b]
        for b in range(B):
            O[a, b] = acc[b] * np.float32(0.001)


@njit(**par)
def nb_running_mean(X, O):
    n, m = X.shape
    for i in prange(n):
        s = np.float32(0)
        for j in range(m):
            s += X[i, j]
            O[i, j] = s / np.float32(j + 1)


@njit(**fm)
def nb_softmax_axis1(A, O):
    N, K, L = A.shape
    for n in prange(N):
        mx = np.full(L, np.float32(-3.4028234663852886e38))
        for k in range(K):
            for l in range(L):
                mx[l] = max(mx[l], A[n, k, l])
        sm = np.zeros(L, np.float32)
        for k in range(K):
            for l in range(L):
                e = math.exp(A[n, k, l] - mx[l])
                O[n, k, l] = e
                sm[l] += e
        for l in range(L):
            sm[l] = np.float32(1) / sm[l]
        for k in range(K):
            for l in range(L):
                O[n, k, l] *= sm[l]


@njit(**fm)
def nb_bmm_8x8(A, B, C):
    nb = A.shape[0]
    for b in prange(nb):
        for i in range(8):
            for j in range(8):
                s = np.float32(0)
                for k in range(8):
                    s += A[b, i, k] * B[b, k, j]
                C[b, i, j] = s


@njit(**par)
def nb_matvec_i16(A, x, y):
    n, K = A.shape
    for i in prange(n):
        acc = np.int32(0)
        for k in range(K):
            acc += np.int32(A[i, k]) * np.int32(x[k])
        y[i] = acc


@njit(**fm)
def nb_jacobi9(A, O):
    H, W = A.shape
    for i in prange(H):
        if i == 0 or i == H - 1:
            O[i, :] = A[i, :]
            continue
        O[i, 0] = A[i, 0]
        O[i, W - 1] = A[i, W - 1]
        for j in range(1, W - 1):
            edges = A[i - 1, j] + A[i + 1, j] + A[i, j - 1] + A[i, j + 1]
            corners = A[i - 1, j - 1] + A[i - 1, j + 1] + A[i + 1, j - 1] + A[i + 1, j + 1]
            O[i, j] = (0.5 * A[i, j] + 0.1 * edges) + 0.025 * corners


@njit(**fm)
def nb_bspline3(X, O):
    for i in prange(X.shape[0]):
        x = X[i]
        ax = abs(x)
        t = np.float32(2) - ax
        if ax < np.float32(1):
            O[i] = np.float32(0.6666667) - x * x + ax * x * x * np.float32(0.5)
        elif ax < np.float32(2):
            O[i] = t * t * t * np.float32(0.16666667)
        else:
            O[i] = np.float32(0)


@njit(**fm)
def nb_rowl2(X, O):
    m, n = X.shape
    for i in prange(m):
        s = np.float32(0)
        for j in range(n):
            s += X[i, j] * X[i, j]
        r = np.float32(1) / math.sqrt(s + np.float32(1e-12))
        for j in range(n):
            O[i, j] = X[i, j] * r


def numba_twins() -> dict[str, Any]:
    """Kernel name -> numba function."""
    return dict(
        nn_points_argmin=nb_nn_points, nbody_forces=nb_nbody, rgb_ycbcr=nb_rgb_ycbcr,
        cdot_rows=nb_cdot_rows, box7x7_pad=nb_box7x7, gauss11x11=nb_gauss11x11,
        conv1d_dil_k63=nb_conv1d_dil, mean_axis1_mid=nb_mean_axis1,
        running_mean_rows=nb_running_mean, softmax_axis1=nb_softmax_axis1, bmm_8x8=nb_bmm_8x8,
        matvec_i16=nb_matvec_i16, jacobi9_f64=nb_jacobi9, bspline3_select=nb_bspline3,
        rowl2_sym=nb_rowl2, blur3_sym=nb_blur3,
    )
