"""A fifth set of TVM-style kernels: reductions written the other ways TVM users write them,
next to TVM 0.27 and numba.

Beside ``tvm_style.py`` .. ``tvm_style4.py`` (none of their kernels again), run the same way:
our ``tvmscript.build`` with default options, TVM 0.27 on the *same source* (``tirx``, host
``mcpu``) and the fastest numba twin (``_numba_tvm_style5.py``). Plain nests, no blocks: a
row reduction summed straight into the output, the same as a ``range`` loop (no
``T.parallel``: ours parallelizes it), a batch of rows in a serial loop under a parallel
one, a matmul and a convolution with a per-iteration ``T.alloc_buffer`` accumulator, a
matmul with ``B`` transposed (a dot product of rows per output), a mean over the last axis
of a ``T.grid`` nest, and cosine similarity reading its elements through ``let``.

Ratios are peer ms / our ms (> 1: we are faster); ``!`` marks an output that differs from
ours. ``--check`` compares every side with a numpy reference instead of timing::

    PYTHONPATH=. /work/peers/bin/python benchmarks/tvm_style5.py [--rounds 3] [--only a,b] [--check]
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
def sumsq_into_output(A: T.Buffer((4096, 1024), "float32"), O: T.Buffer((4096,), "float32")):
    for i in T.parallel(4096):
        O[i] = T.float32(0)
        for j in range(1024):
            O[i] = O[i] + A[i, j] * A[i, j]

@T.prim_func
def sumsq_range(A: T.Buffer((4096, 1024), "float32"), O: T.Buffer((4096,), "float32")):
    for i in range(4096):
        acc = T.alloc_buffer((1,), "float32")
        acc[0] = T.float32(0)
        for j in range(1024):
            acc[0] = acc[0] + A[i, j] * A[i, j]
        O[i] = acc[0]

@T.prim_func
def batch_rowmax(A: T.Buffer((64, 64, 1024), "float32"), O: T.Buffer((64, 64), "float32")):
    for b in T.parallel(64):
        for i in range(64):
            m = T.alloc_buffer((1,), "float32")
            m[0] = T.float32(-3.4e38)
            for j in range(1024):
                m[0] = T.max(m[0], A[b, i, j])
            O[b, i] = m[0]

@T.prim_func
def matmul_local(A: T.Buffer((512, 512), "float32"), B: T.Buffer((512, 512), "float32"),
                 C: T.Buffer((512, 512), "float32")):
    for i in T.parallel(512):
        for j in range(512):
            acc = T.alloc_buffer((1,), "float32")
            acc[0] = T.float32(0)
            for k in range(512):
                acc[0] = acc[0] + A[i, k] * B[k, j]
            C[i, j] = acc[0]

@T.prim_func
def matmul_nt_local(A: T.Buffer((512, 512), "float32"), B: T.Buffer((512, 512), "float32"),
                    C: T.Buffer((512, 512), "float32")):
    for i in T.parallel(512):
        for j in range(512):
            acc = T.alloc_buffer((1,), "float32")
            acc[0] = T.float32(0)
            for k in range(512):
                acc[0] = acc[0] + A[i, k] * B[j, k]
            C[i, j] = acc[0]

@T.prim_func
def conv2d_local(X: T.Buffer((1, 32, 58, 58), "float32"), W: T.Buffer((64, 32, 3, 3), "float32"),
                 Y: T.Buffer((1, 64, 56, 56), "float32")):
    for f in T.parallel(64):
        for y in range(56):
            for x in range(56):
                acc = T.alloc_buffer((1,), "float32")
                acc[0] = T.float32(0)
                for c, ky, kx in T.grid(32, 3, 3):
                    acc[0] = acc[0] + X[0, c, y + ky, x + kx] * W[f, c, ky, kx]
                Y[0, f, y, x] = acc[0]

@T.prim_func
def mean_last_grid(A: T.Buffer((32, 128, 1024), "float32"), O: T.Buffer((32, 128), "float32")):
    for b, i in T.grid(32, 128):
        O[b, i] = T.float32(0)
        for j in range(1024):
            O[b, i] = O[b, i] + A[b, i, j]
        O[b, i] = O[b, i] / T.float32(1024)

@T.prim_func
def cosine_let(A: T.Buffer((8192, 256), "float32"), B: T.Buffer((8192, 256), "float32"),
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
'''

#: Kernel -> how many of its last arguments are outputs (1 unless listed).
OUTPUTS: dict[str, int] = {}

#: Kernels TVM 0.27 refuses however they are written (their ``tvm`` cell stays empty).
TVM_REFUSES: dict[str, str] = {}


def inputs(seed: int = 0) -> dict[str, list[np.ndarray]]:
    """Arguments of every kernel, 64-byte aligned (outputs last)."""
    rng = np.random.default_rng(seed)

    f = lambda *s: rng.standard_normal(s).astype("float32")  # noqa: E731
    z = lambda *s: np.zeros(s, "float32")  # noqa: E731
    raw = {
        "sumsq_into_output": [f(4096, 1024), z(4096)],
        "sumsq_range": [f(4096, 1024), z(4096)],
        "batch_rowmax": [f(64, 64, 1024), z(64, 64)],
        "matmul_local": [f(512, 512), f(512, 512), z(512, 512)],
        "matmul_nt_local": [f(512, 512), f(512, 512), z(512, 512)],
        "conv2d_local": [f(1, 32, 58, 58), f(64, 32, 3, 3), z(1, 64, 56, 56)],
        "mean_last_grid": [f(32, 128, 1024), z(32, 128)],
        "cosine_let": [f(8192, 256), f(8192, 256), z(8192)],
    }
    return {name: [aligned_copy(a) for a in args] for name, args in raw.items()}


def reference(name: str, args: list[np.ndarray]) -> list[np.ndarray]:
    """numpy's outputs of ``name`` on ``args`` (float64)."""
    a = [x.astype("float64") for x in args]
    if name in ("sumsq_into_output", "sumsq_range"):
        return [(a[0] ** 2).sum(1)]
    if name == "batch_rowmax":
        return [a[0].max(2)]
    if name == "matmul_local":
        return [a[0] @ a[1]]
    if name == "matmul_nt_local":
        return [a[0] @ a[1].T]
    if name == "conv2d_local":
        x, w = a[0][0], a[1]
        y = np.zeros((64, 56, 56))
        for ky in range(3):
            for kx in range(3):
                y += np.einsum("fc,chw->fhw", w[:, :, ky, kx], x[:, ky : ky + 56, kx : kx + 56])
        return [y[None]]
    if name == "mean_last_grid":
        return [a[0].mean(2)]
    if name == "cosine_let":
        dot = (a[0] * a[1]).sum(1)
        return [dot / np.sqrt(np.maximum((a[0] ** 2).sum(1) * (a[1] ** 2).sum(1), 1e-16))]
    raise KeyError(name)


KERNELS = KernelSet(
    tag="tvm_style5",
    source=SOURCE,
    numba_module="benchmarks._numba_tvm_style5",
    inputs=inputs,
    reference=reference,
    agrees=agrees,
    outputs=OUTPUTS,
    tvm_refuses=TVM_REFUSES,
)
"""The set's driver (``benchmarks/kernel_sets.py``)."""


if __name__ == "__main__":
    KERNELS.main(__doc__)
