"""A fourth set of TVM-style kernels, as a TVM user writes them, next to TVM 0.27 and numba.

Beside ``tvm_style.py``, ``tvm_style2.py`` and ``tvm_style3.py`` (none of their kernels, nor
``kernels.py``'s, again), run the same way: our ``tvmscript.build`` with default options,
TVM 0.27 on the *same source* (``tirx``, ``T.sblock``, host ``mcpu``) and the fastest numba
twin (``_numba_tvm_style4.py``). Plain nests with ``T.parallel`` / ``T.vectorized``, scalar
``let`` bindings and per-iteration ``T.alloc_buffer`` scratch (a per-row cross-entropy loss,
an embedding-bag sum over int64 indices, an interleaved RGB to gray uint8 conversion with
rounding, a row prefix max, a per-row cosine similarity with three accumulators, a float16
SwiGLU gate, a float64 AXPY of symbolic length with a guarded tail, a round-and-clamp int8
quantization, an adaptive average pool with ``floordiv`` windows) and unscheduled ``T.block``
programs (a batched matvec with ``T.reads``/``T.writes``, a one-hot by ``T.Select``, an
instance norm from one two-output statistics block, a 2x2 stride-2 max pool initialised to
``-inf``, pairwise squared distances in four blocks, an int16 saturating add, a
symbolic-shape softplus, a depthwise NCHW 3x3 convolution padded by ``T.if_then_else``, a
dense layer with a bias + erf-GELU epilogue on ``T.axis.spatial`` axes, a stride-2 1-d
transposed convolution through ``floordiv``/``floormod``).

Ratios are peer ms / our ms (> 1: we are faster); ``!`` marks an output that differs from
ours. ``--check`` compares every side with a numpy reference instead of timing::

    PYTHONPATH=. /work/peers/bin/python benchmarks/tvm_style4.py [--rounds 3] [--only a,b] [--check]
"""

# ruff: noqa: E501 - TVMScript sources and input tables
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
def bmv_block(A: T.Buffer((64, 512, 512), "float32"), x: T.Buffer((64, 512), "float32"),
              y: T.Buffer((64, 512), "float32")):
    for b, i, k in T.grid(64, 512, 512):
        with T.block("y"):
            vb, vi, vk = T.axis.remap("SSR", [b, i, k])
            T.reads(A[vb, vi, vk], x[vb, vk])
            T.writes(y[vb, vi])
            with T.init():
                y[vb, vi] = T.float32(0)
            y[vb, vi] = y[vb, vi] + A[vb, vi, vk] * x[vb, vk]

@T.prim_func
def xent_rows(L: T.Buffer((4096, 1000), "float32"), Y: T.Buffer((4096,), "int32"),
              O: T.Buffer((4096,), "float32")):
    for i in T.parallel(4096):
        mx = T.alloc_buffer((1,), "float32")
        se = T.alloc_buffer((1,), "float32")
        mx[0] = T.float32("-inf")
        for j in range(1000):
            mx[0] = T.max(mx[0], L[i, j])
        se[0] = T.float32(0)
        for j in range(1000):
            se[0] = se[0] + T.exp(L[i, j] - mx[0])
        O[i] = T.log(se[0]) + mx[0] - L[i, Y[i]]

@T.prim_func
def one_hot_block(Y: T.Buffer((8192,), "int32"), O: T.Buffer((8192, 1000), "float32")):
    for i, j in T.grid(8192, 1000):
        with T.block("one_hot"):
            vi, vj = T.axis.remap("SS", [i, j])
            O[vi, vj] = T.Select(Y[vi] == vj, T.float32(1), T.float32(0))

@T.prim_func
def embedding_bag(I: T.Buffer((4096, 16), "int64"), E: T.Buffer((65536, 128), "float32"),
                  O: T.Buffer((4096, 128), "float32")):
    for b in T.parallel(4096):
        for d in T.vectorized(128):
            O[b, d] = T.float32(0)
        for k in range(16):
            row = I[b, k]
            for d in T.vectorized(128):
                O[b, d] = O[b, d] + E[row, d]

