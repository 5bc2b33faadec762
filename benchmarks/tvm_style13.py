"""A thirteenth set of TVM-style kernels: the layers of real networks at their real sizes
(ResNet-50, MobileNet, BERT-base, ViT-B/16), where the extents are not multiples of the
vector width or of a register tile, as TE/TOPI definitions print them (unscheduled), and
two plain parallel nests, next to TVM 0.27 and numba.

Beside ``tvm_style.py`` .. ``tvm_style11.py`` (none of their kernels at these shapes), run
the same way: our ``tvmscript.build`` with default options, TVM 0.27 on the *same source*
(``tirx``, host ``mcpu``) and the fastest numba twin (``_numba_tvm_style13.py``). ResNet-50's
classifier (a 2048 -> 1000 dense with its bias stage, batch 1; the same at batch 64 as a
plain parallel nest with a per-element ``T.alloc_buffer`` accumulator), its global average
pool over 2048 x 7 x 7 (TOPI's ``adaptive_pool``), a 3 x 3 convolution at 512 channels on
7 x 7 and one at 256 channels on 14 x 14 with bias and ReLU stages (both with TOPI's padding
stage), the stem's 7 x 7 stride-2 convolution 3 -> 64 on 224 x 224 (pad 3) and its 3 x 3
stride-2 max pool 112 -> 56 (padded with the lowest float); MobileNet's depthwise 3 x 3 on
112 x 112 x 32 in NCHW and NHWC (``PaddedInput`` stages) and its 1 x 1 pointwise 32 -> 64 at
112 x 112 (TOPI's padding stage without padding: a copy); BERT-base's 768 -> 3072 dense over
384 tokens with bias and ``erf`` GELU stages, its layer norm over 768 (TOPI's tuple
reduction of sum and sum of squares), its attention scores (12 heads x 384 x 384 x 64 with
a scale stage) and their softmax over 384 (TOPI's four stages); a 1000-class softmax at
batch 1 (TOPI's stages) and batch 64 (a plain parallel nest with per-row scratch); a batch
norm in inference with ReLU on 64 x 56 x 56; ViT-B/16's 768 -> 2304 QKV dense over 197
tokens (odd rows).

Ratios are peer ms / our ms (> 1: we are faster); ``!`` marks an output that differs from
ours. ``--check`` compares every side with a numpy reference instead of timing::

    PYTHONPATH=. /work/peers/bin/python benchmarks/tvm_style13.py [--rounds 3] [--only a,b] [--check]
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
def dense_fc1000(data: T.Buffer((1, 2048), "float32"), weight: T.Buffer((1000, 2048), "float32"),
                 bias: T.Buffer((1000,), "float32"), T_add: T.Buffer((1, 1000), "float32")):
    T_matmul_NT = T.alloc_buffer((1, 1000))
    for i, j, k in T.grid(1, 1000, 2048):
        with T.block("T_matmul_NT"):
            v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
            with T.init():
                T_matmul_NT[v_i, v_j] = T.float32(0)
            T_matmul_NT[v_i, v_j] = T_matmul_NT[v_i, v_j] + data[v_i, v_k] * weight[v_j, v_k]
    for ax0, ax1 in T.grid(1, 1000):
        with T.block("T_add"):
            v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
            T_add[v_ax0, v_ax1] = T_matmul_NT[v_ax0, v_ax1] + bias[v_ax1]

@T.prim_func
def dense_fc1000_b64(X: T.Buffer((64, 2048), "float32"), W: T.Buffer((1000, 2048), "float32"),
                     B: T.Buffer((1000,), "float32"), O: T.Buffer((64, 1000), "float32")):
    for i in T.parallel(64):
        for j in range(1000):
            acc = T.alloc_buffer((1,), "float32")
            acc[0] = T.float32(0)
            for k in range(2048):
                acc[0] = acc[0] + X[i, k] * W[j, k]
            O[i, j] = acc[0] + B[j]

@T.prim_func
def gap_2048_7x7(data: T.Buffer((1, 2048, 7, 7), "float32"), adaptive_pool_avg: T.Buffer((1, 2048, 1, 1), "float32")):
    adaptive_pool_sum = T.alloc_buffer((1, 2048, 1, 1))
    for ax0, ax1, ax2, ax3, rv0, rv1 in T.grid(1, 2048, 1, 1, 7, 7):
        with T.block("adaptive_pool_sum"):
            v_ax0, v_ax1, v_ax2, v_ax3, v_rv0, v_rv1 = T.axis.remap("SSSSRR", [ax0, ax1, ax2, ax3, rv0, rv1])
            with T.init():
                adaptive_pool_sum[v_ax0, v_ax1, v_ax2, v_ax3] = T.float32(0)
            adaptive_pool_sum[v_ax0, v_ax1, v_ax2, v_ax3] = adaptive_pool_sum[v_ax0, v_ax1, v_ax2, v_ax3] + data[v_ax0, v_ax1, v_ax2 * 7 + v_rv0, v_ax3 * 7 + v_rv1]
    for ax0, ax1, ax2, ax3 in T.grid(1, 2048, 1, 1):
        with T.block("adaptive_pool_avg"):
            v_ax0, v_ax1, v_ax2, v_ax3 = T.axis.remap("SSSS", [ax0, ax1, ax2, ax3])
            adaptive_pool_avg[v_ax0, v_ax1, v_ax2, v_ax3] = adaptive_pool_sum[v_ax0, v_ax1, v_ax2, v_ax3] * T.float32(0.020408163265306121)

@T.prim_func
def conv3x3_c512_7x7(data: T.Buffer((1, 512, 7, 7), "float32"), kernel: T.Buffer((512, 512, 3, 3), "float32"),
                     conv2d_nchw: T.Buffer((1, 512, 7, 7), "float32")):
    pad_temp = T.alloc_buffer((1, 512, 9, 9))
    for i0, i1, i2, i3 in T.grid(1, 512, 9, 9):
        with T.block("pad_temp"):
            v_i0, v_i1, v_i2, v_i3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
            pad_temp[v_i0, v_i1, v_i2, v_i3] = T.if_then_else(1 <= v_i2 and v_i2 < 8 and 1 <= v_i3 and v_i3 < 8, data[v_i0, v_i1, v_i2 - 1, v_i3 - 1], T.float32(0))
    for nn, ff, yy, xx, rc, ry, rx in T.grid(1, 512, 7, 7, 512, 3, 3):
        with T.block("conv2d_nchw"):
            v_nn, v_ff, v_yy, v_xx, v_rc, v_ry, v_rx = T.axis.remap("SSSSRRR", [nn, ff, yy, xx, rc, ry, rx])
            with T.init():
                conv2d_nchw[v_nn, v_ff, v_yy, v_xx] = T.float32(0)
            conv2d_nchw[v_nn, v_ff, v_yy, v_xx] = conv2d_nchw[v_nn, v_ff, v_yy, v_xx] + pad_temp[v_nn, v_rc, v_yy + v_ry, v_xx + v_rx] * kernel[v_ff, v_rc, v_ry, v_rx]

@T.prim_func
def conv3x3_c256_14x14_relu(data: T.Buffer((1, 256, 14, 14), "float32"), kernel: T.Buffer((256, 256, 3, 3), "float32"),
                            bias: T.Buffer((1, 256, 1, 1), "float32"), T_relu: T.Buffer((1, 256, 14, 14), "float32")):
    pad_temp = T.alloc_buffer((1, 256, 16, 16))
    conv2d_nchw = T.alloc_buffer((1, 256, 14, 14))
    T_add = T.alloc_buffer((1, 256, 14, 14))
    for i0, i1, i2, i3 in T.grid(1, 256, 16, 16):
        with T.block("pad_temp"):
            v_i0, v_i1, v_i2, v_i3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
            pad_temp[v_i0, v_i1, v_i2, v_i3] = T.if_then_else(1 <= v_i2 and v_i2 < 15 and 1 <= v_i3 and v_i3 < 15, data[v_i0, v_i1, v_i2 - 1, v_i3 - 1], T.float32(0))
    for nn, ff, yy, xx, rc, ry, rx in T.grid(1, 256, 14, 14, 256, 3, 3):
        with T.block("conv2d_nchw"):
            v_nn, v_ff, v_yy, v_xx, v_rc, v_ry, v_rx = T.axis.remap("SSSSRRR", [nn, ff, yy, xx, rc, ry, rx])
            with T.init():
                conv2d_nchw[v_nn, v_ff, v_yy, v_xx] = T.float32(0)
            conv2d_nchw[v_nn, v_ff, v_yy, v_xx] = conv2d_nchw[v_nn, v_ff, v_yy, v_xx] + pad_temp[v_nn, v_rc, v_yy + v_ry, v_xx + v_rx] * kernel[v_ff, v_rc, v_ry, v_rx]
    for ax0, ax1, ax2, ax3 in T.grid(1, 256, 14, 14):
        with T.block("T_add"):
            v_ax0, v_ax1, v_ax2, v_ax3 = T.axis.remap("SSSS", [ax0, ax1, ax2, ax3])
            T_add[v_ax0, v_ax1, v_ax2, v_ax3] = conv2d_nchw[v_ax0, v_ax1, v_ax2, v_ax3] + bias[v_ax0, v_ax1, 0, 0]
    for ax0, ax1, ax2, ax3 in T.grid(1, 256, 14, 14):
        with T.block("T_relu"):
            v_ax0, v_ax1, v_ax2, v_ax3 = T.axis.remap("SSSS", [ax0, ax1, ax2, ax3])
            T_relu[v_ax0, v_ax1, v_ax2, v_ax3] = T.max(T_add[v_ax0, v_ax1, v_ax2, v_ax3], T.float32(0))

@T.prim_func
def stem_conv7x7_s2(data: T.Buffer((1, 3, 224, 224), "float32"), kernel: T.Buffer((64, 3, 7, 7), "float32"),
                    conv2d_nchw: T.Buffer((1, 64, 112, 112), "float32")):
    pad_temp = T.alloc_buffer((1, 3, 230, 230))
    for i0, i1, i2, i3 in T.grid(1, 3, 230, 230):
        with T.block("pad_temp"):
            v_i0, v_i1, v_i2, v_i3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
            pad_temp[v_i0, v_i1, v_i2, v_i3] = T.if_then_else(3 <= v_i2 and v_i2 < 227 and 3 <= v_i3 and v_i3 < 227, data[v_i0, v_i1, v_i2 - 3, v_i3 - 3], T.float32(0))
    for nn, ff, yy, xx, rc, ry, rx in T.grid(1, 64, 112, 112, 3, 7, 7):
        with T.block("conv2d_nchw"):
            v_nn, v_ff, v_yy, v_xx, v_rc, v_ry, v_rx = T.axis.remap("SSSSRRR", [nn, ff, yy, xx, rc, ry, rx])
            with T.init():
                conv2d_nchw[v_nn, v_ff, v_yy, v_xx] = T.float32(0)
            conv2d_nchw[v_nn, v_ff, v_yy, v_xx] = conv2d_nchw[v_nn, v_ff, v_yy, v_xx] + pad_temp[v_nn, v_rc, v_yy * 2 + v_ry, v_xx * 2 + v_rx] * kernel[v_ff, v_rc, v_ry, v_rx]

@T.prim_func
def maxpool3x3_s2(data: T.Buffer((1, 64, 112, 112), "float32"), pool_max: T.Buffer((1, 64, 56, 56), "float32")):
    pad_temp = T.alloc_buffer((1, 64, 114, 114))
    for ax0, ax1, ax2, ax3 in T.grid(1, 64, 114, 114):
        with T.block("pad_temp"):
            v_ax0, v_ax1, v_ax2, v_ax3 = T.axis.remap("SSSS", [ax0, ax1, ax2, ax3])
            pad_temp[v_ax0, v_ax1, v_ax2, v_ax3] = T.if_then_else(1 <= v_ax2 and v_ax2 < 113 and 1 <= v_ax3 and v_ax3 < 113, data[v_ax0, v_ax1, v_ax2 - 1, v_ax3 - 1], T.float32(-3.4028234663852886e+38))
    for ax0, ax1, ax2, ax3, rv0, rv1 in T.grid(1, 64, 56, 56, 3, 3):
        with T.block("pool_max"):
            v_ax0, v_ax1, v_ax2, v_ax3, v_rv0, v_rv1 = T.axis.remap("SSSSRR", [ax0, ax1, ax2, ax3, rv0, rv1])
            with T.init():
                pool_max[v_ax0, v_ax1, v_ax2, v_ax3] = T.float32(-3.4028234663852886e+38)
            pool_max[v_ax0, v_ax1, v_ax2, v_ax3] = T.max(pool_max[v_ax0, v_ax1, v_ax2, v_ax3], pad_temp[v_ax0, v_ax1, v_ax2 * 2 + v_rv0, v_ax3 * 2 + v_rv1])

@T.prim_func
def dwconv3x3_nchw_112(data: T.Buffer((1, 32, 112, 112), "float32"), Filter: T.Buffer((32, 1, 3, 3), "float32"),
                       DepthwiseConv2d: T.Buffer((1, 32, 112, 112), "float32")):
    PaddedInput = T.alloc_buffer((1, 32, 114, 114))
    for i0, i1, i2, i3 in T.grid(1, 32, 114, 114):
        with T.block("PaddedInput"):
            v_i0, v_i1, v_i2, v_i3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
            PaddedInput[v_i0, v_i1, v_i2, v_i3] = T.if_then_else(1 <= v_i2 and v_i2 < 113 and 1 <= v_i3 and v_i3 < 113, data[v_i0, v_i1, v_i2 - 1, v_i3 - 1], T.float32(0))
    for b, c, i, j, di, dj in T.grid(1, 32, 112, 112, 3, 3):
        with T.block("DepthwiseConv2d"):
            v_b, v_c, v_i, v_j, v_di, v_dj = T.axis.remap("SSSSRR", [b, c, i, j, di, dj])
            with T.init():
                DepthwiseConv2d[v_b, v_c, v_i, v_j] = T.float32(0)
            DepthwiseConv2d[v_b, v_c, v_i, v_j] = DepthwiseConv2d[v_b, v_c, v_i, v_j] + PaddedInput[v_b, v_c, v_i + v_di, v_j + v_dj] * Filter[v_c, 0, v_di, v_dj]

@T.prim_func
def dwconv3x3_nhwc_112(data: T.Buffer((1, 112, 112, 32), "float32"), Filter: T.Buffer((3, 3, 32, 1), "float32"),
                       DepthwiseConv2d: T.Buffer((1, 112, 112, 32), "float32")):
    PaddedInput = T.alloc_buffer((1, 114, 114, 32))
    for i0, i1, i2, i3 in T.grid(1, 114, 114, 32):
        with T.block("PaddedInput"):
            v_i0, v_i1, v_i2, v_i3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
            PaddedInput[v_i0, v_i1, v_i2, v_i3] = T.if_then_else(1 <= v_i1 and v_i1 < 113 and 1 <= v_i2 and v_i2 < 113, data[v_i0, v_i1 - 1, v_i2 - 1, v_i3], T.float32(0))
    for b, i, j, c, di, dj in T.grid(1, 112, 112, 32, 3, 3):
        with T.block("DepthwiseConv2d"):
            v_b, v_i, v_j, v_c, v_di, v_dj = T.axis.remap("SSSSRR", [b, i, j, c, di, dj])
            with T.init():
                DepthwiseConv2d[v_b, v_i, v_j, v_c] = T.float32(0)
            DepthwiseConv2d[v_b, v_i, v_j, v_c] = DepthwiseConv2d[v_b, v_i, v_j, v_c] + PaddedInput[v_b, v_i + v_di, v_j + v_dj, v_c] * Filter[v_di, v_dj, v_c, 0]

@T.prim_func
def pwconv_32_64_112(data: T.Buffer((1, 32, 112, 112), "float32"), kernel: T.Buffer((64, 32, 1, 1), "float32"),
                     conv2d_nchw: T.Buffer((1, 64, 112, 112), "float32")):
    pad_temp = T.alloc_buffer((1, 32, 112, 112))
    for i0, i1, i2, i3 in T.grid(1, 32, 112, 112):
        with T.block("pad_temp"):
            v_i0, v_i1, v_i2, v_i3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
            pad_temp[v_i0, v_i1, v_i2, v_i3] = data[v_i0, v_i1, v_i2, v_i3]
    for nn, ff, yy, xx, rc, ry, rx in T.grid(1, 64, 112, 112, 32, 1, 1):
        with T.block("conv2d_nchw"):
            v_nn, v_ff, v_yy, v_xx, v_rc, v_ry, v_rx = T.axis.remap("SSSSRRR", [nn, ff, yy, xx, rc, ry, rx])
            with T.init():
                conv2d_nchw[v_nn, v_ff, v_yy, v_xx] = T.float32(0)
            conv2d_nchw[v_nn, v_ff, v_yy, v_xx] = conv2d_nchw[v_nn, v_ff, v_yy, v_xx] + pad_temp[v_nn, v_rc, v_yy + v_ry, v_xx + v_rx] * kernel[v_ff, v_rc, v_ry, v_rx]

@T.prim_func
def bert_fc1_gelu(data: T.Buffer((384, 768), "float32"), weight: T.Buffer((3072, 768), "float32"),
                  bias: T.Buffer((3072,), "float32"), T_gelu: T.Buffer((384, 3072), "float32")):
    T_matmul_NT = T.alloc_buffer((384, 3072))
    T_add = T.alloc_buffer((384, 3072))
    for i, j, k in T.grid(384, 3072, 768):
        with T.block("T_matmul_NT"):
            v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
            with T.init():
                T_matmul_NT[v_i, v_j] = T.float32(0)
            T_matmul_NT[v_i, v_j] = T_matmul_NT[v_i, v_j] + data[v_i, v_k] * weight[v_j, v_k]
    for ax0, ax1 in T.grid(384, 3072):
        with T.block("T_add"):
            v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
            T_add[v_ax0, v_ax1] = T_matmul_NT[v_ax0, v_ax1] + bias[v_ax1]
    for ax0, ax1 in T.grid(384, 3072):
        with T.block("T_gelu"):
            v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
            T_gelu[v_ax0, v_ax1] = T_add[v_ax0, v_ax1] * (T.float32(0.5) + T.erf(T_add[v_ax0, v_ax1] * T.float32(0.70710678118654757)) * T.float32(0.5))

@T.prim_func
def layernorm_768(data: T.Buffer((384, 768), "float32"), gamma: T.Buffer((768,), "float32"),
                  beta: T.Buffer((768,), "float32"), T_layer_norm: T.Buffer((384, 768), "float32")):
    T_layer_norm_red_temp_v0 = T.alloc_buffer((384,))
    T_layer_norm_red_temp_v1 = T.alloc_buffer((384,))
    for ax0, k1 in T.grid(384, 768):
        with T.block("T_layer_norm_red_temp"):
            v_ax0, v_k1 = T.axis.remap("SR", [ax0, k1])
            with T.init():
                T_layer_norm_red_temp_v0[v_ax0] = T.float32(0)
                T_layer_norm_red_temp_v1[v_ax0] = T.float32(0)
            v_T_layer_norm_red_temp_v0: T.float32 = T_layer_norm_red_temp_v0[v_ax0] + data[v_ax0, v_k1]
            v_T_layer_norm_red_temp_v1: T.float32 = T_layer_norm_red_temp_v1[v_ax0] + data[v_ax0, v_k1] * data[v_ax0, v_k1]
            T_layer_norm_red_temp_v0[v_ax0] = v_T_layer_norm_red_temp_v0
            T_layer_norm_red_temp_v1[v_ax0] = v_T_layer_norm_red_temp_v1
    for ax0, ax1 in T.grid(384, 768):
        with T.block("T_layer_norm"):
            v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
            T_layer_norm[v_ax0, v_ax1] = (data[v_ax0, v_ax1] - T_layer_norm_red_temp_v0[v_ax0] * T.float32(0.0013020833333333333)) * T.rsqrt(T_layer_norm_red_temp_v1[v_ax0] * T.float32(0.0013020833333333333) - T_layer_norm_red_temp_v0[v_ax0] * T.float32(0.0013020833333333333) * (T_layer_norm_red_temp_v0[v_ax0] * T.float32(0.0013020833333333333)) + T.float32(1.0000000000000001e-05)) * gamma[v_ax1] + beta[v_ax1]

@T.prim_func
def attn_scores_384(q: T.Buffer((12, 384, 64), "float32"), k: T.Buffer((12, 384, 64), "float32"),
                    T_multiply: T.Buffer((12, 384, 384), "float32")):
    T_batch_matmul_NT = T.alloc_buffer((12, 384, 384))
    for b, i, j, kk in T.grid(12, 384, 384, 64):
        with T.block("T_batch_matmul_NT"):
            v_b, v_i, v_j, v_k = T.axis.remap("SSSR", [b, i, j, kk])
            with T.init():
                T_batch_matmul_NT[v_b, v_i, v_j] = T.float32(0)
            T_batch_matmul_NT[v_b, v_i, v_j] = T_batch_matmul_NT[v_b, v_i, v_j] + q[v_b, v_i, v_k] * k[v_b, v_j, v_k]
    for ax0, ax1, ax2 in T.grid(12, 384, 384):
        with T.block("T_multiply"):
            v_ax0, v_ax1, v_ax2 = T.axis.remap("SSS", [ax0, ax1, ax2])
            T_multiply[v_ax0, v_ax1, v_ax2] = T_batch_matmul_NT[v_ax0, v_ax1, v_ax2] * T.float32(0.125)

@T.prim_func
def softmax_384(data: T.Buffer((12, 384, 384), "float32"), T_softmax_norm: T.Buffer((12, 384, 384), "float32")):
    T_softmax_maxelem = T.alloc_buffer((12, 384))
    T_softmax_exp = T.alloc_buffer((12, 384, 384))
    T_softmax_expsum = T.alloc_buffer((12, 384))
    for i0, i1, k in T.grid(12, 384, 384):
        with T.block("T_softmax_maxelem"):
            v_i0, v_i1, v_k = T.axis.remap("SSR", [i0, i1, k])
            with T.init():
                T_softmax_maxelem[v_i0, v_i1] = T.float32(-3.4028234663852886e+38)
            T_softmax_maxelem[v_i0, v_i1] = T.max(T_softmax_maxelem[v_i0, v_i1], data[v_i0, v_i1, v_k])
    for i0, i1, i2 in T.grid(12, 384, 384):
        with T.block("T_softmax_exp"):
            v_i0, v_i1, v_i2 = T.axis.remap("SSS", [i0, i1, i2])
            T_softmax_exp[v_i0, v_i1, v_i2] = T.exp(data[v_i0, v_i1, v_i2] - T_softmax_maxelem[v_i0, v_i1])
    for i0, i1, k in T.grid(12, 384, 384):
        with T.block("T_softmax_expsum"):
            v_i0, v_i1, v_k = T.axis.remap("SSR", [i0, i1, k])
            with T.init():
                T_softmax_expsum[v_i0, v_i1] = T.float32(0)
            T_softmax_expsum[v_i0, v_i1] = T_softmax_expsum[v_i0, v_i1] + T_softmax_exp[v_i0, v_i1, v_k]
    for i0, i1, i2 in T.grid(12, 384, 384):
        with T.block("T_softmax_norm"):
            v_i0, v_i1, v_i2 = T.axis.remap("SSS", [i0, i1, i2])
            T.block_attr({"axis": 2})
            T_softmax_norm[v_i0, v_i1, v_i2] = T_softmax_exp[v_i0, v_i1, v_i2] / T_softmax_expsum[v_i0, v_i1]

@T.prim_func
def softmax_1000(data: T.Buffer((1, 1000), "float32"), T_softmax_norm: T.Buffer((1, 1000), "float32")):
    T_softmax_maxelem = T.alloc_buffer((1,))
    T_softmax_exp = T.alloc_buffer((1, 1000))
    T_softmax_expsum = T.alloc_buffer((1,))
    for i0, k in T.grid(1, 1000):
        with T.block("T_softmax_maxelem"):
            v_i0, v_k = T.axis.remap("SR", [i0, k])
            with T.init():
                T_softmax_maxelem[v_i0] = T.float32(-3.4028234663852886e+38)
            T_softmax_maxelem[v_i0] = T.max(T_softmax_maxelem[v_i0], data[v_i0, v_k])
    for i0, i1 in T.grid(1, 1000):
        with T.block("T_softmax_exp"):
            v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
            T_softmax_exp[v_i0, v_i1] = T.exp(data[v_i0, v_i1] - T_softmax_maxelem[v_i0])
    for i0, k in T.grid(1, 1000):
        with T.block("T_softmax_expsum"):
            v_i0, v_k = T.axis.remap("SR", [i0, k])
            with T.init():
                T_softmax_expsum[v_i0] = T.float32(0)
            T_softmax_expsum[v_i0] = T_softmax_expsum[v_i0] + T_softmax_exp[v_i0, v_k]
    for i0, i1 in T.grid(1, 1000):
        with T.block("T_softmax_norm"):
            v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
            T.block_attr({"axis": 1})
            T_softmax_norm[v_i0, v_i1] = T_softmax_exp[v_i0, v_i1] / T_softmax_expsum[v_i0]

@T.prim_func
def softmax_1000_b64(A: T.Buffer((64, 1000), "float32"), O: T.Buffer((64, 1000), "float32")):
    for i in T.parallel(64):
        mx = T.alloc_buffer((1,), "float32")
        sm = T.alloc_buffer((1,), "float32")
        mx[0] = T.float32(-3.4028234663852886e+38)
        for j in range(1000):
            mx[0] = T.max(mx[0], A[i, j])
        sm[0] = T.float32(0)
        for j in range(1000):
            O[i, j] = T.exp(A[i, j] - mx[0])
            sm[0] = sm[0] + O[i, j]
        for j in range(1000):
            O[i, j] = O[i, j] / sm[0]

@T.prim_func
def bn_relu_56(data: T.Buffer((1, 64, 56, 56), "float32"), gamma: T.Buffer((64,), "float32"), beta: T.Buffer((64,), "float32"),
               moving_mean: T.Buffer((64,), "float32"), moving_var: T.Buffer((64,), "float32"),
               T_relu: T.Buffer((1, 64, 56, 56), "float32")):
    T_batch_norm = T.alloc_buffer((1, 64, 56, 56))
    for ax0, ax1, ax2, ax3 in T.grid(1, 64, 56, 56):
        with T.block("T_batch_norm"):
            v_ax0, v_ax1, v_ax2, v_ax3 = T.axis.remap("SSSS", [ax0, ax1, ax2, ax3])
            T_batch_norm[v_ax0, v_ax1, v_ax2, v_ax3] = (data[v_ax0, v_ax1, v_ax2, v_ax3] - moving_mean[v_ax1]) / T.sqrt(moving_var[v_ax1] + T.float32(1.0000000000000001e-05)) * gamma[v_ax1] + beta[v_ax1]
    for ax0, ax1, ax2, ax3 in T.grid(1, 64, 56, 56):
        with T.block("T_relu"):
            v_ax0, v_ax1, v_ax2, v_ax3 = T.axis.remap("SSSS", [ax0, ax1, ax2, ax3])
            T_relu[v_ax0, v_ax1, v_ax2, v_ax3] = T.max(T_batch_norm[v_ax0, v_ax1, v_ax2, v_ax3], T.float32(0))

@T.prim_func
def vit_qkv_197(data: T.Buffer((197, 768), "float32"), weight: T.Buffer((2304, 768), "float32"),
                bias: T.Buffer((2304,), "float32"), T_add: T.Buffer((197, 2304), "float32")):
    T_matmul_NT = T.alloc_buffer((197, 2304))
    for i, j, k in T.grid(197, 2304, 768):
        with T.block("T_matmul_NT"):
            v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
            with T.init():
                T_matmul_NT[v_i, v_j] = T.float32(0)
            T_matmul_NT[v_i, v_j] = T_matmul_NT[v_i, v_j] + data[v_i, v_k] * weight[v_j, v_k]
    for ax0, ax1 in T.grid(197, 2304):
        with T.block("T_add"):
            v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
            T_add[v_ax0, v_ax1] = T_matmul_NT[v_ax0, v_ax1] + bias[v_ax1]
'''

#: Kernel -> how many of its last arguments are outputs (1 unless listed).
OUTPUTS: dict[str, int] = {}

#: Kernels TVM 0.27 refuses however they are written (their ``tvm`` cell stays empty).
TVM_REFUSES: dict[str, str] = {}


def inputs(seed: int = 0) -> dict[str, list[np.ndarray]]:
    """Arguments of every kernel, 64-byte aligned (outputs last)."""
    rng = np.random.default_rng(seed)

    f = lambda *s: rng.standard_normal(s).astype("float32")  # noqa: E731
    z = lambda *s: np.zeros(s, "float32")  # noqa: E731
    pos = lambda *s: rng.uniform(0.5, 2.0, s).astype("float32")  # noqa: E731
    raw = {
        "dense_fc1000": [f(1, 2048), f(1000, 2048) * np.float32(0.02), f(1000), z(1, 1000)],
        "dense_fc1000_b64": [f(64, 2048), f(1000, 2048) * np.float32(0.02), f(1000), z(64, 1000)],
        "gap_2048_7x7": [f(1, 2048, 7, 7), z(1, 2048, 1, 1)],
        "conv3x3_c512_7x7": [f(1, 512, 7, 7), f(512, 512, 3, 3) * np.float32(0.02), z(1, 512, 7, 7)],
        "conv3x3_c256_14x14_relu": [f(1, 256, 14, 14), f(256, 256, 3, 3) * np.float32(0.03),
                                    f(1, 256, 1, 1), z(1, 256, 14, 14)],
        "stem_conv7x7_s2": [f(1, 3, 224, 224), f(64, 3, 7, 7) * np.float32(0.1), z(1, 64, 112, 112)],
        "maxpool3x3_s2": [f(1, 64, 112, 112), z(1, 64, 56, 56)],
        "dwconv3x3_nchw_112": [f(1, 32, 112, 112), f(32, 1, 3, 3), z(1, 32, 112, 112)],
        "dwconv3x3_nhwc_112": [f(1, 112, 112, 32), f(3, 3, 32, 1), z(1, 112, 112, 32)],
        "pwconv_32_64_112": [f(1, 32, 112, 112), f(64, 32, 1, 1) * np.float32(0.2), z(1, 64, 112, 112)],
        "bert_fc1_gelu": [f(384, 768), f(3072, 768) * np.float32(0.04), f(3072), z(384, 3072)],
        "layernorm_768": [f(384, 768) * np.float32(3) + np.float32(1), f(768), f(768), z(384, 768)],
        "attn_scores_384": [f(12, 384, 64), f(12, 384, 64), z(12, 384, 384)],
        "softmax_384": [f(12, 384, 384) * np.float32(3), z(12, 384, 384)],
        "softmax_1000": [f(1, 1000) * np.float32(4), z(1, 1000)],
        "softmax_1000_b64": [f(64, 1000) * np.float32(4), z(64, 1000)],
        "bn_relu_56": [f(1, 64, 56, 56), f(64), f(64), f(64) * np.float32(0.1), pos(64),
                       z(1, 64, 56, 56)],
        "vit_qkv_197": [f(197, 768), f(2304, 768) * np.float32(0.04), f(2304), z(197, 2304)],
    }
    return {name: [aligned_copy(a) for a in args] for name, args in raw.items()}


def _conv_nchw(x: np.ndarray, w: np.ndarray, stride: int, pad: int) -> np.ndarray:
    """Batch-1 NCHW cross-correlation in float64 (one einsum per tap)."""
    F, _, KH, KW = w.shape
    xp = np.pad(x[0], ((0, 0), (pad, pad), (pad, pad)))
    H = (xp.shape[1] - KH) // stride + 1
    W = (xp.shape[2] - KW) // stride + 1
    out = np.zeros((F, H, W))
    for ky in range(KH):
        for kx in range(KW):
            win = xp[:, ky:ky + stride * (H - 1) + 1:stride, kx:kx + stride * (W - 1) + 1:stride]
            out += np.einsum("chw,fc->fhw", win, w[:, :, ky, kx])
    return out[None]


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def reference(name: str, args: list[np.ndarray]) -> list[np.ndarray]:
    """numpy's outputs of ``name`` on ``args`` (float64)."""
    a = [x.astype("float64") for x in args]
    if name in ("dense_fc1000", "dense_fc1000_b64", "vit_qkv_197"):
        return [a[0] @ a[1].T + a[2]]
    if name == "gap_2048_7x7":
        return [a[0].mean((2, 3), keepdims=True)]
    if name == "conv3x3_c512_7x7":
        return [_conv_nchw(a[0], a[1], 1, 1)]
    if name == "conv3x3_c256_14x14_relu":
        return [np.maximum(_conv_nchw(a[0], a[1], 1, 1) + a[2], 0)]
    if name == "stem_conv7x7_s2":
        return [_conv_nchw(a[0], a[1], 2, 3)]
    if name == "maxpool3x3_s2":
        x = np.pad(a[0], ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=-np.inf)
        return [np.max([x[:, :, ky:ky + 111:2, kx:kx + 111:2] for ky in range(3) for kx in range(3)], 0)]
    if name == "dwconv3x3_nchw_112":
        x = np.pad(a[0], ((0, 0), (0, 0), (1, 1), (1, 1)))
        return [sum(x[:, :, ky:ky + 112, kx:kx + 112] * a[1][None, :, 0, ky, kx, None, None]
                    for ky in range(3) for kx in range(3))]
    if name == "dwconv3x3_nhwc_112":
        x = np.pad(a[0], ((0, 0), (1, 1), (1, 1), (0, 0)))
        return [sum(x[:, ky:ky + 112, kx:kx + 112, :] * a[1][ky, kx, :, 0]
                    for ky in range(3) for kx in range(3))]
    if name == "pwconv_32_64_112":
        return [np.einsum("nchw,fc->nfhw", a[0], a[1][:, :, 0, 0])]
    if name == "bert_fc1_gelu":
        from math import erf
        y = a[0] @ a[1].T + a[2]
        return [y * (0.5 + np.vectorize(erf)(y * 0.7071067811865476) * 0.5)]
    if name == "layernorm_768":
        mu = a[0].mean(-1, keepdims=True)
        var = a[0].var(-1, keepdims=True)
        return [(a[0] - mu) / np.sqrt(var + 1e-5) * a[1] + a[2]]
    if name == "attn_scores_384":
        return [np.einsum("bid,bjd->bij", a[0], a[1]) * 0.125]
    if name in ("softmax_384", "softmax_1000", "softmax_1000_b64"):
        return [_softmax(a[0])]
    if name == "bn_relu_56":
        g, b, m, v = (t[None, :, None, None] for t in a[1:5])
        return [np.maximum((a[0] - m) / np.sqrt(v + 1e-5) * g + b, 0)]
    raise KeyError(name)


KERNELS = KernelSet(
    tag="tvm_style13",
    source=SOURCE,
    numba_module="benchmarks._numba_tvm_style13",
    inputs=inputs,
    reference=reference,
    agrees=agrees,
    outputs=OUTPUTS,
    tvm_refuses=TVM_REFUSES,
)
"""The set's driver (``benchmarks/kernel_sets.py``)."""


if __name__ == "__main__":
    KERNELS.main(__doc__)
