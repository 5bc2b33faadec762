"""A fifteenth set of TVM-style kernels: forms the other sets leave out -- records read at a
stride in an inner loop (nearest point with argmin over (n, 3) points, n-body forces with a
per-i accumulator buffer, RGB pixels through a 3 x 3 colour matrix, complex (n, 2) dot
products under a ``T.Select`` on the pair axis), windows with many taps (7 x 7 box and
11 x 11 Gaussian filters padding with ``T.if_then_else`` inside the reduction, a dilated
1-D depthwise convolution with k = 63), a reduction over the middle axis (TOPI's mean over
axis 1), a row scan into a per-row ``T.alloc_buffer`` scratch, TOPI's softmax over a
non-contiguous axis, a batched 8 x 8 GEMM, an int16 GEMV accumulating in int32, a float64
9-point stencil, a ``T.Select``-only piecewise cubic B-spline and two symbolic-shape kernels
(``m, n = T.int32(), T.int32()`` with ``T.match_buffer``) -- next to TVM 0.27 and numba.

Run the same way as ``tvm_style.py`` .. ``tvm_style14.py``: our ``tvmscript.build`` with
default options, TVM 0.27 on the *same source* (``tirx``, host ``mcpu``) and the fastest
numba twin (``_numba_tvm_style15.py``).
The kernels: the nearest of 4096 points for each of 2048 queries (distance and index), the
softened gravitational force on 2048 bodies, RGB -> YCbCr of a 1080 x 1920 image, 8192
complex dot products of length 512 stored as (re, im) pairs, a 7 x 7 box filter of
1024 x 1024 (a sum block and a scale block), an 11 x 11 weighted filter of 768 x 768, a
depthwise 1-D convolution of 64 x 8192 with k = 63 and dilation 2 (TOPI's ``PaddedInput``),
the mean of (64, 1000, 64) over axis 1, a running mean along each of 4096 rows of 2048,
softmax over axis 1 of (16, 100, 2048), 32768 products of 8 x 8 matrices, an int16 GEMV
8192 x 2048, a float64 9-point smoothing of 2048 x 2048 (borders copied), a cubic B-spline
of 4M values by nested selects, a row L2 normalisation and a 3 x 3 blur on symbolic shapes
(run on 4096 x 1000 and 2000 x 3000).

Ratios are peer ms / our ms (> 1: we are faster); ``!`` marks an output that differs from
ours. ``--check`` compares every side with a numpy reference instead of timing::

    PYTHONPATH=. /work/peers/bin/python benchmarks/tvm_style15.py [--rounds 3] [--only a,b] [--check]
"""

# ruff: noqa: E501 - TVMScript sources: one statement per line

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import numpy as np

from benchmarks.kernel_sets import KernelSet
from benchmarks.kernel_sets import agrees_closely as agrees
from benchmarks.peers import aligned_copy

