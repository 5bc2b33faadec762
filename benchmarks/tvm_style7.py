"""A seventh set of TVM-style kernels: more TIR as TVM prints it after scheduling, next to
TVM 0.27 and numba.

Run like ``tvm_style6.py`` (our ``tvmscript.build`` with default options, TVM 0.27 on the
*same source*, the fastest numba twin from ``_numba_tvm_style7.py``): reductions whose
reduce loop a schedule split (``k_0 * 16 + k_1``, with the ``T.where`` of a split that does
not divide), a meta-schedule-style softmax, three or two fused axes read through ``//`` and
``%`` (a batch norm, a reshape, a transpose, a concatenation), and a dense layer over a
weight packed in 16-column panels (the ``dense_pack`` layout).

Ratios are peer ms / our ms (> 1: we are faster); ``!`` marks an output that differs from
ours. ``--check`` compares every side with a numpy reference instead of timing::

    PYTHONPATH=. /work/peers/bin/python benchmarks/tvm_style7.py [--rounds 3] [--only a,b] [--check]
"""

# ruff: noqa: E501 - TVMScript sources as TVM prints them

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
def rowsum_split(A: T.Buffer((2048, 1024), "float32"), S: T.Buffer((2048,), "float32")):
    for i0 in T.parallel(2048):
        for k_0, k_1 in T.grid(64, 16):
            with T.block("sum"):
                v_i0 = T.axis.spatial(2048, i0)
                v_k = T.axis.reduce(1024, k_0 * 16 + k_1)
                with T.init():
                    S[v_i0] = T.float32(0)
                S[v_i0] = S[v_i0] + A[v_i0, v_k]

@T.prim_func
def rowmax_split_where(A: T.Buffer((2048, 1000), "float32"), M: T.Buffer((2048,), "float32")):
    for i0 in T.parallel(2048):
        for k_0 in range(63):
            for k_1 in T.vectorized(16):
                with T.block("maxelem"):
                    v_i0 = T.axis.spatial(2048, i0)
                    v_k = T.axis.reduce(1000, k_0 * 16 + k_1)
                    T.where(k_0 * 16 + k_1 < 1000)
                    with T.init():
                        M[v_i0] = T.float32(-3.4028234663852886e+38)
                    M[v_i0] = T.max(M[v_i0], A[v_i0, v_k])

@T.prim_func
def softmax_ms(A: T.Buffer((2048, 1000), "float32"), T_softmax_norm: T.Buffer((2048, 1000), "float32")):
    T_softmax_maxelem = T.alloc_buffer((2048,))
    T_softmax_expsum = T.alloc_buffer((2048,))
    for i0_fused in T.parallel(2048):
        for k_0 in range(63):
            for k_1 in range(16):
                with T.block("T_softmax_maxelem"):
                    v_i0 = T.axis.spatial(2048, i0_fused)
                    v_k = T.axis.reduce(1000, k_0 * 16 + k_1)
                    T.where(k_0 * 16 + k_1 < 1000)
                    with T.init():
                        T_softmax_maxelem[v_i0] = T.float32(-3.4028234663852886e+38)
                    T_softmax_maxelem[v_i0] = T.max(T_softmax_maxelem[v_i0], A[v_i0, v_k])
        for k_0 in range(63):
            for k_1 in range(16):
                with T.block("T_softmax_expsum"):
                    v_i0 = T.axis.spatial(2048, i0_fused)
                    v_k = T.axis.reduce(1000, k_0 * 16 + k_1)
                    T.where(k_0 * 16 + k_1 < 1000)
                    with T.init():
                        T_softmax_expsum[v_i0] = T.float32(0)
                    T_softmax_expsum[v_i0] = T_softmax_expsum[v_i0] + T.exp(A[v_i0, v_k] - T_softmax_maxelem[v_i0])
        for i1_0 in range(63):
            for i1_1 in T.vectorized(16):
                with T.block("T_softmax_norm"):
                    v_i0 = T.axis.spatial(2048, i0_fused)
                    v_i1 = T.axis.spatial(1000, i1_0 * 16 + i1_1)
                    T.where(i1_0 * 16 + i1_1 < 1000)
                    T_softmax_norm[v_i0, v_i1] = T.exp(A[v_i0, v_i1] - T_softmax_maxelem[v_i0]) / T_softmax_expsum[v_i0]