@T.prim_func
def instnorm_block(X: T.Buffer((16, 64, 56, 56), "float32"), G: T.Buffer((64,), "float32"),
                   Bt: T.Buffer((64,), "float32"), Y: T.Buffer((16, 64, 56, 56), "float32")):
    S = T.alloc_buffer((16, 64), "float32")
    Q = T.alloc_buffer((16, 64), "float32")
    for n, c, h, w in T.grid(16, 64, 56, 56):
        with T.block("stats"):
            vn, vc, vh, vw = T.axis.remap("SSRR", [n, c, h, w])
            with T.init():
                S[vn, vc] = T.float32(0)
                Q[vn, vc] = T.float32(0)
            S[vn, vc] = S[vn, vc] + X[vn, vc, vh, vw]
            Q[vn, vc] = Q[vn, vc] + X[vn, vc, vh, vw] * X[vn, vc, vh, vw]
    for n, c, h, w in T.grid(16, 64, 56, 56):
        with T.block("norm"):
            vn, vc, vh, vw = T.axis.remap("SSSS", [n, c, h, w])
            m = S[vn, vc] / T.float32(3136)
            v = Q[vn, vc] / T.float32(3136) - m * m
            Y[vn, vc, vh, vw] = (X[vn, vc, vh, vw] - m) * T.rsqrt(v + T.float32(1e-5)) * G[vc] + Bt[vc]

@T.prim_func
def maxpool2_block(X: T.Buffer((8, 64, 112, 112), "float32"), Y: T.Buffer((8, 64, 56, 56), "float32")):
    for n, c, h, w, rh, rw in T.grid(8, 64, 56, 56, 2, 2):
        with T.block("pool"):
            vn, vc, vh, vw, vrh, vrw = T.axis.remap("SSSSRR", [n, c, h, w, rh, rw])
            with T.init():
                Y[vn, vc, vh, vw] = T.float32("-inf")
            Y[vn, vc, vh, vw] = T.max(Y[vn, vc, vh, vw], X[vn, vc, vh * 2 + vrh, vw * 2 + vrw])

@T.prim_func
def rgb_gray_u8(I: T.Buffer((2048, 2048, 3), "uint8"), O: T.Buffer((2048, 2048), "uint8")):
    # split the way a TVM user vectorizes a strided load (see tvm_style3.downsample2); no
    # ``let`` inside the vectorized loop: TVM 0.27 gives every lane the last lane's value
    for i in T.parallel(2048):
        for jo in range(64):
            for ji in T.vectorized(32):
                O[i, jo * 32 + ji] = T.Cast("uint8", T.floordiv(T.Cast("int32", I[i, jo * 32 + ji, 0]) * 77 + T.Cast("int32", I[i, jo * 32 + ji, 1]) * 150 + T.Cast("int32", I[i, jo * 32 + ji, 2]) * 29 + 128, 256))

@T.prim_func
def prefix_max(A: T.Buffer((4096, 1024), "float32"), O: T.Buffer((4096, 1024), "float32")):
    for i in T.parallel(4096):
        O[i, 0] = A[i, 0]
        for j in range(1, 1024):
            O[i, j] = T.max(O[i, j - 1], A[i, j])

