"""Our versions of the benchmark kernels, in TVMScript (the same loop nests as the peers)."""

# ruff: noqa: E501, E741 - TVMScript sources: one statement per line, the suite's buffer names
from __future__ import annotations

from tvmscript import tir as T

from .schedule import MATMUL_PACKED_TILE, host_has_avx512

N = 1 << 24


@T.prim_func
def vadd(A: T.Buffer((N,), "float32"), B: T.Buffer((N,), "float32"), C: T.Buffer((N,), "float32")):
    for io in T.parallel(N // 4096):
        for ii in T.vectorized(4096):
            C[io * 4096 + ii] = A[io * 4096 + ii] + B[io * 4096 + ii]


@T.prim_func
def fused(
    A: T.Buffer((N,), "float32"),
    B: T.Buffer((N,), "float32"),
    C: T.Buffer((N,), "float32"),
    D: T.Buffer((N,), "float32"),
):
    for io in T.parallel(N // 4096):
        for ii in T.vectorized(4096):
            D[io * 4096 + ii] = T.exp(A[io * 4096 + ii]) * B[io * 4096 + ii] + C[io * 4096 + ii]


@T.prim_func
def rowsum(A: T.Buffer((4096, 4096), "float32"), B: T.Buffer((4096,), "float32")):
    for i in T.parallel(4096):
        acc = T.decl_buffer((1,), "float32")
        acc[0] = T.float32(0)
        for j in range(4096):
            acc[0] = acc[0] + A[i, j]
        B[i] = acc[0]


@T.prim_func
def softmax(A: T.Buffer((4096, 1024), "float32"), B: T.Buffer((4096, 1024), "float32")):
    for i in T.parallel(4096):
        m = T.decl_buffer((1,), "float32")
        s = T.decl_buffer((1,), "float32")
        m[0] = A[i, 0]
        for j in range(1024):
            m[0] = T.max(m[0], A[i, j])
        s[0] = T.float32(0)
        for j in range(1024):
            B[i, j] = T.exp(A[i, j] - m[0])
            s[0] = s[0] + B[i, j]
        for j in T.vectorized(1024):
            B[i, j] = B[i, j] / s[0]


@T.prim_func
def transpose(A: T.Buffer((4096, 4096), "float32"), B: T.Buffer((4096, 4096), "float32")):
    for io in T.parallel(128):
        for jo in range(128):
            for i in range(32):
                for j in range(32):
                    B[jo * 32 + j, io * 32 + i] = A[io * 32 + i, jo * 32 + j]


@T.prim_func
def matmul_naive(
    A: T.Buffer((1024, 1024), "float32"),
    B: T.Buffer((1024, 1024), "float32"),
    C: T.Buffer((1024, 1024), "float32"),
):
    for i in range(1024):
        for j in range(1024):
            C[i, j] = T.float32(0)
            for k in range(1024):
                C[i, j] = C[i, j] + A[i, k] * B[k, j]


# The register tile follows the host (benchmarks/schedule.py); the peers use the same nest.
MR, NR, NC, KC = MATMUL_PACKED_TILE


@T.prim_func
def _matmul_tiled_in_place(
    A: T.Buffer((1024, 1024), "float32"),
    B: T.Buffer((1024, 1024), "float32"),
    C: T.Buffer((1024, 1024), "float32"),
):
    # 32-row blocks in parallel; a 64-column panel of B (256 KB) stays in L2 while eight
    # 4x64 register tiles (16 zmm accumulators) sweep it.
    for io in T.parallel(32):
        for jo in range(16):
            for im in range(8):
                acc = T.decl_buffer((4, 64), "float32")
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
def _matmul_tiled_packed(
    A: T.Buffer((1024, 1024), "float32"),
    B: T.Buffer((1024, 1024), "float32"),
    C: T.Buffer((1024, 1024), "float32"),
):
    # GotoBLAS-style: A is packed once into MR-row micro-panels (k-major, so a register tile
    # reads one sequential stream instead of MR rows 4 KB apart); then NC-column panels in
    # parallel: per KC-deep slice, B is packed into NC/NR contiguous KC x NR micro-panels
    # (256 KB, in L2) that an MR x KC micro-panel of A (24 KB) feeds through MR x NR register
    # tiles. The last row tile repeats row 1023.
    Ap = T.decl_buffer(((1024 + MR - 1) // MR, 1024, MR), "float32")
    for ib in T.parallel((1024 + MR - 1) // MR):
        for k in range(1024):
            for ii in range(MR):
                Ap[ib, k, ii] = A[T.min(ib * MR + ii, 1023), k]
    for jc in T.parallel(1024 // NC):
        Bp = T.decl_buffer((NC // NR, KC, NR), "float32")
        for kc in range(1024 // KC):
            for jr in range(NC // NR):
                for k in range(KC):
                    for ji in T.vectorized(NR):
                        Bp[jr, k, ji] = B[kc * KC + k, jc * NC + jr * NR + ji]
            for im in range((1024 + MR - 1) // MR):
                for jr in range(NC // NR):
                    acc = T.decl_buffer((MR, NR), "float32")
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


matmul_tiled = (_matmul_tiled_in_place if host_has_avx512() else _matmul_tiled_packed).with_attr(
    "global_symbol", "matmul_tiled"
)


@T.prim_func
def conv2d(
    X: T.Buffer((1, 64, 58, 58), "float32"),
    W: T.Buffer((64, 64, 3, 3), "float32"),
    Y: T.Buffer((1, 64, 56, 56), "float32"),
):
    # Register blocking: 8 output channels x 8 columns of accumulators, so each vector of X
    # feeds 8 FMAs (a broadcast weight each); blocks of 8 channels run in parallel.
    for kb in T.parallel(8):
        for i in range(56):
            for jb in range(7):
                acc = T.decl_buffer((8, 8), "float32")
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


@T.prim_func
def stencil(A: T.Buffer((4096, 4096), "float32"), B: T.Buffer((4096, 4096), "float32")):
    for i in T.parallel(4094):
        for j in T.vectorized(4094):
            B[i + 1, j + 1] = T.float32(0.2) * (
                A[i + 1, j + 1] + A[i, j + 1] + A[i + 2, j + 1] + A[i + 1, j] + A[i + 1, j + 2]
            )


@T.prim_func
def gather(
    Tb: T.Buffer((65536,), "float32"), I: T.Buffer((N,), "int32"), O: T.Buffer((N,), "float32")
):
    for i in range(N):
        O[i] = Tb[I[i]]


@T.prim_func
def histogram(D: T.Buffer((N,), "int32"), H: T.Buffer((256,), "int32")):
    for b in range(256):
        H[b] = 0
    for i in range(N):
        H[D[i]] = H[D[i]] + 1


KERNELS = {
    "vadd": vadd,
    "fused": fused,
    "rowsum": rowsum,
    "softmax": softmax,
    "transpose": transpose,
    "matmul_naive": matmul_naive,
    "matmul_tiled": matmul_tiled,
    "conv2d": conv2d,
    "stencil": stencil,
    "gather": gather,
    "histogram": histogram,
}
