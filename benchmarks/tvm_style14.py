"""A fourteenth set of TVM-style kernels: forms the other sets leave out -- data-dependent loop
bounds (CSR SpMV, segment sums), data-dependent stores (histogram with private bins, max
unpool), value-and-index reductions (max pool with argmax, top-2 per row), reductions whose
natural loop order walks the wrong stride (batched GEMV with a K x N weight, ``bij,j->bi``
over a 5-wide axis), select-between-neighbours elementwise stages (NeoX RoPE, complex
multiply on interleaved pairs), float16 with float32 accumulation, uint32 bit mixing, int8
NHWC convolution, float64 transcendentals -- next to TVM 0.27 and numba.

Run the same way as ``tvm_style.py`` .. ``tvm_style13.py``: our ``tvmscript.build`` with
default options, TVM 0.27 on the *same source* (``tirx``, host ``mcpu``) and the fastest
numba twin (``_numba_tvm_style14.py``; the float16 kernels have none, numba lacks the type).
The kernels: a batched GEMV whose weight is stored K x N (``y[b,j] = sum_k x[b,k] W[b,k,j]``),
a GEMM with bias and residual-add stages (384 x 768 x 768), a 5 x 5 depthwise convolution
(144 channels, 75 x 75, TOPI's ``PaddedInput``), a 2 x 2 max pool returning value and flat
index (96 x 224 x 224), the max unpool that scatters them back, a half-pixel bilinear resize of NHWC
4 x 60 x 60 x 128 -> 127 x 127 (a parallel nest with lets and a vectorized channel loop), an IoU matrix of
3001 x 1499 boxes, a pairwise L1 distance (512 x 1000 over 67 features), a uint8 histogram
with per-chunk private bins and a combine loop, a top-2 per row (values and indices), an
einsum ``bij,j->bi`` with j = 5, NeoX rotary embedding (``T.if_then_else`` picking the
rotated half), an RMSNorm on float16 accumulating in float32, ShuffleNet's channel shuffle,
a float16 hardswish, a degree-9 Horner polynomial (per-element accumulator), clip by global
norm over three gradients (three reduce-only blocks, then three scale stages), a Conformer
depthwise 1-D convolution with k = 31, a 3 x 3 NHWC convolution on int8 with int32
accumulation, a CSR SpMV (``range(indptr[i], indptr[i + 1])``), a segment sum of rows, a
masked row mean, a float64 transpose of 1999 x 1501, a complex multiply on interleaved
pairs (TE's select over the pair axis), a uint32 hash mix with rotate and popcount, and a
float64 expression of ``exp``/``log``/``tanh``/``sigmoid``/``erf``.

Ratios are peer ms / our ms (> 1: we are faster); ``!`` marks an output that differs from
ours. ``--check`` compares every side with a numpy reference instead of timing::

    PYTHONPATH=. /work/peers/bin/python benchmarks/tvm_style14.py [--rounds 3] [--only a,b] [--check]
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

#: Stored entries of the CSR matrix (rows 65536, 32 per row on average).
NNZ = 2097152

SOURCE = r'''
@T.prim_func
def bgemv_t(x: T.Buffer((8, 1024), "float32"), W: T.Buffer((8, 1024, 1000), "float32"),
            y: T.Buffer((8, 1000), "float32")):
    for b, j, k in T.grid(8, 1000, 1024):
        with T.block("y"):
            v_b, v_j, v_k = T.axis.remap("SSR", [b, j, k])
            with T.init():
                y[v_b, v_j] = T.float32(0)
            y[v_b, v_j] = y[v_b, v_j] + x[v_b, v_k] * W[v_b, v_k, v_j]

@T.prim_func
def gemm_bias_res(A: T.Buffer((384, 768), "float32"), B: T.Buffer((768, 768), "float32"),
                  bias: T.Buffer((768,), "float32"), R: T.Buffer((384, 768), "float32"),
                  T_add_1: T.Buffer((384, 768), "float32")):
    T_matmul = T.alloc_buffer((384, 768))
    T_add = T.alloc_buffer((384, 768))
    for i, j, k in T.grid(384, 768, 768):
        with T.block("T_matmul"):
            v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
            with T.init():
                T_matmul[v_i, v_j] = T.float32(0)
            T_matmul[v_i, v_j] = T_matmul[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]
    for ax0, ax1 in T.grid(384, 768):
        with T.block("T_add"):
            v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
            T_add[v_ax0, v_ax1] = T_matmul[v_ax0, v_ax1] + bias[v_ax1]
    for ax0, ax1 in T.grid(384, 768):
        with T.block("T_add_1"):
            v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
            T_add_1[v_ax0, v_ax1] = T_add[v_ax0, v_ax1] + R[v_ax0, v_ax1]

@T.prim_func
def dwconv5x5_nchw(data: T.Buffer((1, 144, 75, 75), "float32"), Filter: T.Buffer((144, 1, 5, 5), "float32"),
                   DepthwiseConv2d: T.Buffer((1, 144, 75, 75), "float32")):
    PaddedInput = T.alloc_buffer((1, 144, 79, 79))
    for i0, i1, i2, i3 in T.grid(1, 144, 79, 79):
        with T.block("PaddedInput"):
            v_i0, v_i1, v_i2, v_i3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
            PaddedInput[v_i0, v_i1, v_i2, v_i3] = T.if_then_else(2 <= v_i2 and v_i2 < 77 and 2 <= v_i3 and v_i3 < 77, data[v_i0, v_i1, v_i2 - 2, v_i3 - 2], T.float32(0))
    for b, c, i, j, di, dj in T.grid(1, 144, 75, 75, 5, 5):
        with T.block("DepthwiseConv2d"):
            v_b, v_c, v_i, v_j, v_di, v_dj = T.axis.remap("SSSSRR", [b, c, i, j, di, dj])
            with T.init():
                DepthwiseConv2d[v_b, v_c, v_i, v_j] = T.float32(0)
            DepthwiseConv2d[v_b, v_c, v_i, v_j] = DepthwiseConv2d[v_b, v_c, v_i, v_j] + PaddedInput[v_b, v_c, v_i + v_di, v_j + v_dj] * Filter[v_c, 0, v_di, v_dj]

@T.prim_func
def maxpool_argmax(A: T.Buffer((96, 224, 224), "float32"), V: T.Buffer((96, 112, 112), "float32"),
                   I: T.Buffer((96, 112, 112), "int32")):
    for c in T.parallel(96):
        for y, x in T.grid(112, 112):
            mv = T.alloc_buffer((1,), "float32")
            mi = T.alloc_buffer((1,), "int32")
            mv[0] = T.float32(-3.4028234663852886e+38)
            mi[0] = 0
            for dy, dx in T.grid(2, 2):
                if A[c, y * 2 + dy, x * 2 + dx] > mv[0]:
                    mv[0] = A[c, y * 2 + dy, x * 2 + dx]
                    mi[0] = (y * 2 + dy) * 224 + x * 2 + dx
            V[c, y, x] = mv[0]
            I[c, y, x] = mi[0]

@T.prim_func
def max_unpool(V: T.Buffer((96, 112, 112), "float32"), I: T.Buffer((96, 112, 112), "int32"),
               O: T.Buffer((96, 224, 224), "float32")):
    for c in T.parallel(96):
        for y, x in T.grid(224, 224):
            O[c, y, x] = T.float32(0)
        for y, x in T.grid(112, 112):
            O[c, I[c, y, x] // 224, I[c, y, x] % 224] = V[c, y, x]

@T.prim_func
def resize_bilinear_nhwc(A: T.Buffer((4, 60, 60, 128), "float32"), O: T.Buffer((4, 127, 127, 128), "float32")):
    for n in T.parallel(4):
        for y in range(127):
            for x in range(127):
                sy = T.max((T.Cast("float32", y) + T.float32(0.5)) * T.float32(0.47244094488188976) - T.float32(0.5), T.float32(0))
                sx = T.max((T.Cast("float32", x) + T.float32(0.5)) * T.float32(0.47244094488188976) - T.float32(0.5), T.float32(0))
                y0 = T.Cast("int32", T.floor(sy))
                x0 = T.Cast("int32", T.floor(sx))
                y1 = T.min(y0 + 1, 59)
                x1 = T.min(x0 + 1, 59)
                ly = sy - T.Cast("float32", y0)
                lx = sx - T.Cast("float32", x0)
                for c in T.vectorized(128):
                    O[n, y, x, c] = (A[n, y0, x0, c] * (T.float32(1) - lx) + A[n, y0, x1, c] * lx) * (T.float32(1) - ly) + (A[n, y1, x0, c] * (T.float32(1) - lx) + A[n, y1, x1, c] * lx) * ly

@T.prim_func
def iou_matrix(A: T.Buffer((3001, 4), "float32"), B: T.Buffer((1499, 4), "float32"),
               iou: T.Buffer((3001, 1499), "float32")):
    for i, j in T.grid(3001, 1499):
        with T.block("iou"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            w = T.max(T.min(A[v_i, 2], B[v_j, 2]) - T.max(A[v_i, 0], B[v_j, 0]), T.float32(0))
            h = T.max(T.min(A[v_i, 3], B[v_j, 3]) - T.max(A[v_i, 1], B[v_j, 1]), T.float32(0))
            inter = w * h
            area_a = (A[v_i, 2] - A[v_i, 0]) * (A[v_i, 3] - A[v_i, 1])
            area_b = (B[v_j, 2] - B[v_j, 0]) * (B[v_j, 3] - B[v_j, 1])
            iou[v_i, v_j] = inter / (area_a + area_b - inter)

@T.prim_func
def pairwise_l1(X: T.Buffer((512, 67), "float32"), Y: T.Buffer((1000, 67), "float32"),
                D: T.Buffer((512, 1000), "float32")):
    for i, j, k in T.grid(512, 1000, 67):
        with T.block("D"):
            v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
            with T.init():
                D[v_i, v_j] = T.float32(0)
            D[v_i, v_j] = D[v_i, v_j] + T.fabs(X[v_i, v_k] - Y[v_j, v_k])

@T.prim_func
def hist_private(A: T.Buffer((16777216,), "uint8"), H: T.Buffer((256,), "int32")):
    part = T.alloc_buffer((64, 256), "int32")
    for t in T.parallel(64):
        bins = T.alloc_buffer((256,), "int32")
        for b in range(256):
            bins[b] = 0
        for i in range(262144):
            v = T.Cast("int32", A[t * 262144 + i])
            bins[v] = bins[v] + 1
        for b in range(256):
            part[t, b] = bins[b]
    for b in range(256):
        H[b] = 0
        for t in range(64):
            H[b] = H[b] + part[t, b]

@T.prim_func
def top2_rows(X: T.Buffer((4096, 999), "float32"), V: T.Buffer((4096, 2), "float32"),
              I: T.Buffer((4096, 2), "int32")):
    for i in T.parallel(4096):
        v = T.alloc_buffer((2,), "float32")
        ix = T.alloc_buffer((2,), "int32")
        v[0] = T.float32(-3.4028234663852886e+38)
        v[1] = T.float32(-3.4028234663852886e+38)
        ix[0] = 0
        ix[1] = 0
        for j in range(999):
            a = X[i, j]
            if a > v[0]:
                v[1] = v[0]
                ix[1] = ix[0]
                v[0] = a
                ix[0] = j
            else:
                if a > v[1]:
                    v[1] = a
                    ix[1] = j
        V[i, 0] = v[0]
        V[i, 1] = v[1]
        I[i, 0] = ix[0]
        I[i, 1] = ix[1]

@T.prim_func
def einsum_bij_j(X: T.Buffer((1024, 999, 5), "float32"), w: T.Buffer((5,), "float32"),
                 T_einsum: T.Buffer((1024, 999), "float32")):
    for b, i, j in T.grid(1024, 999, 5):
        with T.block("T_einsum"):
            v_b, v_i, v_j = T.axis.remap("SSR", [b, i, j])
            with T.init():
                T_einsum[v_b, v_i] = T.float32(0)
            T_einsum[v_b, v_i] = T_einsum[v_b, v_i] + X[v_b, v_i, v_j] * w[v_j]

@T.prim_func
def rope_neox(x: T.Buffer((1024, 16, 128), "float32"), cos: T.Buffer((1024, 64), "float32"),
              sin: T.Buffer((1024, 64), "float32"), O: T.Buffer((1024, 16, 128), "float32")):
    for s, h, d in T.grid(1024, 16, 128):
        with T.block("rope"):
            v_s, v_h, v_d = T.axis.remap("SSS", [s, h, d])
            O[v_s, v_h, v_d] = x[v_s, v_h, v_d] * cos[v_s, v_d % 64] + T.if_then_else(v_d < 64, T.float32(0) - x[v_s, v_h, v_d + 64], x[v_s, v_h, v_d - 64]) * sin[v_s, v_d % 64]

@T.prim_func
def rmsnorm_f16(X: T.Buffer((4096, 1000), "float16"), gamma: T.Buffer((1000,), "float16"),
                T_rms_norm: T.Buffer((4096, 1000), "float16")):
    T_sq_sum = T.alloc_buffer((4096,))
    for i, k in T.grid(4096, 1000):
        with T.block("T_sq_sum"):
            v_i, v_k = T.axis.remap("SR", [i, k])
            with T.init():
                T_sq_sum[v_i] = T.float32(0)
            T_sq_sum[v_i] = T_sq_sum[v_i] + T.Cast("float32", X[v_i, v_k]) * T.Cast("float32", X[v_i, v_k])
    for i, j in T.grid(4096, 1000):
        with T.block("T_rms_norm"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            T_rms_norm[v_i, v_j] = T.Cast("float16", T.Cast("float32", X[v_i, v_j]) * T.rsqrt(T_sq_sum[v_i] * T.float32(0.001) + T.float32(1e-06)) * T.Cast("float32", gamma[v_j]))

@T.prim_func
def channel_shuffle(data: T.Buffer((16, 232, 28, 28), "float32"), T_shuffle: T.Buffer((16, 232, 28, 28), "float32")):
    for ax0, ax1, ax2, ax3 in T.grid(16, 232, 28, 28):
        with T.block("T_shuffle"):
            v_ax0, v_ax1, v_ax2, v_ax3 = T.axis.remap("SSSS", [ax0, ax1, ax2, ax3])
            T_shuffle[v_ax0, v_ax1, v_ax2, v_ax3] = data[v_ax0, v_ax1 % 2 * 116 + v_ax1 // 2, v_ax2, v_ax3]

@T.prim_func
def hardswish_f16(X: T.Buffer((4096, 1024), "float16"), T_hardswish: T.Buffer((4096, 1024), "float16")):
    for i, j in T.grid(4096, 1024):
        with T.block("T_hardswish"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            T_hardswish[v_i, v_j] = X[v_i, v_j] * T.min(T.max(X[v_i, v_j] + T.float16(3), T.float16(0)), T.float16(6)) * T.float16(0.16666666666666666)

@T.prim_func
def horner9(X: T.Buffer((4194304,), "float32"), c: T.Buffer((10,), "float32"), O: T.Buffer((4194304,), "float32")):
    for i in T.parallel(4194304):
        acc = T.alloc_buffer((1,), "float32")
        acc[0] = c[9]
        for k in range(9):
            acc[0] = acc[0] * X[i] + c[8 - k]
        O[i] = acc[0]

@T.prim_func
def clip_global_norm(g1: T.Buffer((2048, 1024), "float32"), g2: T.Buffer((4093,), "float32"),
                     g3: T.Buffer((777, 1333), "float32"), max_norm: T.Buffer((1,), "float32"),
                     o1: T.Buffer((2048, 1024), "float32"), o2: T.Buffer((4093,), "float32"),
                     o3: T.Buffer((777, 1333), "float32")):
    sq = T.alloc_buffer((3,))
    for i, j in T.grid(2048, 1024):
        with T.block("sq1"):
            v_i, v_j = T.axis.remap("RR", [i, j])
            with T.init():
                sq[0] = T.float32(0)
            sq[0] = sq[0] + g1[v_i, v_j] * g1[v_i, v_j]
    for i in range(4093):
        with T.block("sq2"):
            v_i = T.axis.reduce(4093, i)
            with T.init():
                sq[1] = T.float32(0)
            sq[1] = sq[1] + g2[v_i] * g2[v_i]
    for i, j in T.grid(777, 1333):
        with T.block("sq3"):
            v_i, v_j = T.axis.remap("RR", [i, j])
            with T.init():
                sq[2] = T.float32(0)
            sq[2] = sq[2] + g3[v_i, v_j] * g3[v_i, v_j]
    for i, j in T.grid(2048, 1024):
        with T.block("o1"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            o1[v_i, v_j] = g1[v_i, v_j] * T.min(T.float32(1), max_norm[0] / T.sqrt(sq[0] + sq[1] + sq[2]))
    for i in range(4093):
        with T.block("o2"):
            v_i = T.axis.spatial(4093, i)
            o2[v_i] = g2[v_i] * T.min(T.float32(1), max_norm[0] / T.sqrt(sq[0] + sq[1] + sq[2]))
    for i, j in T.grid(777, 1333):
        with T.block("o3"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            o3[v_i, v_j] = g3[v_i, v_j] * T.min(T.float32(1), max_norm[0] / T.sqrt(sq[0] + sq[1] + sq[2]))

@T.prim_func
def dwconv1d_k31(data: T.Buffer((1, 256, 4000), "float32"), kernel: T.Buffer((256, 1, 31), "float32"),
                 conv1d_ncw: T.Buffer((1, 256, 4000), "float32")):
    pad_temp = T.alloc_buffer((1, 256, 4030))
    for i0, i1, i2 in T.grid(1, 256, 4030):
        with T.block("pad_temp"):
            v_i0, v_i1, v_i2 = T.axis.remap("SSS", [i0, i1, i2])
            pad_temp[v_i0, v_i1, v_i2] = T.if_then_else(15 <= v_i2 and v_i2 < 4015, data[v_i0, v_i1, v_i2 - 15], T.float32(0))
    for nn, cc, xx, rx in T.grid(1, 256, 4000, 31):
        with T.block("conv1d_ncw"):
            v_nn, v_cc, v_xx, v_rx = T.axis.remap("SSSR", [nn, cc, xx, rx])
            with T.init():
                conv1d_ncw[v_nn, v_cc, v_xx] = T.float32(0)
            conv1d_ncw[v_nn, v_cc, v_xx] = conv1d_ncw[v_nn, v_cc, v_xx] + pad_temp[v_nn, v_cc, v_xx + v_rx] * kernel[v_cc, 0, v_rx]

@T.prim_func
def conv3x3_nhwc_i8(data: T.Buffer((1, 28, 28, 96), "int8"), kernel: T.Buffer((3, 3, 96, 96), "int8"),
                    Conv2dOutput: T.Buffer((1, 28, 28, 96), "int32")):
    PaddedInput = T.alloc_buffer((1, 30, 30, 96), "int8")
    for i0, i1, i2, i3 in T.grid(1, 30, 30, 96):
        with T.block("PaddedInput"):
            v_i0, v_i1, v_i2, v_i3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
            PaddedInput[v_i0, v_i1, v_i2, v_i3] = T.if_then_else(1 <= v_i1 and v_i1 < 29 and 1 <= v_i2 and v_i2 < 29, data[v_i0, v_i1 - 1, v_i2 - 1, v_i3], T.int8(0))
    for nn, yy, xx, ff, ry, rx, rc in T.grid(1, 28, 28, 96, 3, 3, 96):
        with T.block("Conv2dOutput"):
            v_nn, v_yy, v_xx, v_ff, v_ry, v_rx, v_rc = T.axis.remap("SSSSRRR", [nn, yy, xx, ff, ry, rx, rc])
            with T.init():
                Conv2dOutput[v_nn, v_yy, v_xx, v_ff] = 0
            Conv2dOutput[v_nn, v_yy, v_xx, v_ff] = Conv2dOutput[v_nn, v_yy, v_xx, v_ff] + T.Cast("int32", PaddedInput[v_nn, v_yy + v_ry, v_xx + v_rx, v_rc]) * T.Cast("int32", kernel[v_ry, v_rx, v_rc, v_ff])

@T.prim_func
def spmv_csr(indptr: T.Buffer((65537,), "int32"), indices: T.Buffer((2097152,), "int32"),
             data: T.Buffer((2097152,), "float32"), x: T.Buffer((65536,), "float32"),
             y: T.Buffer((65536,), "float32")):
    for i in T.parallel(65536):
        acc = T.alloc_buffer((1,), "float32")
        acc[0] = T.float32(0)
        for k in range(indptr[i], indptr[i + 1]):
            acc[0] = acc[0] + data[k] * x[indices[k]]
        y[i] = acc[0]

@T.prim_func
def segment_sum(X: T.Buffer((131072, 64), "float32"), offsets: T.Buffer((4097,), "int32"),
                O: T.Buffer((4096, 64), "float32")):
    for s in T.parallel(4096):
        for d in T.vectorized(64):
            O[s, d] = T.float32(0)
        for r in range(offsets[s], offsets[s + 1]):
            for d in T.vectorized(64):
                O[s, d] = O[s, d] + X[r, d]

@T.prim_func
def masked_mean(X: T.Buffer((4096, 999), "float32"), M: T.Buffer((4096, 999), "uint8"),
                T_masked_mean: T.Buffer((4096,), "float32")):
    T_sum = T.alloc_buffer((4096,))
    T_count = T.alloc_buffer((4096,))
    for i, k in T.grid(4096, 999):
        with T.block("T_sum"):
            v_i, v_k = T.axis.remap("SR", [i, k])
            with T.init():
                T_sum[v_i] = T.float32(0)
            T_sum[v_i] = T_sum[v_i] + T.if_then_else(M[v_i, v_k] != T.uint8(0), X[v_i, v_k], T.float32(0))
    for i, k in T.grid(4096, 999):
        with T.block("T_count"):
            v_i, v_k = T.axis.remap("SR", [i, k])
            with T.init():
                T_count[v_i] = T.float32(0)
            T_count[v_i] = T_count[v_i] + T.Cast("float32", M[v_i, v_k])
    for i in range(4096):
        with T.block("T_masked_mean"):
            v_i = T.axis.spatial(4096, i)
            T_masked_mean[v_i] = T_sum[v_i] / T.max(T_count[v_i], T.float32(1))

@T.prim_func
def transpose_f64(A: T.Buffer((1999, 1501), "float64"), T_transpose: T.Buffer((1501, 1999), "float64")):
    for ax0, ax1 in T.grid(1501, 1999):
        with T.block("T_transpose"):
            v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
            T_transpose[v_ax0, v_ax1] = A[v_ax1, v_ax0]

@T.prim_func
def cmul_interleaved(A: T.Buffer((2097152, 2), "float32"), B: T.Buffer((2097152, 2), "float32"),
                     T_cmul: T.Buffer((2097152, 2), "float32")):
    for i, j in T.grid(2097152, 2):
        with T.block("T_cmul"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            T_cmul[v_i, v_j] = T.if_then_else(v_j == 0, A[v_i, 0] * B[v_i, 0] - A[v_i, 1] * B[v_i, 1], A[v_i, 0] * B[v_i, 1] + A[v_i, 1] * B[v_i, 0])

@T.prim_func
def bitmix_u32(A: T.Buffer((4194304,), "uint32"), B: T.Buffer((4194304,), "uint32"),
               O: T.Buffer((4194304,), "uint32")):
    for i in range(4194304):
        with T.block("O"):
            v_i = T.axis.spatial(4194304, i)
            h = A[v_i] * T.uint32(2654435761)
            g = h ^ (h >> T.uint32(15))
            r = (g << T.uint32(7)) | (g >> T.uint32(25))
            O[v_i] = (r ^ B[v_i]) + T.popcount(A[v_i] & B[v_i])

@T.prim_func
def f64_transcend(X: T.Buffer((2097152,), "float64"), O: T.Buffer((2097152,), "float64")):
    for i in range(2097152):
        with T.block("O"):
            v_i = T.axis.spatial(2097152, i)
            O[v_i] = T.sigmoid(X[v_i]) * T.tanh(X[v_i]) + T.log(T.float64(1) + T.exp(X[v_i])) * T.float64(0.5) + T.erf(X[v_i])
'''

#: Kernel -> how many of its last arguments are outputs (1 unless listed).
OUTPUTS: dict[str, int] = {"maxpool_argmax": 2, "top2_rows": 2, "clip_global_norm": 3}

#: Kernels TVM 0.27 refuses however they are written (their ``tvm`` cell stays empty).
TVM_REFUSES: dict[str, str] = {}


def _csr(rng: np.random.Generator, rows: int, cols: int, nnz: int) -> list[np.ndarray]:
    """A random CSR structure of exactly ``nnz`` entries (row lengths from random cut points)."""
    cuts = np.sort(rng.integers(0, nnz + 1, rows - 1))
    indptr = np.concatenate([[0], cuts, [nnz]]).astype("int32")
    indices = rng.integers(0, cols, nnz).astype("int32")
    return [indptr, indices]


def _boxes(rng: np.random.Generator, n: int) -> np.ndarray:
    xy = rng.uniform(0, 100, (n, 2))
    wh = rng.uniform(1, 30, (n, 2))
    return np.concatenate([xy, xy + wh], 1).astype("float32")


def inputs(seed: int = 0) -> dict[str, list[np.ndarray]]:
    """Arguments of every kernel, 64-byte aligned (outputs last)."""
    rng = np.random.default_rng(seed)

    f = lambda *s: rng.standard_normal(s).astype("float32")  # noqa: E731
    z = lambda *s, dt="float32": np.zeros(s, dt)  # noqa: E731
    pool_in = f(96, 224, 224)
    # the flat index of one element of each 2 x 2 window (what a max pool with argmax gives)
    dy, dx = rng.integers(0, 2, (2, 96, 112, 112))
    yy, xx = np.meshgrid(np.arange(112), np.arange(112), indexing="ij")
    unpool_idx = ((2 * yy + dy) * 224 + 2 * xx + dx).astype("int32")
    indptr, indices = _csr(rng, 65536, 65536, NNZ)
    offsets = np.concatenate([[0], np.sort(rng.integers(0, 131073, 4095)), [131072]]).astype("int32")
    angles = np.arange(1024)[:, None] * (10000.0 ** (-np.arange(64) / 64.0))[None, :]
    raw = {
        "bgemv_t": [f(8, 1024), f(8, 1024, 1000), z(8, 1000)],
        "gemm_bias_res": [f(384, 768), f(768, 768) * np.float32(0.04), f(768), f(384, 768), z(384, 768)],
        "dwconv5x5_nchw": [f(1, 144, 75, 75), f(144, 1, 5, 5), z(1, 144, 75, 75)],
        "maxpool_argmax": [pool_in, z(96, 112, 112), z(96, 112, 112, dt="int32")],
        "max_unpool": [f(96, 112, 112), unpool_idx, z(96, 224, 224)],
        "resize_bilinear_nhwc": [f(4, 60, 60, 128), z(4, 127, 127, 128)],
        "iou_matrix": [_boxes(rng, 3001), _boxes(rng, 1499), z(3001, 1499)],
        "pairwise_l1": [f(512, 67), f(1000, 67), z(512, 1000)],
        "hist_private": [rng.integers(0, 256, 16777216).astype("uint8"), z(256, dt="int32")],
        "top2_rows": [f(4096, 999), z(4096, 2), z(4096, 2, dt="int32")],
        "einsum_bij_j": [f(1024, 999, 5), f(5), z(1024, 999)],
        "rope_neox": [f(1024, 16, 128), np.cos(angles).astype("float32"), np.sin(angles).astype("float32"),
                      z(1024, 16, 128)],
        "rmsnorm_f16": [f(4096, 1000).astype("float16"), (f(1000) * np.float32(0.5) + np.float32(1)).astype("float16"),
                        z(4096, 1000, dt="float16")],
        "channel_shuffle": [f(16, 232, 28, 28), z(16, 232, 28, 28)],
        "hardswish_f16": [(f(4096, 1024) * np.float32(3)).astype("float16"), z(4096, 1024, dt="float16")],
        "horner9": [rng.uniform(-1, 1, 4194304).astype("float32"), f(10), z(4194304)],
        "clip_global_norm": [f(2048, 1024) * np.float32(0.01), f(4093), f(777, 1333) * np.float32(0.02),
                             np.array([5.0], "float32"), z(2048, 1024), z(4093), z(777, 1333)],
        "dwconv1d_k31": [f(1, 256, 4000), f(256, 1, 31) * np.float32(0.2), z(1, 256, 4000)],
        "conv3x3_nhwc_i8": [rng.integers(-128, 128, (1, 28, 28, 96)).astype("int8"),
                            rng.integers(-128, 128, (3, 3, 96, 96)).astype("int8"),
                            z(1, 28, 28, 96, dt="int32")],
        "spmv_csr": [indptr, indices, f(NNZ), f(65536), z(65536)],
        "segment_sum": [f(131072, 64), offsets, z(4096, 64)],
        "masked_mean": [f(4096, 999), (rng.uniform(0, 1, (4096, 999)) < 0.3).astype("uint8"), z(4096)],
        "transpose_f64": [rng.standard_normal((1999, 1501)), z(1501, 1999, dt="float64")],
        "cmul_interleaved": [f(2097152, 2), f(2097152, 2), z(2097152, 2)],
        "bitmix_u32": [rng.integers(0, 2**32, 4194304, dtype="uint64").astype("uint32"),
                       rng.integers(0, 2**32, 4194304, dtype="uint64").astype("uint32"),
                       z(4194304, dt="uint32")],
        "f64_transcend": [rng.standard_normal(2097152) * 3, z(2097152, dt="float64")],
    }
    return {name: [aligned_copy(a) for a in args] for name, args in raw.items()}


def _maxpool_argmax(x: np.ndarray) -> list[np.ndarray]:
    C, H, W = x.shape
    win = x.reshape(C, H // 2, 2, W // 2, 2).transpose(0, 1, 3, 2, 4).reshape(C, H // 2, W // 2, 4)
    k = win.argmax(-1)
    yy, xx = np.meshgrid(np.arange(H // 2), np.arange(W // 2), indexing="ij")
    return [win.max(-1), ((2 * yy + k // 2) * W + 2 * xx + k % 2).astype("int64")]


def _iou(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    w = np.maximum(np.minimum(a[:, None, 2], b[None, :, 2]) - np.maximum(a[:, None, 0], b[None, :, 0]), 0)
    h = np.maximum(np.minimum(a[:, None, 3], b[None, :, 3]) - np.maximum(a[:, None, 1], b[None, :, 1]), 0)
    inter = w * h
    aa = (a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1])
    ab = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    return inter / (aa[:, None] + ab[None, :] - inter)


def _resize_bilinear(x: np.ndarray, out: int) -> np.ndarray:
    n = x.shape[1]
    s = np.maximum((np.arange(out) + 0.5) * (n / out) - 0.5, 0)
    i0 = np.floor(s).astype(int)
    i1 = np.minimum(i0 + 1, n - 1)
    frac = s - i0
    ly, lx = frac[:, None, None], frac[None, :, None]
    top = x[:, i0][:, :, i0] * (1 - lx) + x[:, i0][:, :, i1] * lx
    bot = x[:, i1][:, :, i0] * (1 - lx) + x[:, i1][:, :, i1] * lx
    return top * (1 - ly) + bot * ly


def reference(name: str, args: list[np.ndarray]) -> list[np.ndarray]:
    """numpy's outputs of ``name`` on ``args`` (float64, or the integer outputs exactly)."""
    a = [x.astype("float64") for x in args]
    if name == "bgemv_t":
        return [np.einsum("bk,bkj->bj", a[0], a[1])]
    if name == "gemm_bias_res":
        return [a[0] @ a[1] + a[2] + a[3]]
    if name == "dwconv5x5_nchw":
        x = np.pad(a[0], ((0, 0), (0, 0), (2, 2), (2, 2)))
        return [sum(x[:, :, ky:ky + 75, kx:kx + 75] * a[1][None, :, 0, ky, kx, None, None]
                    for ky in range(5) for kx in range(5))]
    if name == "maxpool_argmax":
        return _maxpool_argmax(a[0])
    if name == "max_unpool":
        out = np.zeros((96, 224 * 224))
        np.put_along_axis(out, args[1].reshape(96, -1).astype("int64"), a[0].reshape(96, -1), 1)
        return [out.reshape(96, 224, 224)]
    if name == "resize_bilinear_nhwc":
        return [_resize_bilinear(a[0], 127)]
    if name == "iou_matrix":
        return [_iou(a[0], a[1])]
    if name == "pairwise_l1":
        return [np.abs(a[0][:, None, :] - a[1][None, :, :]).sum(-1)]
    if name == "hist_private":
        return [np.bincount(args[0], minlength=256)]
    if name == "top2_rows":
        order = np.argsort(-a[0], axis=1, kind="stable")[:, :2]
        return [np.take_along_axis(a[0], order, 1), order]
    if name == "einsum_bij_j":
        return [np.einsum("bij,j->bi", a[0], a[1])]
    if name == "rope_neox":
        x, c, s = a[0], a[1][:, None, :], a[2][:, None, :]
        x1, x2 = x[..., :64], x[..., 64:]
        return [np.concatenate([x1 * c - x2 * s, x2 * c + x1 * s], -1)]
    if name == "rmsnorm_f16":
        return [a[0] / np.sqrt((a[0] ** 2).mean(-1, keepdims=True) + 1e-6) * a[1]]
    if name == "channel_shuffle":
        return [a[0].reshape(16, 2, 116, 28, 28).transpose(0, 2, 1, 3, 4).reshape(16, 232, 28, 28)]
    if name == "hardswish_f16":
        return [a[0] * np.clip(a[0] + 3, 0, 6) / 6]
    if name == "horner9":
        return [np.polyval(a[1][::-1], a[0])]
    if name == "clip_global_norm":
        g = a[:3]
        total = np.sqrt(sum((t ** 2).sum() for t in g))
        scale = min(1.0, a[3][0] / total)
        return [t * scale for t in g]
    if name == "dwconv1d_k31":
        x = np.pad(a[0], ((0, 0), (0, 0), (15, 15)))
        return [sum(x[:, :, k:k + 4000] * a[1][None, :, 0, k, None] for k in range(31))]
    if name == "conv3x3_nhwc_i8":
        x = np.pad(args[0].astype("int64"), ((0, 0), (1, 1), (1, 1), (0, 0)))
        w = args[1].astype("int64")
        return [sum(np.einsum("nhwc,cf->nhwf", x[:, ky:ky + 28, kx:kx + 28, :], w[ky, kx])
                    for ky in range(3) for kx in range(3))]
    if name == "spmv_csr":
        indptr, indices = args[0].astype("int64"), args[1].astype("int64")
        rows = np.repeat(np.arange(65536), np.diff(indptr))
        return [np.bincount(rows, a[2] * a[3][indices], minlength=65536)]
    if name == "segment_sum":
        c = np.concatenate([np.zeros((1, 64)), np.cumsum(a[0], 0)])
        o = args[1].astype("int64")
        return [c[o[1:]] - c[o[:-1]]]
    if name == "masked_mean":
        m = a[1] != 0
        return [(a[0] * m).sum(-1) / np.maximum(m.sum(-1), 1)]
    if name == "transpose_f64":
        return [a[0].T]
    if name == "cmul_interleaved":
        za = a[0][:, 0] + 1j * a[0][:, 1]
        zb = a[1][:, 0] + 1j * a[1][:, 1]
        p = za * zb
        return [np.stack([p.real, p.imag], 1)]
    if name == "bitmix_u32":
        A, B = args[0].astype("uint64"), args[1].astype("uint64")
        m = np.uint64(0xFFFFFFFF)
        h = (A * np.uint64(2654435761)) & m
        g = h ^ (h >> np.uint64(15))
        r = ((g << np.uint64(7)) & m) | (g >> np.uint64(25))
        pc = np.array([bin(v).count("1") for v in range(256)], "uint64")
        ab = A & B
        pop = sum(pc[(ab >> np.uint64(8 * s)) & np.uint64(255)] for s in range(4))
        return [((r ^ B) + pop) & m]
    if name == "f64_transcend":
        from math import erf
        x = args[0]
        return [1 / (1 + np.exp(-x)) * np.tanh(x) + np.log1p(np.exp(x)) * 0.5 + np.vectorize(erf)(x)]
    raise KeyError(name)


KERNELS = KernelSet(
    tag="tvm_style14",
    source=SOURCE,
    numba_module="benchmarks._numba_tvm_style14",
    inputs=inputs,
    reference=reference,
    agrees=agrees,
    outputs=OUTPUTS,
    tvm_refuses=TVM_REFUSES,
)
"""The set's driver (``benchmarks/kernel_sets.py``)."""


if __name__ == "__main__":
    KERNELS.main(__doc__)