SOURCE = r'''
@T.prim_func
def nn_points_argmin(Q: T.Buffer((2048, 3), "float32"), P: T.Buffer((4096, 3), "float32"),
                     D: T.Buffer((2048,), "float32"), I: T.Buffer((2048,), "int32")):
    for i in T.parallel(2048):
        best = T.alloc_buffer((1,), "float32")
        bi = T.alloc_buffer((1,), "int32")
        best[0] = T.float32(3.4028234663852886e+38)
        bi[0] = 0
        for j in range(4096):
            dx = Q[i, 0] - P[j, 0]
            dy = Q[i, 1] - P[j, 1]
            dz = Q[i, 2] - P[j, 2]
            d = dx * dx + dy * dy + dz * dz
            if d < best[0]:
                best[0] = d
                bi[0] = j
        D[i] = best[0]
        I[i] = bi[0]

@T.prim_func
def nbody_forces(pos: T.Buffer((2048, 3), "float32"), mass: T.Buffer((2048,), "float32"),
                 F: T.Buffer((2048, 3), "float32")):
    for i in T.parallel(2048):
        acc = T.alloc_buffer((3,), "float32")
        for c in range(3):
            acc[c] = T.float32(0)
        for j in range(2048):
            dx = pos[j, 0] - pos[i, 0]
            dy = pos[j, 1] - pos[i, 1]
            dz = pos[j, 2] - pos[i, 2]
            r2 = dx * dx + dy * dy + dz * dz + T.float32(0.01)
            s = mass[j] / (r2 * T.sqrt(r2))
            acc[0] = acc[0] + dx * s
            acc[1] = acc[1] + dy * s
            acc[2] = acc[2] + dz * s
        for c in range(3):
            F[i, c] = acc[c] * mass[i]

@T.prim_func
def rgb_ycbcr(img: T.Buffer((1080, 1920, 3), "float32"), M: T.Buffer((3, 3), "float32"),
              off: T.Buffer((3,), "float32"), O: T.Buffer((1080, 1920, 3), "float32")):
    for y, x, c, k in T.grid(1080, 1920, 3, 3):
        with T.block("O"):
            v_y, v_x, v_c, v_k = T.axis.remap("SSSR", [y, x, c, k])
            with T.init():
                O[v_y, v_x, v_c] = off[v_c]
            O[v_y, v_x, v_c] = O[v_y, v_x, v_c] + M[v_c, v_k] * img[v_y, v_x, v_k]

@T.prim_func
def cdot_rows(A: T.Buffer((8192, 512, 2), "float32"), B: T.Buffer((8192, 512, 2), "float32"),
              O: T.Buffer((8192, 2), "float32")):
    for i, c, k in T.grid(8192, 2, 512):
        with T.block("O"):
            v_i, v_c, v_k = T.axis.remap("SSR", [i, c, k])
            with T.init():
                O[v_i, v_c] = T.float32(0)
            O[v_i, v_c] = O[v_i, v_c] + T.Select(v_c == 0, A[v_i, v_k, 0] * B[v_i, v_k, 0] - A[v_i, v_k, 1] * B[v_i, v_k, 1], A[v_i, v_k, 0] * B[v_i, v_k, 1] + A[v_i, v_k, 1] * B[v_i, v_k, 0])

@T.prim_func
def box7x7_pad(A: T.Buffer((1024, 1024), "float32"), O: T.Buffer((1024, 1024), "float32")):
    S = T.alloc_buffer((1024, 1024))
    for i, j, di, dj in T.grid(1024, 1024, 7, 7):
        with T.block("S"):
            v_i, v_j, v_di, v_dj = T.axis.remap("SSRR", [i, j, di, dj])
            with T.init():
                S[v_i, v_j] = T.float32(0)
            S[v_i, v_j] = S[v_i, v_j] + T.if_then_else(3 <= v_i + v_di and v_i + v_di < 1027 and 3 <= v_j + v_dj and v_j + v_dj < 1027, A[v_i + v_di - 3, v_j + v_dj - 3], T.float32(0))
    for i, j in T.grid(1024, 1024):
        with T.block("O"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            O[v_i, v_j] = S[v_i, v_j] * T.float32(0.02040816326530612)

@T.prim_func
def gauss11x11(A: T.Buffer((768, 768), "float32"), Wt: T.Buffer((11, 11), "float32"),
               O: T.Buffer((768, 768), "float32")):
    for i, j, di, dj in T.grid(768, 768, 11, 11):
        with T.block("O"):
            v_i, v_j, v_di, v_dj = T.axis.remap("SSRR", [i, j, di, dj])
            with T.init():
                O[v_i, v_j] = T.float32(0)
            O[v_i, v_j] = O[v_i, v_j] + T.if_then_else(5 <= v_i + v_di and v_i + v_di < 773 and 5 <= v_j + v_dj and v_j + v_dj < 773, A[v_i + v_di - 5, v_j + v_dj - 5], T.float32(0)) * Wt[v_di, v_dj]

@T.prim_func
def conv1d_dil_k63(data: T.Buffer((1, 64, 8192), "float32"), kernel: T.Buffer((64, 1, 63), "float32"),
                   out: T.Buffer((1, 64, 8192), "float32")):
    PaddedInput = T.alloc_buffer((1, 64, 8316))
    for i0, i1, i2 in T.grid(1, 64, 8316):
        with T.block("PaddedInput"):
            v_i0, v_i1, v_i2 = T.axis.remap("SSS", [i0, i1, i2])
            PaddedInput[v_i0, v_i1, v_i2] = T.if_then_else(62 <= v_i2 and v_i2 < 8254, data[v_i0, v_i1, v_i2 - 62], T.float32(0))
    for b, c, x, k in T.grid(1, 64, 8192, 63):
        with T.block("out"):
            v_b, v_c, v_x, v_k = T.axis.remap("SSSR", [b, c, x, k])
            with T.init():
                out[v_b, v_c, v_x] = T.float32(0)
            out[v_b, v_c, v_x] = out[v_b, v_c, v_x] + PaddedInput[v_b, v_c, v_x + v_k * 2] * kernel[v_c, 0, v_k]

@T.prim_func
def mean_axis1_mid(X: T.Buffer((64, 1000, 64), "float32"), T_divide: T.Buffer((64, 64), "float32")):
    X_red = T.alloc_buffer((64, 64))
    for ax0, ax1, k1 in T.grid(64, 64, 1000):
        with T.block("X_red"):
            v_ax0, v_ax1, v_k1 = T.axis.remap("SSR", [ax0, ax1, k1])
            with T.init():
                X_red[v_ax0, v_ax1] = T.float32(0)
            X_red[v_ax0, v_ax1] = X_red[v_ax0, v_ax1] + X[v_ax0, v_k1, v_ax1]
    for ax0, ax1 in T.grid(64, 64):
        with T.block("T_divide"):
            v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
            T_divide[v_ax0, v_ax1] = X_red[v_ax0, v_ax1] * T.float32(0.001)

@T.prim_func
def running_mean_rows(X: T.Buffer((4096, 2048), "float32"), O: T.Buffer((4096, 2048), "float32")):
    for i in T.parallel(4096):
        s = T.alloc_buffer((2048,), "float32")
        s[0] = X[i, 0]
        for j in range(1, 2048):
            s[j] = s[j - 1] + X[i, j]
        for j in range(2048):
            O[i, j] = s[j] / T.Cast("float32", j + 1)

@T.prim_func
def softmax_axis1(A: T.Buffer((16, 100, 2048), "float32"), T_softmax_norm: T.Buffer((16, 100, 2048), "float32")):
    T_softmax_maxelem = T.alloc_buffer((16, 2048))
    T_softmax_exp = T.alloc_buffer((16, 100, 2048))
    T_softmax_expsum = T.alloc_buffer((16, 2048))
    for i0, i2, k in T.grid(16, 2048, 100):
        with T.block("T_softmax_maxelem"):
            v_i0, v_i2, v_k = T.axis.remap("SSR", [i0, i2, k])
            with T.init():
                T_softmax_maxelem[v_i0, v_i2] = T.float32(-3.4028234663852886e+38)
            T_softmax_maxelem[v_i0, v_i2] = T.max(T_softmax_maxelem[v_i0, v_i2], A[v_i0, v_k, v_i2])
    for i0, i1, i2 in T.grid(16, 100, 2048):
        with T.block("T_softmax_exp"):
            v_i0, v_i1, v_i2 = T.axis.remap("SSS", [i0, i1, i2])
            T_softmax_exp[v_i0, v_i1, v_i2] = T.exp(A[v_i0, v_i1, v_i2] - T_softmax_maxelem[v_i0, v_i2])
    for i0, i2, k in T.grid(16, 2048, 100):
        with T.block("T_softmax_expsum"):
            v_i0, v_i2, v_k = T.axis.remap("SSR", [i0, i2, k])
            with T.init():
                T_softmax_expsum[v_i0, v_i2] = T.float32(0)
            T_softmax_expsum[v_i0, v_i2] = T_softmax_expsum[v_i0, v_i2] + T_softmax_exp[v_i0, v_k, v_i2]
    for i0, i1, i2 in T.grid(16, 100, 2048):
        with T.block("T_softmax_norm"):
            v_i0, v_i1, v_i2 = T.axis.remap("SSS", [i0, i1, i2])
            T_softmax_norm[v_i0, v_i1, v_i2] = T_softmax_exp[v_i0, v_i1, v_i2] / T_softmax_expsum[v_i0, v_i2]

@T.prim_func
def bmm_8x8(A: T.Buffer((32768, 8, 8), "float32"), B: T.Buffer((32768, 8, 8), "float32"),
            C: T.Buffer((32768, 8, 8), "float32")):
    for b, i, j, k in T.grid(32768, 8, 8, 8):
        with T.block("C"):
            v_b, v_i, v_j, v_k = T.axis.remap("SSSR", [b, i, j, k])
            with T.init():
                C[v_b, v_i, v_j] = T.float32(0)
            C[v_b, v_i, v_j] = C[v_b, v_i, v_j] + A[v_b, v_i, v_k] * B[v_b, v_k, v_j]

@T.prim_func
def matvec_i16(A: T.Buffer((8192, 2048), "int16"), x: T.Buffer((2048,), "int16"),
               y: T.Buffer((8192,), "int32")):
    for i, k in T.grid(8192, 2048):
        with T.block("y"):
            v_i, v_k = T.axis.remap("SR", [i, k])
            with T.init():
                y[v_i] = 0
            y[v_i] = y[v_i] + T.Cast("int32", A[v_i, v_k]) * T.Cast("int32", x[v_k])

@T.prim_func
def jacobi9_f64(A: T.Buffer((2048, 2048), "float64"), O: T.Buffer((2048, 2048), "float64")):
    for i, j in T.grid(2048, 2048):
        with T.block("O"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            O[v_i, v_j] = T.if_then_else(1 <= v_i and v_i < 2047 and 1 <= v_j and v_j < 2047, T.float64(0.5) * A[v_i, v_j] + T.float64(0.1) * (A[v_i - 1, v_j] + A[v_i + 1, v_j] + A[v_i, v_j - 1] + A[v_i, v_j + 1]) + T.float64(0.025) * (A[v_i - 1, v_j - 1] + A[v_i - 1, v_j + 1] + A[v_i + 1, v_j - 1] + A[v_i + 1, v_j + 1]), A[v_i, v_j])

@T.prim_func
def bspline3_select(X: T.Buffer((4194304,), "float32"), O: T.Buffer((4194304,), "float32")):
    for i in range(4194304):
        with T.block("O"):
            v_i = T.axis.spatial(4194304, i)
            O[v_i] = T.Select(T.abs(X[v_i]) < T.float32(1), T.float32(0.66666668653488159) - X[v_i] * X[v_i] + T.abs(X[v_i]) * X[v_i] * X[v_i] * T.float32(0.5), T.Select(T.abs(X[v_i]) < T.float32(2), (T.float32(2) - T.abs(X[v_i])) * (T.float32(2) - T.abs(X[v_i])) * (T.float32(2) - T.abs(X[v_i])) * T.float32(0.16666667163372040), T.float32(0)))

@T.prim_func
def rowl2_sym(x: T.handle, o: T.handle):
    m, n = T.int32(), T.int32()
    X = T.match_buffer(x, (m, n), "float32")
    O = T.match_buffer(o, (m, n), "float32")
    ssq = T.alloc_buffer((m,))
    for i, k in T.grid(m, n):
        with T.block("ssq"):
            v_i, v_k = T.axis.remap("SR", [i, k])
            with T.init():
                ssq[v_i] = T.float32(0)
            ssq[v_i] = ssq[v_i] + X[v_i, v_k] * X[v_i, v_k]
    for i, j in T.grid(m, n):
        with T.block("O"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            O[v_i, v_j] = X[v_i, v_j] / T.sqrt(ssq[v_i] + T.float32(9.9999999999999998e-13))

@T.prim_func
def blur3_sym(a: T.handle, o: T.handle):
    m, n = T.int32(), T.int32()
    A = T.match_buffer(a, (m, n), "float32")
    O = T.match_buffer(o, (m, n), "float32")
    for i, j, di, dj in T.grid(m, n, 3, 3):
        with T.block("O"):
            v_i, v_j, v_di, v_dj = T.axis.remap("SSRR", [i, j, di, dj])
            with T.init():
                O[v_i, v_j] = T.float32(0)
            O[v_i, v_j] = O[v_i, v_j] + T.if_then_else(1 <= v_i + v_di and v_i + v_di <= m and 1 <= v_j + v_dj and v_j + v_dj <= n, A[v_i + v_di - 1, v_j + v_dj - 1], T.float32(0)) * T.float32(0.1111111119389534)
'''

