"""A third set of TVM-style kernels, as a TVM user writes them, next to TVM 0.27 and numba.

Beside ``tvm_style.py`` and ``tvm_style2.py`` (none of their kernels, nor ``kernels.py``'s,
again), run the same way: our ``tvmscript.build`` with default options, TVM 0.27 on the
*same source* (``tirx``, ``T.sblock``, host ``mcpu``) and the fastest numba twin
(``_numba_tvm_style3.py``). Plain nests with ``T.parallel`` / ``T.vectorized``, scalar
``let`` bindings and per-iteration ``T.alloc_buffer`` scratch (GELU with ``tanh``, RMSNorm, a
transposed add, int8 dequantization with a zero point, an outer product, a lower-triangular
matvec with a triangular inner loop, a strided downsample, a bilinear 2x resize, a two-pass
row variance, int8 row sums in int32) and unscheduled ``T.block`` programs (SiLU, batched
attention scores, an NHWC 3x3 convolution, a global average pool, a causal mask, a float16
matmul accumulating in float32, a 1x1 NCHW convolution, a topi-style layer norm in four
blocks, a column max, a 5-point stencil with copied borders, an ``exp``/``sqrt``/``log``
chain).

Ratios are peer ms / our ms (> 1: we are faster); ``!`` marks an output that differs from
ours. ``--check`` compares every side with a numpy reference instead of timing::

    PYTHONPATH=. /work/peers/bin/python benchmarks/tvm_style3.py [--rounds 3] [--only a,b] [--check]
"""

# ruff: noqa: E501 - TVMScript sources and input tables
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
def gelu_tanh(A: T.Buffer((2048, 2048), "float32"), O: T.Buffer((2048, 2048), "float32")):
    for i in T.parallel(2048):
        for j in T.vectorized(2048):
            O[i, j] = T.float32(0.5) * A[i, j] * (T.float32(1) + T.tanh(T.float32(0.7978845608) * (A[i, j] + T.float32(0.044715) * A[i, j] * A[i, j] * A[i, j])))

@T.prim_func
def silu_block(A: T.Buffer((4096, 1024), "float32"), O: T.Buffer((4096, 1024), "float32")):
    for i, j in T.grid(4096, 1024):
        with T.block("silu"):
            vi, vj = T.axis.remap("SS", [i, j])
            O[vi, vj] = A[vi, vj] * (T.float32(1) / (T.float32(1) + T.exp(-A[vi, vj])))

@T.prim_func
def rmsnorm(A: T.Buffer((4096, 1024), "float32"), G: T.Buffer((1024,), "float32"),
            O: T.Buffer((4096, 1024), "float32")):
    for i in T.parallel(4096):
        ss = T.alloc_buffer((1,), "float32")
        ss[0] = T.float32(0)
        for j in range(1024):
            ss[0] = ss[0] + A[i, j] * A[i, j]
        for j in T.vectorized(1024):
            O[i, j] = A[i, j] * T.rsqrt(ss[0] / T.float32(1024) + T.float32(1e-6)) * G[j]

@T.prim_func
def attn_scores_block(Q: T.Buffer((8, 256, 64), "float32"), K: T.Buffer((8, 256, 64), "float32"),
                      S: T.Buffer((8, 256, 256), "float32")):
    for h, i, j, k in T.grid(8, 256, 256, 64):
        with T.block("S"):
            vh, vi, vj, vk = T.axis.remap("SSSR", [h, i, j, k])
            with T.init():
                S[vh, vi, vj] = T.float32(0)
            S[vh, vi, vj] = S[vh, vi, vj] + Q[vh, vi, vk] * K[vh, vj, vk] * T.float32(0.125)

@T.prim_func
def conv_nhwc_block(X: T.Buffer((1, 58, 58, 32), "float32"), W: T.Buffer((3, 3, 32, 32), "float32"),
                    Y: T.Buffer((1, 56, 56, 32), "float32")):
    for n, h, w, f, rh, rw, c in T.grid(1, 56, 56, 32, 3, 3, 32):
        with T.block("conv"):
            vn, vh, vw, vf, vrh, vrw, vc = T.axis.remap("SSSSRRR", [n, h, w, f, rh, rw, c])
            with T.init():
                Y[vn, vh, vw, vf] = T.float32(0)
            Y[vn, vh, vw, vf] = Y[vn, vh, vw, vf] + X[vn, vh + vrh, vw + vrw, vc] * W[vrh, vrw, vc, vf]

