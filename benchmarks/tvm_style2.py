"""Twenty more TVM-style kernels, as a TVM user writes them, next to TVM 0.27 and numba.

A second set beside ``tvm_style.py`` (none of its 22 kernels again), run the same way: our
``tvmscript.build`` with default options, TVM 0.27 on the *same source* (``tirx``,
``T.sblock``, host ``mcpu``) and the fastest numba twin (``_numba_tvm_style2.py``). Plain
nests with ``T.parallel`` / ``T.vectorized`` and per-iteration ``T.alloc_buffer`` scratch
(argmin with a select, clip/where, nearest 2x upsample, l2-normalize, log-sum-exp, a column
scan, a row gather) and unscheduled ``T.block`` programs (a four-stage softmax, reductions
over the outer axis, to a scalar and over groups, a ``B``-transposed matmul, an int8 dense
layer, a float16 row sum, constant padding, a concat, a 7-tap 1-d convolution, a 2-d
transpose, a batch of 16x16 matmuls).

Ratios are peer ms / our ms (> 1: we are faster); ``!`` marks an output that differs from
ours. ``--check`` compares every side with a numpy reference instead of timing::

    PYTHONPATH=. /work/peers/bin/python benchmarks/tvm_style2.py [--rounds 3] [--only a,b] [--check]
"""

# ruff: noqa: E501 - TVMScript sources and input tables
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import numpy as np

from benchmarks.kernel_sets import KernelSet
from benchmarks.peers import aligned_copy