@T.prim_func
def sqdist_block(X: T.Buffer((512, 64), "float32"), Y: T.Buffer((1024, 64), "float32"),
                 D: T.Buffer((512, 1024), "float32")):
    XX = T.alloc_buffer((512,), "float32")
    YY = T.alloc_buffer((1024,), "float32")
    XY = T.alloc_buffer((512, 1024), "float32")
    for i, k in T.grid(512, 64):
        with T.block("xx"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                XX[vi] = T.float32(0)
            XX[vi] = XX[vi] + X[vi, vk] * X[vi, vk]
    for j, k in T.grid(1024, 64):
        with T.block("yy"):
            vj, vk = T.axis.remap("SR", [j, k])
            with T.init():
                YY[vj] = T.float32(0)
            YY[vj] = YY[vj] + Y[vj, vk] * Y[vj, vk]
    for i, j, k in T.grid(512, 1024, 64):
        with T.block("xy"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                XY[vi, vj] = T.float32(0)
            XY[vi, vj] = XY[vi, vj] + X[vi, vk] * Y[vj, vk]
    for i, j in T.grid(512, 1024):
        with T.block("d"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = T.max(XX[vi] + YY[vj] - T.float32(2) * XY[vi, vj], T.float32(0))

@T.prim_func
def cosine_rows(A: T.Buffer((8192, 256), "float32"), B: T.Buffer((8192, 256), "float32"),
                O: T.Buffer((8192,), "float32")):
    for i in T.parallel(8192):
        acc = T.alloc_buffer((3,), "float32")
        acc[0] = T.float32(0)
        acc[1] = T.float32(0)
        acc[2] = T.float32(0)
        for j in range(256):
            a = A[i, j]
            b = B[i, j]
            acc[0] = acc[0] + a * b
            acc[1] = acc[1] + a * a
            acc[2] = acc[2] + b * b
        O[i] = acc[0] / T.sqrt(T.max(acc[1] * acc[2], T.float32(1e-16)))

@T.prim_func
def swiglu_f16(A: T.Buffer((2048, 4096), "float16"), B: T.Buffer((2048, 4096), "float16"),
               O: T.Buffer((2048, 4096), "float16")):
    for i in T.parallel(2048):
        for j in T.vectorized(4096):
            O[i, j] = T.Cast("float16", T.Cast("float32", A[i, j]) * T.sigmoid(T.Cast("float32", A[i, j])) * T.Cast("float32", B[i, j]))

@T.prim_func
def sat_add_i16_block(A: T.Buffer((4096, 2048), "int16"), B: T.Buffer((4096, 2048), "int16"),
                      O: T.Buffer((4096, 2048), "int16")):
    for i, j in T.grid(4096, 2048):
        with T.block("sat"):
            vi, vj = T.axis.remap("SS", [i, j])
            O[vi, vj] = T.Cast("int16", T.max(T.min(T.Cast("int32", A[vi, vj]) + T.Cast("int32", B[vi, vj]), 32767), -32768))

@T.prim_func
def axpy_f64_sym(x: T.handle, y: T.handle, z: T.handle):
    n = T.int32()
    X = T.match_buffer(x, (n,), "float64")
    Y = T.match_buffer(y, (n,), "float64")
    Z = T.match_buffer(z, (n,), "float64")
    for io in T.parallel(T.ceildiv(n, 4096)):
        for ii in T.vectorized(4096):
            if io * 4096 + ii < n:
                Z[io * 4096 + ii] = T.float64(2.5) * X[io * 4096 + ii] + Y[io * 4096 + ii]

@T.prim_func
def softplus_sym_block(a: T.handle, b: T.handle):
    m, n = T.int32(), T.int32()
    A = T.match_buffer(a, (m, n), "float32")
    B = T.match_buffer(b, (m, n), "float32")
    for i, j in T.grid(m, n):
        with T.block("softplus"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = T.max(A[vi, vj], T.float32(0)) + T.log(T.float32(1) + T.exp(T.float32(0) - T.abs(A[vi, vj])))

@T.prim_func
def quantize_i8(A: T.Buffer((4096, 2048), "float32"), S: T.Buffer((4096,), "float32"),
                O: T.Buffer((4096, 2048), "int8")):
    for i in T.parallel(4096):
        inv = T.float32(1) / S[i]
        for j in T.vectorized(2048):
            O[i, j] = T.Cast("int8", T.min(T.max(T.round(A[i, j] * inv), T.float32(-128)), T.float32(127)))

@T.prim_func
def dwconv_pad_block(X: T.Buffer((1, 128, 112, 112), "float32"), W: T.Buffer((128, 1, 3, 3), "float32"),
                     Y: T.Buffer((1, 128, 112, 112), "float32")):
    for n, c, h, w, rh, rw in T.grid(1, 128, 112, 112, 3, 3):
        with T.block("dw"):
            vn, vc, vh, vw, vrh, vrw = T.axis.remap("SSSSRR", [n, c, h, w, rh, rw])
            with T.init():
                Y[vn, vc, vh, vw] = T.float32(0)
            Y[vn, vc, vh, vw] = Y[vn, vc, vh, vw] + T.if_then_else(1 <= vh + vrh and vh + vrh < 113 and 1 <= vw + vrw and vw + vrw < 113, X[vn, vc, vh + vrh - 1, vw + vrw - 1], T.float32(0)) * W[vc, 0, vrh, vrw]

@T.prim_func
def adaptive_avgpool(X: T.Buffer((64, 256, 30, 30), "float32"), O: T.Buffer((64, 256, 7, 7), "float32")):
    for n in T.parallel(64):
        for c, oh, ow in T.grid(256, 7, 7):
            h0 = T.floordiv(oh * 30, 7)
            h1 = T.floordiv(oh * 30 + 36, 7)
            w0 = T.floordiv(ow * 30, 7)
            w1 = T.floordiv(ow * 30 + 36, 7)
            acc = T.alloc_buffer((1,), "float32")
            acc[0] = T.float32(0)
            for rh in range(h1 - h0):
                for rw in range(w1 - w0):
                    acc[0] = acc[0] + X[n, c, h0 + rh, w0 + rw]
            O[n, c, oh, ow] = acc[0] / T.Cast("float32", (h1 - h0) * (w1 - w0))

@T.prim_func
def dense_gelu_block(X: T.Buffer((256, 512), "float32"), W: T.Buffer((512, 1024), "float32"),
                     Bias: T.Buffer((1024,), "float32"), O: T.Buffer((256, 1024), "float32")):
    C = T.alloc_buffer((256, 1024), "float32")
    for i, j, k in T.grid(256, 1024, 512):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + X[vi, vk] * W[vk, vj]
    for i, j in T.grid(256, 1024):
        with T.block("gelu"):
            vi = T.axis.spatial(256, i)
            vj = T.axis.spatial(1024, j)
            O[vi, vj] = T.float32(0.5) * (C[vi, vj] + Bias[vj]) * (T.float32(1) + T.erf((C[vi, vj] + Bias[vj]) * T.float32(0.7071067811865476)))

@T.prim_func
def convt1d_block(X: T.Buffer((64, 2048), "float32"), W: T.Buffer((64, 32, 4), "float32"),
                  Y: T.Buffer((32, 4098), "float32")):
    for o, t, c, k in T.grid(32, 4098, 64, 4):
        with T.block("convt"):
            vo, vt, vc, vk = T.axis.remap("SSRR", [o, t, c, k])
            with T.init():
                Y[vo, vt] = T.float32(0)
            Y[vo, vt] = Y[vo, vt] + T.if_then_else(T.floormod(vt - vk, 2) == 0 and 0 <= vt - vk and T.floordiv(vt - vk, 2) < 2048, X[vc, T.floordiv(vt - vk, 2)], T.float32(0)) * W[vc, vo, vk]
'''

#: Kernel -> how many of its last arguments are outputs (1 unless listed).
OUTPUTS: dict[str, int] = {}

#: Kernels TVM 0.27 refuses however they are written (their ``tvm`` cell stays empty).
TVM_REFUSES: dict[str, str] = {}

#: The symbolic AXPY's length (not a multiple of its 4096-lane split: the tail is guarded).
AXPY_N = 4_000_003
#: The symbolic softplus' shape (neither a multiple of a vector width).
SOFTPLUS_SHAPE = (3001, 1003)


def inputs(seed: int = 0) -> dict[str, list[np.ndarray]]:
    """Arguments of every kernel, 64-byte aligned (outputs last)."""
    rng = np.random.default_rng(seed)

    f = lambda *s: rng.standard_normal(s).astype("float32")  # noqa: E731
    z = lambda *s, dt="float32": np.zeros(s, dt)  # noqa: E731
    ints = lambda lo, hi, *s, dt="int32": rng.integers(lo, hi, s).astype(dt)  # noqa: E731
    raw = {
        "bmv_block": [f(64, 512, 512), f(64, 512), z(64, 512)],
        "xent_rows": [f(4096, 1000) * 3, ints(0, 1000, 4096), z(4096)],
        "one_hot_block": [ints(-2, 1002, 8192), z(8192, 1000)],
        "embedding_bag": [ints(0, 65536, 4096, 16, dt="int64"), f(65536, 128), z(4096, 128)],
        "instnorm_block": [f(16, 64, 56, 56) * 2 + 0.5, f(64), f(64), z(16, 64, 56, 56)],
        "maxpool2_block": [f(8, 64, 112, 112), z(8, 64, 56, 56)],
        "rgb_gray_u8": [ints(0, 256, 2048, 2048, 3, dt="uint8"), z(2048, 2048, dt="uint8")],
        "prefix_max": [f(4096, 1024), z(4096, 1024)],
        "sqdist_block": [f(512, 64), f(1024, 64), z(512, 1024)],
        "cosine_rows": [f(8192, 256), f(8192, 256), z(8192)],
        "swiglu_f16": [(f(2048, 4096) * 3).astype("float16"), f(2048, 4096).astype("float16"), z(2048, 4096, dt="float16")],
        "sat_add_i16_block": [ints(-32768, 32768, 4096, 2048, dt="int16"), ints(-32768, 32768, 4096, 2048, dt="int16"), z(4096, 2048, dt="int16")],
        "axpy_f64_sym": [rng.standard_normal(AXPY_N), rng.standard_normal(AXPY_N), z(AXPY_N, dt="float64")],
        "softplus_sym_block": [f(*SOFTPLUS_SHAPE) * 20, z(*SOFTPLUS_SHAPE)],
        "quantize_i8": [f(4096, 2048) * 50, rng.uniform(0.2, 1.0, 4096).astype("float32"), z(4096, 2048, dt="int8")],
        "dwconv_pad_block": [f(1, 128, 112, 112), f(128, 1, 3, 3), z(1, 128, 112, 112)],
        "adaptive_avgpool": [f(64, 256, 30, 30), z(64, 256, 7, 7)],
        "dense_gelu_block": [f(256, 512), f(512, 1024) * 0.05, f(1024), z(256, 1024)],
        "convt1d_block": [f(64, 2048), f(64, 32, 4), z(32, 4098)],
    }
    return {name: [aligned_copy(a) for a in args] for name, args in raw.items()}


def _adaptive_bounds(n_out: int, n_in: int) -> list[tuple[int, int]]:
    """PyTorch's adaptive-pool windows: ``[floor(o*n/k), ceil((o+1)*n/k))``."""
    return [(o * n_in // n_out, -(-(o + 1) * n_in // n_out)) for o in range(n_out)]


def reference(name: str, args: list[np.ndarray]) -> list[np.ndarray]:
    """numpy's outputs of ``name`` on ``args`` (float64 where the kernel reduces floats)."""
    a = [x.astype("float64") if x.dtype.kind == "f" else x for x in args]
    if name == "bmv_block":
        return [np.einsum("bik,bk->bi", a[0], a[1])]
    if name == "xent_rows":
        x = a[0]
        m = x.max(1)
        lse = np.log(np.exp(x - m[:, None]).sum(1)) + m
        return [lse - x[np.arange(x.shape[0]), args[1]]]
    if name == "one_hot_block":
        return [(args[0][:, None] == np.arange(1000)[None, :]).astype("float64")]
    if name == "embedding_bag":
        return [a[1][args[0]].sum(1)]
    if name == "instnorm_block":
        x = a[0]
        m = x.mean((2, 3), keepdims=True)
        v = x.var((2, 3), keepdims=True)
        return [(x - m) / np.sqrt(v + 1e-5) * a[1][:, None, None] + a[2][:, None, None]]
    if name == "maxpool2_block":
        x = a[0]
        n, c, h, w = x.shape
        return [x.reshape(n, c, h // 2, 2, w // 2, 2).max((3, 5))]
    if name == "rgb_gray_u8":
        p = args[0].astype("int32")
        return [((p[..., 0] * 77 + p[..., 1] * 150 + p[..., 2] * 29 + 128) // 256).astype("uint8")]
    if name == "prefix_max":
        return [np.maximum.accumulate(a[0], axis=1)]
    if name == "sqdist_block":
        x, y = a[0], a[1]
        return [((x[:, None, :] - y[None, :, :]) ** 2).sum(2)]
    if name == "cosine_rows":
        x, y = a[0], a[1]
        return [(x * y).sum(1) / np.sqrt((x * x).sum(1) * (y * y).sum(1))]
    if name == "swiglu_f16":
        x = a[0]
        return [x / (1 + np.exp(-x)) * a[1]]
    if name == "sat_add_i16_block":
        return [np.clip(args[0].astype("int32") + args[1], -32768, 32767).astype("int16")]
    if name == "axpy_f64_sym":
        return [2.5 * a[0] + a[1]]
    if name == "softplus_sym_block":
        return [np.logaddexp(0.0, a[0])]
    if name == "quantize_i8":
        inv = (np.float32(1) / args[1]).astype("float32")
        q = np.rint(args[0] * inv[:, None])  # float32 product, as the kernel rounds it
        return [np.clip(q, -128, 127).astype("int8")]
    if name == "dwconv_pad_block":
        x = np.pad(a[0], ((0, 0), (0, 0), (1, 1), (1, 1)))
        w = a[1]
        y = np.zeros((1, 128, 112, 112))
        for rh in range(3):
            for rw in range(3):
                y += x[:, :, rh : rh + 112, rw : rw + 112] * w[None, :, 0, rh, rw, None, None]
        return [y]
    if name == "adaptive_avgpool":
        x = a[0]
        out = np.zeros((64, 256, 7, 7))
        for oh, (h0, h1) in enumerate(_adaptive_bounds(7, 30)):
            for ow, (w0, w1) in enumerate(_adaptive_bounds(7, 30)):
                out[:, :, oh, ow] = x[:, :, h0:h1, w0:w1].mean((2, 3))
        return [out]
    if name == "dense_gelu_block":
        c = a[0] @ a[1] + a[2]
        erf = np.vectorize(math.erf)
        return [0.5 * c * (1 + erf(c / math.sqrt(2.0)))]
    if name == "convt1d_block":
        x, w = a[0], a[1]
        y = np.zeros((32, 4098))
        for k in range(4):
            y[:, k : k + 2 * 2048 : 2] += w[:, :, k].T @ x
        return [y]
    raise KeyError(name)


KERNELS = KernelSet(
    tag="tvm_style4",
    source=SOURCE,
    numba_module="benchmarks._numba_tvm_style4",
    inputs=inputs,
    reference=reference,
    agrees=agrees,
    outputs=OUTPUTS,
    tvm_refuses=TVM_REFUSES,
)
"""The set's driver (``benchmarks/kernel_sets.py``)."""


if __name__ == "__main__":
    KERNELS.main(__doc__)
