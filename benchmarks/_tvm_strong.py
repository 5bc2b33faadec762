"""Strong TVM 0.27 twins: each suite kernel as a skilled TVM user would write it for a CPU.

Where ``_tvm_suite.py`` repeats our loop nests statement for statement (the "same nest"
twins), these use what TVM offers to make each kernel fast: ``T.parallel`` over the outer
loop, ``T.vectorized`` inner loops of one or a few vector registers (16 floats on AVX-512)
rather than whole rows, register accumulators for reductions, blocked layouts, private
per-thread partial results (histogram), and a polynomial ``exp`` (TVM lowers ``T.exp`` to
``llvm.exp``, which LLVM scalarises into ``expf`` calls; a TVM user reaches for a fast exp,
as topi's ``fast_exp`` does).

Every kernel has 2-3 variants (``VARIANTS[name]``); ``benchmarks/peer_variants.py`` times
them and :data:`CHOICE` records the fastest measured on the reference host (see
``benchmarks/README.md`` for the numbers). Imported only when tvm is importable.
"""

# ruff: noqa: E501, E741 - TVMScript sources: the suite's buffer names
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .schedule import MATMUL_PACKED_TILE, benchmark_target

#: The variant each strong twin uses (the fastest on a Zen 4 AVX-512 host, 2 threads).
CHOICE = {
    "vadd": "v64",
    "fused": "v64_fastexp",
    "rowsum": "acc64",
    "softmax": "v64_fastexp",
    "transpose": "t16_staged",
    "matmul_naive": "in_c",
    "matmul_tiled": "goto_packed",
    "conv2d": "blocked_16x8",
    "stencil": "rows2_v16",
    "gather": "par_scalar",
    "histogram": "private",
}


def _fast_exp(tvm: Any) -> Callable[[Any], Any]:
    """exp(x) for float32 as range reduction plus a degree-6 polynomial: x = n ln2 + r,
    |r| <= ln2 / 2, exp(x) = 2**n * p(r); 2**n is built in the exponent bits. Relative
    error about 2e-7 on [-87, 88] (the inputs are clamped to it)."""
    import tvm.tirx as tir

    def fexp(x: Any) -> Any:
        f32 = lambda v: tir.const(v, "float32")  # noqa: E731
        x = tir.max(tir.min(x, f32(88.0)), f32(-87.0))
        n = tir.floor(x * f32(1.4426950408889634) + f32(0.5))
        r = x - n * f32(0.693145751953125) - n * f32(1.428606765330187e-06)
        p = f32(1.0 / 720)
        for c in (1.0 / 120, 1.0 / 24, 1.0 / 6, 0.5, 1.0, 1.0):
            p = p * r + f32(c)
        bits = tir.shift_left(tir.Cast("int32", n) + tir.const(127, "int32"), tir.const(23, "int32"))
        return p * tir.reinterpret("float32", bits)

    return fexp


