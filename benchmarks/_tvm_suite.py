"""TVM 0.27 versions of the benchmark kernels (imported only when tvm is importable).

Plain loop nests in the ``tirx`` dialect (0.27 rejects blocks in this flow); the same
schedules as ours: T.parallel / T.vectorized where our kernels use them.
"""

# ruff: noqa: E501, E741 - TVMScript sources: one statement per line, the suite's buffer names
from __future__ import annotations

from typing import Any

from .schedule import MATMUL_PACKED_TILE, benchmark_target, host_has_avx512


def build_tvm_suite(
    tvm: Any, T: Any, inputs: dict[str, dict[str, Any]], names: Any = None
) -> dict[str, Any]:
    """Runners of the suite's kernels (only ``names`` when given), built for the benchmark
    target's CPU."""
    n = 1 << 24

    @T.prim_func
    def vadd(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32"), C: T.Buffer((n,), "float32")):
        for io in T.parallel(n // 4096):
            for ii in T.vectorized(4096):
                C[io * 4096 + ii] = A[io * 4096 + ii] + B[io * 4096 + ii]

    @T.prim_func
    def fused(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32"),
              C: T.Buffer((n,), "float32"), D: T.Buffer((n,), "float32")):
        for io in T.parallel(n // 4096):
            for ii in T.vectorized(4096):
                D[io * 4096 + ii] = T.exp(A[io * 4096 + ii]) * B[io * 4096 + ii] + C[io * 4096 + ii]

    @T.prim_func
    def rowsum(A: T.Buffer((4096, 4096), "float32"), B: T.Buffer((4096,), "float32")):
        for i in T.parallel(4096):
            B[i] = T.float32(0)
            for j in range(4096):
                B[i] = B[i] + A[i, j]

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
    def matmul_naive(A: T.Buffer((1024, 1024), "float32"), B: T.Buffer((1024, 1024), "float32"),
                     C: T.Buffer((1024, 1024), "float32")):
        for i in range(1024):
            for j in range(1024):
                C[i, j] = T.float32(0)
                for k in range(1024):
                    C[i, j] = C[i, j] + A[i, k] * B[k, j]

    @T.prim_func
    def matmul_tiled_in_place(A: T.Buffer((1024, 1024), "float32"), B: T.Buffer((1024, 1024), "float32"),
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
                                acc[ii, ji] = (acc[ii, ji]
                                               + A[io * 32 + im * 4 + ii, k] * B[k, jo * 64 + ji])
                    for ii in range(4):
                        for ji in T.vectorized(64):
                            C[io * 32 + im * 4 + ii, jo * 64 + ji] = acc[ii, ji]

    mr, nr, nc, kc = MATMUL_PACKED_TILE

    @T.prim_func
    def matmul_tiled_packed(A: T.Buffer((1024, 1024), "float32"), B: T.Buffer((1024, 1024), "float32"),
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

    matmul_tiled = matmul_tiled_in_place if host_has_avx512() else matmul_tiled_packed

    @T.prim_func
    def conv2d(X: T.Buffer((1, 64, 58, 58), "float32"), W: T.Buffer((64, 64, 3, 3), "float32"),
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
    def stencil(A: T.Buffer((4096, 4096), "float32"), B: T.Buffer((4096, 4096), "float32")):
        for i in T.parallel(4094):
            for j in T.vectorized(4094):
                B[i + 1, j + 1] = T.float32(0.2) * (A[i + 1, j + 1] + A[i, j + 1] + A[i + 2, j + 1]
                                                    + A[i + 1, j] + A[i + 1, j + 2])

    @T.prim_func
    def gather(Tb: T.Buffer((65536,), "float32"), I: T.Buffer((n,), "int32"), O: T.Buffer((n,), "float32")):
        for i in range(n):
            O[i] = Tb[I[i]]

    @T.prim_func
    def histogram(D: T.Buffer((n,), "int32"), H: T.Buffer((256,), "int32")):
        for b in range(256):
            H[b] = 0
        for i in range(n):
            H[D[i]] = H[D[i]] + 1

    funcs = {
        "vadd": vadd, "fused": fused, "rowsum": rowsum, "softmax": softmax,
        "transpose": transpose, "matmul_naive": matmul_naive, "matmul_tiled": matmul_tiled,
        "conv2d": conv2d, "stencil": stencil, "gather": gather, "histogram": histogram,
    }
    target = {"kind": "llvm", "mcpu": benchmark_target().mcpu}
    runners = {}
    for name, func in funcs.items():
        if names is not None and name not in names:
            continue
        lib = tvm.compile(tvm.IRModule({"main": func}), target=target)
        fn = lib["main"]
        args = tuple(tvm.runtime.from_dlpack(a) for a in inputs[name].values())
        fn(*args)
        runners[name] = lambda fn=fn, args=args: fn(*args)
    return runners
