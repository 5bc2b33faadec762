"""The tiled matmul and the conv2d written the way TVM users write them: the accumulator
tile is a ``T.alloc_buffer`` declared at the top of the parallel loop's body.

The parser moves such a buffer into the root block's ``alloc_buffers`` (as TVM's does);
``plan_allocation_location`` moves it back to the lowest common ancestor of its uses, and
``hoist_allocations`` takes it out of the serial loops below the parallel one, so each
parallel iteration (thread) gets its own tile. The nests are otherwise those of
``benchmarks/kernels.py`` (where the tiles are ``T.decl_buffer`` locals of the innermost
tile loop); ``benchmarks/alloc_placement.py`` times the two forms side by side.
"""

# ruff: noqa: E501 - TVMScript sources: one statement per line
from __future__ import annotations

from tvmscript import tir as T

from .schedule import MATMUL_PACKED_TILE, host_has_avx512

MR, NR, NC, KC = MATMUL_PACKED_TILE


@T.prim_func
def _matmul_tiled_in_place_alloc(
    A: T.Buffer((1024, 1024), "float32"),
    B: T.Buffer((1024, 1024), "float32"),
    C: T.Buffer((1024, 1024), "float32"),
):
    for io in T.parallel(32):
        acc = T.alloc_buffer((4, 64), "float32")
        for jo in range(16):
            for im in range(8):
                for ii in range(4):
                    for ji in T.vectorized(64):
                        acc[ii, ji] = T.float32(0)
                for k in range(1024):
                    for ii in T.unroll(4):
                        for ji in T.vectorized(64):
                            acc[ii, ji] = acc[ii, ji] + A[io * 32 + im * 4 + ii, k] * B[k, jo * 64 + ji]
                for ii in range(4):
                    for ji in T.vectorized(64):
                        C[io * 32 + im * 4 + ii, jo * 64 + ji] = acc[ii, ji]


@T.prim_func
def _matmul_tiled_packed_alloc(
    A: T.Buffer((1024, 1024), "float32"),
    B: T.Buffer((1024, 1024), "float32"),
    C: T.Buffer((1024, 1024), "float32"),
):
    # Ap is used by two sibling parallel loops: it stays at their parent (shared, read-only
    # in the second). Bp and acc are per column panel: private to each jc iteration.
    Ap = T.alloc_buffer(((1024 + MR - 1) // MR, 1024, MR), "float32")
    for ib in T.parallel((1024 + MR - 1) // MR):
        for k in range(1024):
            for ii in range(MR):
                Ap[ib, k, ii] = A[T.min(ib * MR + ii, 1023), k]
    for jc in T.parallel(1024 // NC):
        Bp = T.alloc_buffer((NC // NR, KC, NR), "float32")
        acc = T.alloc_buffer((MR, NR), "float32")
        for kc in range(1024 // KC):
            for jr in range(NC // NR):
                for k in range(KC):
                    for ji in T.vectorized(NR):
                        Bp[jr, k, ji] = B[kc * KC + k, jc * NC + jr * NR + ji]
            for im in range((1024 + MR - 1) // MR):
                for jr in range(NC // NR):
                    if kc == 0:
                        for ii in range(MR):
                            for ji in T.vectorized(NR):
                                acc[ii, ji] = T.float32(0)
                    else:
                        for ii in range(MR):
                            for ji in T.vectorized(NR):
                                acc[ii, ji] = C[T.min(im * MR + ii, 1023), jc * NC + jr * NR + ji]
                    for k in range(KC):
                        for ii in T.unroll(MR):
                            for ji in T.vectorized(NR):
                                acc[ii, ji] = acc[ii, ji] + Ap[im, kc * KC + k, ii] * Bp[jr, k, ji]
                    for ii in range(MR):
                        for ji in T.vectorized(NR):
                            C[T.min(im * MR + ii, 1023), jc * NC + jr * NR + ji] = acc[ii, ji]


matmul_tiled_alloc = (
    _matmul_tiled_in_place_alloc if host_has_avx512() else _matmul_tiled_packed_alloc
).with_attr("global_symbol", "matmul_tiled_alloc")


@T.prim_func
def conv2d_alloc(
    X: T.Buffer((1, 64, 58, 58), "float32"),
    W: T.Buffer((64, 64, 3, 3), "float32"),
    Y: T.Buffer((1, 64, 56, 56), "float32"),
):
    for kb in T.parallel(8):
        acc = T.alloc_buffer((8, 8), "float32")
        for i in range(56):
            for jb in range(7):
                for kk in range(8):
                    for j in T.vectorized(8):
                        acc[kk, j] = T.float32(0)
                for c in range(64):
                    for di in range(3):
                        for dj in range(3):
                            for kk in T.unroll(8):
                                for j in T.vectorized(8):
                                    acc[kk, j] = acc[kk, j] + W[kb * 8 + kk, c, di, dj] * X[0, c, i + di, jb * 8 + j + dj]
                for kk in range(8):
                    for j in T.vectorized(8):
                        Y[0, kb * 8 + kk, i, jb * 8 + j] = acc[kk, j]


ALLOC_KERNELS = {"matmul_tiled": matmul_tiled_alloc, "conv2d": conv2d_alloc}