def tvm_strong_variants(tvm: Any, T: Any) -> dict[str, dict[str, Any]]:
    """Every kernel's variants as tirx PrimFuncs: ``{kernel: {variant: func}}``."""
    n = 1 << 24
    fexp = _fast_exp(tvm)
    V: dict[str, dict[str, Any]] = {k: {} for k in CHOICE}

    # -- vadd: 4096-element chunks per task; vectors of 16 (one zmm) or the whole chunk
    @T.prim_func
    def vadd_v16(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32"), C: T.Buffer((n,), "float32")):
        for io in T.parallel(n // 4096):
            for im in range(256):
                for ii in T.vectorized(16):
                    C[io * 4096 + im * 16 + ii] = A[io * 4096 + im * 16 + ii] + B[io * 4096 + im * 16 + ii]

    @T.prim_func
    def vadd_v64(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32"), C: T.Buffer((n,), "float32")):
        for io in T.parallel(n // 65536):
            for im in range(1024):
                for ii in T.vectorized(64):
                    C[io * 65536 + im * 64 + ii] = A[io * 65536 + im * 64 + ii] + B[io * 65536 + im * 64 + ii]

    @T.prim_func
    def vadd_v4096(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32"), C: T.Buffer((n,), "float32")):
        for io in T.parallel(n // 4096):
            for ii in T.vectorized(4096):
                C[io * 4096 + ii] = A[io * 4096 + ii] + B[io * 4096 + ii]

    V["vadd"] = {"v16": vadd_v16, "v64": vadd_v64, "v4096": vadd_v4096}

    # -- fused: exp(a) * b + c
    @T.prim_func
    def fused_v16(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32"),
                  C: T.Buffer((n,), "float32"), D: T.Buffer((n,), "float32")):
        for io in T.parallel(n // 4096):
            for im in range(256):
                for ii in T.vectorized(16):
                    D[io * 4096 + im * 16 + ii] = T.exp(A[io * 4096 + im * 16 + ii]) * B[io * 4096 + im * 16 + ii] + C[io * 4096 + im * 16 + ii]

    @T.prim_func
    def fused_v16_fastexp(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32"),
                          C: T.Buffer((n,), "float32"), D: T.Buffer((n,), "float32")):
        for io in T.parallel(n // 4096):
            for im in range(256):
                for ii in T.vectorized(16):
                    D[io * 4096 + im * 16 + ii] = fexp(A[io * 4096 + im * 16 + ii]) * B[io * 4096 + im * 16 + ii] + C[io * 4096 + im * 16 + ii]

    @T.prim_func
    def fused_v64_fastexp(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32"),
                          C: T.Buffer((n,), "float32"), D: T.Buffer((n,), "float32")):
        for io in T.parallel(n // 4096):
            for im in range(64):
                for ii in T.vectorized(64):
                    D[io * 4096 + im * 64 + ii] = fexp(A[io * 4096 + im * 64 + ii]) * B[io * 4096 + im * 64 + ii] + C[io * 4096 + im * 64 + ii]

    V["fused"] = {"v16": fused_v16, "v16_fastexp": fused_v16_fastexp, "v64_fastexp": fused_v64_fastexp}

    # -- rowsum: per row, W lanes of partial sums in registers, then a horizontal sum
    def rowsum_lanes(w: int) -> Any:
        @T.prim_func
        def rowsum(A: T.Buffer((4096, 4096), "float32"), B: T.Buffer((4096,), "float32")):
            for i in T.parallel(4096):
                acc = T.decl_buffer((w,), "float32")
                for v in T.vectorized(w):
                    acc[v] = T.float32(0)
                for jo in range(4096 // w):
                    for v in T.vectorized(w):
                        acc[v] = acc[v] + A[i, jo * w + v]
                s = T.decl_buffer((1,), "float32")
                s[0] = T.float32(0)
                for v in range(w):
                    s[0] = s[0] + acc[v]
                B[i] = s[0]
        return rowsum

    V["rowsum"] = {"acc16": rowsum_lanes(16), "acc64": rowsum_lanes(64), "acc128": rowsum_lanes(128)}

    # -- softmax: vector max, exp and sum over 16/64 lanes, then scale
    def softmax_lanes(w: int, fast: bool) -> Any:
        ex = fexp if fast else T.exp

        @T.prim_func
        def softmax(A: T.Buffer((4096, 1024), "float32"), B: T.Buffer((4096, 1024), "float32")):
            for i in T.parallel(4096):
                mv = T.decl_buffer((w,), "float32")
                sv = T.decl_buffer((w,), "float32")
                m = T.decl_buffer((1,), "float32")
                s = T.decl_buffer((1,), "float32")
                for v in T.vectorized(w):
                    mv[v] = A[i, v]
                for jo in range(1024 // w):
                    for v in T.vectorized(w):
                        mv[v] = T.max(mv[v], A[i, jo * w + v])
                m[0] = mv[0]
                for v in range(w):
                    m[0] = T.max(m[0], mv[v])
                for v in T.vectorized(w):
                    sv[v] = T.float32(0)
                for jo in range(1024 // w):
                    for v in T.vectorized(w):
                        B[i, jo * w + v] = ex(A[i, jo * w + v] - m[0])
                        sv[v] = sv[v] + B[i, jo * w + v]
                s[0] = T.float32(0)
                for v in range(w):
                    s[0] = s[0] + sv[v]
                s[0] = T.float32(1) / s[0]
                for jo in range(1024 // w):
                    for v in T.vectorized(w):
                        B[i, jo * w + v] = B[i, jo * w + v] * s[0]
        return softmax

    V["softmax"] = {"v16": softmax_lanes(16, False), "v16_fastexp": softmax_lanes(16, True),
                    "v64_fastexp": softmax_lanes(64, True)}

    # -- transpose: square tiles; the inner loop vectorized along the written row (B) or the
    # read row (A)
    def transpose_tiles(t: int, write_vec: bool) -> Any:
        nt = 4096 // t
        if write_vec:
            @T.prim_func
            def transpose(A: T.Buffer((4096, 4096), "float32"), B: T.Buffer((4096, 4096), "float32")):
                for jo in T.parallel(nt):
                    for io in range(nt):
                        for j in range(t):
                            for i in T.vectorized(t):
                                B[jo * t + j, io * t + i] = A[io * t + i, jo * t + j]
        else:
            @T.prim_func
            def transpose(A: T.Buffer((4096, 4096), "float32"), B: T.Buffer((4096, 4096), "float32")):
                for io in T.parallel(nt):
                    for jo in range(nt):
                        for i in range(t):
                            for j in T.vectorized(t):
                                B[jo * t + j, io * t + i] = A[io * t + i, jo * t + j]
        return transpose

    @T.prim_func
    def transpose_scalar32(A: T.Buffer((4096, 4096), "float32"), B: T.Buffer((4096, 4096), "float32")):
        for io in T.parallel(128):
            for jo in range(128):
                for i in range(32):
                    for j in range(32):
                        B[jo * 32 + j, io * 32 + i] = A[io * 32 + i, jo * 32 + j]

    @T.prim_func
    def transpose_staged(A: T.Buffer((4096, 4096), "float32"), B: T.Buffer((4096, 4096), "float32")):
        # a 16x16 tile read row by row (vector loads) into a local tile, written out
        # row by row from its columns (the strided side stays in L1)
        for io in T.parallel(256):
            tile = T.decl_buffer((16, 16), "float32")
            for jo in range(256):
                for i in range(16):
                    for j in T.vectorized(16):
                        tile[i, j] = A[io * 16 + i, jo * 16 + j]
                for j in range(16):
                    for i in T.vectorized(16):
                        B[jo * 16 + j, io * 16 + i] = tile[i, j]

    V["transpose"] = {"t16_vec_write": transpose_tiles(16, True), "t16_vec_read": transpose_tiles(16, False),
                      "t8_vec_write": transpose_tiles(8, True), "t32_vec_write": transpose_tiles(32, True),
                      "t32_scalar": transpose_scalar32, "t16_staged": transpose_staged}

    # -- matmul_naive: the naive i, j, k nest (serial, no tiling: it is the suite's "what does
    # the compiler do with a plain nest" kernel); the user keeps the sum in a local
    @T.prim_func
    def matmul_naive_local(A: T.Buffer((1024, 1024), "float32"), B: T.Buffer((1024, 1024), "float32"),
                           C: T.Buffer((1024, 1024), "float32")):
        for i in range(1024):
            for j in range(1024):
                s = T.decl_buffer((1,), "float32")
                s[0] = T.float32(0)
                for k in range(1024):
                    s[0] = s[0] + A[i, k] * B[k, j]
                C[i, j] = s[0]

    @T.prim_func
    def matmul_naive_in_c(A: T.Buffer((1024, 1024), "float32"), B: T.Buffer((1024, 1024), "float32"),
                          C: T.Buffer((1024, 1024), "float32")):
        for i in range(1024):
            for j in range(1024):
                C[i, j] = T.float32(0)
                for k in range(1024):
                    C[i, j] = C[i, j] + A[i, k] * B[k, j]

    V["matmul_naive"] = {"local_acc": matmul_naive_local, "in_c": matmul_naive_in_c}

    # -- matmul_tiled: 4x64 register tile sweeping B in place (AVX-512), or the packed
    # GotoBLAS nest, or 8x32 tiles over a pre-packed B
    @T.prim_func
    def mm_in_place(A: T.Buffer((1024, 1024), "float32"), B: T.Buffer((1024, 1024), "float32"),
                    C: T.Buffer((1024, 1024), "float32")):
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
    def mm_packed_b(A: T.Buffer((1024, 1024), "float32"), B: T.Buffer((1024, 1024), "float32"),
                    C: T.Buffer((1024, 1024), "float32")):
        # B repacked into 64-column panels (k-major, contiguous), then 8x32... 6x64 tiles
        Bp = T.decl_buffer((16, 1024, 64), "float32")
        for jo in T.parallel(16):
            for k in range(1024):
                for ji in T.vectorized(64):
                    Bp[jo, k, ji] = B[k, jo * 64 + ji]
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
                                acc[ii, ji] = acc[ii, ji] + A[io * 32 + im * 4 + ii, k] * Bp[jo, k, ji]
                    for ii in range(4):
                        for ji in T.vectorized(64):
                            C[io * 32 + im * 4 + ii, jo * 64 + ji] = acc[ii, ji]

    mr, nr, nc, kc = MATMUL_PACKED_TILE

    @T.prim_func
    def mm_goto(A: T.Buffer((1024, 1024), "float32"), B: T.Buffer((1024, 1024), "float32"),
                C: T.Buffer((1024, 1024), "float32")):
        Ap = T.decl_buffer(((1024 + mr - 1) // mr, 1024, mr), "float32")
        for ib in T.parallel((1024 + mr - 1) // mr):
            for k in range(1024):
                for ii in range(mr):
                    Ap[ib, k, ii] = A[T.min(ib * mr + ii, 1023), k]
        for jc in T.parallel(1024 // nc):
            Bp = T.decl_buffer((nc // nr, kc, nr), "float32")
            for kb in range(1024 // kc):
                for jr in range(nc // nr):
                    for k in range(kc):
                        for ji in T.vectorized(nr):
                            Bp[jr, k, ji] = B[kb * kc + k, jc * nc + jr * nr + ji]
                for im in range((1024 + mr - 1) // mr):
                    for jr in range(nc // nr):
                        acc = T.decl_buffer((mr, nr), "float32")
                        if kb == 0:
                            for ii in range(mr):
                                for ji in T.vectorized(nr):
                                    acc[ii, ji] = T.float32(0)
                        else:
                            for ii in range(mr):
                                for ji in T.vectorized(nr):
                                    acc[ii, ji] = C[T.min(im * mr + ii, 1023), jc * nc + jr * nr + ji]
                        for k in range(kc):
                            for ii in T.unroll(mr):
                                for ji in T.vectorized(nr):
                                    acc[ii, ji] = acc[ii, ji] + Ap[im, kb * kc + k, ii] * Bp[jr, k, ji]
                        for ii in range(mr):
                            for ji in T.vectorized(nr):
                                C[T.min(im * mr + ii, 1023), jc * nc + jr * nr + ji] = acc[ii, ji]

    V["matmul_tiled"] = {"in_place_4x64": mm_in_place, "packed_b_4x64": mm_packed_b, "goto_packed": mm_goto}

    # -- conv2d: 8 output channels x 8 columns of accumulators (the nest ours uses), or
    # 4 channels x 16 columns (16 = one zmm; the 56-wide rows end with a masked-off tail)
    @T.prim_func
    def conv_blocked(X: T.Buffer((1, 64, 58, 58), "float32"), W: T.Buffer((64, 64, 3, 3), "float32"),
                     Y: T.Buffer((1, 64, 56, 56), "float32")):
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
    def conv_row(X: T.Buffer((1, 64, 58, 58), "float32"), W: T.Buffer((64, 64, 3, 3), "float32"),
                 Y: T.Buffer((1, 64, 56, 56), "float32")):
        # 4 channels x a whole 56-column output row (4 x 4 zmm, the last one partial)
        for kb in T.parallel(16):
            for i in range(56):
                acc = T.decl_buffer((4, 56), "float32")
                for kk in range(4):
                    for j in T.vectorized(56):
                        acc[kk, j] = T.float32(0)
                for c in range(64):
                    for di in range(3):
                        for dj in range(3):
                            for kk in T.unroll(4):
                                for j in T.vectorized(56):
                                    acc[kk, j] = acc[kk, j] + W[kb * 4 + kk, c, di, dj] * X[0, c, i + di, j + dj]
                for kk in range(4):
                    for j in T.vectorized(56):
                        Y[0, kb * 4 + kk, i, j] = acc[kk, j]

    @T.prim_func
    def conv_blocked16(X: T.Buffer((1, 64, 58, 58), "float32"), W: T.Buffer((64, 64, 3, 3), "float32"),
                       Y: T.Buffer((1, 64, 56, 56), "float32")):
        # 16 channels x 8 columns: each vector of X feeds 16 FMAs
        for kb in T.parallel(4):
            for i in range(56):
                for jb in range(7):
                    acc = T.decl_buffer((16, 8), "float32")
                    for kk in range(16):
                        for j in T.vectorized(8):
                            acc[kk, j] = T.float32(0)
                    for c in range(64):
                        for di in range(3):
                            for dj in range(3):
                                for kk in T.unroll(16):
                                    for j in T.vectorized(8):
                                        acc[kk, j] = acc[kk, j] + W[kb * 16 + kk, c, di, dj] * X[0, c, i + di, jb * 8 + j + dj]
                    for kk in range(16):
                        for j in T.vectorized(8):
                            Y[0, kb * 16 + kk, i, jb * 8 + j] = acc[kk, j]

    V["conv2d"] = {"blocked_8x8": conv_blocked, "row_4x56": conv_row, "blocked_16x8": conv_blocked16}

    # -- stencil: rows in parallel, 16-wide vectors over 4080 columns plus a 14-column tail
    @T.prim_func
    def stencil_v16_tail(A: T.Buffer((4096, 4096), "float32"), B: T.Buffer((4096, 4096), "float32")):
        for i in T.parallel(4094):
            for jo in range(255):
                for jv in T.vectorized(16):
                    B[i + 1, jo * 16 + jv + 1] = T.float32(0.2) * (
                        A[i + 1, jo * 16 + jv + 1] + A[i, jo * 16 + jv + 1] + A[i + 2, jo * 16 + jv + 1]
                        + A[i + 1, jo * 16 + jv] + A[i + 1, jo * 16 + jv + 2])
            for j in range(14):
                B[i + 1, 4081 + j] = T.float32(0.2) * (A[i + 1, 4081 + j] + A[i, 4081 + j] + A[i + 2, 4081 + j]
                                                       + A[i + 1, 4080 + j] + A[i + 1, 4082 + j])

    @T.prim_func
    def stencil_v4094(A: T.Buffer((4096, 4096), "float32"), B: T.Buffer((4096, 4096), "float32")):
        for i in T.parallel(4094):
            for j in T.vectorized(4094):
                B[i + 1, j + 1] = T.float32(0.2) * (A[i + 1, j + 1] + A[i, j + 1] + A[i + 2, j + 1]
                                                    + A[i + 1, j] + A[i + 1, j + 2])

    @T.prim_func
    def stencil_blocked_rows(A: T.Buffer((4096, 4096), "float32"), B: T.Buffer((4096, 4096), "float32")):
        # 2 rows per task (the middle input row is reused from cache), 16-wide vectors
        for ib in T.parallel(2047):
            for ii in range(2):
                for jo in range(255):
                    for jv in T.vectorized(16):
                        B[ib * 2 + ii + 1, jo * 16 + jv + 1] = T.float32(0.2) * (
                            A[ib * 2 + ii + 1, jo * 16 + jv + 1] + A[ib * 2 + ii, jo * 16 + jv + 1]
                            + A[ib * 2 + ii + 2, jo * 16 + jv + 1] + A[ib * 2 + ii + 1, jo * 16 + jv]
                            + A[ib * 2 + ii + 1, jo * 16 + jv + 2])
                for j in range(14):
                    B[ib * 2 + ii + 1, 4081 + j] = T.float32(0.2) * (
                        A[ib * 2 + ii + 1, 4081 + j] + A[ib * 2 + ii, 4081 + j] + A[ib * 2 + ii + 2, 4081 + j]
                        + A[ib * 2 + ii + 1, 4080 + j] + A[ib * 2 + ii + 1, 4082 + j])

    V["stencil"] = {"v16_tail": stencil_v16_tail, "v4094": stencil_v4094, "rows2_v16": stencil_blocked_rows}

    # -- gather: chunks in parallel; vectorized (hardware gathers) or scalar
    @T.prim_func
    def gather_par_v16(Tb: T.Buffer((65536,), "float32"), I: T.Buffer((n,), "int32"), O: T.Buffer((n,), "float32")):
        for io in T.parallel(n // 4096):
            for im in range(256):
                for ii in T.vectorized(16):
                    O[io * 4096 + im * 16 + ii] = Tb[I[io * 4096 + im * 16 + ii]]

    @T.prim_func
    def gather_par_scalar(Tb: T.Buffer((65536,), "float32"), I: T.Buffer((n,), "int32"), O: T.Buffer((n,), "float32")):
        for io in T.parallel(n // 4096):
            for ii in range(4096):
                O[io * 4096 + ii] = Tb[I[io * 4096 + ii]]

    @T.prim_func
    def gather_serial(Tb: T.Buffer((65536,), "float32"), I: T.Buffer((n,), "int32"), O: T.Buffer((n,), "float32")):
        for i in range(n):
            O[i] = Tb[I[i]]

    V["gather"] = {"par_v16": gather_par_v16, "par_scalar": gather_par_scalar, "serial": gather_serial}

    # -- histogram: per-task private histograms (in a scratch buffer), then their sum
    def histogram_private(tasks: int) -> Any:
        chunk = n // tasks

        @T.prim_func
        def histogram(D: T.Buffer((n,), "int32"), H: T.Buffer((256,), "int32")):
            P = T.decl_buffer((tasks, 256), "int32")
            for t in T.parallel(tasks):
                for b in range(256):
                    P[t, b] = 0
                for i in range(chunk):
                    P[t, D[t * chunk + i]] = P[t, D[t * chunk + i]] + 1
            for b in T.vectorized(256):
                H[b] = 0
            for t in range(tasks):
                for b in T.vectorized(256):
                    H[b] = H[b] + P[t, b]
        return histogram

    @T.prim_func
    def histogram_serial(D: T.Buffer((n,), "int32"), H: T.Buffer((256,), "int32")):
        for b in range(256):
            H[b] = 0
        for i in range(n):
            H[D[i]] = H[D[i]] + 1

    V["histogram"] = {"private": histogram_private(16), "private64": histogram_private(64),
                      "serial": histogram_serial}
    return V


def build_tvm_strong(
    tvm: Any, T: Any, inputs: dict[str, dict[str, Any]], names: Any = None,
    variants: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Runners of the strong twins (the :data:`CHOICE` variant, or ``variants[name]``)."""
    table = tvm_strong_variants(tvm, T)
    chosen = {**CHOICE, **(variants or {})}
    runners = {}
    for name, func_of in table.items():
        if names is not None and name not in names:
            continue
        runners[name] = compile_runner(tvm, func_of[chosen[name]], inputs[name])
    return runners


def compile_runner(tvm: Any, func: Any, arrays: dict[str, Any]) -> Any:
    """Build ``func`` for the benchmark target's CPU and bind it to ``arrays``."""
    target = {"kind": "llvm", "mcpu": benchmark_target().mcpu}
    fn = tvm.compile(tvm.IRModule({"main": func}), target=target)["main"]
    args = tuple(tvm.runtime.from_dlpack(a) for a in arrays.values())
    return lambda: fn(*args)