@T.prim_func
def gap_block(X: T.Buffer((32, 256, 28, 28), "float32"), O: T.Buffer((32, 256), "float32")):
    S = T.alloc_buffer((32, 256), "float32")
    for n, c, h, w in T.grid(32, 256, 28, 28):
        with T.block("sum"):
            vn, vc, vh, vw = T.axis.remap("SSRR", [n, c, h, w])
            with T.init():
                S[vn, vc] = T.float32(0)
            S[vn, vc] = S[vn, vc] + X[vn, vc, vh, vw]
    for n, c in T.grid(32, 256):
        with T.block("avg"):
            vn, vc = T.axis.remap("SS", [n, c])
            O[vn, vc] = S[vn, vc] / T.float32(784)

@T.prim_func
def causal_mask_block(A: T.Buffer((2048, 2048), "float32"), O: T.Buffer((2048, 2048), "float32")):
    for i, j in T.grid(2048, 2048):
        with T.block("mask"):
            vi, vj = T.axis.remap("SS", [i, j])
            O[vi, vj] = T.if_then_else(vj <= vi, A[vi, vj], T.float32("-inf"))

@T.prim_func
def transpose_add(A: T.Buffer((2048, 2048), "float32"), C: T.Buffer((2048, 2048), "float32"),
                  B: T.Buffer((2048, 2048), "float32")):
    for j in T.parallel(2048):
        for i in range(2048):
            B[j, i] = A[i, j] + C[j, i]

@T.prim_func
def matmul_f16_block(A: T.Buffer((512, 512), "float16"), B: T.Buffer((512, 512), "float16"),
                     C: T.Buffer((512, 512), "float32")):
    for i, j, k in T.grid(512, 512, 512):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + T.Cast("float32", A[vi, vk]) * T.Cast("float32", B[vk, vj])

@T.prim_func
def conv1x1_block(X: T.Buffer((1, 128, 56, 56), "float32"), W: T.Buffer((64, 128), "float32"),
                  Y: T.Buffer((1, 64, 56, 56), "float32")):
    for n, f, h, w, c in T.grid(1, 64, 56, 56, 128):
        with T.block("conv"):
            vn, vf, vh, vw, vc = T.axis.remap("SSSSR", [n, f, h, w, c])
            with T.init():
                Y[vn, vf, vh, vw] = T.float32(0)
            Y[vn, vf, vh, vw] = Y[vn, vf, vh, vw] + X[vn, vc, vh, vw] * W[vf, vc]

@T.prim_func
def layernorm_topi(A: T.Buffer((4096, 1024), "float32"), G: T.Buffer((1024,), "float32"),
                   Bt: T.Buffer((1024,), "float32"), O: T.Buffer((4096, 1024), "float32")):
    S = T.alloc_buffer((4096,), "float32")
    M = T.alloc_buffer((4096,), "float32")
    Q = T.alloc_buffer((4096,), "float32")
    for i, j in T.grid(4096, 1024):
        with T.block("sum"):
            vi, vj = T.axis.remap("SR", [i, j])
            with T.init():
                S[vi] = T.float32(0)
            S[vi] = S[vi] + A[vi, vj]
    for i in range(4096):
        with T.block("mean"):
            vi = T.axis.remap("S", [i])
            M[vi] = S[vi] / T.float32(1024)
    for i, j in T.grid(4096, 1024):
        with T.block("var"):
            vi, vj = T.axis.remap("SR", [i, j])
            with T.init():
                Q[vi] = T.float32(0)
            Q[vi] = Q[vi] + (A[vi, vj] - M[vi]) * (A[vi, vj] - M[vi])
    for i, j in T.grid(4096, 1024):
        with T.block("norm"):
            vi, vj = T.axis.remap("SS", [i, j])
            O[vi, vj] = (A[vi, vj] - M[vi]) * T.rsqrt(Q[vi] / T.float32(1024) + T.float32(1e-5)) * G[vj] + Bt[vj]