#: How many trailing arguments of a kernel are outputs (1 unless listed).
OUTPUTS: dict[str, int] = {"nn_points_argmin": 2}

#: Kernels TVM 0.27 refuses however they are written (their ``tvm`` cell stays empty).
TVM_REFUSES: dict[str, str] = {}


def inputs(seed: int = 0) -> dict[str, list[np.ndarray]]:
    """Arguments of every kernel, 64-byte aligned (outputs last)."""
    rng = np.random.default_rng(seed)

    f = lambda *s: rng.standard_normal(s).astype("float32")  # noqa: E731
    z = lambda *s, dt="float32": np.zeros(s, dt)  # noqa: E731
    ycc = np.array([[0.299, 0.587, 0.114], [-0.168736, -0.331264, 0.5], [0.5, -0.418688, -0.081312]], "float32")
    g = np.exp(-((np.arange(11) - 5) ** 2) / 8.0)
    gauss = np.outer(g, g) / np.outer(g, g).sum()
    raw = {
        "nn_points_argmin": [rng.uniform(0, 1, (2048, 3)).astype("float32"),
                             rng.uniform(0, 1, (4096, 3)).astype("float32"), z(2048), z(2048, dt="int32")],
        "nbody_forces": [rng.uniform(-1, 1, (2048, 3)).astype("float32"),
                         rng.uniform(0.5, 1.5, 2048).astype("float32"), z(2048, 3)],
        "rgb_ycbcr": [rng.uniform(0, 255, (1080, 1920, 3)).astype("float32"), ycc,
                      np.array([0, 128, 128], "float32"), z(1080, 1920, 3)],
        "cdot_rows": [f(8192, 512, 2), f(8192, 512, 2), z(8192, 2)],
        "box7x7_pad": [f(1024, 1024), z(1024, 1024)],
        "gauss11x11": [f(768, 768), gauss.astype("float32"), z(768, 768)],
        "conv1d_dil_k63": [f(1, 64, 8192), f(64, 1, 63) * np.float32(0.1), z(1, 64, 8192)],
        "mean_axis1_mid": [f(64, 1000, 64), z(64, 64)],
        "running_mean_rows": [f(4096, 2048), z(4096, 2048)],
        "softmax_axis1": [f(16, 100, 2048) * np.float32(2), z(16, 100, 2048)],
        "bmm_8x8": [f(32768, 8, 8), f(32768, 8, 8), z(32768, 8, 8)],
        "matvec_i16": [rng.integers(-1000, 1000, (8192, 2048)).astype("int16"),
                       rng.integers(-1000, 1000, 2048).astype("int16"), z(8192, dt="int32")],
        "jacobi9_f64": [rng.standard_normal((2048, 2048)), z(2048, 2048, dt="float64")],
        "bspline3_select": [rng.uniform(-3, 3, 4194304).astype("float32"), z(4194304)],
        "rowl2_sym": [f(4096, 1000), z(4096, 1000)],
        "blur3_sym": [f(2000, 3000), z(2000, 3000)],
    }
    return {name: [aligned_copy(a) for a in args] for name, args in raw.items()}


