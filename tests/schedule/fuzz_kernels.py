"""Kernels written the way TVM users write them, for the random-schedule fuzz
(``fuzz_schedule.py --kernels``): float arithmetic, a reduction with ``T.init``, a padded
convolution, a softmax in four blocks, views through ``T.match_buffer``, an integer
transpose, an int8 dense layer (its products two steps per ``pmaddwd``
when built): shapes and constructs the fuzz's random int32 chains do not have."""

from __future__ import annotations

from tvmscript import tir as T


@T.prim_func
def scale_then_shift(A: T.Buffer((16, 24), "float32"), C: T.Buffer((16, 24), "float32")):
    B = T.alloc_buffer((16, 24), "float32")
    for i, j in T.grid(16, 24):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(16, 24):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)


@T.prim_func
def matmul_relu(A: T.Buffer((16, 12), "float32"), B: T.Buffer((12, 20), "float32"),
                D: T.Buffer((16, 20), "float32")):
    C = T.alloc_buffer((16, 20), "float32")
    for i, j, k in T.grid(16, 20, 12):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
    for i, j in T.grid(16, 20):
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = T.max(C[vi, vj], T.float32(0))


@T.prim_func
def padded_conv1d(X: T.Buffer((4, 30), "float32"), W: T.Buffer((6, 4, 3), "float32"),
                  Y: T.Buffer((6, 30), "float32")):
    P = T.alloc_buffer((4, 32), "float32")
    for c, t in T.grid(4, 32):
        with T.block("pad"):
            vc, vt = T.axis.remap("SS", [c, t])
            P[vc, vt] = T.if_then_else(1 <= vt and vt < 31, X[vc, vt - 1], T.float32(0))
    for o, t, c, k in T.grid(6, 30, 4, 3):
        with T.block("conv"):
            vo, vt, vc, vk = T.axis.remap("SSRR", [o, t, c, k])
            with T.init():
                Y[vo, vt] = T.float32(0)
            Y[vo, vt] = Y[vo, vt] + P[vc, vt + vk] * W[vo, vc, vk]


@T.prim_func
def softmax_rows(A: T.Buffer((8, 32), "float32"), O: T.Buffer((8, 32), "float32")):
    M = T.alloc_buffer((8,), "float32")
    E = T.alloc_buffer((8, 32), "float32")
    S = T.alloc_buffer((8,), "float32")
    for i, j in T.grid(8, 32):
        with T.block("max"):
            vi, vj = T.axis.remap("SR", [i, j])
            with T.init():
                M[vi] = T.float32(-3.0e38)
            M[vi] = T.max(M[vi], A[vi, vj])
    for i, j in T.grid(8, 32):
        with T.block("exp"):
            vi, vj = T.axis.remap("SS", [i, j])
            E[vi, vj] = T.exp(A[vi, vj] - M[vi])
    for i, j in T.grid(8, 32):
        with T.block("sum"):
            vi, vj = T.axis.remap("SR", [i, j])
            with T.init():
                S[vi] = T.float32(0)
            S[vi] = S[vi] + E[vi, vj]
    for i, j in T.grid(8, 32):
        with T.block("div"):
            vi, vj = T.axis.remap("SS", [i, j])
            O[vi, vj] = E[vi, vj] / S[vi]


@T.prim_func
def transpose_add(A: T.Buffer((12, 16), "int32"), B: T.Buffer((16, 12), "int32"),
                  C: T.Buffer((16, 12), "int32")):
    At = T.alloc_buffer((16, 12), "int32")
    for i, j in T.grid(16, 12):
        with T.block("transpose"):
            vi, vj = T.axis.remap("SS", [i, j])
            At[vi, vj] = A[vj, vi]
    for i, j in T.grid(16, 12):
        with T.block("add"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = At[vi, vj] * 3 + B[vi, vj] // 2


@T.prim_func
def tile_views(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32")):
    for io, jo in T.grid(4, 4):
        with T.block("tile"):
            vio, vjo = T.axis.remap("SS", [io, jo])
            src = T.match_buffer(A[vio * 4:vio * 4 + 4, vjo * 4:vjo * 4 + 4], (4, 4))
            dst = T.match_buffer(B[vio * 4:vio * 4 + 4, vjo * 4:vjo * 4 + 4], (4, 4))
            for ii, jj in T.grid(4, 4):
                with T.block("elem"):
                    vii, vjj = T.axis.remap("SS", [ii, jj])
                    dst[vii, vjj] = src[vii, vjj] + T.float32(1)


@T.prim_func
def sum_of_squares(A: T.Buffer((10, 24), "int32"), R: T.Buffer((10,), "int32")):
    Sq = T.alloc_buffer((10, 24), "int32")
    for i, j in T.grid(10, 24):
        with T.block("square"):
            vi, vj = T.axis.remap("SS", [i, j])
            Sq[vi, vj] = A[vi, vj] * A[vi, vj]
    for i, j in T.grid(10, 24):
        with T.block("total"):
            vi, vj = T.axis.remap("SR", [i, j])
            with T.init():
                R[vi] = 0
            R[vi] = R[vi] + Sq[vi, vj]


@T.prim_func
def dense_int8(A: T.Buffer((8, 22), "int8"), B: T.Buffer((64, 22), "int8"),
               C: T.Buffer((8, 64), "int32")):
    for i, j, k in T.grid(8, 64, 22):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = 0
            C[vi, vj] = C[vi, vj] + T.Cast("int32", A[vi, vk]) * T.Cast("int32", B[vj, vk])


KERNELS = [scale_then_shift, matmul_relu, padded_conv1d, softmax_rows, transpose_add,
           tile_views, sum_of_squares, dense_int8]
"""The kernels ``fuzz_schedule.run_case`` schedules with ``kernel=k``."""
