"""How to optimize GEMM on CPU, with ``T.Schedule`` (after TVM's tutorial of that name).

Each step is a TVM v0.16 schedule primitive applied to the plain matmul; the schedule is
first run on a small matrix with ``debug_mask="all"`` (every step verified and executed
against the original in the reference interpreter), then applied to the full-size matmul,
compiled and checked against numpy.

    PYTHONPATH=. python examples/schedule_gemm.py
"""

from __future__ import annotations

from typing import Any

import numpy as np
from _timing import report

import tvmscript
from tvmscript import tir as T


def register_tile() -> tuple[int, int]:
    """Rows and columns of C that accumulate in vector registers over the whole k loop:
    4 x 64 floats are 16 of the 32 zmm registers of AVX-512; with AVX2's 16 ymm registers
    4 x 16 (8 accumulators) leaves room for the loads of B and the broadcasts of A."""
    return (4, 64) if tvmscript.Target.host().has_feature("avx512f") else (4, 16)


# BLOCK_ROWS register tiles share each COLS-wide panel of B while it sits in L2.
(ROWS, COLS), BLOCK_ROWS = register_tile(), 8


def make_matmul(n: int) -> Any:
    @T.prim_func
    def matmul(
        A: T.Buffer((n, n), "float32"),
        B: T.Buffer((n, n), "float32"),
        C: T.Buffer((n, n), "float32"),
    ) -> None:
        for i, j, k in T.grid(n, n, n):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]

    return matmul


def schedule(
    sch: T.Schedule, rows: int = ROWS, cols: int = COLS, block_rows: int = BLOCK_ROWS
) -> None:
    """Packing, register tiling, write cache, reduction decomposition, vectorize, unroll,
    parallel."""
    block = sch.get_block("C")
    # 1. array packing: B is copied into column panels B_global[j // cols, k, j % cols],
    #    so a tile reads one contiguous stream of B instead of rows 4 KiB apart
    packed = sch.cache_read(block, 1, "global")
    sch.transform_layout(block, ("read", 1), lambda k, j: (j // cols, k, j % cols))
    sch.transform_block_layout(packed, lambda k, j: (j // cols, k, j % cols))
    panel, _, lanes = sch.get_loops(packed)
    sch.parallel(panel)
    sch.vectorize(lanes)
    # 2. tiling: row blocks of block_rows x rows rows (one parallel task each), column
    #    panels of cols, register tiles of rows x cols
    i, j, k = sch.get_loops(block)
    i_0, i_1, i_2 = sch.split(i, [None, block_rows, rows])
    j_0, j_1 = sch.split(j, [None, cols])
    # 3. loop permutation: the whole k loop runs inside a register tile
    sch.reorder(i_0, j_0, i_1, k, i_2, j_1)
    # 4. write cache: the tile accumulates in a local buffer, copied to C after the k
    #    loop (compacted to rows x cols when lowered: it lives in vector registers)
    local = sch.cache_write(block, 0, "local")
    sch.reverse_compute_at(local, i_1)
    # 5. vectorize the tile's columns, unroll its rows, run the row blocks in parallel
    #    (before decompose_reduction: TVM refuses parallel over a decomposed update block)
    sch.vectorize(j_1)
    sch.unroll(i_2)
    sch.parallel(i_0)
    sch.vectorize(sch.get_loops(local)[-1])
    # 6. the init gets its own loop nest before the k loop, its columns vectorized too
    init = sch.decompose_reduction(block, k)
    sch.vectorize(sch.get_loops(init)[-1])


def main() -> None:
    small = make_matmul(16)  # small enough for the interpreter
    checked = T.Schedule(small, debug_mask="all")
    schedule(checked, rows=2, cols=8, block_rows=2)
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
    print("scheduled GEMM matches numpy (rtol 1e-3)")
    report(f"scheduled GEMM {n}x{n}x{n}", lambda: kernel(a, b, c), lambda: a @ b)


if __name__ == "__main__":
    main()
