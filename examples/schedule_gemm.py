"""How to optimize GEMM on CPU, with ``T.Schedule`` (after TVM's tutorial of that name).

Each step is a TVM v0.16 schedule primitive applied to the plain matmul; the schedule is
first run on a small matrix with ``debug_mask="all"`` (every step verified and executed
against the original in the reference interpreter), then applied to the full-size matmul,
compiled and checked against numpy.

    PYTHONPATH=. python examples/schedule_gemm.py
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

import tvmscript
from tvmscript import tir as T

BLOCK = 32  # the tutorial's bn: a 32 x 32 tile of C stays in cache
KFACTOR = 4


def make_matmul(n: int) -> Any:
    @T.prim_func
    def matmul(
        A: T.Buffer((n, n), "float32"),
        B: T.Buffer((n, n), "float32"),
        C: T.Buffer((n, n), "float32"),
    ):
        for i, j, k in T.grid(n, n, n):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]

    return matmul


def schedule(sch: T.Schedule, tile: int = BLOCK) -> None:
    """Blocking, loop permutation, array packing, write cache, vectorize, parallel."""
    block = sch.get_block("C")
    i, j, k = sch.get_loops(block)
    # 1. blocking: 32 x 32 tiles of C, the reduction split by 4
    i_0, i_1 = sch.split(i, [None, tile])
    j_0, j_1 = sch.split(j, [None, tile])
    k_0, k_1 = sch.split(k, [None, KFACTOR])
    # 2. loop permutation: the innermost loop walks a row of the tile (contiguous in B and C),
    #    the 4 k steps reuse that row of C
    sch.reorder(i_0, j_0, k_0, i_1, k_1, j_1)
    # 3. array packing: B copied once into [n / 32, n, 32] so a tile's columns are contiguous
    b_index = [r.buffer.name for r in sch.get(block).reads].index("B")
    packed = sch.cache_read(block, b_index, "global")
    sch.transform_layout(packed, ("write", 0), lambda k, n: (n // tile, k, n % tile))
    # 4. write cache: accumulate a tile in a local buffer, copy it back after the tile
    local = sch.cache_write(block, 0, "local")
    sch.reverse_compute_at(local, j_0)
    # 5. vectorize the rows, run the tiles in parallel, then give the init its own loop nest
    #    (TVM refuses parallel over a decomposed update block: it is no longer a reduction)
    sch.vectorize(j_1)
    sch.parallel(i_0)
    sch.decompose_reduction(block, k_0)


def main() -> None:
    small = make_matmul(16)  # 2 x 2 tiles of 8: small enough for the interpreter
    checked = T.Schedule(small, debug_mask="all")
    schedule(checked, tile=8)
    print(checked.mod["main"].script())
    print(checked.trace)

    n = 1024
    matmul = make_matmul(n)
    sch = T.Schedule(matmul)
    schedule(sch)
    kernel = tvmscript.build(sch.mod["main"])
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n)).astype("float32")
    b = rng.standard_normal((n, n)).astype("float32")
    c = np.empty((n, n), "float32")
    kernel(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-3, atol=1e-3)
    best = min(_timed(kernel, a, b, c) for _ in range(5))
    print(f"scheduled GEMM {n}x{n}x{n}: {best * 1e3:.1f} ms ({2 * n**3 / best / 1e9:.1f} GFLOP/s)")


def _timed(kernel: Any, *args: Any) -> float:
    start = time.perf_counter()
    kernel(*args)
    return time.perf_counter() - start


if __name__ == "__main__":
    main()
