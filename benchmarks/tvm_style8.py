"""An eighth set of TVM-style kernels: the matmuls of TVM's CPU GEMM tutorial ("How to
optimize GEMM on CPU") as TIR prints them after each schedule step, next to TVM 0.27 and
numba.

Run like ``tvm_style7.py``: 1024^3 blocked by 32 x 32 with the row loop moved between the
two halves of the split reduction (``gemm_perm``), the same over ``B`` packed into 32-column
panels (``gemm_pack``), the tutorial's last step with a ``C_global`` write cache, the init
decomposed and ``k_1`` unrolled (``gemm_cache``), and a dense layer over 16-column weight
panels with its init decomposed (``dense_pack_init``, the decomposed twin of set 7's); and
the TensorIR tutorial's ``mm_relu`` (blitz course: ``split(j, [None, 4])``, ``reorder(j_0,
k, j_1)``, ``reverse_compute_at`` of the ReLU: ``mm_relu_blitz``) and the same computed
in parallel 4 x 16 tiles with the init decomposed (``mm_relu_tiles``); and a matmul
scheduled for a GPU run on the CPU: 32 x 32 tiles, ``A`` and ``B`` staged into "shared"
buffers every 8 steps of ``k`` (``gemm_shared``).

Ratios are peer ms / our ms (> 1: we are faster); ``!`` marks an output that differs from
ours. ``--check`` compares every side with a numpy reference instead of timing::

    PYTHONPATH=. /work/peers/bin/python benchmarks/tvm_style8.py [--rounds 3] [--only a,b] [--check]
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
def gemm_perm(A: T.Buffer((1024, 1024), "float32"), B: T.Buffer((1024, 1024), "float32"), C: T.Buffer((1024, 1024), "float32")):
    for m_0 in T.parallel(32):
        for n_0, k_0, m_1, k_1 in T.grid(32, 256, 32, 4):
            for n_1 in T.vectorized(32):
                with T.block("C"):
                    vm = T.axis.spatial(1024, m_0 * 32 + m_1)
                    vn = T.axis.spatial(1024, n_0 * 32 + n_1)
                    vk = T.axis.reduce(1024, k_0 * 4 + k_1)
                    T.reads(A[vm, vk], B[vk, vn])
                    T.writes(C[vm, vn])
                    with T.init():
                        C[vm, vn] = T.float32(0)
                    C[vm, vn] = C[vm, vn] + A[vm, vk] * B[vk, vn]

@T.prim_func
def gemm_pack(A: T.Buffer((1024, 1024), "float32"), B: T.Buffer((1024, 1024), "float32"), C: T.Buffer((1024, 1024), "float32")):
    packedB = T.alloc_buffer((32, 1024, 32))
    for x in T.parallel(32):
        for y in range(1024):
            for z in T.vectorized(32):
                with T.block("packedB"):
                    vx, vy, vz = T.axis.remap("SSS", [x, y, z])
                    packedB[vx, vy, vz] = B[vy, vx * 32 + vz]
    for m_0 in T.parallel(32):
        for n_0, k_0, m_1, k_1 in T.grid(32, 256, 32, 4):
            for n_1 in T.vectorized(32):
                with T.block("C"):
                    vm = T.axis.spatial(1024, m_0 * 32 + m_1)
                    vn = T.axis.spatial(1024, n_0 * 32 + n_1)
                    vk = T.axis.reduce(1024, k_0 * 4 + k_1)
                    with T.init():
                        C[vm, vn] = T.float32(0)
                    C[vm, vn] = C[vm, vn] + A[vm, vk] * packedB[vn // 32, vk, vn % 32]

@T.prim_func
def gemm_cache(A: T.Buffer((1024, 1024), "float32"), B: T.Buffer((1024, 1024), "float32"), C: T.Buffer((1024, 1024), "float32")):
    packedB = T.alloc_buffer((32, 1024, 32))
    C_global = T.alloc_buffer((1024, 1024))
    for x in T.parallel(32):
        for y in range(1024):
            for z in T.vectorized(32):
                with T.block("packedB"):
                    vx, vy, vz = T.axis.remap("SSS", [x, y, z])
                    packedB[vx, vy, vz] = B[vy, vx * 32 + vz]
    for m_0 in T.parallel(32):
        for n_0 in range(32):
            for m_1_init in range(32):
                for n_1_init in T.vectorized(32):
                    with T.block("C_init"):
                        vm = T.axis.spatial(1024, m_0 * 32 + m_1_init)
                        vn = T.axis.spatial(1024, n_0 * 32 + n_1_init)
                        C_global[vm, vn] = T.float32(0)
            for k_0, m_1 in T.grid(256, 32):
                for k_1 in T.unroll(4):
                    for n_1 in T.vectorized(32):
                        with T.block("C_update"):
                            vm = T.axis.spatial(1024, m_0 * 32 + m_1)
                            vn = T.axis.spatial(1024, n_0 * 32 + n_1)
                            vk = T.axis.reduce(1024, k_0 * 4 + k_1)
                            C_global[vm, vn] = C_global[vm, vn] + A[vm, vk] * packedB[vn // 32, vk, vn % 32]
            for ax0 in range(32):
                for ax1 in T.vectorized(32):
                    with T.block("C_global"):
                        v0 = T.axis.spatial(1024, m_0 * 32 + ax0)
                        v1 = T.axis.spatial(1024, n_0 * 32 + ax1)
                        C[v0, v1] = C_global[v0, v1]

@T.prim_func
def dense_pack_init(A: T.Buffer((256, 1024), "float32"), W: T.Buffer((1024, 1024), "float32"), O: T.Buffer((256, 1024), "float32")):
    W_packed = T.alloc_buffer((64, 1024, 16))
    for ax0_ax1_fused in T.parallel(65536):
        for ax2 in T.vectorized(16):
            with T.block("W_packed"):
                v0 = T.axis.spatial(64, ax0_ax1_fused // 1024)
                v1 = T.axis.spatial(1024, ax0_ax1_fused % 1024)
                v2 = T.axis.spatial(16, ax2)
                W_packed[v0, v1, v2] = W[v0 * 16 + v2, v1]
    for i_j_0_fused in T.parallel(16384):
        for j_1_init in T.vectorized(16):
            with T.block("T_matmul_NT_init"):
                vi = T.axis.spatial(256, i_j_0_fused // 64)
                vj = T.axis.spatial(1024, i_j_0_fused % 64 * 16 + j_1_init)
                O[vi, vj] = T.float32(0)
        for k in range(1024):
            for j_1 in T.vectorized(16):
                with T.block("T_matmul_NT_update"):
                    vi = T.axis.spatial(256, i_j_0_fused // 64)
                    vj = T.axis.spatial(1024, i_j_0_fused % 64 * 16 + j_1)
                    vk = T.axis.reduce(1024, k)
                    O[vi, vj] = O[vi, vj] + A[vi, vk] * W_packed[vj // 16, vk, vj % 16]

@T.prim_func
def mm_relu_blitz(A: T.Buffer((1024, 1024), "float32"), B: T.Buffer((1024, 1024), "float32"), C: T.Buffer((1024, 1024), "float32")):
    Y = T.alloc_buffer((1024, 1024))
    for i, j_0 in T.grid(1024, 256):
        for k, j_1 in T.grid(1024, 4):
            with T.block("Y"):
                vi = T.axis.spatial(1024, i)
                vj = T.axis.spatial(1024, j_0 * 4 + j_1)
                vk = T.axis.reduce(1024, k)
                T.reads(A[vi, vk], B[vk, vj])
                T.writes(Y[vi, vj])
                with T.init():
                    Y[vi, vj] = T.float32(0)
                Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
        for ax0 in range(4):
            with T.block("C"):
                vi = T.axis.spatial(1024, i)
                vj = T.axis.spatial(1024, j_0 * 4 + ax0)
                T.reads(Y[vi, vj])
                T.writes(C[vi, vj])
                C[vi, vj] = T.max(Y[vi, vj], T.float32(0))

@T.prim_func
def mm_relu_tiles(A: T.Buffer((1024, 1024), "float32"), B: T.Buffer((1024, 1024), "float32"), C: T.Buffer((1024, 1024), "float32")):
    Y = T.alloc_buffer((1024, 1024))
    for i_0 in T.parallel(256):
        for j_0 in range(64):
            for i_1 in range(4):
                for j_1_init in T.vectorized(16):
                    with T.block("Y_init"):
                        vi = T.axis.spatial(1024, i_0 * 4 + i_1)
                        vj = T.axis.spatial(1024, j_0 * 16 + j_1_init)
                        T.reads()
                        T.writes(Y[vi, vj])
                        Y[vi, vj] = T.float32(0)
            for k, i_1 in T.grid(1024, 4):
                for j_1 in T.vectorized(16):
                    with T.block("Y_update"):
                        vi = T.axis.spatial(1024, i_0 * 4 + i_1)
                        vj = T.axis.spatial(1024, j_0 * 16 + j_1)
                        vk = T.axis.reduce(1024, k)
                        T.reads(Y[vi, vj], A[vi, vk], B[vk, vj])
                        T.writes(Y[vi, vj])
                        Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
            for ax0 in range(4):
                for ax1 in T.vectorized(16):
                    with T.block("C"):
                        vi = T.axis.spatial(1024, i_0 * 4 + ax0)
                        vj = T.axis.spatial(1024, j_0 * 16 + ax1)
                        T.reads(Y[vi, vj])
                        T.writes(C[vi, vj])
                        C[vi, vj] = T.max(Y[vi, vj], T.float32(0))

@T.prim_func
def gemm_shared(A: T.Buffer((1024, 1024), "float32"), B: T.Buffer((1024, 1024), "float32"), C: T.Buffer((1024, 1024), "float32")):
    A_shared = T.alloc_buffer((1024, 1024))
    B_shared = T.alloc_buffer((1024, 1024))
    for i_0 in T.parallel(32):
        for j_0 in range(32):
            for i_1_init, j_1_init in T.grid(32, 32):
                with T.block("C_init"):
                    vi = T.axis.spatial(1024, i_0 * 32 + i_1_init)
                    vj = T.axis.spatial(1024, j_0 * 32 + j_1_init)
                    T.reads()
                    T.writes(C[vi, vj])
                    C[vi, vj] = T.float32(0)
            for k_0 in range(128):
                for ax0, ax1 in T.grid(32, 8):
                    with T.block("A_shared"):
                        v0 = T.axis.spatial(1024, i_0 * 32 + ax0)
                        v1 = T.axis.spatial(1024, k_0 * 8 + ax1)
                        T.reads(A[v0, v1])
                        T.writes(A_shared[v0, v1])
                        A_shared[v0, v1] = A[v0, v1]
                for ax0 in range(8):
                    for ax1 in T.vectorized(32):
                        with T.block("B_shared"):
                            v0 = T.axis.spatial(1024, k_0 * 8 + ax0)
                            v1 = T.axis.spatial(1024, j_0 * 32 + ax1)
                            T.reads(B[v0, v1])
                            T.writes(B_shared[v0, v1])
                            B_shared[v0, v1] = B[v0, v1]
                for k_1, i_1 in T.grid(8, 32):
                    for j_1 in T.vectorized(32):
                        with T.block("C_update"):
                            vi = T.axis.spatial(1024, i_0 * 32 + i_1)
                            vj = T.axis.spatial(1024, j_0 * 32 + j_1)
                            vk = T.axis.reduce(1024, k_0 * 8 + k_1)
                            T.reads(C[vi, vj], A_shared[vi, vk], B_shared[vk, vj])
                            T.writes(C[vi, vj])
                            C[vi, vj] = C[vi, vj] + A_shared[vi, vk] * B_shared[vk, vj]
'''

#: Kernel -> how many of its last arguments are outputs (1 unless listed).
OUTPUTS: dict[str, int] = {}

#: Kernels TVM 0.27 cannot build, with the reason (none).
TVM_REFUSES: dict[str, str] = {}


def inputs(seed: int = 0) -> dict[str, list[np.ndarray]]:
    """Arguments of every kernel, 64-byte aligned (outputs last)."""
    rng = np.random.default_rng(seed)

    f = lambda *s: rng.standard_normal(s).astype("float32")  # noqa: E731
    z = lambda *s: np.zeros(s, "float32")  # noqa: E731
    raw = {
        "gemm_perm": [f(1024, 1024), f(1024, 1024), z(1024, 1024)],
        "gemm_pack": [f(1024, 1024), f(1024, 1024), z(1024, 1024)],
        "gemm_cache": [f(1024, 1024), f(1024, 1024), z(1024, 1024)],
        "dense_pack_init": [f(256, 1024), f(1024, 1024), z(256, 1024)],
        "mm_relu_blitz": [f(1024, 1024), f(1024, 1024), z(1024, 1024)],
        "mm_relu_tiles": [f(1024, 1024), f(1024, 1024), z(1024, 1024)],
        "gemm_shared": [f(1024, 1024), f(1024, 1024), z(1024, 1024)],
    }
    return {name: [aligned_copy(a) for a in args] for name, args in raw.items()}


def reference(name: str, args: list[np.ndarray]) -> list[np.ndarray]:
    """numpy's outputs of ``name`` on ``args`` (float64)."""
    a = [x.astype("float64") for x in args]
    if name in ("gemm_perm", "gemm_pack", "gemm_cache", "gemm_shared"):
        return [a[0] @ a[1]]
    if name == "dense_pack_init":
        return [a[0] @ a[1].T]
    if name in ("mm_relu_blitz", "mm_relu_tiles"):
        return [np.maximum(a[0] @ a[1], 0)]
    raise KeyError(name)


KERNELS = KernelSet(
    tag="tvm_style8",
    source=SOURCE,
    numba_module="benchmarks._numba_tvm_style8",
    inputs=inputs,
    reference=reference,
    agrees=agrees,
    outputs=OUTPUTS,
    tvm_refuses=TVM_REFUSES,
)
"""The set's driver (``benchmarks/kernel_sets.py``)."""


if __name__ == "__main__":
    KERNELS.main(__doc__)
