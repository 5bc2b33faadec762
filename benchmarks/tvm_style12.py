"""A twelfth set of TVM-style kernels: image filters on uint8, sampling with computed
indices, attention, binary and fixed-point arithmetic, a backward pass, an optimizer step
and wide reductions, as TE/TOPI definitions print them (unscheduled) and as plain parallel
nests, next to TVM 0.27 and numba.

Beside ``tvm_style.py`` .. ``tvm_style11.py`` (none of their kernels again), run the same
way: our ``tvmscript.build`` with default options, TVM 0.27 on the *same source*
(``tirx``, host ``mcpu``) and the fastest numba twin (``_numba_tvm_style12.py``). An integral
image of a uint8 picture (TOPI's cumsum twice: rows in parallel, then columns), a 3 x 3
erosion on uint8 (a block ``min`` reduction), a 3 x 3 median on uint8 (a per-pixel
``T.alloc_buffer`` of 9 sorted by min/max exchanges), Sobel edge magnitude from uint8 to
float32 (two gradient stages and a ``sqrt``), TOPI's bilinear ``grid_sample`` (indices
computed from the grid through ``floor``, zero padding by ``T.if_then_else``), a 2 x 2 x 2
NCDHW max pool, attention in six TE blocks (``Q K^T``, softmax stages, ``P V``), an einsum
``nchw,kchw->nk`` (three reduce axes), an XNOR-popcount binary dense on uint32 words, a
Q15 fixed-point multiply with rounding and saturation on int16, a layer-norm backward pass
(two row reductions, then a broadcast), a 16 x 16 ``axpby`` (call overhead), an Adam step
with nine buffer arguments, the sum of 16M floats over 60 parallel chunks
(``T.ceildiv`` and a guard, per-chunk ``T.alloc_buffer`` accumulator), the magnitude of an
interleaved complex array read through two ``T.match_buffer`` views with ``strides=``, and
a float16 softmax with float32 statistics. TVM 0.27's runtime takes no non-contiguous
array, so the strided kernel has no TVM cell; numba lacks float16, so the softmax has no
numba twin.

Ratios are peer ms / our ms (> 1: we are faster); ``!`` marks an output that differs from
ours. ``--check`` compares every side with a numpy reference instead of timing::

    PYTHONPATH=. /work/peers/bin/python benchmarks/tvm_style12.py [--rounds 3] [--only a,b] [--check]
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
def integral_image_u8(I: T.Buffer((2048, 2048), "uint8"), S: T.Buffer((2048, 2048), "int32")):
    R = T.alloc_buffer((2048, 2048), "int32")
    for fused in T.parallel(2048):
        R[fused, 0] = T.Cast("int32", I[fused, 0])
        for k in range(2047):
            R[fused, k + 1] = R[fused, k] + T.Cast("int32", I[fused, k + 1])
    for fused in T.parallel(2048):
        S[0, fused] = R[0, fused]
        for k in range(2047):
            S[k + 1, fused] = S[k, fused] + R[k + 1, fused]

@T.prim_func
def erode3x3_u8(A: T.Buffer((2048, 4096), "uint8"), B: T.Buffer((2046, 4094), "uint8")):
    for i, j, ri, rj in T.grid(2046, 4094, 3, 3):
        with T.block("erode"):
            v_i, v_j, v_ri, v_rj = T.axis.remap("SSRR", [i, j, ri, rj])
            with T.init():
                B[v_i, v_j] = T.uint8(255)
            B[v_i, v_j] = T.min(B[v_i, v_j], A[v_i + v_ri, v_j + v_rj])

@T.prim_func
def median3x3_u8(A: T.Buffer((1026, 2050), "uint8"), B: T.Buffer((1024, 2048), "uint8")):
    for i in T.parallel(1024):
        for j in range(2048):
            v = T.alloc_buffer((9,), "uint8")
            for di, dj in T.grid(3, 3):
                v[di * 3 + dj] = A[i + di, j + dj]
            for p in range(5):
                for q in range(p + 1, 9):
                    lo = T.min(v[p], v[q])
                    v[q] = T.max(v[p], v[q])
                    v[p] = lo
            B[i, j] = v[4]

@T.prim_func
def sobel_mag_u8(A: T.Buffer((2048, 2048), "uint8"), mag: T.Buffer((2046, 2046), "float32")):
    Gx = T.alloc_buffer((2046, 2046))
    Gy = T.alloc_buffer((2046, 2046))
    for i, j in T.grid(2046, 2046):
        with T.block("Gx"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            Gx[v_i, v_j] = T.Cast("float32", A[v_i, v_j + 2]) - T.Cast("float32", A[v_i, v_j]) + T.float32(2) * (T.Cast("float32", A[v_i + 1, v_j + 2]) - T.Cast("float32", A[v_i + 1, v_j])) + T.Cast("float32", A[v_i + 2, v_j + 2]) - T.Cast("float32", A[v_i + 2, v_j])
    for i, j in T.grid(2046, 2046):
        with T.block("Gy"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            Gy[v_i, v_j] = T.Cast("float32", A[v_i + 2, v_j]) - T.Cast("float32", A[v_i, v_j]) + T.float32(2) * (T.Cast("float32", A[v_i + 2, v_j + 1]) - T.Cast("float32", A[v_i, v_j + 1])) + T.Cast("float32", A[v_i + 2, v_j + 2]) - T.Cast("float32", A[v_i, v_j + 2])
    for i, j in T.grid(2046, 2046):
        with T.block("mag"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            mag[v_i, v_j] = T.sqrt(Gx[v_i, v_j] * Gx[v_i, v_j] + Gy[v_i, v_j] * Gy[v_i, v_j])

@T.prim_func
def grid_sample_bilinear(data: T.Buffer((4, 32, 128, 128), "float32"), grid: T.Buffer((4, 2, 128, 128), "float32"),
                         out: T.Buffer((4, 32, 128, 128), "float32")):
    for n, c, h, w in T.grid(4, 32, 128, 128):
        with T.block("grid_sample"):
            v_n, v_c, v_h, v_w = T.axis.remap("SSSS", [n, c, h, w])
            out[v_n, v_c, v_h, v_w] = T.if_then_else(0 <= T.Cast("int32", T.floor((grid[v_n, 1, v_h, v_w] + T.float32(1)) * T.float32(63.5))) and T.Cast("int32", T.floor((grid[v_n, 1, v_h, v_w] + T.float32(1)) * T.float32(63.5))) < 128 and 0 <= T.Cast("int32", T.floor((grid[v_n, 0, v_h, v_w] + T.float32(1)) * T.float32(63.5))) and T.Cast("int32", T.floor((grid[v_n, 0, v_h, v_w] + T.float32(1)) * T.float32(63.5))) < 128, data[v_n, v_c, T.Cast("int32", T.floor((grid[v_n, 1, v_h, v_w] + T.float32(1)) * T.float32(63.5))), T.Cast("int32", T.floor((grid[v_n, 0, v_h, v_w] + T.float32(1)) * T.float32(63.5)))], T.float32(0)) * (T.float32(1) - ((grid[v_n, 0, v_h, v_w] + T.float32(1)) * T.float32(63.5) - T.floor((grid[v_n, 0, v_h, v_w] + T.float32(1)) * T.float32(63.5)))) * (T.float32(1) - ((grid[v_n, 1, v_h, v_w] + T.float32(1)) * T.float32(63.5) - T.floor((grid[v_n, 1, v_h, v_w] + T.float32(1)) * T.float32(63.5)))) + T.if_then_else(0 <= T.Cast("int32", T.floor((grid[v_n, 1, v_h, v_w] + T.float32(1)) * T.float32(63.5))) and T.Cast("int32", T.floor((grid[v_n, 1, v_h, v_w] + T.float32(1)) * T.float32(63.5))) < 128 and 0 <= T.Cast("int32", T.floor((grid[v_n, 0, v_h, v_w] + T.float32(1)) * T.float32(63.5))) + 1 and T.Cast("int32", T.floor((grid[v_n, 0, v_h, v_w] + T.float32(1)) * T.float32(63.5))) + 1 < 128, data[v_n, v_c, T.Cast("int32", T.floor((grid[v_n, 1, v_h, v_w] + T.float32(1)) * T.float32(63.5))), T.Cast("int32", T.floor((grid[v_n, 0, v_h, v_w] + T.float32(1)) * T.float32(63.5))) + 1], T.float32(0)) * ((grid[v_n, 0, v_h, v_w] + T.float32(1)) * T.float32(63.5) - T.floor((grid[v_n, 0, v_h, v_w] + T.float32(1)) * T.float32(63.5))) * (T.float32(1) - ((grid[v_n, 1, v_h, v_w] + T.float32(1)) * T.float32(63.5) - T.floor((grid[v_n, 1, v_h, v_w] + T.float32(1)) * T.float32(63.5)))) + T.if_then_else(0 <= T.Cast("int32", T.floor((grid[v_n, 1, v_h, v_w] + T.float32(1)) * T.float32(63.5))) + 1 and T.Cast("int32", T.floor((grid[v_n, 1, v_h, v_w] + T.float32(1)) * T.float32(63.5))) + 1 < 128 and 0 <= T.Cast("int32", T.floor((grid[v_n, 0, v_h, v_w] + T.float32(1)) * T.float32(63.5))) and T.Cast("int32", T.floor((grid[v_n, 0, v_h, v_w] + T.float32(1)) * T.float32(63.5))) < 128, data[v_n, v_c, T.Cast("int32", T.floor((grid[v_n, 1, v_h, v_w] + T.float32(1)) * T.float32(63.5))) + 1, T.Cast("int32", T.floor((grid[v_n, 0, v_h, v_w] + T.float32(1)) * T.float32(63.5)))], T.float32(0)) * (T.float32(1) - ((grid[v_n, 0, v_h, v_w] + T.float32(1)) * T.float32(63.5) - T.floor((grid[v_n, 0, v_h, v_w] + T.float32(1)) * T.float32(63.5)))) * ((grid[v_n, 1, v_h, v_w] + T.float32(1)) * T.float32(63.5) - T.floor((grid[v_n, 1, v_h, v_w] + T.float32(1)) * T.float32(63.5))) + T.if_then_else(0 <= T.Cast("int32", T.floor((grid[v_n, 1, v_h, v_w] + T.float32(1)) * T.float32(63.5))) + 1 and T.Cast("int32", T.floor((grid[v_n, 1, v_h, v_w] + T.float32(1)) * T.float32(63.5))) + 1 < 128 and 0 <= T.Cast("int32", T.floor((grid[v_n, 0, v_h, v_w] + T.float32(1)) * T.float32(63.5))) + 1 and T.Cast("int32", T.floor((grid[v_n, 0, v_h, v_w] + T.float32(1)) * T.float32(63.5))) + 1 < 128, data[v_n, v_c, T.Cast("int32", T.floor((grid[v_n, 1, v_h, v_w] + T.float32(1)) * T.float32(63.5))) + 1, T.Cast("int32", T.floor((grid[v_n, 0, v_h, v_w] + T.float32(1)) * T.float32(63.5))) + 1], T.float32(0)) * ((grid[v_n, 0, v_h, v_w] + T.float32(1)) * T.float32(63.5) - T.floor((grid[v_n, 0, v_h, v_w] + T.float32(1)) * T.float32(63.5))) * ((grid[v_n, 1, v_h, v_w] + T.float32(1)) * T.float32(63.5) - T.floor((grid[v_n, 1, v_h, v_w] + T.float32(1)) * T.float32(63.5)))

@T.prim_func
def maxpool3d_ncdhw(data: T.Buffer((2, 32, 32, 64, 64), "float32"), pool_max: T.Buffer((2, 32, 16, 32, 32), "float32")):
    for ax0, ax1, ax2, ax3, ax4, rv0, rv1, rv2 in T.grid(2, 32, 16, 32, 32, 2, 2, 2):
        with T.block("pool_max"):
            v_ax0, v_ax1, v_ax2, v_ax3, v_ax4, v_rv0, v_rv1, v_rv2 = T.axis.remap("SSSSSRRR", [ax0, ax1, ax2, ax3, ax4, rv0, rv1, rv2])
            with T.init():
                pool_max[v_ax0, v_ax1, v_ax2, v_ax3, v_ax4] = T.float32(-3.4028234663852886e+38)
            pool_max[v_ax0, v_ax1, v_ax2, v_ax3, v_ax4] = T.max(pool_max[v_ax0, v_ax1, v_ax2, v_ax3, v_ax4], data[v_ax0, v_ax1, v_ax2 * 2 + v_rv0, v_ax3 * 2 + v_rv1, v_ax4 * 2 + v_rv2])

@T.prim_func
def attention_te(Q: T.Buffer((16, 256, 64), "float32"), K: T.Buffer((16, 256, 64), "float32"),
                 V: T.Buffer((16, 256, 64), "float32"), T_batch_matmul_NN: T.Buffer((16, 256, 64), "float32")):
    T_batch_matmul_NT = T.alloc_buffer((16, 256, 256))
    T_softmax_maxelem = T.alloc_buffer((16, 256))
    T_softmax_exp = T.alloc_buffer((16, 256, 256))
    T_softmax_expsum = T.alloc_buffer((16, 256))
    T_softmax_norm = T.alloc_buffer((16, 256, 256))
    for b, i, j, k in T.grid(16, 256, 256, 64):
        with T.block("T_batch_matmul_NT"):
            v_b, v_i, v_j, v_k = T.axis.remap("SSSR", [b, i, j, k])
            with T.init():
                T_batch_matmul_NT[v_b, v_i, v_j] = T.float32(0)
            T_batch_matmul_NT[v_b, v_i, v_j] = T_batch_matmul_NT[v_b, v_i, v_j] + Q[v_b, v_i, v_k] * T.float32(0.125) * K[v_b, v_j, v_k]
    for i0, i1, k in T.grid(16, 256, 256):
        with T.block("T_softmax_maxelem"):
            v_i0, v_i1, v_k = T.axis.remap("SSR", [i0, i1, k])
            with T.init():
                T_softmax_maxelem[v_i0, v_i1] = T.float32(-3.4028234663852886e+38)
            T_softmax_maxelem[v_i0, v_i1] = T.max(T_softmax_maxelem[v_i0, v_i1], T_batch_matmul_NT[v_i0, v_i1, v_k])
    for i0, i1, i2 in T.grid(16, 256, 256):
        with T.block("T_softmax_exp"):
            v_i0, v_i1, v_i2 = T.axis.remap("SSS", [i0, i1, i2])
            T_softmax_exp[v_i0, v_i1, v_i2] = T.exp(T_batch_matmul_NT[v_i0, v_i1, v_i2] - T_softmax_maxelem[v_i0, v_i1])
    for i0, i1, k in T.grid(16, 256, 256):
        with T.block("T_softmax_expsum"):
            v_i0, v_i1, v_k = T.axis.remap("SSR", [i0, i1, k])
            with T.init():
                T_softmax_expsum[v_i0, v_i1] = T.float32(0)
            T_softmax_expsum[v_i0, v_i1] = T_softmax_expsum[v_i0, v_i1] + T_softmax_exp[v_i0, v_i1, v_k]
    for i0, i1, i2 in T.grid(16, 256, 256):
        with T.block("T_softmax_norm"):
            v_i0, v_i1, v_i2 = T.axis.remap("SSS", [i0, i1, i2])
            T_softmax_norm[v_i0, v_i1, v_i2] = T_softmax_exp[v_i0, v_i1, v_i2] / T_softmax_expsum[v_i0, v_i1]
    for b, i, j, k in T.grid(16, 256, 64, 256):
        with T.block("T_batch_matmul_NN"):
            v_b, v_i, v_j, v_k = T.axis.remap("SSSR", [b, i, j, k])
            with T.init():
                T_batch_matmul_NN[v_b, v_i, v_j] = T.float32(0)
            T_batch_matmul_NN[v_b, v_i, v_j] = T_batch_matmul_NN[v_b, v_i, v_j] + T_softmax_norm[v_b, v_i, v_k] * V[v_b, v_k, v_j]

@T.prim_func
def einsum_nchw_kchw(X: T.Buffer((64, 64, 7, 7), "float32"), W: T.Buffer((512, 64, 7, 7), "float32"),
                     T_einsum: T.Buffer((64, 512), "float32")):
    for ax0, ax1, j0, j1, j2 in T.grid(64, 512, 64, 7, 7):
        with T.block("T_einsum"):
            v_ax0, v_ax1, v_j0, v_j1, v_j2 = T.axis.remap("SSRRR", [ax0, ax1, j0, j1, j2])
            with T.init():
                T_einsum[v_ax0, v_ax1] = T.float32(0)
            T_einsum[v_ax0, v_ax1] = T_einsum[v_ax0, v_ax1] + X[v_ax0, v_j0, v_j1, v_j2] * W[v_ax1, v_j0, v_j1, v_j2]

@T.prim_func
def xnor_popcount(A: T.Buffer((1024, 32), "uint32"), B: T.Buffer((1024, 32), "uint32"),
                  C: T.Buffer((1024, 1024), "int32")):
    for i, j, k in T.grid(1024, 1024, 32):
        with T.block("C"):
            v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[v_i, v_j] = 0
            C[v_i, v_j] = C[v_i, v_j] + T.Cast("int32", T.popcount(T.bitwise_xor(A[v_i, v_k], B[v_j, v_k])))

@T.prim_func
def q15_mul_i16(A: T.Buffer((2048, 4096), "int16"), B: T.Buffer((2048, 4096), "int16"), O: T.Buffer((2048, 4096), "int16")):
    for i, j in T.grid(2048, 4096):
        with T.block("q15"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            O[v_i, v_j] = T.Cast("int16", T.max(T.min(T.shift_right(T.Cast("int32", A[v_i, v_j]) * T.Cast("int32", B[v_i, v_j]) + 16384, 15), 32767), -32768))

@T.prim_func
def layernorm_bwd(dy: T.Buffer((4096, 1024), "float32"), x: T.Buffer((4096, 1024), "float32"), gamma: T.Buffer((1024,), "float32"),
                  mean: T.Buffer((4096,), "float32"), rstd: T.Buffer((4096,), "float32"), dx: T.Buffer((4096, 1024), "float32")):
    xhat = T.alloc_buffer((4096, 1024))
    g = T.alloc_buffer((4096, 1024))
    sum_g = T.alloc_buffer((4096,))
    sum_gx = T.alloc_buffer((4096,))
    for i, j in T.grid(4096, 1024):
        with T.block("xhat"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            xhat[v_i, v_j] = (x[v_i, v_j] - mean[v_i]) * rstd[v_i]
    for i, j in T.grid(4096, 1024):
        with T.block("g"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            g[v_i, v_j] = dy[v_i, v_j] * gamma[v_j]
    for i, k in T.grid(4096, 1024):
        with T.block("sum_g"):
            v_i, v_k = T.axis.remap("SR", [i, k])
            with T.init():
                sum_g[v_i] = T.float32(0)
            sum_g[v_i] = sum_g[v_i] + g[v_i, v_k]
    for i, k in T.grid(4096, 1024):
        with T.block("sum_gx"):
            v_i, v_k = T.axis.remap("SR", [i, k])
            with T.init():
                sum_gx[v_i] = T.float32(0)
            sum_gx[v_i] = sum_gx[v_i] + g[v_i, v_k] * xhat[v_i, v_k]
    for i, j in T.grid(4096, 1024):
        with T.block("dx"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            dx[v_i, v_j] = rstd[v_i] * (g[v_i, v_j] - sum_g[v_i] * T.float32(0.0009765625) - xhat[v_i, v_j] * sum_gx[v_i] * T.float32(0.0009765625))

@T.prim_func
def tiny_axpby16(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    for i, j in T.grid(16, 16):
        with T.block("C"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            C[v_i, v_j] = T.float32(2) * A[v_i, v_j] + T.float32(3) * B[v_i, v_j]

@T.prim_func
def adam_step(p: T.Buffer((4096, 1024), "float32"), grad: T.Buffer((4096, 1024), "float32"), m: T.Buffer((4096, 1024), "float32"),
              v: T.Buffer((4096, 1024), "float32"), decay: T.Buffer((1024,), "float32"), lr: T.Buffer((1,), "float32"),
              p_out: T.Buffer((4096, 1024), "float32"), m_out: T.Buffer((4096, 1024), "float32"), v_out: T.Buffer((4096, 1024), "float32")):
    for i in T.parallel(4096):
        for j in range(1024):
            g_wd = T.alloc_buffer((1,), "float32")
            g_wd[0] = grad[i, j] + decay[j] * p[i, j]
            m_out[i, j] = T.float32(0.9) * m[i, j] + T.float32(0.1) * g_wd[0]
            v_out[i, j] = T.float32(0.999) * v[i, j] + T.float32(0.001) * g_wd[0] * g_wd[0]
            p_out[i, j] = p[i, j] - lr[0] * (m_out[i, j] * T.float32(10)) / (T.sqrt(v_out[i, j] * T.float32(1000)) + T.float32(1e-08))

@T.prim_func
def sum16m_chunks(a: T.Buffer((16777216,), "float32"), out: T.Buffer((1,), "float32")):
    part = T.alloc_buffer((60,), "float32")
    for c in T.parallel(60):
        acc = T.alloc_buffer((1,), "float32")
        acc[0] = T.float32(0)
        for k in range(T.ceildiv(16777216, 60)):
            if c * T.ceildiv(16777216, 60) + k < 16777216:
                acc[0] = acc[0] + a[c * T.ceildiv(16777216, 60) + k]
        part[c] = acc[0]
    out[0] = T.float32(0)
    for c in range(60):
        out[0] = out[0] + part[c]

@T.prim_func
def complex_abs_strided(re: T.handle, im: T.handle, o: T.handle):
    Re = T.match_buffer(re, (2048, 2048), strides=(4096, 2))
    Im = T.match_buffer(im, (2048, 2048), strides=(4096, 2))
    O = T.match_buffer(o, (2048, 2048))
    for i, j in T.grid(2048, 2048):
        with T.block("abs"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            O[v_i, v_j] = T.sqrt(Re[v_i, v_j] * Re[v_i, v_j] + Im[v_i, v_j] * Im[v_i, v_j])

@T.prim_func
def softmax_f16(A: T.Buffer((4096, 1024), "float16"), T_softmax_norm: T.Buffer((4096, 1024), "float16")):
    T_softmax_maxelem = T.alloc_buffer((4096,))
    T_softmax_expsum = T.alloc_buffer((4096,))
    for i0, k in T.grid(4096, 1024):
        with T.block("T_softmax_maxelem"):
            v_i0, v_k = T.axis.remap("SR", [i0, k])
            with T.init():
                T_softmax_maxelem[v_i0] = T.float32(-3.4028234663852886e+38)
            T_softmax_maxelem[v_i0] = T.max(T_softmax_maxelem[v_i0], T.Cast("float32", A[v_i0, v_k]))
    for i0, k in T.grid(4096, 1024):
        with T.block("T_softmax_expsum"):
            v_i0, v_k = T.axis.remap("SR", [i0, k])
            with T.init():
                T_softmax_expsum[v_i0] = T.float32(0)
            T_softmax_expsum[v_i0] = T_softmax_expsum[v_i0] + T.exp(T.Cast("float32", A[v_i0, v_k]) - T_softmax_maxelem[v_i0])
    for i0, i1 in T.grid(4096, 1024):
        with T.block("T_softmax_norm"):
            v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
            T_softmax_norm[v_i0, v_i1] = T.Cast("float16", T.exp(T.Cast("float32", A[v_i0, v_i1]) - T_softmax_maxelem[v_i0]) / T_softmax_expsum[v_i0])
'''

#: Kernel -> how many of its last arguments are outputs (1 unless listed).
OUTPUTS: dict[str, int] = {"adam_step": 3}

#: Kernels TVM 0.27 refuses however they are written (their ``tvm`` cell stays empty).
TVM_REFUSES: dict[str, str] = {
    "complex_abs_strided": "its runtime takes no non-contiguous array (FromDLPack: Tensor is "
                           "not contiguous), so the strided views cannot reach the kernel",
}


def inputs(seed: int = 0) -> dict[str, list[np.ndarray]]:
    """Arguments of every kernel, 64-byte aligned (outputs last); ``complex_abs_strided``
    gets the real and imaginary views of one interleaved array."""
    rng = np.random.default_rng(seed)

    f = lambda *s: rng.standard_normal(s).astype("float32")  # noqa: E731
    z = lambda *s, dt="float32": np.zeros(s, dt)  # noqa: E731
    u8 = lambda *s: rng.integers(0, 256, s).astype("uint8")  # noqa: E731
    u32 = lambda *s: rng.integers(0, 2**32, s, dtype="uint64").astype("uint32")  # noqa: E731
    i16 = lambda *s: rng.integers(-32768, 32768, s).astype("int16")  # noqa: E731
    raw = {
        "integral_image_u8": [u8(2048, 2048), z(2048, 2048, dt="int32")],
        "erode3x3_u8": [u8(2048, 4096), z(2046, 4094, dt="uint8")],
        "median3x3_u8": [u8(1026, 2050), z(1024, 2048, dt="uint8")],
        "sobel_mag_u8": [u8(2048, 2048), z(2046, 2046)],
        "grid_sample_bilinear": [f(4, 32, 128, 128),
                                 rng.uniform(-1.1, 1.1, (4, 2, 128, 128)).astype("float32"),
                                 z(4, 32, 128, 128)],
        "maxpool3d_ncdhw": [f(2, 32, 32, 64, 64), z(2, 32, 16, 32, 32)],
        "attention_te": [f(16, 256, 64), f(16, 256, 64), f(16, 256, 64), z(16, 256, 64)],
        "einsum_nchw_kchw": [f(64, 64, 7, 7), f(512, 64, 7, 7), z(64, 512)],
        "xnor_popcount": [u32(1024, 32), u32(1024, 32), z(1024, 1024, dt="int32")],
        "q15_mul_i16": [i16(2048, 4096), i16(2048, 4096), z(2048, 4096, dt="int16")],
        "layernorm_bwd": [f(4096, 1024), f(4096, 1024), f(1024), f(4096) * np.float32(0.1),
                          rng.uniform(0.5, 2.0, 4096).astype("float32"), z(4096, 1024)],
        "tiny_axpby16": [f(16, 16), f(16, 16), z(16, 16)],
        "adam_step": [f(4096, 1024), f(4096, 1024), f(4096, 1024) * np.float32(0.1),
                      rng.uniform(0.0, 0.01, (4096, 1024)).astype("float32"),
                      rng.uniform(0.0, 0.01, 1024).astype("float32"),
                      np.array([1e-3], "float32"), z(4096, 1024), z(4096, 1024), z(4096, 1024)],
        "sum16m_chunks": [rng.uniform(0.0, 1.0, 16777216).astype("float32"), z(1)],
        "complex_abs_strided": [f(2048, 4096), z(2048, 2048)],
        "softmax_f16": [(f(4096, 1024) * np.float32(3)).astype("float16"),
                        z(4096, 1024, dt="float16")],
    }
    out = {name: [aligned_copy(a) for a in args] for name, args in raw.items()}
    zc, o = out["complex_abs_strided"]
    out["complex_abs_strided"] = [zc[:, 0::2], zc[:, 1::2], o]
    return out


def _median3x3(x: np.ndarray) -> np.ndarray:
    h, w = x.shape[0] - 2, x.shape[1] - 2
    win = np.stack([x[di:di + h, dj:dj + w] for di in range(3) for dj in range(3)])
    return np.median(win, axis=0).astype(x.dtype)


def _grid_sample(data: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """TOPI's bilinear ``grid_sample`` (``align_corners``, zero padding), in float32 index
    arithmetic as the kernel computes it."""
    n, _, h, w = data.shape
    x = (grid[:, 0] + np.float32(1)) * np.float32(63.5)
    y = (grid[:, 1] + np.float32(1)) * np.float32(63.5)
    x0, y0 = np.floor(x).astype("int64"), np.floor(y).astype("int64")
    fx, fy = (x - np.floor(x)).astype("float64"), (y - np.floor(y)).astype("float64")
    out = np.zeros(data.shape)
    for dy, wy in ((0, 1 - fy), (1, fy)):
        for dx, wx in ((0, 1 - fx), (1, fx)):
            yy, xx = y0 + dy, x0 + dx
            ok = (yy >= 0) & (yy < h) & (xx >= 0) & (xx < w)
            yc, xc = np.clip(yy, 0, h - 1), np.clip(xx, 0, w - 1)
            for b in range(n):
                v = data[b][:, yc[b], xc[b]] * ok[b]
                out[b] += v * (wx[b] * wy[b])
    return out


def reference(name: str, args: list[np.ndarray]) -> list[np.ndarray]:
    """numpy's outputs of ``name`` on ``args`` (float64; integers exactly)."""
    a = [x.astype("float64") if x.dtype.kind == "f" else x for x in args]
    if name == "integral_image_u8":
        return [args[0].astype("int64").cumsum(0).cumsum(1).astype("int32")]
    if name == "erode3x3_u8":
        x = args[0]
        return [np.min([x[di:di + 2046, dj:dj + 4094] for di in range(3) for dj in range(3)], 0)]
    if name == "median3x3_u8":
        return [_median3x3(args[0])]
    if name == "sobel_mag_u8":
        x = args[0].astype("float64")
        gx = (x[:-2, 2:] - x[:-2, :-2]) + 2 * (x[1:-1, 2:] - x[1:-1, :-2]) + (x[2:, 2:] - x[2:, :-2])
        gy = (x[2:, :-2] - x[:-2, :-2]) + 2 * (x[2:, 1:-1] - x[:-2, 1:-1]) + (x[2:, 2:] - x[:-2, 2:])
        return [np.sqrt(gx * gx + gy * gy)]
    if name == "grid_sample_bilinear":
        return [_grid_sample(a[0], args[1])]
    if name == "maxpool3d_ncdhw":
        return [a[0].reshape(2, 32, 16, 2, 32, 2, 32, 2).max((3, 5, 7))]
    if name == "attention_te":
        s = np.einsum("bik,bjk->bij", a[0] * 0.125, a[1])
        e = np.exp(s - s.max(-1, keepdims=True))
        return [np.einsum("bij,bjd->bid", e / e.sum(-1, keepdims=True), a[2])]
    if name == "einsum_nchw_kchw":
        return [np.einsum("nchw,kchw->nk", a[0], a[1])]
    if name == "xnor_popcount":
        x = args[0][:, None, :] ^ args[1][None, :, :]
        bits = np.unpackbits(x.view("uint8").reshape(1024, 1024, -1), axis=-1)
        return [bits.sum(-1).astype("int32")]
    if name == "q15_mul_i16":
        p = (args[0].astype("int64") * args[1].astype("int64") + 16384) >> 15
        return [np.clip(p, -32768, 32767).astype("int16")]
    if name == "layernorm_bwd":
        dy, x, gamma, mean, rstd = a[:5]
        xhat = (x - mean[:, None]) * rstd[:, None]
        g = dy * gamma
        return [rstd[:, None] * (g - g.mean(1, keepdims=True)
                                 - xhat * (g * xhat).mean(1, keepdims=True))]
    if name == "tiny_axpby16":
        return [2 * a[0] + 3 * a[1]]
    if name == "adam_step":
        p, g, m, v, decay, lr = a[:6]
        gw = g + decay * p
        m2 = 0.9 * m + 0.1 * gw
        v2 = 0.999 * v + 0.001 * gw * gw
        return [p - lr[0] * (m2 * 10) / (np.sqrt(v2 * 1000) + 1e-8), m2, v2]
    if name == "sum16m_chunks":
        return [np.array([a[0].sum()])]
    if name == "complex_abs_strided":
        return [np.hypot(a[0], a[1])]
    if name == "softmax_f16":
        e = np.exp(a[0] - a[0].max(-1, keepdims=True))
        return [e / e.sum(-1, keepdims=True)]
    raise KeyError(name)


KERNELS = KernelSet(
    tag="tvm_style12",
    source=SOURCE,
    numba_module="benchmarks._numba_tvm_style12",
    inputs=inputs,
    reference=reference,
    agrees=agrees,
    outputs=OUTPUTS,
    tvm_refuses=TVM_REFUSES,
)
"""The set's driver (``benchmarks/kernel_sets.py``)."""


if __name__ == "__main__":
    KERNELS.main(__doc__)
