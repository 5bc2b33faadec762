"""A ninth set of TVM-style kernels: operators as TVM's TE/TOPI definitions print them
(``te.create_prim_func``: a root block, one block per stage, ``T.axis.remap``, reads and
writes), unscheduled, next to TVM 0.27 and numba.

Run like ``tvm_style8.py``: the x86 ``NCHW[x]c`` convolution with its padding stage
(``conv2d_nchwc``) and its depthwise form (``dwconv_nchwc``), ``depth_to_space`` (pixel
shuffle), GELU in its ``erf`` form, an LSTM cell's gates (two outputs), a global max pool,
``flip`` along the last axis, ``im2col`` of a padded 3x3 window, a strided slice, and
``log_softmax`` as TOPI builds it (max, sum of exponentials, then ``x - max - log(sum)``),
a grouped convolution (4 groups, the group's input channels at ``ff // 16 * 16 + rc``) and
a transposed convolution of stride 2 as TOPI lowers it (dilate, pad, flip the kernel,
convolve).

Ratios are peer ms / our ms (> 1: we are faster); ``!`` marks an output that differs from
ours. ``--check`` compares every side with a numpy reference instead of timing::

    PYTHONPATH=. /work/peers/bin/python benchmarks/tvm_style9.py [--rounds 3] [--only a,b] [--check]
"""

# ruff: noqa: E501 - TVMScript sources as TVM prints them

from __future__ import annotations

import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import numpy as np

from benchmarks.kernel_sets import KernelSet
from benchmarks.kernel_sets import agrees_closely as agrees
from benchmarks.peers import aligned_copy

