"""A sixth set of TVM-style kernels: TIR as TVM prints it after scheduling, next to TVM 0.27
and numba.

Beside ``tvm_style.py`` .. ``tvm_style5.py``, run the same way (our ``tvmscript.build`` with
default options, TVM 0.27 on the *same source*, the fastest numba twin from
``_numba_tvm_style6.py``). These are the shapes a meta-schedule or a hand schedule leaves:
fused parallel loops indexed through ``//`` and ``%``, ``T.axis.spatial`` bindings of split
loops, a decomposed reduction (``C_init`` / ``C_update``), ``T.where`` predicates of
non-dividing splits, ``T.reads`` / ``T.writes`` / ``T.block_attr`` annotations, a padding
block computed at the root, an ``rfactor``-ed sum, a ``compute_at`` softmax whose
intermediates are root-level buffers, a layout transform to ``NCHW16c`` and an argmax
through the two-buffer tuple reduction TVM prints for ``argmax``.

Ratios are peer ms / our ms (> 1: we are faster); ``!`` marks an output that differs from
ours. ``--check`` compares every side with a numpy reference instead of timing::

    PYTHONPATH=. /work/peers/bin/python benchmarks/tvm_style6.py [--rounds 3] [--only a,b] [--check]
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
def matmul_sched(A: T.Buffer((512, 512), "float32"), B: T.Buffer((512, 512), "float32"), C: T.Buffer((512, 512), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": T.bool(True)})
    for i0_0_i1_0_fused in T.parallel(256, annotations={"pragma_auto_unroll_max_step": 64, "pragma_unroll_explicit": 1}):
        for i0_2_init, i1_2_init, i0_3_init in T.grid(8, 2, 2):
            for i1_3_fused_init in T.vectorized(32):
                with T.block("C_init"):
                    i = T.axis.spatial(512, i0_0_i1_0_fused // 8 * 16 + i0_2_init * 2 + i0_3_init)
                    j = T.axis.spatial(512, i0_0_i1_0_fused % 8 * 64 + i1_2_init * 32 + i1_3_fused_init)
                    T.reads()
                    T.writes(C[i, j])
                    T.block_attr({"meta_schedule.tiling_structure": "SSRSRS"})
                    C[i, j] = T.float32(0)
        for i2_0, i0_2, i1_2, i2_1, i0_3 in T.grid(128, 8, 2, 4, 2):
            for i1_3_fused in T.vectorized(32):
                with T.block("C_update"):
                    i = T.axis.spatial(512, i0_0_i1_0_fused // 8 * 16 + i0_2 * 2 + i0_3)
                    j = T.axis.spatial(512, i0_0_i1_0_fused % 8 * 64 + i1_2 * 32 + i1_3_fused)
                    k = T.axis.reduce(512, i2_0 * 4 + i2_1)
                    T.reads(C[i, j], A[i, k], B[k, j])
                    T.writes(C[i, j])
                    T.block_attr({"meta_schedule.tiling_structure": "SSRSRS"})
                    C[i, j] = C[i, j] + A[i, k] * B[k, j]

@T.prim_func
def softmax_sched(A: T.Buffer((2048, 1000), "float32"), T_softmax_norm: T.Buffer((2048, 1000), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": T.bool(True)})
    T_softmax_maxelem = T.alloc_buffer((2048,))
    T_softmax_exp = T.alloc_buffer((2048, 1000))
    T_softmax_expsum = T.alloc_buffer((2048,))
    for i0 in T.parallel(2048):
        for k in range(1000):
            with T.block("T_softmax_maxelem"):
                v_i0, v_k = T.axis.remap("SR", [i0, k])
                T.reads(A[v_i0, v_k])
                T.writes(T_softmax_maxelem[v_i0])
                with T.init():
                    T_softmax_maxelem[v_i0] = T.float32(-3.4028234663852886e+38)
                T_softmax_maxelem[v_i0] = T.max(T_softmax_maxelem[v_i0], A[v_i0, v_k])
        for i1 in range(1000):
            with T.block("T_softmax_exp"):
                v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
                T.reads(A[v_i0, v_i1], T_softmax_maxelem[v_i0])
                T.writes(T_softmax_exp[v_i0, v_i1])
                T_softmax_exp[v_i0, v_i1] = T.exp(A[v_i0, v_i1] - T_softmax_maxelem[v_i0])
        for k in range(1000):
            with T.block("T_softmax_expsum"):
                v_i0, v_k = T.axis.remap("SR", [i0, k])
                T.reads(T_softmax_exp[v_i0, v_k])
                T.writes(T_softmax_expsum[v_i0])
                with T.init():
                    T_softmax_expsum[v_i0] = T.float32(0)
                T_softmax_expsum[v_i0] = T_softmax_expsum[v_i0] + T_softmax_exp[v_i0, v_k]
        for i1 in range(1000):
            with T.block("T_softmax_norm"):
                v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
                T.reads(T_softmax_exp[v_i0, v_i1], T_softmax_expsum[v_i0])
                T.writes(T_softmax_norm[v_i0, v_i1])
                T.block_attr({"axis": 1})
                T_softmax_norm[v_i0, v_i1] = T_softmax_exp[v_i0, v_i1] / T_softmax_expsum[v_i0]

@T.prim_func
def conv2d_pad_sched(X: T.Buffer((1, 32, 56, 56), "float32"), W: T.Buffer((64, 32, 3, 3), "float32"),
                     conv: T.Buffer((1, 64, 56, 56), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": T.bool(True)})
    pad_temp = T.alloc_buffer((1, 32, 58, 58))
    for i0_i1_fused in T.parallel(32):
        for i2, i3 in T.grid(58, 58):
            with T.block("pad_temp"):
                v_i0 = T.axis.spatial(1, 0)
                v_i1 = T.axis.spatial(32, i0_i1_fused)
                v_i2, v_i3 = T.axis.remap("SS", [i2, i3])
                T.reads(X[v_i0, v_i1, v_i2 - 1, v_i3 - 1])
                T.writes(pad_temp[v_i0, v_i1, v_i2, v_i3])
                pad_temp[v_i0, v_i1, v_i2, v_i3] = T.if_then_else(1 <= v_i2 and v_i2 < 57 and 1 <= v_i3 and v_i3 < 57, X[v_i0, v_i1, v_i2 - 1, v_i3 - 1], T.float32(0))
    for nn_ff_yy_fused in T.parallel(3584):
        for xx_0 in range(4):
            for rc, ry, rx in T.grid(32, 3, 3):
                for xx_1 in T.vectorized(14):
                    with T.block("conv2d_nchw"):
                        v_nn = T.axis.spatial(1, 0)
                        v_ff = T.axis.spatial(64, nn_ff_yy_fused // 56)
                        v_yy = T.axis.spatial(56, nn_ff_yy_fused % 56)
                        v_xx = T.axis.spatial(56, xx_0 * 14 + xx_1)
                        v_rc, v_ry, v_rx = T.axis.remap("RRR", [rc, ry, rx])
                        T.reads(pad_temp[v_nn, v_rc, v_yy + v_ry, v_xx + v_rx], W[v_ff, v_rc, v_ry, v_rx])
                        T.writes(conv[v_nn, v_ff, v_yy, v_xx])
                        with T.init():
                            conv[v_nn, v_ff, v_yy, v_xx] = T.float32(0)
                        conv[v_nn, v_ff, v_yy, v_xx] = conv[v_nn, v_ff, v_yy, v_xx] + pad_temp[v_nn, v_rc, v_yy + v_ry, v_xx + v_rx] * W[v_ff, v_rc, v_ry, v_rx]

@T.prim_func
def add_bcast_where(A: T.Buffer((1000, 999), "float32"), B: T.Buffer((999,), "float32"), T_add: T.Buffer((1000, 999), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": T.bool(True)})
    for ax0_ax1_fused_0 in T.parallel(15610):
        for ax0_ax1_fused_1 in T.vectorized(64):
            with T.block("T_add"):
                v_ax0 = T.axis.spatial(1000, (ax0_ax1_fused_0 * 64 + ax0_ax1_fused_1) // 999)
                v_ax1 = T.axis.spatial(999, (ax0_ax1_fused_0 * 64 + ax0_ax1_fused_1) % 999)
                T.where(ax0_ax1_fused_0 * 64 + ax0_ax1_fused_1 < 999000)
                T.reads(A[v_ax0, v_ax1], B[v_ax1])
                T.writes(T_add[v_ax0, v_ax1])
                T_add[v_ax0, v_ax1] = A[v_ax0, v_ax1] + B[v_ax1]

@T.prim_func
def sum_rfactor(A: T.Buffer((16777216,), "float32"), B: T.Buffer((1,), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": T.bool(True)})
    B_rf = T.alloc_buffer((64,))
    for k_0 in T.parallel(64):
        for k_1 in range(262144):
            with T.block("B_rf"):
                vk_0, vk_1 = T.axis.remap("SR", [k_0, k_1])
                T.reads(A[vk_0 * 262144 + vk_1])
                T.writes(B_rf[vk_0])
                with T.init():
                    B_rf[vk_0] = T.float32(0)
                B_rf[vk_0] = B_rf[vk_0] + A[vk_0 * 262144 + vk_1]
    for k_0 in range(64):
        with T.block("B"):
            vk_0 = T.axis.reduce(64, k_0)
            T.reads(B_rf[vk_0])
            T.writes(B[0])
            with T.init():
                B[0] = T.float32(0)
            B[0] = B[0] + B_rf[vk_0]

@T.prim_func
def maxpool_where(X: T.Buffer((1, 64, 112, 112), "float32"), P: T.Buffer((1, 64, 55, 55), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": T.bool(True)})
    for ax0_ax1_ax2_fused in T.parallel(3520):
        for ax3_0 in range(7):
            for rv0, rv1 in T.grid(3, 3):
                for ax3_1 in T.vectorized(8):
                    with T.block("pool_max"):
                        v_ax0 = T.axis.spatial(1, 0)
                        v_ax1 = T.axis.spatial(64, ax0_ax1_ax2_fused // 55)
                        v_ax2 = T.axis.spatial(55, ax0_ax1_ax2_fused % 55)
                        v_ax3 = T.axis.spatial(55, ax3_0 * 8 + ax3_1)
                        v_rv0, v_rv1 = T.axis.remap("RR", [rv0, rv1])
                        T.where(ax3_0 * 8 + ax3_1 < 55)
                        T.reads(X[v_ax0, v_ax1, v_ax2 * 2 + v_rv0, v_ax3 * 2 + v_rv1])
                        T.writes(P[v_ax0, v_ax1, v_ax2, v_ax3])
                        with T.init():
                            P[v_ax0, v_ax1, v_ax2, v_ax3] = T.float32(-3.4028234663852886e+38)
                        P[v_ax0, v_ax1, v_ax2, v_ax3] = T.max(P[v_ax0, v_ax1, v_ax2, v_ax3], X[v_ax0, v_ax1, v_ax2 * 2 + v_rv0, v_ax3 * 2 + v_rv1])

@T.prim_func
def layout_nchw16c(A: T.Buffer((1, 64, 56, 56), "float32"), T_layout_trans: T.Buffer((1, 4, 56, 56, 16), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": T.bool(True)})
    for ax0_ax1_ax2_fused in T.parallel(224):
        for ax3 in range(56):
            for ax4 in T.vectorized(16):
                with T.block("T_layout_trans"):
                    v_ax0 = T.axis.spatial(1, 0)
                    v_ax1 = T.axis.spatial(4, ax0_ax1_ax2_fused // 56)
                    v_ax2 = T.axis.spatial(56, ax0_ax1_ax2_fused % 56)
                    v_ax3, v_ax4 = T.axis.remap("SS", [ax3, ax4])
                    T.reads(A[v_ax0, v_ax1 * 16 + v_ax4, v_ax2, v_ax3])
                    T.writes(T_layout_trans[v_ax0, v_ax1, v_ax2, v_ax3, v_ax4])
                    T_layout_trans[v_ax0, v_ax1, v_ax2, v_ax3, v_ax4] = T.if_then_else(v_ax0 < 1 and v_ax1 * 16 + v_ax4 < 64 and v_ax2 < 56 and v_ax3 < 56, A[v_ax0, v_ax1 * 16 + v_ax4, v_ax2, v_ax3], T.float32(0))

@T.prim_func
def argmax_tuple(A: T.Buffer((4096, 1024), "float32"), idx: T.Buffer((4096,), "int32"), val: T.Buffer((4096,), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": T.bool(True)})
    for i0 in T.parallel(4096):
        for k in range(1024):
            with T.block("A_red"):
                v_i0, v_k = T.axis.remap("SR", [i0, k])
                T.reads(A[v_i0, v_k])
                T.writes(idx[v_i0], val[v_i0])
                with T.init():
                    idx[v_i0] = -1
                    val[v_i0] = T.min_value("float32")
                v_idx: T.int32 = T.Select(val[v_i0] > A[v_i0, v_k] or (val[v_i0] == A[v_i0, v_k] and idx[v_i0] < v_k), idx[v_i0], v_k)
                v_val: T.float32 = T.Select(val[v_i0] > A[v_i0, v_k] or (val[v_i0] == A[v_i0, v_k] and idx[v_i0] < v_k), val[v_i0], A[v_i0, v_k])
                idx[v_i0] = v_idx
                val[v_i0] = v_val
'''

#: Kernel -> how many of its last arguments are outputs (1 unless listed).
OUTPUTS = {"argmax_tuple": 2}

#: Kernels TVM 0.27 cannot build, with the reason (none).
TVM_REFUSES: dict[str, str] = {}


def inputs(seed: int = 0) -> dict[str, list[np.ndarray]]:
    """Arguments of every kernel, 64-byte aligned (outputs last)."""
    rng = np.random.default_rng(seed)

    f = lambda *s: rng.standard_normal(s).astype("float32")  # noqa: E731
    z = lambda *s: np.zeros(s, "float32")  # noqa: E731
    raw = {
        "matmul_sched": [f(512, 512), f(512, 512), z(512, 512)],
        "softmax_sched": [f(2048, 1000), z(2048, 1000)],
        "conv2d_pad_sched": [f(1, 32, 56, 56), f(64, 32, 3, 3), z(1, 64, 56, 56)],
        "add_bcast_where": [f(1000, 999), f(999), z(1000, 999)],
        "sum_rfactor": [f(16777216), z(1)],
        "maxpool_where": [f(1, 64, 112, 112), z(1, 64, 55, 55)],
        "layout_nchw16c": [f(1, 64, 56, 56), z(1, 4, 56, 56, 16)],
        "argmax_tuple": [f(4096, 1024), np.zeros(4096, "int32"), z(4096)],
    }
    return {name: [aligned_copy(a) for a in args] for name, args in raw.items()}


def reference(name: str, args: list[np.ndarray]) -> list[np.ndarray]:
    """numpy's outputs of ``name`` on ``args`` (float64)."""
    a = [x.astype("float64") for x in args]
    if name == "matmul_sched":
        return [a[0] @ a[1]]
    if name == "softmax_sched":
        e = np.exp(a[0] - a[0].max(1, keepdims=True))
        return [e / e.sum(1, keepdims=True)]
    if name == "conv2d_pad_sched":
        x, w = np.pad(a[0][0], ((0, 0), (1, 1), (1, 1))), a[1]
        y = np.zeros((64, 56, 56))
        for ky in range(3):
            for kx in range(3):
                y += np.einsum("fc,chw->fhw", w[:, :, ky, kx], x[:, ky : ky + 56, kx : kx + 56])
        return [y[None]]
    if name == "add_bcast_where":
        return [a[0] + a[1]]
    if name == "sum_rfactor":
        return [np.array([a[0].sum()])]
    if name == "maxpool_where":
        x, y = a[0][0], np.full((64, 55, 55), -np.inf)
        for ky in range(3):
            for kx in range(3):
                y = np.maximum(y, x[:, ky : ky + 109 : 2, kx : kx + 109 : 2])
        return [y[None]]
    if name == "layout_nchw16c":
        return [a[0].reshape(1, 4, 16, 56, 56).transpose(0, 1, 3, 4, 2)]
    if name == "argmax_tuple":
        return [np.argmax(a[0], 1).astype("float64"), a[0].max(1)]
    raise KeyError(name)


KERNELS = KernelSet(
    tag="tvm_style6",
    source=SOURCE,
    numba_module="benchmarks._numba_tvm_style6",
    inputs=inputs,
    reference=reference,
    agrees=agrees,
    outputs=OUTPUTS,
    tvm_refuses=TVM_REFUSES,
)
"""The set's driver (``benchmarks/kernel_sets.py``)."""


if __name__ == "__main__":
    KERNELS.main(__doc__)