SOURCE = r'''
@T.prim_func
def softmax_block(A: T.Buffer((4096, 1024), "float32"), O: T.Buffer((4096, 1024), "float32")):
    M = T.alloc_buffer((4096,), "float32")
    E = T.alloc_buffer((4096, 1024), "float32")
    S = T.alloc_buffer((4096,), "float32")
    for i, j in T.grid(4096, 1024):
        with T.block("max"):
            vi, vj = T.axis.remap("SR", [i, j])
            with T.init():
                M[vi] = T.float32(-3.4e38)
            M[vi] = T.max(M[vi], A[vi, vj])
    for i, j in T.grid(4096, 1024):
        with T.block("exp"):
            vi, vj = T.axis.remap("SS", [i, j])
            E[vi, vj] = T.exp(A[vi, vj] - M[vi])
    for i, j in T.grid(4096, 1024):
        with T.block("sum"):
            vi, vj = T.axis.remap("SR", [i, j])
            with T.init():
                S[vi] = T.float32(0)
            S[vi] = S[vi] + E[vi, vj]
    for i, j in T.grid(4096, 1024):
        with T.block("norm"):
            vi, vj = T.axis.remap("SS", [i, j])
            O[vi, vj] = E[vi, vj] / S[vi]

@T.prim_func
def sum_axis0_block(A: T.Buffer((64, 256, 512), "float32"), B: T.Buffer((256, 512), "float32")):
    for j, k, i in T.grid(256, 512, 64):
        with T.block("B"):
            vj, vk, vi = T.axis.remap("SSR", [j, k, i])
            with T.init():
                B[vj, vk] = T.float32(0)
            B[vj, vk] = B[vj, vk] + A[vi, vj, vk]

@T.prim_func
def sum_block(a: T.Buffer((16777216,), "float32"), out: T.Buffer((1,), "float32")):
    for k in range(16777216):
        with T.block("sum"):
            vk = T.axis.remap("R", [k])
            with T.init():
                out[0] = T.float32(0)
            out[0] = out[0] + a[vk]

@T.prim_func
def argmin_rows(A: T.Buffer((4096, 1024), "float32"), O: T.Buffer((4096,), "int32")):
    for i in T.parallel(4096):
        best = T.alloc_buffer((1,), "float32")
        idx = T.alloc_buffer((1,), "int32")
        best[0] = T.float32(3.4e38)
        idx[0] = 0
        for j in range(1024):
            idx[0] = T.Select(A[i, j] < best[0], j, idx[0])
            best[0] = T.min(best[0], A[i, j])
        O[i] = idx[0]

@T.prim_func
def clip_where(A: T.Buffer((4096, 2048), "float32"), B: T.Buffer((4096, 2048), "float32"),
               O: T.Buffer((4096, 2048), "float32")):
    for i in T.parallel(4096):
        for j in T.vectorized(2048):
            O[i, j] = T.if_then_else(A[i, j] > T.float32(0), T.min(A[i, j], T.float32(1)),
                                     B[i, j] * T.float32(0.1))

@T.prim_func
def scale_shift_nchw(X: T.Buffer((16, 128, 28, 28), "float32"), S: T.Buffer((128,), "float32"),
                     Bs: T.Buffer((128,), "float32"), Y: T.Buffer((16, 128, 28, 28), "float32")):
    for n, c, h, w in T.grid(16, 128, 28, 28):
        with T.block("ss"):
            vn, vc, vh, vw = T.axis.remap("SSSS", [n, c, h, w])
            Y[vn, vc, vh, vw] = X[vn, vc, vh, vw] * S[vc] + Bs[vc]

@T.prim_func
def matmul_nt_block(A: T.Buffer((512, 512), "float32"), B: T.Buffer((512, 512), "float32"),
                    C: T.Buffer((512, 512), "float32")):
    for i, j, k in T.grid(512, 512, 512):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vj, vk]

@T.prim_func
def dense_int8(A: T.Buffer((256, 1024), "int8"), B: T.Buffer((512, 1024), "int8"),
               C: T.Buffer((256, 512), "int32")):
    for i, j, k in T.grid(256, 512, 1024):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = 0
            C[vi, vj] = C[vi, vj] + T.Cast("int32", A[vi, vk]) * T.Cast("int32", B[vj, vk])

@T.prim_func
def f16_rowsum(A: T.Buffer((4096, 2048), "float16"), B: T.Buffer((4096,), "float32")):
    for i, j in T.grid(4096, 2048):
        with T.block("B"):
            vi, vj = T.axis.remap("SR", [i, j])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + T.Cast("float32", A[vi, vj])

@T.prim_func
def pad_nchw(X: T.Buffer((8, 64, 56, 56), "float32"), P: T.Buffer((8, 64, 58, 58), "float32")):
    for n, c, h, w in T.grid(8, 64, 58, 58):
        with T.block("pad"):
            vn, vc, vh, vw = T.axis.remap("SSSS", [n, c, h, w])
            P[vn, vc, vh, vw] = T.if_then_else(1 <= vh and vh < 57 and 1 <= vw and vw < 57,
                                               X[vn, vc, vh - 1, vw - 1], T.float32(0))

@T.prim_func
def upsample2x(A: T.Buffer((8, 64, 56, 56), "float32"), O: T.Buffer((8, 64, 112, 112), "float32")):
    for n in T.parallel(8):
        for c, h, w in T.grid(64, 112, 112):
            O[n, c, h, w] = A[n, c, h // 2, w // 2]

@T.prim_func
def concat_last(A: T.Buffer((4096, 512), "float32"), B: T.Buffer((4096, 512), "float32"),
                O: T.Buffer((4096, 1024), "float32")):
    for i, j in T.grid(4096, 1024):
        with T.block("concat"):
            vi, vj = T.axis.remap("SS", [i, j])
            O[vi, vj] = T.if_then_else(vj < 512, A[vi, vj], B[vi, vj - 512])

@T.prim_func
def groupnorm_stats(X: T.Buffer((8, 512, 32, 32), "float32"), M: T.Buffer((8, 32), "float32"),
                    V: T.Buffer((8, 32), "float32")):
    S = T.alloc_buffer((8, 32), "float32")
    Q = T.alloc_buffer((8, 32), "float32")
    for n, g, c, h, w in T.grid(8, 32, 16, 32, 32):
        with T.block("stats"):
            vn, vg, vc, vh, vw = T.axis.remap("SSRRR", [n, g, c, h, w])
            with T.init():
                S[vn, vg] = T.float32(0)
                Q[vn, vg] = T.float32(0)
            S[vn, vg] = S[vn, vg] + X[vn, vg * 16 + vc, vh, vw]
            Q[vn, vg] = Q[vn, vg] + X[vn, vg * 16 + vc, vh, vw] * X[vn, vg * 16 + vc, vh, vw]
    for n, g in T.grid(8, 32):
        with T.block("out"):
            vn, vg = T.axis.remap("SS", [n, g])
            M[vn, vg] = S[vn, vg] * T.float32(1.0 / 16384)
            V[vn, vg] = Q[vn, vg] * T.float32(1.0 / 16384) - S[vn, vg] * T.float32(1.0 / 16384) * (S[vn, vg] * T.float32(1.0 / 16384))

@T.prim_func
def l2norm_rows(A: T.Buffer((4096, 1024), "float32"), O: T.Buffer((4096, 1024), "float32")):
    for i in T.parallel(4096):
        s = T.alloc_buffer((1,), "float32")
        s[0] = T.float32(0)
        for j in range(1024):
            s[0] = s[0] + A[i, j] * A[i, j]
        for j in T.vectorized(1024):
            O[i, j] = A[i, j] * T.rsqrt(s[0] + T.float32(1e-12))

@T.prim_func
def logsumexp_rows(A: T.Buffer((4096, 1024), "float32"), O: T.Buffer((4096,), "float32")):
    for i in T.parallel(4096):
        m = T.alloc_buffer((1,), "float32")
        s = T.alloc_buffer((1,), "float32")
        m[0] = T.float32(-3.4e38)
        for j in range(1024):
            m[0] = T.max(m[0], A[i, j])
        s[0] = T.float32(0)
        for j in range(1024):
            s[0] = s[0] + T.exp(A[i, j] - m[0])
        O[i] = m[0] + T.log(s[0])

@T.prim_func
def cumsum_axis0(A: T.Buffer((1024, 4096), "float32"), O: T.Buffer((1024, 4096), "float32")):
    for j in T.parallel(4096):
        O[0, j] = A[0, j]
        for i in range(1, 1024):
            O[i, j] = O[i - 1, j] + A[i, j]

@T.prim_func
def conv1d_block(X: T.Buffer((64, 65542), "float32"), W: T.Buffer((7,), "float32"),
                 Y: T.Buffer((64, 65536), "float32")):
    for b, i, k in T.grid(64, 65536, 7):
        with T.block("conv"):
            vb, vi, vk = T.axis.remap("SSR", [b, i, k])
            with T.init():
                Y[vb, vi] = T.float32(0)
            Y[vb, vi] = Y[vb, vi] + X[vb, vi + vk] * W[vk]

@T.prim_func
def transpose_block(A: T.Buffer((4096, 4096), "float32"), B: T.Buffer((4096, 4096), "float32")):
    for i, j in T.grid(4096, 4096):
        with T.block("T"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vj, vi]

@T.prim_func
def take_rows(Tab: T.Buffer((65536, 128), "float32"), idx: T.Buffer((32768,), "int32"),
              O: T.Buffer((32768, 128), "float32")):
    for i in T.parallel(32768):
        for j in T.vectorized(128):
            O[i, j] = Tab[idx[i], j]

@T.prim_func
def bmm_small_block(A: T.Buffer((4096, 16, 16), "float32"), B: T.Buffer((4096, 16, 16), "float32"),
                    C: T.Buffer((4096, 16, 16), "float32")):
    for b, i, j, k in T.grid(4096, 16, 16, 16):
        with T.block("C"):
            vb, vi, vj, vk = T.axis.remap("SSSR", [b, i, j, k])
            with T.init():
                C[vb, vi, vj] = T.float32(0)
            C[vb, vi, vj] = C[vb, vi, vj] + A[vb, vi, vk] * B[vb, vk, vj]
'''