SOURCE = r'''
@T.prim_func
def conv2d_nchwc(data: T.Buffer((1, 8, 56, 56, 8), "float32"), kernel: T.Buffer((8, 8, 3, 3, 8, 8), "float32"), conv2d_NCHWc: T.Buffer((1, 8, 56, 56, 8), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    data_pad = T.alloc_buffer((1, 8, 58, 58, 8))
    for i0, i1, i2, i3, i4 in T.grid(1, 8, 58, 58, 8):
        with T.block("data_pad"):
            v_i0, v_i1, v_i2, v_i3, v_i4 = T.axis.remap("SSSSS", [i0, i1, i2, i3, i4])
            T.reads(data[v_i0, v_i1, v_i2 - 1, v_i3 - 1, v_i4])
            T.writes(data_pad[v_i0, v_i1, v_i2, v_i3, v_i4])
            data_pad[v_i0, v_i1, v_i2, v_i3, v_i4] = T.if_then_else(1 <= v_i2 and v_i2 < 57 and 1 <= v_i3 and v_i3 < 57, data[v_i0, v_i1, v_i2 - 1, v_i3 - 1, v_i4], T.float32(0))
    for n, oc_chunk, oh, ow, oc_block, ic, kh, kw in T.grid(1, 8, 56, 56, 8, 64, 3, 3):
        with T.block("conv2d_NCHWc"):
            v_n, v_oc_chunk, v_oh, v_ow, v_oc_block, v_ic, v_kh, v_kw = T.axis.remap("SSSSSRRR", [n, oc_chunk, oh, ow, oc_block, ic, kh, kw])
            T.reads(data_pad[v_n, v_ic // 8, v_oh + v_kh, v_ow + v_kw, v_ic % 8], kernel[v_oc_chunk, v_ic // 8, v_kh, v_kw, v_ic % 8, v_oc_block])
            T.writes(conv2d_NCHWc[v_n, v_oc_chunk, v_oh, v_ow, v_oc_block])
            with T.init():
                conv2d_NCHWc[v_n, v_oc_chunk, v_oh, v_ow, v_oc_block] = T.float32(0)
            conv2d_NCHWc[v_n, v_oc_chunk, v_oh, v_ow, v_oc_block] = conv2d_NCHWc[v_n, v_oc_chunk, v_oh, v_ow, v_oc_block] + data_pad[v_n, v_ic // 8, v_oh + v_kh, v_ow + v_kw, v_ic % 8] * kernel[v_oc_chunk, v_ic // 8, v_kh, v_kw, v_ic % 8, v_oc_block]

@T.prim_func
def dwconv_nchwc(data: T.Buffer((1, 8, 56, 56, 8), "float32"), kernel: T.Buffer((8, 1, 3, 3, 1, 8), "float32"), DepthwiseConv2d: T.Buffer((1, 8, 56, 56, 8), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    PaddedInput = T.alloc_buffer((1, 8, 58, 58, 8))
    for i0, i1, i2, i3, i4 in T.grid(1, 8, 58, 58, 8):
        with T.block("PaddedInput"):
            v_i0, v_i1, v_i2, v_i3, v_i4 = T.axis.remap("SSSSS", [i0, i1, i2, i3, i4])
            T.reads(data[v_i0, v_i1, v_i2 - 1, v_i3 - 1, v_i4])
            T.writes(PaddedInput[v_i0, v_i1, v_i2, v_i3, v_i4])
            PaddedInput[v_i0, v_i1, v_i2, v_i3, v_i4] = T.if_then_else(1 <= v_i2 and v_i2 < 57 and 1 <= v_i3 and v_i3 < 57, data[v_i0, v_i1, v_i2 - 1, v_i3 - 1, v_i4], T.float32(0))
    for b, oco, oh, ow, oci, kh, kw in T.grid(1, 8, 56, 56, 8, 3, 3):
        with T.block("DepthwiseConv2d"):
            v_b, v_oco, v_oh, v_ow, v_oci, v_kh, v_kw = T.axis.remap("SSSSSRR", [b, oco, oh, ow, oci, kh, kw])
            T.reads(PaddedInput[v_b, v_oco, v_oh + v_kh, v_ow + v_kw, v_oci], kernel[v_oco, 0, v_kh, v_kw, 0, v_oci])
            T.writes(DepthwiseConv2d[v_b, v_oco, v_oh, v_ow, v_oci])
            with T.init():
                DepthwiseConv2d[v_b, v_oco, v_oh, v_ow, v_oci] = T.float32(0)
            DepthwiseConv2d[v_b, v_oco, v_oh, v_ow, v_oci] = DepthwiseConv2d[v_b, v_oco, v_oh, v_ow, v_oci] + PaddedInput[v_b, v_oco, v_oh + v_kh, v_ow + v_kw, v_oci] * kernel[v_oco, 0, v_kh, v_kw, 0, v_oci]

@T.prim_func
def depth_to_space(data: T.Buffer((1, 64, 112, 112), "float32"), depth_to_space: T.Buffer((1, 16, 224, 224), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    for i0, i1, i2, i3 in T.grid(1, 16, 224, 224):
        with T.block("depth_to_space"):
            v_i0, v_i1, v_i2, v_i3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
            T.reads(data[v_i0, (v_i2 % 2 * 2 + v_i3 % 2) * 16 + v_i1, v_i2 // 2, v_i3 // 2])
            T.writes(depth_to_space[v_i0, v_i1, v_i2, v_i3])
            depth_to_space[v_i0, v_i1, v_i2, v_i3] = data[v_i0, (v_i2 % 2 * 2 + v_i3 % 2) * 16 + v_i1, v_i2 // 2, v_i3 // 2]

@T.prim_func
def gelu_erf(x: T.Buffer((2048, 2048), "float32"), T_gelu: T.Buffer((2048, 2048), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    for ax0, ax1 in T.grid(2048, 2048):
        with T.block("T_gelu"):
            v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
            T.reads(x[v_ax0, v_ax1])
            T.writes(T_gelu[v_ax0, v_ax1])
            T_gelu[v_ax0, v_ax1] = T.float32(0.5) * x[v_ax0, v_ax1] * (T.float32(1) + T.erf(x[v_ax0, v_ax1] * T.float32(0.70710678118654757)))

@T.prim_func
def lstm_gates(gates: T.Buffer((256, 2048), "float32"), c: T.Buffer((256, 512), "float32"), c_next: T.Buffer((256, 512), "float32"), h_next: T.Buffer((256, 512), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    for i, j in T.grid(256, 512):
        with T.block("c_next"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            T.reads(gates[v_i, v_j:v_j + 1537], c[v_i, v_j])
            T.writes(c_next[v_i, v_j])
            c_next[v_i, v_j] = T.sigmoid(gates[v_i, v_j + 512]) * c[v_i, v_j] + T.sigmoid(gates[v_i, v_j]) * T.tanh(gates[v_i, v_j + 1536])
    for i, j in T.grid(256, 512):
        with T.block("h_next"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            T.reads(gates[v_i, v_j + 1024], c_next[v_i, v_j])
            T.writes(h_next[v_i, v_j])
            h_next[v_i, v_j] = T.sigmoid(gates[v_i, v_j + 1024]) * T.tanh(c_next[v_i, v_j])

@T.prim_func
def global_maxpool(data: T.Buffer((8, 512, 28, 28), "float32"), adaptive_pool_max: T.Buffer((8, 512, 1, 1), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    for ax0, ax1, ax2, ax3, rv0, rv1 in T.grid(8, 512, 1, 1, 28, 28):
        with T.block("adaptive_pool_max"):
            v_ax0, v_ax1, v_ax2, v_ax3, v_rv0, v_rv1 = T.axis.remap("SSSSRR", [ax0, ax1, ax2, ax3, rv0, rv1])
            T.reads(data[v_ax0, v_ax1, v_ax2 * 28 + v_rv0, v_ax3 * 28 + v_rv1])
            T.writes(adaptive_pool_max[v_ax0, v_ax1, v_ax2, v_ax3])
            with T.init():
                adaptive_pool_max[v_ax0, v_ax1, v_ax2, v_ax3] = T.float32(-3.4028234663852886e+38)
            adaptive_pool_max[v_ax0, v_ax1, v_ax2, v_ax3] = T.max(adaptive_pool_max[v_ax0, v_ax1, v_ax2, v_ax3], data[v_ax0, v_ax1, v_ax2 * 28 + v_rv0, v_ax3 * 28 + v_rv1])

@T.prim_func
def flip_last(data: T.Buffer((4096, 1024), "float32"), T_reverse_sequence: T.Buffer((4096, 1024), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    for ax0, ax1 in T.grid(4096, 1024):
        with T.block("T_reverse_sequence"):
            v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
            T.reads(data[v_ax0, 1023 - v_ax1])
            T.writes(T_reverse_sequence[v_ax0, v_ax1])
            T_reverse_sequence[v_ax0, v_ax1] = data[v_ax0, 1023 - v_ax1]

@T.prim_func
def im2col(data: T.Buffer((1, 64, 56, 56), "float32"), col: T.Buffer((576, 3136), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    for r, p in T.grid(576, 3136):
        with T.block("col"):
            v_r, v_p = T.axis.remap("SS", [r, p])
            T.reads(data[0, v_r // 9, v_p // 56 + v_r % 9 // 3 - 1, v_p % 56 + v_r % 3 - 1])
            T.writes(col[v_r, v_p])
            col[v_r, v_p] = T.if_then_else(1 <= v_p // 56 + v_r % 9 // 3 and v_p // 56 + v_r % 9 // 3 < 57 and 1 <= v_p % 56 + v_r % 3 and v_p % 56 + v_r % 3 < 57, data[0, v_r // 9, v_p // 56 + v_r % 9 // 3 - 1, v_p % 56 + v_r % 3 - 1], T.float32(0))

@T.prim_func
def strided_slice(data: T.Buffer((4096, 3072), "float32"), T_strided_slice: T.Buffer((2048, 1024), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    for ax0, ax1 in T.grid(2048, 1024):
        with T.block("T_strided_slice"):
            v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
            T.reads(data[v_ax0 * 2 + 1, v_ax1 * 3])
            T.writes(T_strided_slice[v_ax0, v_ax1])
            T_strided_slice[v_ax0, v_ax1] = data[v_ax0 * 2 + 1, v_ax1 * 3]

@T.prim_func
def log_softmax(x: T.Buffer((4096, 1024), "float32"), T_log_softmax: T.Buffer((4096, 1024), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    T_softmax_maxelem = T.alloc_buffer((4096,))
    compute = T.alloc_buffer((4096,))
    for i0, k in T.grid(4096, 1024):
        with T.block("T_softmax_maxelem"):
            v_i0, v_k = T.axis.remap("SR", [i0, k])
            T.reads(x[v_i0, v_k])
            T.writes(T_softmax_maxelem[v_i0])
            with T.init():
                T_softmax_maxelem[v_i0] = T.float32(-3.4028234663852886e+38)
            T_softmax_maxelem[v_i0] = T.max(T_softmax_maxelem[v_i0], x[v_i0, v_k])
    for i0, k in T.grid(4096, 1024):
        with T.block("compute"):
            v_i0, v_k = T.axis.remap("SR", [i0, k])
            T.reads(x[v_i0, v_k], T_softmax_maxelem[v_i0])
            T.writes(compute[v_i0])
            with T.init():
                compute[v_i0] = T.float32(0)
            compute[v_i0] = compute[v_i0] + T.exp(x[v_i0, v_k] - T_softmax_maxelem[v_i0])
    for i0, i1 in T.grid(4096, 1024):
        with T.block("T_log_softmax"):
            v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
            T.reads(x[v_i0, v_i1], T_softmax_maxelem[v_i0], compute[v_i0])
            T.writes(T_log_softmax[v_i0, v_i1])
            T_log_softmax[v_i0, v_i1] = x[v_i0, v_i1] - T_softmax_maxelem[v_i0] - T.log(compute[v_i0])
@T.prim_func
def group_conv2d(data: T.Buffer((1, 64, 56, 56), "float32"), kernel: T.Buffer((64, 16, 3, 3), "float32"), group_conv2d_nchw: T.Buffer((1, 64, 56, 56), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    pad_temp = T.alloc_buffer((1, 64, 58, 58))
    for i0, i1, i2, i3 in T.grid(1, 64, 58, 58):
        with T.block("pad_temp"):
            v_i0, v_i1, v_i2, v_i3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
            T.reads(data[v_i0, v_i1, v_i2 - 1, v_i3 - 1])
            T.writes(pad_temp[v_i0, v_i1, v_i2, v_i3])
            pad_temp[v_i0, v_i1, v_i2, v_i3] = T.if_then_else(1 <= v_i2 and v_i2 < 57 and 1 <= v_i3 and v_i3 < 57, data[v_i0, v_i1, v_i2 - 1, v_i3 - 1], T.float32(0))
    for nn, ff, yy, xx, rc, ry, rx in T.grid(1, 64, 56, 56, 16, 3, 3):
        with T.block("group_conv2d_nchw"):
            v_nn, v_ff, v_yy, v_xx, v_rc, v_ry, v_rx = T.axis.remap("SSSSRRR", [nn, ff, yy, xx, rc, ry, rx])
            T.reads(pad_temp[v_nn, v_ff // 16 * 16 + v_rc, v_yy + v_ry, v_xx + v_rx], kernel[v_ff, v_rc, v_ry, v_rx])
            T.writes(group_conv2d_nchw[v_nn, v_ff, v_yy, v_xx])
            with T.init():
                group_conv2d_nchw[v_nn, v_ff, v_yy, v_xx] = T.float32(0)
            group_conv2d_nchw[v_nn, v_ff, v_yy, v_xx] = group_conv2d_nchw[v_nn, v_ff, v_yy, v_xx] + pad_temp[v_nn, v_ff // 16 * 16 + v_rc, v_yy + v_ry, v_xx + v_rx] * kernel[v_ff, v_rc, v_ry, v_rx]

@T.prim_func
def conv2d_transpose(data: T.Buffer((1, 64, 32, 32), "float32"), kernel: T.Buffer((64, 32, 4, 4), "float32"), compute: T.Buffer((1, 32, 64, 64), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    data_dilate = T.alloc_buffer((1, 64, 63, 63))
    data_pad = T.alloc_buffer((1, 64, 67, 67))
    kernel_transform = T.alloc_buffer((32, 64, 4, 4))
    for i0, i1, i2, i3 in T.grid(1, 64, 63, 63):
        with T.block("data_dilate"):
            v_i0, v_i1, v_i2, v_i3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
            T.reads(data[v_i0, v_i1, v_i2 // 2, v_i3 // 2])
            T.writes(data_dilate[v_i0, v_i1, v_i2, v_i3])
            data_dilate[v_i0, v_i1, v_i2, v_i3] = T.if_then_else(v_i2 % 2 == 0 and v_i3 % 2 == 0, data[v_i0, v_i1, v_i2 // 2, v_i3 // 2], T.float32(0))
    for i0, i1, i2, i3 in T.grid(1, 64, 67, 67):
        with T.block("data_pad"):
            v_i0, v_i1, v_i2, v_i3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
            T.reads(data_dilate[v_i0, v_i1, v_i2 - 2, v_i3 - 2])
            T.writes(data_pad[v_i0, v_i1, v_i2, v_i3])
            data_pad[v_i0, v_i1, v_i2, v_i3] = T.if_then_else(2 <= v_i2 and v_i2 < 65 and 2 <= v_i3 and v_i3 < 65, data_dilate[v_i0, v_i1, v_i2 - 2, v_i3 - 2], T.float32(0))
    for o, i, h, w in T.grid(32, 64, 4, 4):
        with T.block("kernel_transform"):
            v_o, v_i, v_h, v_w = T.axis.remap("SSSS", [o, i, h, w])
            T.reads(kernel[v_i, v_o, 3 - v_h, 3 - v_w])
            T.writes(kernel_transform[v_o, v_i, v_h, v_w])
            kernel_transform[v_o, v_i, v_h, v_w] = kernel[v_i, v_o, 3 - v_h, 3 - v_w]
    for b, c, h, w, dc, dh, dw in T.grid(1, 32, 64, 64, 64, 4, 4):
        with T.block("compute"):
            v_b, v_c, v_h, v_w, v_dc, v_dh, v_dw = T.axis.remap("SSSSRRR", [b, c, h, w, dc, dh, dw])
            T.reads(data_pad[v_b, v_dc, v_h + v_dh, v_w + v_dw], kernel_transform[v_c, v_dc, v_dh, v_dw])
            T.writes(compute[v_b, v_c, v_h, v_w])
            with T.init():
                compute[v_b, v_c, v_h, v_w] = T.float32(0)
            compute[v_b, v_c, v_h, v_w] = compute[v_b, v_c, v_h, v_w] + data_pad[v_b, v_dc, v_h + v_dh, v_w + v_dw] * kernel_transform[v_c, v_dc, v_dh, v_dw]
'''