def _filter2d(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Correlation of ``x`` with ``w`` (odd square), zero padding, same size."""
    r = w.shape[0] // 2
    H, W = x.shape
    p = np.pad(x, r)
    return sum(p[dy:dy + H, dx:dx + W] * w[dy, dx] for dy in range(2 * r + 1) for dx in range(2 * r + 1))


def _bspline3(x: np.ndarray) -> np.ndarray:
    ax = np.abs(x)
    return np.where(ax < 1, 2 / 3 - x * x + ax ** 3 / 2, np.where(ax < 2, (2 - ax) ** 3 / 6, 0))


def reference(name: str, args: list[np.ndarray]) -> list[np.ndarray]:
    """numpy's outputs of ``name`` on ``args`` (float64, or the integer outputs exactly)."""
    a = [x.astype("float64") for x in args]
    if name == "nn_points_argmin":
        # the float32 distances (as the kernels compute them) pick the index; ties go to the first
        q, p = args[0], args[1]
        d = np.zeros((q.shape[0], p.shape[0]), "float32")
        for c in range(3):
            t = q[:, None, c] - p[None, :, c]
            d += t * t
        idx = d.argmin(1)
        return [((a[0] - a[1][idx]) ** 2).sum(1), idx]
    if name == "nbody_forces":
        p, m = a[0], a[1]
        d = p[None, :, :] - p[:, None, :]
        r2 = (d * d).sum(-1) + 0.01
        s = m[None, :] / (r2 * np.sqrt(r2))
        return [(d * s[:, :, None]).sum(1) * m[:, None]]
    if name == "rgb_ycbcr":
        return [a[0] @ a[1].T + a[2]]
    if name == "cdot_rows":
        za = a[0][..., 0] + 1j * a[0][..., 1]
        zb = a[1][..., 0] + 1j * a[1][..., 1]
        s = (za * zb).sum(1)
        return [np.stack([s.real, s.imag], 1)]
    if name == "box7x7_pad":
        return [_filter2d(a[0], np.full((7, 7), 1 / 49))]
    if name == "gauss11x11":
        return [_filter2d(a[0], a[1])]
    if name == "conv1d_dil_k63":
        x = np.pad(a[0], ((0, 0), (0, 0), (62, 62)))
        return [sum(x[:, :, 2 * k:2 * k + 8192] * a[1][None, :, 0, k, None] for k in range(63))]
    if name == "mean_axis1_mid":
        return [a[0].mean(1)]
    if name == "running_mean_rows":
        return [np.cumsum(a[0], 1) / np.arange(1, 2049)]
    if name == "softmax_axis1":
        e = np.exp(a[0] - a[0].max(1, keepdims=True))
        return [e / e.sum(1, keepdims=True)]
    if name == "bmm_8x8":
        return [a[0] @ a[1]]
    if name == "matvec_i16":
        return [args[0].astype("int64") @ args[1].astype("int64")]
    if name == "jacobi9_f64":
        x = a[0]
        o = x.copy()
        c = x[1:-1, 1:-1]
        o[1:-1, 1:-1] = (0.5 * c + 0.1 * (x[:-2, 1:-1] + x[2:, 1:-1] + x[1:-1, :-2] + x[1:-1, 2:])
                         + 0.025 * (x[:-2, :-2] + x[:-2, 2:] + x[2:, :-2] + x[2:, 2:]))
        return [o]
    if name == "bspline3_select":
        return [_bspline3(a[0])]
    if name == "rowl2_sym":
        return [a[0] / np.sqrt((a[0] ** 2).sum(1, keepdims=True) + 1e-12)]
    if name == "blur3_sym":
        return [_filter2d(a[0], np.full((3, 3), 1 / 9))]
    raise KeyError(name)


KERNELS = KernelSet(
    tag="tvm_style15",
    source=SOURCE,
    numba_module="benchmarks._numba_tvm_style15",
    inputs=inputs,
    reference=reference,
    agrees=agrees,
    outputs=OUTPUTS,
    tvm_refuses=TVM_REFUSES,
)
"""The set's driver (``benchmarks/kernel_sets.py``)."""


if __name__ == "__main__":
    KERNELS.main(__doc__)