@T.prim_func
def concat_fused(A: T.Buffer((1024, 300), "float32"), B: T.Buffer((1024, 500), "float32"), O: T.Buffer((1024, 800), "float32")):
    for ax0_ax1_fused in T.parallel(819200):
        with T.block("T_concat"):
            v0 = T.axis.spatial(1024, ax0_ax1_fused // 800)
            v1 = T.axis.spatial(800, ax0_ax1_fused % 800)
            O[v0, v1] = T.if_then_else(300 <= v1, B[v0, v1 - 300], A[v0, v1])

@T.prim_func
def dense_pack(A: T.Buffer((256, 1024), "float32"), W: T.Buffer((1024, 1024), "float32"), O: T.Buffer((256, 1024), "float32")):
    W_packed = T.alloc_buffer((64, 1024, 16))
    for ax0_ax1_fused in T.parallel(65536):
        for ax2 in T.vectorized(16):
            with T.block("W_packed"):
                v0 = T.axis.spatial(64, ax0_ax1_fused // 1024)
                v1 = T.axis.spatial(1024, ax0_ax1_fused % 1024)
                v2 = T.axis.spatial(16, ax2)
                W_packed[v0, v1, v2] = W[v0 * 16 + v2, v1]
    for i_j_0_fused in T.parallel(16384):
        for k in range(1024):
            for j_1 in T.vectorized(16):
                with T.block("T_matmul_NT"):
                    vi = T.axis.spatial(256, i_j_0_fused // 64)
                    vj = T.axis.spatial(1024, i_j_0_fused % 64 * 16 + j_1)
                    vk = T.axis.reduce(1024, k)
                    with T.init():
                        O[vi, vj] = T.float32(0)
                    O[vi, vj] = O[vi, vj] + A[vi, vk] * W_packed[vj // 16, vk, vj % 16]

@T.prim_func
def batchnorm_fused(X: T.Buffer((1, 64, 56, 56), "float32"), mean: T.Buffer((64,), "float32"), var: T.Buffer((64,), "float32"),
                    gamma: T.Buffer((64,), "float32"), beta: T.Buffer((64,), "float32"), Y: T.Buffer((1, 64, 56, 56), "float32")):
    for ax0_ax1_ax2_ax3_fused in T.parallel(200704):
        with T.block("T_add"):
            v_ax0 = T.axis.spatial(1, 0)
            v_ax1 = T.axis.spatial(64, ax0_ax1_ax2_ax3_fused // 3136)
            v_ax2 = T.axis.spatial(56, ax0_ax1_ax2_ax3_fused % 3136 // 56)
            v_ax3 = T.axis.spatial(56, ax0_ax1_ax2_ax3_fused % 56)
            Y[v_ax0, v_ax1, v_ax2, v_ax3] = (X[v_ax0, v_ax1, v_ax2, v_ax3] - mean[v_ax1]) * T.rsqrt(var[v_ax1] + T.float32(1e-5)) * gamma[v_ax1] + beta[v_ax1]

@T.prim_func
def reshape_fused(A: T.Buffer((64, 3136), "float32"), T_reshape: T.Buffer((64, 56, 56), "float32")):
    for ax0_ax1_ax2_fused in T.parallel(200704):
        with T.block("T_reshape"):
            v_ax0 = T.axis.spatial(64, ax0_ax1_ax2_fused // 3136)
            v_ax1 = T.axis.spatial(56, ax0_ax1_ax2_fused % 3136 // 56)
            v_ax2 = T.axis.spatial(56, ax0_ax1_ax2_fused % 56)
            T_reshape[v_ax0, v_ax1, v_ax2] = A[(v_ax0 * 3136 + v_ax1 * 56 + v_ax2) // 3136, (v_ax0 * 3136 + v_ax1 * 56 + v_ax2) % 3136]

@T.prim_func
def transpose_fused(A: T.Buffer((1024, 1024), "float32"), T_transpose: T.Buffer((1024, 1024), "float32")):
    for ax0_ax1_fused in T.parallel(1048576):
        with T.block("T_transpose"):
            v_ax0 = T.axis.spatial(1024, ax0_ax1_fused // 1024)
            v_ax1 = T.axis.spatial(1024, ax0_ax1_fused % 1024)
            T.reads(A[v_ax1, v_ax0])
            T.writes(T_transpose[v_ax0, v_ax1])
            T_transpose[v_ax0, v_ax1] = A[v_ax1, v_ax0]
'''

#: Kernel -> how many of its last arguments are outputs (1 unless listed).
OUTPUTS: dict[str, int] = {}

#: Kernels TVM 0.27 cannot build, with the reason (none).
TVM_REFUSES: dict[str, str] = {}


def inputs(seed: int = 0) -> dict[str, list[np.ndarray]]:
    """Arguments of every kernel, 64-byte aligned (outputs last)."""
    rng = np.random.default_rng(seed)

    f = lambda *s: rng.standard_normal(s).astype("float32")  # noqa: E731
    pos = lambda *s: rng.uniform(0.5, 2.0, s).astype("float32")  # noqa: E731
    z = lambda *s: np.zeros(s, "float32")  # noqa: E731
    raw = {
        "rowsum_split": [f(2048, 1024), z(2048)],
        "rowmax_split_where": [f(2048, 1000), z(2048)],
        "softmax_ms": [f(2048, 1000), z(2048, 1000)],
        "concat_fused": [f(1024, 300), f(1024, 500), z(1024, 800)],
        "dense_pack": [f(256, 1024), f(1024, 1024), z(256, 1024)],
        "batchnorm_fused": [f(1, 64, 56, 56), f(64), pos(64), f(64), f(64), z(1, 64, 56, 56)],
        "reshape_fused": [f(64, 3136), z(64, 56, 56)],
        "transpose_fused": [f(1024, 1024), z(1024, 1024)],
    }
    return {name: [aligned_copy(a) for a in args] for name, args in raw.items()}


def reference(name: str, args: list[np.ndarray]) -> list[np.ndarray]:
    """numpy's outputs of ``name`` on ``args`` (float64)."""
    a = [x.astype("float64") for x in args]
    if name == "rowsum_split":
        return [a[0].sum(1)]
    if name == "rowmax_split_where":
        return [a[0].max(1)]
    if name == "softmax_ms":
        e = np.exp(a[0] - a[0].max(1, keepdims=True))
        return [e / e.sum(1, keepdims=True)]
    if name == "concat_fused":
        return [np.concatenate([a[0], a[1]], 1)]
    if name == "dense_pack":
        return [a[0] @ a[1].T]
    if name == "batchnorm_fused":
        r = lambda v: v[None, :, None, None]  # noqa: E731
        return [(a[0] - r(a[1])) / np.sqrt(r(a[2]) + 1e-5) * r(a[3]) + r(a[4])]
    if name == "reshape_fused":
        return [a[0].reshape(64, 56, 56)]
    if name == "transpose_fused":
        return [a[0].T]
    raise KeyError(name)


KERNELS = KernelSet(
    tag="tvm_style7",
    source=SOURCE,
    numba_module="benchmarks._numba_tvm_style7",
    inputs=inputs,
    reference=reference,
    agrees=agrees,
    outputs=OUTPUTS,
    tvm_refuses=TVM_REFUSES,
)
"""The set's driver (``benchmarks/kernel_sets.py``)."""


if __name__ == "__main__":
    KERNELS.main(__doc__)