#: Kernel -> how many of its last arguments are outputs (1 unless listed).
OUTPUTS: dict[str, int] = {"lstm_gates": 2}

#: Kernels TVM 0.27 cannot build, with the reason (none).
TVM_REFUSES: dict[str, str] = {}


def inputs(seed: int = 0) -> dict[str, list[np.ndarray]]:
    """Arguments of every kernel, 64-byte aligned (outputs last)."""
    rng = np.random.default_rng(seed)

    f = lambda *s: rng.standard_normal(s).astype("float32")  # noqa: E731
    z = lambda *s: np.zeros(s, "float32")  # noqa: E731
    raw = {
        "conv2d_nchwc": [f(1, 8, 56, 56, 8), f(8, 8, 3, 3, 8, 8), z(1, 8, 56, 56, 8)],
        "dwconv_nchwc": [f(1, 8, 56, 56, 8), f(8, 1, 3, 3, 1, 8), z(1, 8, 56, 56, 8)],
        "depth_to_space": [f(1, 64, 112, 112), z(1, 16, 224, 224)],
        "gelu_erf": [f(2048, 2048), z(2048, 2048)],
        "lstm_gates": [f(256, 2048), f(256, 512), z(256, 512), z(256, 512)],
        "global_maxpool": [f(8, 512, 28, 28), z(8, 512, 1, 1)],
        "flip_last": [f(4096, 1024), z(4096, 1024)],
        "im2col": [f(1, 64, 56, 56), z(576, 3136)],
        "strided_slice": [f(4096, 3072), z(2048, 1024)],
        "log_softmax": [f(4096, 1024), z(4096, 1024)],
        "group_conv2d": [f(1, 64, 56, 56), f(64, 16, 3, 3), z(1, 64, 56, 56)],
        "conv2d_transpose": [f(1, 64, 32, 32), f(64, 32, 4, 4), z(1, 32, 64, 64)],
    }
    return {name: [aligned_copy(a) for a in args] for name, args in raw.items()}