@T.prim_func
def dequant_i8(A: T.Buffer((4096, 2048), "int8"), Zp: T.Buffer((4096,), "int32"),
               S: T.Buffer((4096,), "float32"), O: T.Buffer((4096, 2048), "float32")):
    for i in T.parallel(4096):
        for j in T.vectorized(2048):
            O[i, j] = T.Cast("float32", T.Cast("int32", A[i, j]) - Zp[i]) * S[i]

@T.prim_func
def colmax_block(A: T.Buffer((4096, 2048), "float32"), B: T.Buffer((2048,), "float32")):
    for j, i in T.grid(2048, 4096):
        with T.block("colmax"):
            vj, vi = T.axis.remap("SR", [j, i])
            with T.init():
                B[vj] = T.min_value("float32")
            B[vj] = T.max(B[vj], A[vi, vj])

@T.prim_func
def outer(a: T.Buffer((4096,), "float32"), b: T.Buffer((4096,), "float32"),
          O: T.Buffer((4096, 4096), "float32")):
    for i in T.parallel(4096):
        for j in T.vectorized(4096):
            O[i, j] = a[i] * b[j]

@T.prim_func
def stencil5_block(A: T.Buffer((2048, 2048), "float32"), B: T.Buffer((2048, 2048), "float32")):
    for i, j in T.grid(2048, 2048):
        with T.block("st"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = T.if_then_else(0 < vi and vi < 2047 and 0 < vj and vj < 2047,
                                       T.float32(0.5) * A[vi, vj] + T.float32(0.125) * (A[vi - 1, vj] + A[vi + 1, vj] + A[vi, vj - 1] + A[vi, vj + 1]),
                                       A[vi, vj])

@T.prim_func
def trmv_lower(L: T.Buffer((4096, 4096), "float32"), x: T.Buffer((4096,), "float32"),
               y: T.Buffer((4096,), "float32")):
    for i in T.parallel(4096):
        acc = T.alloc_buffer((1,), "float32")
        acc[0] = T.float32(0)
        for j in range(i + 1):
            acc[0] = acc[0] + L[i, j] * x[j]
        y[i] = acc[0]

@T.prim_func
def downsample2(A: T.Buffer((4096, 4096), "float32"), O: T.Buffer((2048, 2048), "float32")):
    # split the way a TVM user vectorizes: TVM 0.27 did not finish compiling one
    # 2048-lane stride-2 vector in 10 minutes
    for i in T.parallel(2048):
        for jo in range(128):
            for ji in T.vectorized(16):
                O[i, jo * 16 + ji] = A[2 * i, 2 * (jo * 16 + ji)]

@T.prim_func
def resize_bilinear2x(A: T.Buffer((32, 256, 256), "float32"), O: T.Buffer((32, 512, 512), "float32")):
    for c in T.parallel(32):
        for h, w in T.grid(512, 512):
            sy = T.max((T.Cast("float32", h) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5), T.float32(0))
            sx = T.max((T.Cast("float32", w) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5), T.float32(0))
            y0 = T.Cast("int32", T.floor(sy))
            x0 = T.Cast("int32", T.floor(sx))
            y1 = T.min(y0 + 1, 255)
            x1 = T.min(x0 + 1, 255)
            dy = sy - T.floor(sy)
            dx = sx - T.floor(sx)
            O[c, h, w] = (A[c, y0, x0] * (T.float32(1) - dx) + A[c, y0, x1] * dx) * (T.float32(1) - dy) + (A[c, y1, x0] * (T.float32(1) - dx) + A[c, y1, x1] * dx) * dy

@T.prim_func
def exp_sqrt_log_block(A: T.Buffer((2048, 2048), "float32"), B: T.Buffer((2048, 2048), "float32"),
                       C: T.Buffer((2048, 2048), "float32"), O: T.Buffer((2048, 2048), "float32")):
    for i, j in T.grid(2048, 2048):
        with T.block("O"):
            vi, vj = T.axis.remap("SS", [i, j])
            O[vi, vj] = T.exp(A[vi, vj]) * T.sqrt(B[vi, vj]) + T.log(C[vi, vj])

@T.prim_func
def rowvar_2pass(A: T.Buffer((4096, 1024), "float32"), V: T.Buffer((4096,), "float32")):
    for i in T.parallel(4096):
        m = T.alloc_buffer((1,), "float32")
        v = T.alloc_buffer((1,), "float32")
        m[0] = T.float32(0)
        for j in range(1024):
            m[0] = m[0] + A[i, j]
        m[0] = m[0] / T.float32(1024)
        v[0] = T.float32(0)
        for j in range(1024):
            v[0] = v[0] + (A[i, j] - m[0]) * (A[i, j] - m[0])
        V[i] = v[0] / T.float32(1024)

@T.prim_func
def rowsum_i8_i32(A: T.Buffer((4096, 4096), "int8"), O: T.Buffer((4096,), "int32")):
    for i in T.parallel(4096):
        acc = T.alloc_buffer((1,), "int32")
        acc[0] = 0
        for j in range(4096):
            acc[0] = acc[0] + T.Cast("int32", A[i, j])
        O[i] = acc[0]
'''

#: Kernel -> how many of its last arguments are outputs (1 unless listed).
OUTPUTS: dict[str, int] = {}

#: Kernels TVM 0.27 refuses however they are written (their ``tvm`` cell stays empty).
TVM_REFUSES: dict[str, str] = {}


def inputs(seed: int = 0) -> dict[str, list[np.ndarray]]:
    """Arguments of every kernel, 64-byte aligned (outputs last)."""
    rng = np.random.default_rng(seed)

    f = lambda *s: rng.standard_normal(s).astype("float32")  # noqa: E731
    pos = lambda *s: rng.uniform(0.1, 4.0, s).astype("float32")  # noqa: E731
    z = lambda *s, dt="float32": np.zeros(s, dt)  # noqa: E731
    i8 = lambda *s: rng.integers(-128, 128, s).astype("int8")  # noqa: E731
    raw = {
        "gelu_tanh": [f(2048, 2048) * 3, z(2048, 2048)],
        "silu_block": [f(4096, 1024) * 4, z(4096, 1024)],
        "rmsnorm": [f(4096, 1024), f(1024), z(4096, 1024)],
        "attn_scores_block": [f(8, 256, 64), f(8, 256, 64), z(8, 256, 256)],
        "conv_nhwc_block": [f(1, 58, 58, 32), f(3, 3, 32, 32), z(1, 56, 56, 32)],
        "gap_block": [f(32, 256, 28, 28) + 1, z(32, 256)],
        "causal_mask_block": [f(2048, 2048), z(2048, 2048)],
        "transpose_add": [f(2048, 2048), f(2048, 2048), z(2048, 2048)],
        "matmul_f16_block": [f(512, 512).astype("float16"), f(512, 512).astype("float16"), z(512, 512)],
        "conv1x1_block": [f(1, 128, 56, 56), f(64, 128), z(1, 64, 56, 56)],
        "layernorm_topi": [f(4096, 1024) * 2 + 3, f(1024), f(1024), z(4096, 1024)],
        "dequant_i8": [i8(4096, 2048), rng.integers(-8, 8, 4096).astype("int32"), pos(4096) * 0.01, z(4096, 2048)],
        "colmax_block": [f(4096, 2048), z(2048)],
        "outer": [f(4096), f(4096), z(4096, 4096)],
        "stencil5_block": [f(2048, 2048), z(2048, 2048)],
        "trmv_lower": [f(4096, 4096), f(4096), z(4096)],
        "downsample2": [f(4096, 4096), z(2048, 2048)],
        "resize_bilinear2x": [f(32, 256, 256), z(32, 512, 512)],
        "exp_sqrt_log_block": [f(2048, 2048), pos(2048, 2048), pos(2048, 2048), z(2048, 2048)],
        "rowvar_2pass": [f(4096, 1024) + 3, z(4096)],
        "rowsum_i8_i32": [i8(4096, 4096), z(4096, dt="int32")],
    }
    return {name: [aligned_copy(a) for a in args] for name, args in raw.items()}


def _resize_axis(n_out: int, n_in: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Half-pixel source coordinates of a 2x upscale: low index, high index, weight."""
    s = np.maximum((np.arange(n_out) + 0.5) * 0.5 - 0.5, 0.0)
    lo = np.floor(s).astype(np.int64)
    return lo, np.minimum(lo + 1, n_in - 1), s - np.floor(s)


def reference(name: str, args: list[np.ndarray]) -> list[np.ndarray]:
    """numpy's outputs of ``name`` on ``args`` (float64 where the kernel reduces floats)."""
    a = [x.astype("float64") if x.dtype.kind == "f" else x for x in args]
    if name == "gelu_tanh":
        x = a[0]
        return [0.5 * x * (1 + np.tanh(0.7978845608 * (x + 0.044715 * x**3)))]
    if name == "silu_block":
        return [a[0] / (1 + np.exp(-a[0]))]
    if name == "rmsnorm":
        return [a[0] / np.sqrt((a[0] ** 2).mean(1, keepdims=True) + 1e-6) * a[1]]
    if name == "attn_scores_block":
        return [np.einsum("hik,hjk->hij", a[0], a[1]) * 0.125]
    if name == "conv_nhwc_block":
        x, w = a[0], a[1]
        y = np.zeros((1, 56, 56, 32))
        for rh in range(3):
            for rw in range(3):
                y += x[:, rh : rh + 56, rw : rw + 56, :] @ w[rh, rw]
        return [y]
    if name == "gap_block":
        return [a[0].mean((2, 3))]
    if name == "causal_mask_block":
        return [np.where(np.tri(2048, dtype=bool), a[0], -np.inf)]
    if name == "transpose_add":
        return [a[0].T + a[1]]
    if name == "matmul_f16_block":
        return [a[0] @ a[1]]
    if name == "conv1x1_block":
        return [np.einsum("fc,nchw->nfhw", a[1], a[0])]
    if name == "layernorm_topi":
        x = a[0]
        m = x.mean(1, keepdims=True)
        return [(x - m) / np.sqrt(x.var(1, keepdims=True) + 1e-5) * a[1] + a[2]]
    if name == "dequant_i8":
        return [(args[0].astype("int64") - args[1][:, None]) * a[2][:, None]]
    if name == "colmax_block":
        return [a[0].max(0)]
    if name == "outer":
        return [np.outer(a[0], a[1])]
    if name == "stencil5_block":
        x = a[0]
        y = x.copy()
        y[1:-1, 1:-1] = 0.5 * x[1:-1, 1:-1] + 0.125 * (x[:-2, 1:-1] + x[2:, 1:-1] + x[1:-1, :-2] + x[1:-1, 2:])
        return [y]
    if name == "trmv_lower":
        return [np.tril(a[0]) @ a[1]]
    if name == "downsample2":
        return [a[0][::2, ::2]]
    if name == "resize_bilinear2x":
        y0, y1, dy = _resize_axis(512, 256)
        x0, x1, dx = _resize_axis(512, 256)
        x = a[0]
        top = x[:, y0][:, :, x0] * (1 - dx) + x[:, y0][:, :, x1] * dx
        bot = x[:, y1][:, :, x0] * (1 - dx) + x[:, y1][:, :, x1] * dx
        return [top * (1 - dy)[:, None] + bot * dy[:, None]]
    if name == "exp_sqrt_log_block":
        return [np.exp(a[0]) * np.sqrt(a[1]) + np.log(a[2])]
    if name == "rowvar_2pass":
        return [a[0].var(1)]
    if name == "rowsum_i8_i32":
        return [args[0].astype("int64").sum(1).astype("int32")]
    raise KeyError(name)


KERNELS = KernelSet(
    tag="tvm_style3",
    source=SOURCE,
    numba_module="benchmarks._numba_tvm_style3",
    inputs=inputs,
    reference=reference,
    agrees=agrees,
    outputs=OUTPUTS,
    tvm_refuses=TVM_REFUSES,
)
"""The set's driver (``benchmarks/kernel_sets.py``)."""


if __name__ == "__main__":
    KERNELS.main(__doc__)
