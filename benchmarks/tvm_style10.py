"""A tenth set of TVM-style kernels: the strided and transposed forms of common operators,
as TE/TOPI definitions print them (unscheduled), next to TVM 0.27 and numba.

Beside ``tvm_style.py`` .. ``tvm_style9.py`` (none of their kernels again), run the same
way: our ``tvmscript.build`` with default options, TVM 0.27 on the *same source*
(``tirx``, host ``mcpu``) and the fastest numba twin (``_numba_tvm_style10.py``). A
stride-2 3 x 3 convolution with its padding stage (ResNet's downsampling layers), its
depthwise form, a dilated (2) convolution, a softmax down the columns, a matmul of
``A^T B``, an average pool that leaves the padding out of its count, an int32 -> int8
requantization with ``T.q_multiply_shift``, a sum over the middle axis, a max pool and a
depthwise convolution in NHWC with their padding stages, an argmax down the columns
(TVM's tuple reduction), a quantized dense layer (uint8 activations, int8 weights, int32
sums) and an int8 batch matmul.

Ratios are peer ms / our ms (> 1: we are faster); ``!`` marks an output that differs from
ours. ``--check`` compares every side with a numpy reference instead of timing::

    PYTHONPATH=. /work/peers/bin/python benchmarks/tvm_style10.py [--rounds 3] [--only a,b] [--check]
"""

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
def conv2d_s2(data: T.Buffer((1, 64, 56, 56), "float32"), kernel: T.Buffer((128, 64, 3, 3), "float32"),
              conv: T.Buffer((1, 128, 28, 28), "float32")):
    pad_temp = T.alloc_buffer((1, 64, 58, 58))
    for i0, i1, i2, i3 in T.grid(1, 64, 58, 58):
        with T.block("pad_temp"):
            v_i0, v_i1, v_i2, v_i3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
            pad_temp[v_i0, v_i1, v_i2, v_i3] = T.if_then_else(1 <= v_i2 and v_i2 < 57 and 1 <= v_i3 and v_i3 < 57, data[v_i0, v_i1, v_i2 - 1, v_i3 - 1], T.float32(0))
    for nn, ff, yy, xx, rc, ry, rx in T.grid(1, 128, 28, 28, 64, 3, 3):
        with T.block("conv2d_nchw"):
            v_nn, v_ff, v_yy, v_xx, v_rc, v_ry, v_rx = T.axis.remap("SSSSRRR", [nn, ff, yy, xx, rc, ry, rx])
            with T.init():
                conv[v_nn, v_ff, v_yy, v_xx] = T.float32(0)
            conv[v_nn, v_ff, v_yy, v_xx] = conv[v_nn, v_ff, v_yy, v_xx] + pad_temp[v_nn, v_rc, v_yy * 2 + v_ry, v_xx * 2 + v_rx] * kernel[v_ff, v_rc, v_ry, v_rx]

@T.prim_func
def dwconv_s2(data: T.Buffer((1, 128, 112, 112), "float32"), kernel: T.Buffer((128, 1, 3, 3), "float32"),
              out: T.Buffer((1, 128, 56, 56), "float32")):
    pad_temp = T.alloc_buffer((1, 128, 114, 114))
    for i0, i1, i2, i3 in T.grid(1, 128, 114, 114):
        with T.block("pad_temp"):
            v_i0, v_i1, v_i2, v_i3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
            pad_temp[v_i0, v_i1, v_i2, v_i3] = T.if_then_else(1 <= v_i2 and v_i2 < 113 and 1 <= v_i3 and v_i3 < 113, data[v_i0, v_i1, v_i2 - 1, v_i3 - 1], T.float32(0))
    for b, c, i, j, di, dj in T.grid(1, 128, 56, 56, 3, 3):
        with T.block("depthwise"):
            v_b, v_c, v_i, v_j, v_di, v_dj = T.axis.remap("SSSSRR", [b, c, i, j, di, dj])
            with T.init():
                out[v_b, v_c, v_i, v_j] = T.float32(0)
            out[v_b, v_c, v_i, v_j] = out[v_b, v_c, v_i, v_j] + pad_temp[v_b, v_c, v_i * 2 + v_di, v_j * 2 + v_dj] * kernel[v_c, 0, v_di, v_dj]