def _sigmoid(v: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-v))


def reference(name: str, args: list[np.ndarray]) -> list[np.ndarray]:
    """numpy's outputs of ``name`` on ``args`` (float64)."""
    a = [x.astype("float64") for x in args]
    if name in ("conv2d_nchwc", "dwconv_nchwc"):
        pad = np.pad(a[0], ((0, 0), (0, 0), (1, 1), (1, 1), (0, 0)))
        out = np.zeros(a[-1].shape)
        for kh in range(3):
            for kw in range(3):
                window = pad[:, :, kh:kh + 56, kw:kw + 56, :]  # n, icc, oh, ow, ic8
                if name == "conv2d_nchwc":
                    out += np.einsum("nchwi,qcio->nqhwo", window, a[1][:, :, kh, kw])
                else:
                    taps = a[1][:, 0, kh, kw, 0, :]  # channel chunk, channel in chunk
                    out += window * taps[None, :, None, None, :]
        return [out]
    if name == "depth_to_space":
        x = a[0].reshape(1, 2, 2, 16, 112, 112)  # n, by, bx, c, h, w
        return [x.transpose(0, 3, 4, 1, 5, 2).reshape(1, 16, 224, 224)]
    if name == "gelu_erf":
        erf = np.vectorize(math.erf)
        return [0.5 * a[0] * (1 + erf(a[0] / math.sqrt(2)))]
    if name == "lstm_gates":
        g, c = a[0], a[1]
        i, f, o, cand = g[:, :512], g[:, 512:1024], g[:, 1024:1536], g[:, 1536:]
        c_next = _sigmoid(f) * c + _sigmoid(i) * np.tanh(cand)
        return [c_next, _sigmoid(o) * np.tanh(c_next)]
    if name == "global_maxpool":
        return [a[0].max(axis=(2, 3), keepdims=True)]
    if name == "flip_last":
        return [a[0][:, ::-1]]
    if name == "im2col":
        pad = np.pad(a[0][0], ((0, 0), (1, 1), (1, 1)))
        rows = [pad[c, kh:kh + 56, kw:kw + 56].reshape(-1)
                for c in range(64) for kh in range(3) for kw in range(3)]
        return [np.stack(rows)]
    if name == "strided_slice":
        return [a[0][1::2, ::3]]
    if name == "log_softmax":
        x = a[0]
        m = x.max(axis=1, keepdims=True)
        return [x - m - np.log(np.exp(x - m).sum(axis=1, keepdims=True))]
    if name == "group_conv2d":
        pad = np.pad(a[0][0], ((0, 0), (1, 1), (1, 1)))
        out = np.zeros((64, 56, 56))
        for f in range(64):
            g = f // 16
            for kh in range(3):
                for kw in range(3):
                    window = pad[g * 16:(g + 1) * 16, kh:kh + 56, kw:kw + 56]
                    out[f] += np.tensordot(a[1][f, :, kh, kw], window, axes=1)
        return [out[None]]
    if name == "conv2d_transpose":
        # stride 2, padding 1: input pixel (y, x) adds kernel[c, o, kh, kw] at 2y - 1 + kh
        full = np.zeros((32, 66, 66))
        for kh in range(4):
            for kw in range(4):
                full[:, kh:kh + 64:2, kw:kw + 64:2] += np.einsum(
                    "cyx,co->oyx", a[0][0], a[1][:, :, kh, kw])
        return [full[None, :, 1:65, 1:65]]
    raise KeyError(name)


KERNELS = KernelSet(
    tag="tvm_style9",
    source=SOURCE,
    numba_module="benchmarks._numba_tvm_style9",
    inputs=inputs,
    reference=reference,
    agrees=agrees,
    outputs=OUTPUTS,
    tvm_refuses=TVM_REFUSES,
)
"""The set's driver (``benchmarks/kernel_sets.py``)."""


if __name__ == "__main__":
    KERNELS.main(__doc__)