#: Kernel -> how many of its last arguments are outputs (1 unless listed).
OUTPUTS = {"groupnorm_stats": 2}


def inputs(seed: int = 0) -> dict[str, list[np.ndarray]]:
    """Arguments of every kernel, 64-byte aligned (outputs last)."""
    rng = np.random.default_rng(seed)

    f = lambda *s: rng.standard_normal(s).astype("float32")  # noqa: E731
    z = lambda *s, dt="float32": np.zeros(s, dt)  # noqa: E731
    i8 = lambda *s: rng.integers(-128, 128, s).astype("int8")  # noqa: E731
    raw = {
        "softmax_block": [f(4096, 1024), z(4096, 1024)],
        "sum_axis0_block": [f(64, 256, 512), z(256, 512)],
        "sum_block": [f(16777216), z(1)],
        "argmin_rows": [f(4096, 1024), z(4096, dt="int32")],
        "clip_where": [f(4096, 2048), f(4096, 2048), z(4096, 2048)],
        "scale_shift_nchw": [f(16, 128, 28, 28), f(128), f(128), z(16, 128, 28, 28)],
        "matmul_nt_block": [f(512, 512), f(512, 512), z(512, 512)],
        "dense_int8": [i8(256, 1024), i8(512, 1024), z(256, 512, dt="int32")],
        "f16_rowsum": [f(4096, 2048).astype("float16"), z(4096)],
        "pad_nchw": [f(8, 64, 56, 56), z(8, 64, 58, 58)],
        "upsample2x": [f(8, 64, 56, 56), z(8, 64, 112, 112)],
        "concat_last": [f(4096, 512), f(4096, 512), z(4096, 1024)],
        "groupnorm_stats": [f(8, 512, 32, 32) + 0.5, z(8, 32), z(8, 32)],
        "l2norm_rows": [f(4096, 1024), z(4096, 1024)],
        "logsumexp_rows": [f(4096, 1024), z(4096)],
        "cumsum_axis0": [f(1024, 4096), z(1024, 4096)],
        "conv1d_block": [f(64, 65542), f(7), z(64, 65536)],
        "transpose_block": [f(4096, 4096), z(4096, 4096)],
        "take_rows": [f(65536, 128), rng.integers(0, 65536, 32768).astype("int32"), z(32768, 128)],
        "bmm_small_block": [f(4096, 16, 16), f(4096, 16, 16), z(4096, 16, 16)],
    }
    return {name: [aligned_copy(a) for a in args] for name, args in raw.items()}