@T.prim_func
def conv2d_dilated(data: T.Buffer((1, 32, 60, 60), "float32"), kernel: T.Buffer((64, 32, 3, 3), "float32"),
                   conv: T.Buffer((1, 64, 56, 56), "float32")):
    for nn, ff, yy, xx, rc, ry, rx in T.grid(1, 64, 56, 56, 32, 3, 3):
        with T.block("conv2d_nchw"):
            v_nn, v_ff, v_yy, v_xx, v_rc, v_ry, v_rx = T.axis.remap("SSSSRRR", [nn, ff, yy, xx, rc, ry, rx])
            with T.init():
                conv[v_nn, v_ff, v_yy, v_xx] = T.float32(0)
            conv[v_nn, v_ff, v_yy, v_xx] = conv[v_nn, v_ff, v_yy, v_xx] + data[v_nn, v_rc, v_yy + v_ry * 2, v_xx + v_rx * 2] * kernel[v_ff, v_rc, v_ry, v_rx]

@T.prim_func
def softmax_axis0(A: T.Buffer((1024, 2048), "float32"), B: T.Buffer((1024, 2048), "float32")):
    maxelem = T.alloc_buffer((2048,))
    expsum = T.alloc_buffer((2048,))
    for j, k in T.grid(2048, 1024):
        with T.block("maxelem"):
            v_j, v_k = T.axis.remap("SR", [j, k])
            with T.init():
                maxelem[v_j] = T.float32(-3.4028234663852886e+38)
            maxelem[v_j] = T.max(maxelem[v_j], A[v_k, v_j])
    for j, k in T.grid(2048, 1024):
        with T.block("expsum"):
            v_j, v_k = T.axis.remap("SR", [j, k])
            with T.init():
                expsum[v_j] = T.float32(0)
            expsum[v_j] = expsum[v_j] + T.exp(A[v_k, v_j] - maxelem[v_j])
    for i, j in T.grid(1024, 2048):
        with T.block("norm"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            B[v_i, v_j] = T.exp(A[v_i, v_j] - maxelem[v_j]) / expsum[v_j]

@T.prim_func
def matmul_tn_block(A: T.Buffer((512, 1024), "float32"), B: T.Buffer((512, 1024), "float32"),
                    C: T.Buffer((1024, 1024), "float32")):
    for i, j, k in T.grid(1024, 1024, 512):
        with T.block("T_matmul_TN"):
            v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[v_i, v_j] = T.float32(0)
            C[v_i, v_j] = C[v_i, v_j] + A[v_k, v_i] * B[v_k, v_j]

@T.prim_func
def avgpool_exclude_pad(data: T.Buffer((8, 64, 56, 56), "float32"), pool_avg: T.Buffer((8, 64, 28, 28), "float32")):
    pool_sum = T.alloc_buffer((8, 64, 28, 28))
    for ax0, ax1, ax2, ax3, rv0, rv1 in T.grid(8, 64, 28, 28, 3, 3):
        with T.block("pool_sum"):
            v_ax0, v_ax1, v_ax2, v_ax3, v_rv0, v_rv1 = T.axis.remap("SSSSRR", [ax0, ax1, ax2, ax3, rv0, rv1])
            with T.init():
                pool_sum[v_ax0, v_ax1, v_ax2, v_ax3] = T.float32(0)
            pool_sum[v_ax0, v_ax1, v_ax2, v_ax3] = pool_sum[v_ax0, v_ax1, v_ax2, v_ax3] + T.if_then_else(1 <= v_ax2 * 2 + v_rv0 and v_ax2 * 2 + v_rv0 < 57 and 1 <= v_ax3 * 2 + v_rv1 and v_ax3 * 2 + v_rv1 < 57, data[v_ax0, v_ax1, v_ax2 * 2 + v_rv0 - 1, v_ax3 * 2 + v_rv1 - 1], T.float32(0))
    for ax0, ax1, ax2, ax3 in T.grid(8, 64, 28, 28):
        with T.block("pool_avg"):
            v_ax0, v_ax1, v_ax2, v_ax3 = T.axis.remap("SSSS", [ax0, ax1, ax2, ax3])
            pool_avg[v_ax0, v_ax1, v_ax2, v_ax3] = pool_sum[v_ax0, v_ax1, v_ax2, v_ax3] / T.Cast("float32", T.max((T.min(v_ax2 * 2 + 1, 55) - T.max(v_ax2 * 2 - 1, 0) + 1) * (T.min(v_ax3 * 2 + 1, 55) - T.max(v_ax3 * 2 - 1, 0) + 1), 1))

@T.prim_func
def requantize_i8(A: T.Buffer((2048, 2048), "int32"), B: T.Buffer((2048, 2048), "int8")):
    for i, j in T.grid(2048, 2048):
        with T.block("requantize"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            B[v_i, v_j] = T.Cast("int8", T.max(T.min(T.q_multiply_shift(A[v_i, v_j], 1288490189, 31, -3) + 3, 127), -128))

@T.prim_func
def sum_axis1_block(A: T.Buffer((64, 512, 256), "float32"), B: T.Buffer((64, 256), "float32")):
    for b, j, k in T.grid(64, 256, 512):
        with T.block("A_red"):
            v_b, v_j, v_k = T.axis.remap("SSR", [b, j, k])
            with T.init():
                B[v_b, v_j] = T.float32(0)
            B[v_b, v_j] = B[v_b, v_j] + A[v_b, v_k, v_j]

@T.prim_func
def maxpool_nhwc(data: T.Buffer((8, 56, 56, 64), "float32"), out: T.Buffer((8, 28, 28, 64), "float32")):
    pad_temp = T.alloc_buffer((8, 58, 58, 64))
    for i0, i1, i2, i3 in T.grid(8, 58, 58, 64):
        with T.block("pad_temp"):
            v0, v1, v2, v3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
            pad_temp[v0, v1, v2, v3] = T.if_then_else(1 <= v1 and v1 < 57 and 1 <= v2 and v2 < 57, data[v0, v1 - 1, v2 - 1, v3], T.float32(-3.4028234663852886e+38))
    for n, y, x, c, ry, rx in T.grid(8, 28, 28, 64, 3, 3):
        with T.block("pool_max"):
            vn, vy, vx, vc, vry, vrx = T.axis.remap("SSSSRR", [n, y, x, c, ry, rx])
            with T.init():
                out[vn, vy, vx, vc] = T.float32(-3.4028234663852886e+38)
            out[vn, vy, vx, vc] = T.max(out[vn, vy, vx, vc], pad_temp[vn, vy * 2 + vry, vx * 2 + vrx, vc])

@T.prim_func
def dwconv_nhwc(data: T.Buffer((1, 112, 112, 64), "float32"), kernel: T.Buffer((3, 3, 64, 1), "float32"), out: T.Buffer((1, 112, 112, 64), "float32")):
    pad_temp = T.alloc_buffer((1, 114, 114, 64))
    for i0, i1, i2, i3 in T.grid(1, 114, 114, 64):
        with T.block("pad_temp"):
            v0, v1, v2, v3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
            pad_temp[v0, v1, v2, v3] = T.if_then_else(1 <= v1 and v1 < 113 and 1 <= v2 and v2 < 113, data[v0, v1 - 1, v2 - 1, v3], T.float32(0))
    for b, i, j, c, di, dj in T.grid(1, 112, 112, 64, 3, 3):
        with T.block("depthwise"):
            vb, vi, vj, vc, vdi, vdj = T.axis.remap("SSSSRR", [b, i, j, c, di, dj])
            with T.init():
                out[vb, vi, vj, vc] = T.float32(0)
            out[vb, vi, vj, vc] = out[vb, vi, vj, vc] + pad_temp[vb, vi + vdi, vj + vdj, vc] * kernel[vdi, vdj, vc, 0]

@T.prim_func
def argmax_axis0(A: T.Buffer((1024, 4096), "float32"), idx: T.Buffer((4096,), "int32")):
    vbest = T.alloc_buffer((4096,))
    for j, i in T.grid(4096, 1024):
        with T.block("argmax"):
            vj, vi = T.axis.remap("SR", [j, i])
            with T.init():
                idx[vj] = -1
                vbest[vj] = T.float32(-3.4028234663852886e+38)
            v_idx: T.int32 = T.Select(vbest[vj] > A[vi, vj] or (vbest[vj] == A[vi, vj] and idx[vj] < vi), idx[vj], vi)
            v_val: T.float32 = T.Select(vbest[vj] > A[vi, vj] or (vbest[vj] == A[vi, vj] and idx[vj] < vi), vbest[vj], A[vi, vj])
            idx[vj] = v_idx
            vbest[vj] = v_val

@T.prim_func
def qdense_u8s8(A: T.Buffer((512, 1024), "uint8"), W: T.Buffer((1024, 1024), "int8"),
                C: T.Buffer((512, 1024), "int32")):
    for i, j, k in T.grid(512, 1024, 1024):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = 0
            C[vi, vj] = C[vi, vj] + T.Cast("int32", A[vi, vk]) * T.Cast("int32", W[vj, vk])

@T.prim_func
def bmm_int8(A: T.Buffer((8, 128, 256), "int8"), B: T.Buffer((8, 256, 128), "int8"),
             C: T.Buffer((8, 128, 128), "int32")):
    for b, i, j, k in T.grid(8, 128, 128, 256):
        with T.block("C"):
            vb, vi, vj, vk = T.axis.remap("SSSR", [b, i, j, k])
            with T.init():
                C[vb, vi, vj] = 0
            C[vb, vi, vj] = C[vb, vi, vj] + T.Cast("int32", A[vb, vi, vk]) * T.Cast("int32", B[vb, vk, vj])
'''

#: Kernel -> how many of its last arguments are outputs (1 unless listed).
OUTPUTS: dict[str, int] = {}

#: Kernels TVM 0.27 refuses however they are written (their ``tvm`` cell stays empty).
TVM_REFUSES: dict[str, str] = {}


def inputs(seed: int = 0) -> dict[str, list[np.ndarray]]:
    """Arguments of every kernel, 64-byte aligned (outputs last)."""
    rng = np.random.default_rng(seed)

    f = lambda *s: rng.standard_normal(s).astype("float32")  # noqa: E731
    z = lambda *s, dt="float32": np.zeros(s, dt)  # noqa: E731
    raw = {
        "conv2d_s2": [f(1, 64, 56, 56), f(128, 64, 3, 3), z(1, 128, 28, 28)],
        "dwconv_s2": [f(1, 128, 112, 112), f(128, 1, 3, 3), z(1, 128, 56, 56)],
        "conv2d_dilated": [f(1, 32, 60, 60), f(64, 32, 3, 3), z(1, 64, 56, 56)],
        "softmax_axis0": [f(1024, 2048), z(1024, 2048)],
        "matmul_tn_block": [f(512, 1024), f(512, 1024), z(1024, 1024)],
        "avgpool_exclude_pad": [f(8, 64, 56, 56), z(8, 64, 28, 28)],
        "requantize_i8": [rng.integers(-2**24, 2**24, (2048, 2048)).astype("int32"),
                          z(2048, 2048, dt="int8")],
        "sum_axis1_block": [f(64, 512, 256), z(64, 256)],
        "maxpool_nhwc": [f(8, 56, 56, 64), z(8, 28, 28, 64)],
        "dwconv_nhwc": [f(1, 112, 112, 64), f(3, 3, 64, 1), z(1, 112, 112, 64)],
        "argmax_axis0": [f(1024, 4096), z(4096, dt="int32")],
        "qdense_u8s8": [rng.integers(0, 256, (512, 1024)).astype("uint8"),
                        rng.integers(-128, 128, (1024, 1024)).astype("int8"),
                        z(512, 1024, dt="int32")],
        "bmm_int8": [rng.integers(-128, 128, (8, 128, 256)).astype("int8"),
                     rng.integers(-128, 128, (8, 256, 128)).astype("int8"),
                     z(8, 128, 128, dt="int32")],
    }
    return {name: [aligned_copy(a) for a in args] for name, args in raw.items()}


def _windows(x: np.ndarray, stride: int, dilation: int = 1) -> np.ndarray:
    """``x[..., y * stride + ky * dilation, x * stride + kx * dilation]`` for 3 x 3 taps:
    an array of shape ``(..., 3, 3, H, W)`` (``x`` already padded)."""
    h = (x.shape[-2] - 2 * dilation - 1) // stride + 1
    w = (x.shape[-1] - 2 * dilation - 1) // stride + 1
    return np.stack([
        np.stack([
            x[..., ky * dilation : ky * dilation + stride * (h - 1) + 1 : stride,
              kx * dilation : kx * dilation + stride * (w - 1) + 1 : stride]
            for kx in range(3)], axis=-3)
        for ky in range(3)], axis=-4)


def reference(name: str, args: list[np.ndarray]) -> list[np.ndarray]:
    """numpy's outputs of ``name`` on ``args`` (float64; integers exactly)."""
    a = [x.astype("float64") if x.dtype.kind == "f" else x for x in args]
    pad1 = lambda x: np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))  # noqa: E731
    if name == "conv2d_s2":
        win = _windows(pad1(a[0])[0], 2)  # (c, 3, 3, 28, 28)
        return [np.einsum("cijhw,fcij->fhw", win, a[1])[None]]
    if name == "dwconv_s2":
        win = _windows(pad1(a[0])[0], 2)
        return [np.einsum("cijhw,cij->chw", win, a[1][:, 0])[None]]
    if name == "conv2d_dilated":
        win = _windows(a[0][0], 1, 2)
        return [np.einsum("cijhw,fcij->fhw", win, a[1])[None]]
    if name == "softmax_axis0":
        e = np.exp(a[0] - a[0].max(0))
        return [e / e.sum(0)]
    if name == "matmul_tn_block":
        return [a[0].T @ a[1]]
    if name == "avgpool_exclude_pad":
        win = _windows(pad1(a[0]), 2)  # (n, c, 3, 3, 28, 28)
        ones = _windows(pad1(np.ones((1, 1, 56, 56))), 2)
        return [win.sum((2, 3)) / ones.sum((2, 3))]
    if name == "requantize_i8":
        x = args[0].astype("int64") * 1288490189 + (1 << 33)
        return [np.clip((x >> 34) + 3, -128, 127).astype("int8")]
    if name == "sum_axis1_block":
        return [a[0].sum(1)]
    if name == "maxpool_nhwc":
        x = np.pad(a[0], ((0, 0), (1, 1), (1, 1), (0, 0)), constant_values=-np.inf)
        win = _windows(x.transpose(0, 3, 1, 2), 2)  # (n, c, 3, 3, 28, 28)
        return [win.max((2, 3)).transpose(0, 2, 3, 1)]
    if name == "dwconv_nhwc":
        x = np.pad(a[0], ((0, 0), (1, 1), (1, 1), (0, 0))).transpose(0, 3, 1, 2)
        win = _windows(x, 1)  # (n, c, 3, 3, 112, 112)
        return [np.einsum("ncijhw,ijc->nhwc", win, a[1][:, :, :, 0])]
    if name == "argmax_axis0":
        return [args[0].argmax(0).astype("int32")]
    if name == "qdense_u8s8":
        return [(args[0].astype("int64") @ args[1].astype("int64").T).astype("int32")]
    if name == "bmm_int8":
        return [(args[0].astype("int64") @ args[1].astype("int64")).astype("int32")]
    raise KeyError(name)


KERNELS = KernelSet(
    tag="tvm_style10",
    source=SOURCE,
    numba_module="benchmarks._numba_tvm_style10",
    inputs=inputs,
    reference=reference,
    agrees=agrees,
    outputs=OUTPUTS,
    tvm_refuses=TVM_REFUSES,
)
"""The set's driver (``benchmarks/kernel_sets.py``)."""


if __name__ == "__main__":
    KERNELS.main(__doc__)
