"""Suite kernels written the way TVM users write them, not as hand-tuned loop nests.

* ``alloc_*``: the accumulator tile is a ``T.alloc_buffer`` at the top of the parallel
  loop's body (``benchmarks/alloc_kernels.py``);
* ``block_*``: a ``T.block`` per output element with ``T.axis.remap`` and a ``T.init``
  (what TVM prints after ``sch.parallel`` on the spatial loop): no vectorization, no
  register tiles written by hand;
* ``compute_*``: ``T.compute`` expressions (a three-step elementwise chain, a ``T.sum``
  reduction), the te-style tensor form.

``USER_KERNELS`` maps a row name to ``(kernel, base)``: ``base`` is the suite kernel computing
the same thing, whose inputs, numpy reference and strong peer twins the row reuses.
"""


from __future__ import annotations

from typing import Any

from tvmscript import tir as T

from .alloc_kernels import conv2d_alloc, matmul_tiled_alloc

N = 1 << 24


@T.prim_func
def block_matmul(
    A: T.Buffer((1024, 1024), "float32"),
    B: T.Buffer((1024, 1024), "float32"),
    C: T.Buffer((1024, 1024), "float32"),
):
    for i in T.parallel(1024):
        for j, k in T.grid(1024, 1024):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


@T.prim_func
def block_rowsum(A: T.Buffer((4096, 4096), "float32"), B: T.Buffer((4096,), "float32")):
    for i in T.parallel(4096):
        for j in range(4096):
            with T.block("B"):
                vi, vj = T.axis.remap("SR", [i, j])
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vj]


@T.prim_func
def block_softmax(A: T.Buffer((4096, 1024), "float32"), B: T.Buffer((4096, 1024), "float32")):
    M = T.alloc_buffer((4096,), "float32")
    S = T.alloc_buffer((4096,), "float32")
    for i in T.parallel(4096):
        for j in range(1024):
            with T.block("max"):
                vi, vj = T.axis.remap("SR", [i, j])
                with T.init():
                    M[vi] = T.float32(-3.4e38)
                M[vi] = T.max(M[vi], A[vi, vj])
        for j in range(1024):
            with T.block("sum"):
                vi, vj = T.axis.remap("SR", [i, j])
                with T.init():
                    S[vi] = T.float32(0)
                S[vi] = S[vi] + T.exp(A[vi, vj] - M[vi])
        for j in range(1024):
            with T.block("norm"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = T.exp(A[vi, vj] - M[vi]) / S[vi]


@T.prim_func
def compute_fused(
    A: T.Buffer((N,), "float32"),
    B: T.Buffer((N,), "float32"),
    C: T.Buffer((N,), "float32"),
    D: T.Buffer((N,), "float32"),
):
    E = T.compute((N,), lambda i: T.exp(A[i]))
    F = T.compute((N,), lambda i: E[i] * B[i])
    T.compute((N,), lambda i: F[i] + C[i], out=D)


@T.prim_func
def compute_rowsum(A: T.Buffer((4096, 4096), "float32"), B: T.Buffer((4096,), "float32")):
    k = T.reduce_axis(0, 4096)
    T.compute((4096,), lambda i: T.sum(A[i, k], axis=k), out=B)


USER_KERNELS: dict[str, tuple[Any, str]] = {
    "alloc_matmul": (matmul_tiled_alloc, "matmul_tiled"),
    "alloc_conv2d": (conv2d_alloc, "conv2d"),
    "block_matmul": (block_matmul, "matmul_tiled"),
    "block_rowsum": (block_rowsum, "rowsum"),
    "block_softmax": (block_softmax, "softmax"),
    "compute_fused": (compute_fused, "fused"),
    "compute_rowsum": (compute_rowsum, "rowsum"),
}