def reference(name: str, args: list[np.ndarray]) -> list[np.ndarray]:
    """numpy's outputs of ``name`` on ``args`` (float64 where the kernel reduces floats)."""
    a = [x.astype("float64") if x.dtype.kind == "f" else x for x in args]
    if name == "softmax_block":
        e = np.exp(a[0] - a[0].max(1, keepdims=True))
        return [e / e.sum(1, keepdims=True)]
    if name == "sum_axis0_block":
        return [a[0].sum(0)]
    if name == "sum_block":
        return [a[0].sum(keepdims=True)]
    if name == "argmin_rows":
        return [args[0].argmin(1).astype("int32")]
    if name == "clip_where":
        return [np.where(a[0] > 0, np.minimum(a[0], 1), a[1] * 0.1)]
    if name == "scale_shift_nchw":
        return [a[0] * a[1][:, None, None] + a[2][:, None, None]]
    if name == "matmul_nt_block":
        return [a[0] @ a[1].T]
    if name == "dense_int8":
        return [(args[0].astype("int64") @ args[1].astype("int64").T).astype("int32")]
    if name == "f16_rowsum":
        return [a[0].sum(1)]
    if name == "pad_nchw":
        return [np.pad(a[0], ((0, 0), (0, 0), (1, 1), (1, 1)))]
    if name == "upsample2x":
        return [a[0].repeat(2, 2).repeat(2, 3)]
    if name == "concat_last":
        return [np.concatenate([a[0], a[1]], 1)]
    if name == "groupnorm_stats":
        g = a[0].reshape(8, 32, -1)
        return [g.mean(2), g.var(2)]
    if name == "l2norm_rows":
        return [a[0] / np.sqrt((a[0] ** 2).sum(1, keepdims=True) + 1e-12)]
    if name == "logsumexp_rows":
        m = a[0].max(1)
        return [m + np.log(np.exp(a[0] - m[:, None]).sum(1))]
    if name == "cumsum_axis0":
        return [a[0].cumsum(0)]
    if name == "conv1d_block":
        x, w = a[0], a[1]
        return [sum(x[:, k : k + 65536] * w[k] for k in range(7))]
    if name == "transpose_block":
        return [a[0].T]
    if name == "take_rows":
        return [a[0][args[1]]]
    if name == "bmm_small_block":
        return [a[0] @ a[1]]
    raise KeyError(name)


def agrees(name: str, got: np.ndarray, want: np.ndarray) -> tuple[bool, float]:
    """Whether ``got`` matches ``want`` (exact for integers; floats within ``rtol=2e-3`` and an
    absolute slack of 1e-3 of the output's largest magnitude; the 16M-term sum within 1e-4 of
    the sum of magnitudes), and the largest absolute error."""
    got64, want64 = got.astype("float64"), want.astype("float64")
    err = float(np.max(np.abs(got64 - want64))) if got.size else 0.0
    if got.dtype.kind in "iu":
        return bool(np.array_equal(got64, want64)), err
    scale = float(np.max(np.abs(want64))) or 1.0
    atol = 1e-3 * scale
    if name == "sum_block":
        atol = 1e-4 * 16777216 * 0.8
    return bool(np.allclose(got64, want64, rtol=2e-3, atol=atol)), err


KERNELS = KernelSet(
    tag="tvm_style2",
    source=SOURCE,
    numba_module="benchmarks._numba_tvm_style2",
    inputs=inputs,
    reference=reference,
    agrees=agrees,
    outputs=OUTPUTS,
)
"""The set's driver (``benchmarks/kernel_sets.py``)."""


if __name__ == "__main__":
    KERNELS.main(__doc__)
