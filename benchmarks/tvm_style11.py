"""An eleventh set of TVM-style kernels: operators of video, audio, detection and training
graphs as TE/TOPI definitions print them (unscheduled), and three plain parallel nests,
next to TVM 0.27 and numba.

Beside ``tvm_style.py`` .. ``tvm_style10.py`` (none of their kernels again), run the same
way: our ``tvmscript.build`` with default options, TVM 0.27 on the *same source*
(``tirx``, host ``mcpu``) and the fastest numba twin (``_numba_tvm_style11.py``). A 3 x 3 x
3 convolution over NCDHW video with its padding stage, a depthwise 1-d convolution over
NWC audio, batch-norm training statistics (two outputs, two passes), TOPI's local response
normalization across channels, ``space_to_depth`` (``truncmod`` and ``T.Div`` indices), a
row gather along axis 1 through int64 indices, a scatter-add of rows (``index_add``:
parallel over column slices, serial over the rows, the race-free way a TVM user must write
it), a float64 matmul, a causal-masked attention softmax in one parallel nest with
per-row ``T.alloc_buffer`` scratch, reflect padding (TOPI's ``mirror_pad``), a nearest
resize by a non-integer scale (56 -> 80, ``asymmetric``), a uint16 image blend with a
rounding shift, the mean of a whole 4-d tensor into a 0-d buffer, and a leaky ReLU ->
round -> clip -> uint8 image post-process.

Ratios are peer ms / our ms (> 1: we are faster); ``!`` marks an output that differs from
ours. ``--check`` compares every side with a numpy reference instead of timing::

    PYTHONPATH=. /work/peers/bin/python benchmarks/tvm_style11.py [--rounds 3] [--only a,b] [--check]
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
def conv3d_ncdhw(data: T.Buffer((1, 16, 16, 32, 32), "float32"), kernel: T.Buffer((32, 16, 3, 3, 3), "float32"),
                 conv: T.Buffer((1, 32, 16, 32, 32), "float32")):
    pad_temp = T.alloc_buffer((1, 16, 18, 34, 34))
    for i0, i1, i2, i3, i4 in T.grid(1, 16, 18, 34, 34):
        with T.block("pad_temp"):
            v_i0, v_i1, v_i2, v_i3, v_i4 = T.axis.remap("SSSSS", [i0, i1, i2, i3, i4])
            pad_temp[v_i0, v_i1, v_i2, v_i3, v_i4] = T.if_then_else(1 <= v_i2 and v_i2 < 17 and 1 <= v_i3 and v_i3 < 33 and 1 <= v_i4 and v_i4 < 33, data[v_i0, v_i1, v_i2 - 1, v_i3 - 1, v_i4 - 1], T.float32(0))
    for nn, ff, zz, yy, xx, rc, rz, ry, rx in T.grid(1, 32, 16, 32, 32, 16, 3, 3, 3):
        with T.block("conv3d_ncdhw"):
            v_nn, v_ff, v_zz, v_yy, v_xx, v_rc, v_rz, v_ry, v_rx = T.axis.remap("SSSSSRRRR", [nn, ff, zz, yy, xx, rc, rz, ry, rx])
            with T.init():
                conv[v_nn, v_ff, v_zz, v_yy, v_xx] = T.float32(0)
            conv[v_nn, v_ff, v_zz, v_yy, v_xx] = conv[v_nn, v_ff, v_zz, v_yy, v_xx] + pad_temp[v_nn, v_rc, v_zz + v_rz, v_yy + v_ry, v_xx + v_rx] * kernel[v_ff, v_rc, v_rz, v_ry, v_rx]

@T.prim_func
def dwconv1d_nwc(data: T.Buffer((8, 4096, 64), "float32"), w: T.Buffer((7, 1, 64), "float32"),
                 group_conv1d_nwc: T.Buffer((8, 4096, 64), "float32")):
    pad_temp = T.alloc_buffer((8, 4102, 64))
    for i0, i1, i2 in T.grid(8, 4102, 64):
        with T.block("pad_temp"):
            v_i0, v_i1, v_i2 = T.axis.remap("SSS", [i0, i1, i2])
            pad_temp[v_i0, v_i1, v_i2] = T.if_then_else(3 <= v_i1 and v_i1 < 4099, data[v_i0, v_i1 - 3, v_i2], T.float32(0))
    for nn, yy, ff, ry, rc in T.grid(8, 4096, 64, 7, 1):
        with T.block("group_conv1d_nwc"):
            v_nn, v_yy, v_ff, v_ry, v_rc = T.axis.remap("SSSRR", [nn, yy, ff, ry, rc])
            with T.init():
                group_conv1d_nwc[v_nn, v_yy, v_ff] = T.float32(0)
            group_conv1d_nwc[v_nn, v_yy, v_ff] = group_conv1d_nwc[v_nn, v_yy, v_ff] + pad_temp[v_nn, v_yy + v_ry, v_ff + v_rc] * w[v_ry, v_rc, v_ff]

@T.prim_func
def bn_train_stats(data: T.Buffer((16, 64, 56, 56), "float32"), mean: T.Buffer((64,), "float32"),
                   var: T.Buffer((64,), "float32")):
    data_red = T.alloc_buffer((64,))
    sq_red = T.alloc_buffer((64,))
    for ax0, k0, k2, k3 in T.grid(64, 16, 56, 56):
        with T.block("data_red"):
            v_ax0, v_k0, v_k2, v_k3 = T.axis.remap("SRRR", [ax0, k0, k2, k3])
            with T.init():
                data_red[v_ax0] = T.float32(0)
            data_red[v_ax0] = data_red[v_ax0] + data[v_k0, v_ax0, v_k2, v_k3]
    for ax0 in range(64):
        with T.block("mean"):
            v_ax0 = T.axis.spatial(64, ax0)
            mean[v_ax0] = data_red[v_ax0] / T.float32(50176)
    for ax0, k0, k2, k3 in T.grid(64, 16, 56, 56):
        with T.block("sq_red"):
            v_ax0, v_k0, v_k2, v_k3 = T.axis.remap("SRRR", [ax0, k0, k2, k3])
            with T.init():
                sq_red[v_ax0] = T.float32(0)
            sq_red[v_ax0] = sq_red[v_ax0] + (data[v_k0, v_ax0, v_k2, v_k3] - mean[v_ax0]) * (data[v_k0, v_ax0, v_k2, v_k3] - mean[v_ax0])
    for ax0 in range(64):
        with T.block("var"):
            v_ax0 = T.axis.spatial(64, ax0)
            var[v_ax0] = sq_red[v_ax0] / T.float32(50176)

@T.prim_func
def lrn(data: T.Buffer((16, 64, 56, 56), "float32"), T_divide: T.Buffer((16, 64, 56, 56), "float32")):
    pad_data = T.alloc_buffer((16, 68, 56, 56))
    tensor = T.alloc_buffer((16, 64, 56, 56))
    tensor_1 = T.alloc_buffer((16, 64, 56, 56))
    for ax0, ax1, ax2, ax3 in T.grid(16, 68, 56, 56):
        with T.block("pad_data"):
            v_ax0, v_ax1, v_ax2, v_ax3 = T.axis.remap("SSSS", [ax0, ax1, ax2, ax3])
            pad_data[v_ax0, v_ax1, v_ax2, v_ax3] = T.if_then_else(2 <= v_ax1 and v_ax1 < 66, data[v_ax0, v_ax1 - 2, v_ax2, v_ax3], T.float32(0))
    for ax0, ax1, ax2, ax3, rxs in T.grid(16, 64, 56, 56, 5):
        with T.block("tensor"):
            v_ax0, v_ax1, v_ax2, v_ax3, v_rxs = T.axis.remap("SSSSR", [ax0, ax1, ax2, ax3, rxs])
            with T.init():
                tensor[v_ax0, v_ax1, v_ax2, v_ax3] = T.float32(0)
            tensor[v_ax0, v_ax1, v_ax2, v_ax3] = tensor[v_ax0, v_ax1, v_ax2, v_ax3] + pad_data[v_ax0, v_ax1 + v_rxs, v_ax2, v_ax3] * pad_data[v_ax0, v_ax1 + v_rxs, v_ax2, v_ax3]
    for ax0, ax1, ax2, ax3 in T.grid(16, 64, 56, 56):
        with T.block("tensor_1"):
            v_ax0, v_ax1, v_ax2, v_ax3 = T.axis.remap("SSSS", [ax0, ax1, ax2, ax3])
            tensor_1[v_ax0, v_ax1, v_ax2, v_ax3] = T.pow(T.float32(2) + T.float32(9.9999997473787516e-05) * tensor[v_ax0, v_ax1, v_ax2, v_ax3] / T.float32(5), T.float32(0.75))
    for ax0, ax1, ax2, ax3 in T.grid(16, 64, 56, 56):
        with T.block("T_divide"):
            v_ax0, v_ax1, v_ax2, v_ax3 = T.axis.remap("SSSS", [ax0, ax1, ax2, ax3])
            T_divide[v_ax0, v_ax1, v_ax2, v_ax3] = data[v_ax0, v_ax1, v_ax2, v_ax3] / tensor_1[v_ax0, v_ax1, v_ax2, v_ax3]

@T.prim_func
def space_to_depth(data: T.Buffer((1, 64, 224, 224), "float32"), space_to_depth: T.Buffer((1, 256, 112, 112), "float32")):
    for i0, i1, i2, i3 in T.grid(1, 256, 112, 112):
        with T.block("space_to_depth"):
            v_i0, v_i1, v_i2, v_i3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
            space_to_depth[v_i0, v_i1, v_i2, v_i3] = data[v_i0, T.truncmod(v_i1, 64), v_i2 * 2 + T.Div(v_i1, 128), v_i3 * 2 + T.Div(T.truncmod(v_i1, 128), 64)]

@T.prim_func
def gather_axis1(A: T.Buffer((4096, 1024), "float32"), idx: T.Buffer((4096, 512), "int64"),
                 T_gather: T.Buffer((4096, 512), "float32")):
    for ax0, ax1 in T.grid(4096, 512):
        with T.block("T_gather"):
            v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
            T_gather[v_ax0, v_ax1] = A[v_ax0, idx[v_ax0, v_ax1]]

@T.prim_func
def index_add_rows(X: T.Buffer((4096, 256), "float32"), idx: T.Buffer((16384,), "int32"),
                   A: T.Buffer((16384, 256), "float32"), O: T.Buffer((4096, 256), "float32")):
    for i in T.parallel(4096):
        for j in T.vectorized(256):
            O[i, j] = X[i, j]
    for j0 in T.parallel(16):
        for i in range(16384):
            for j1 in T.vectorized(16):
                O[idx[i], j0 * 16 + j1] = O[idx[i], j0 * 16 + j1] + A[i, j0 * 16 + j1]

@T.prim_func
def matmul_f64(A: T.Buffer((512, 512), "float64"), B: T.Buffer((512, 512), "float64"),
               C: T.Buffer((512, 512), "float64")):
    for i, j, k in T.grid(512, 512, 512):
        with T.block("T_matmul_NN"):
            v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[v_i, v_j] = T.float64(0)
            C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]

@T.prim_func
def causal_softmax(S: T.Buffer((16, 512, 512), "float32"), O: T.Buffer((16, 512, 512), "float32")):
    for b in T.parallel(16):
        for i in range(512):
            mx = T.alloc_buffer((1,), "float32")
            sm = T.alloc_buffer((1,), "float32")
            mx[0] = T.float32(-3.4028234663852886e+38)
            for j in range(512):
                mx[0] = T.max(mx[0], T.if_then_else(j <= i, S[b, i, j] * T.float32(0.125), T.float32(-3.4028234663852886e+38)))
            sm[0] = T.float32(0)
            for j in range(512):
                sm[0] = sm[0] + T.if_then_else(j <= i, T.exp(S[b, i, j] * T.float32(0.125) - mx[0]), T.float32(0))
            for j in range(512):
                O[b, i, j] = T.if_then_else(j <= i, T.exp(S[b, i, j] * T.float32(0.125) - mx[0]) / sm[0], T.float32(0))

@T.prim_func
def reflect_pad(data: T.Buffer((1, 64, 256, 256), "float32"), MirrorPadInput: T.Buffer((1, 64, 260, 260), "float32")):
    for i0, i1, i2, i3 in T.grid(1, 64, 260, 260):
        with T.block("MirrorPadInput"):
            v_i0, v_i1, v_i2, v_i3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
            MirrorPadInput[v_i0, v_i1, v_i2, v_i3] = data[v_i0, v_i1, T.if_then_else(258 <= v_i2, 512 - v_i2, T.if_then_else(v_i2 < 2, 2 - v_i2, v_i2 - 2)), T.if_then_else(258 <= v_i3, 512 - v_i3, T.if_then_else(v_i3 < 2, 2 - v_i3, v_i3 - 2))]

@T.prim_func
def resize_nearest(data: T.Buffer((8, 64, 56, 56), "float32"), resize: T.Buffer((8, 64, 80, 80), "float32")):
    for i0, i1, i2, i3 in T.grid(8, 64, 80, 80):
        with T.block("resize"):
            v_i0, v_i1, v_i2, v_i3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
            resize[v_i0, v_i1, v_i2, v_i3] = data[v_i0, v_i1, T.max(T.min(T.Cast("int32", T.floor(T.float32(0.69999998807907104) * T.Cast("float32", v_i2) + T.float32(1.0000000000000001e-05))), 55), 0), T.max(T.min(T.Cast("int32", T.floor(T.float32(0.69999998807907104) * T.Cast("float32", v_i3) + T.float32(1.0000000000000001e-05))), 55), 0)]

@T.prim_func
def blend_u16(A: T.Buffer((2048, 4096), "uint16"), B: T.Buffer((2048, 4096), "uint16"),
              w: T.Buffer((4096,), "uint16"), O: T.Buffer((2048, 4096), "uint16")):
    for i, j in T.grid(2048, 4096):
        with T.block("blend"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            O[v_i, v_j] = T.shift_right(A[v_i, v_j] * w[v_j] + B[v_i, v_j] * (T.uint16(16) - w[v_j]) + T.uint16(8), T.uint16(4))

@T.prim_func
def mean_all(data: T.Buffer((16, 64, 56, 56), "float32"), T_divide: T.Buffer((), "float32")):
    data_red = T.alloc_buffer(())
    for k0, k1, k2, k3 in T.grid(16, 64, 56, 56):
        with T.block("data_red"):
            v_k0, v_k1, v_k2, v_k3 = T.axis.remap("RRRR", [k0, k1, k2, k3])
            with T.init():
                data_red[()] = T.float32(0)
            data_red[()] = data_red[()] + data[v_k0, v_k1, v_k2, v_k3]
    with T.block("T_divide"):
        vi = T.axis.spatial(1, 0)
        T_divide[()] = data_red[()] / T.float32(3211264)

@T.prim_func
def leaky_clip_u8(X: T.Buffer((32, 3, 224, 224), "float32"), O: T.Buffer((32, 3, 224, 224), "uint8")):
    for n in T.parallel(32):
        for c, h in T.grid(3, 224):
            for w in T.vectorized(224):
                O[n, c, h, w] = T.Cast("uint8", T.max(T.min(T.round(T.Select(X[n, c, h, w] > T.float32(0), X[n, c, h, w], X[n, c, h, w] * T.float32(0.1)) * T.float32(64) + T.float32(128)), T.float32(255)), T.float32(0)))
'''

#: Kernel -> how many of its last arguments are outputs (1 unless listed).
OUTPUTS: dict[str, int] = {"bn_train_stats": 2}

#: Kernels TVM 0.27 refuses however they are written (their ``tvm`` cell stays empty).
TVM_REFUSES: dict[str, str] = {}


def inputs(seed: int = 0) -> dict[str, list[np.ndarray]]:
    """Arguments of every kernel, 64-byte aligned (outputs last)."""
    rng = np.random.default_rng(seed)

    f = lambda *s: rng.standard_normal(s).astype("float32")  # noqa: E731
    z = lambda *s, dt="float32": np.zeros(s, dt)  # noqa: E731
    u16 = lambda hi, *s: rng.integers(0, hi, s).astype("uint16")  # noqa: E731
    raw = {
        "conv3d_ncdhw": [f(1, 16, 16, 32, 32), f(32, 16, 3, 3, 3), z(1, 32, 16, 32, 32)],
        "dwconv1d_nwc": [f(8, 4096, 64), f(7, 1, 64), z(8, 4096, 64)],
        "bn_train_stats": [f(16, 64, 56, 56) * np.float32(2) + np.float32(3), z(64), z(64)],
        "lrn": [f(16, 64, 56, 56) * np.float32(20), z(16, 64, 56, 56)],
        "space_to_depth": [f(1, 64, 224, 224), z(1, 256, 112, 112)],
        "gather_axis1": [f(4096, 1024), rng.integers(0, 1024, (4096, 512)).astype("int64"),
                         z(4096, 512)],
        "index_add_rows": [f(4096, 256), rng.integers(0, 4096, 16384).astype("int32"),
                           f(16384, 256), z(4096, 256)],
        "matmul_f64": [rng.standard_normal((512, 512)), rng.standard_normal((512, 512)),
                       z(512, 512, dt="float64")],
        "causal_softmax": [f(16, 512, 512) * np.float32(4), z(16, 512, 512)],
        "reflect_pad": [f(1, 64, 256, 256), z(1, 64, 260, 260)],
        "resize_nearest": [f(8, 64, 56, 56), z(8, 64, 80, 80)],
        "blend_u16": [u16(4096, 2048, 4096), u16(4096, 2048, 4096), u16(17, 4096),
                      z(2048, 4096, dt="uint16")],
        "mean_all": [f(16, 64, 56, 56) + np.float32(0.5), z()],
        "leaky_clip_u8": [f(32, 3, 224, 224) * np.float32(2), z(32, 3, 224, 224, dt="uint8")],
    }
    return {name: [aligned_copy(a) for a in args] for name, args in raw.items()}


def _nearest_rows(n_out: int, n_in: int, scale: float) -> np.ndarray:
    """TOPI's ``asymmetric`` nearest source index of each output index, in float32 as the
    kernel computes it (``floor(scale * i + 1e-5)``, clamped to the input)."""
    i = np.arange(n_out, dtype=np.float32)
    x = np.floor(np.float32(scale) * i + np.float32(1e-5)).astype("int64")
    return np.clip(x, 0, n_in - 1)


def reference(name: str, args: list[np.ndarray]) -> list[np.ndarray]:
    """numpy's outputs of ``name`` on ``args`` (float64; integers exactly)."""
    a = [x.astype("float64") if x.dtype.kind == "f" else x for x in args]
    if name == "conv3d_ncdhw":
        x = np.pad(a[0][0], ((0, 0), (1, 1), (1, 1), (1, 1)))
        out = np.zeros((32, 16, 32, 32))
        for kz in range(3):
            for ky in range(3):
                for kx in range(3):
                    win = x[:, kz:kz + 16, ky:ky + 32, kx:kx + 32]
                    out += np.einsum("czyx,fc->fzyx", win, a[1][:, :, kz, ky, kx])
        return [out[None]]
    if name == "dwconv1d_nwc":
        x = np.pad(a[0], ((0, 0), (3, 3), (0, 0)))
        return [sum(x[:, k:k + 4096, :] * a[1][k, 0] for k in range(7))]
    if name == "bn_train_stats":
        return [a[0].mean((0, 2, 3)), a[0].var((0, 2, 3))]
    if name == "lrn":
        sq = np.pad(a[0] ** 2, ((0, 0), (2, 2), (0, 0), (0, 0)))
        s = sum(sq[:, k:k + 64] for k in range(5))
        return [a[0] / (2.0 + 1e-4 * s / 5.0) ** 0.75]
    if name == "space_to_depth":
        x = a[0].reshape(1, 64, 112, 2, 112, 2)  # (n, c, y, by, x, bx)
        return [x.transpose(0, 3, 5, 1, 2, 4).reshape(1, 256, 112, 112)]
    if name == "gather_axis1":
        return [np.take_along_axis(a[0], args[1], axis=1)]
    if name == "index_add_rows":
        out = a[0].copy()
        np.add.at(out, args[1], a[2])
        return [out]
    if name == "matmul_f64":
        return [a[0] @ a[1]]
    if name == "causal_softmax":
        s = a[0] * 0.125
        mask = np.tril(np.ones((512, 512), bool))
        s = np.where(mask, s, -np.inf)
        e = np.exp(s - s.max(-1, keepdims=True))
        return [e / e.sum(-1, keepdims=True)]
    if name == "reflect_pad":
        return [np.pad(a[0], ((0, 0), (0, 0), (2, 2), (2, 2)), mode="reflect")]
    if name == "resize_nearest":
        r = _nearest_rows(80, 56, 0.7)
        return [a[0][:, :, r][:, :, :, r]]
    if name == "blend_u16":
        x, y, w = (v.astype("int64") for v in args[:3])
        return [((x * w + y * (16 - w) + 8) % 65536 >> 4).astype("uint16")]
    if name == "mean_all":
        return [np.array(a[0].mean())]
    if name == "leaky_clip_u8":
        x = args[0]
        y = np.where(x > 0, x, x * np.float32(0.1)) * np.float32(64) + np.float32(128)
        return [np.clip(np.rint(y), 0, 255).astype("uint8")]
    raise KeyError(name)


KERNELS = KernelSet(
    tag="tvm_style11",
    source=SOURCE,
    numba_module="benchmarks._numba_tvm_style11",
    inputs=inputs,
    reference=reference,
    agrees=agrees,
    outputs=OUTPUTS,
    tvm_refuses=TVM_REFUSES,
)
"""The set's driver (``benchmarks/kernel_sets.py``)."""


if __name__ == "__main__":
    KERNELS.main(__doc__)
