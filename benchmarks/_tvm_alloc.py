"""TVM 0.27 twins of ``benchmarks/alloc_kernels.py``: accumulator tiles as ``T.alloc_buffer``
at the top of the parallel loop's body (imported only when tvm is importable)."""

# ruff: noqa: E501 - TVMScript sources: one statement per line
from __future__ import annotations

from typing import Any

from .schedule import MATMUL_PACKED_TILE, host_has_avx512


def build_tvm_alloc_suite(tvm: Any, T: Any, inputs: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Runners of the alloc_buffer forms of matmul_tiled and conv2d, built for the host CPU."""
    import llvmlite.binding as llvm

    @T.prim_func
    def matmul_tiled_in_place(A: T.Buffer((1024, 1024), "float32"), B: T.Buffer((1024, 1024), "float32"),
                              C: T.Buffer((1024, 1024), "float32")):
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

    mr, nr, nc, kc = MATMUL_PACKED_TILE

    @T.prim_func
    def matmul_tiled_packed(A: T.Buffer((1024, 1024), "float32"), B: T.Buffer((1024, 1024), "float32"),
                            C: T.Buffer((1024, 1024), "float32")):
        Ap = T.alloc_buffer(((1024 + mr - 1) // mr, 1024, mr), "float32")
        for ib in T.parallel((1024 + mr - 1) // mr):
            for k in range(1024):
                for ii in range(mr):
                    Ap[ib, k, ii] = A[T.min(ib * mr + ii, 1023), k]
        for jc in T.parallel(1024 // nc):
            Bp = T.alloc_buffer((nc // nr, kc, nr), "float32")
            acc = T.alloc_buffer((mr, nr), "float32")
            for kb in range(1024 // kc):
                for jr in range(nc // nr):
                    for k in range(kc):
                        for ji in T.vectorized(nr):
                            Bp[jr, k, ji] = B[kb * kc + k, jc * nc + jr * nr + ji]
                for im in range((1024 + mr - 1) // mr):
                    for jr in range(nc // nr):
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

    @T.prim_func
    def conv2d(X: T.Buffer((1, 64, 58, 58), "float32"), W: T.Buffer((64, 64, 3, 3), "float32"),
               Y: T.Buffer((1, 64, 56, 56), "float32")):
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

    funcs = {
        "matmul_tiled": matmul_tiled_in_place if host_has_avx512() else matmul_tiled_packed,
        "conv2d": conv2d,
    }
    target = {"kind": "llvm", "mcpu": llvm.get_host_cpu_name()}
    runners = {}
    for name, func in funcs.items():
        fn = tvm.compile(tvm.IRModule({"main": func}), target=target)["main"]
        args = tuple(tvm.runtime.from_dlpack(a) for a in inputs[name].values())
        fn(*args)
        runners[name] = lambda fn=fn, args=args: fn(*args)
    return runners
