# mypy: ignore-errors
"""TVMScript kernels of tests/build/test_export_c.py (annotations are TVMScript, not types)."""

from __future__ import annotations

from irbuilder.ir import IRModule
from tvmscript import ir as I
from tvmscript import tir as T


@T.prim_func
def saxpy(a: T.handle, b: T.handle, alpha: T.float32, d: T.int32):
    n = T.int64()
    A = T.match_buffer(a, (n, 4), "float32")
    B = T.match_buffer(b, (n, 4), "float32")
    for i in T.parallel(n):
        for j in range(4):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * alpha + T.Cast("float32", 7 // d)


@T.prim_func
def rowsum(a: T.handle, s: T.handle, limit: T.float64):
    m = T.int32()
    A = T.match_buffer(a, (m, 3), "float64")
    S = T.match_buffer(s, (m,), "float64")
    T.Assert(limit > T.float64(0), "limit must be positive")
    for i in range(m):
        S[i] = T.min(A[i, 0] + A[i, 1] + A[i, 2], limit)


@I.ir_module
class Pair:
    @T.prim_func
    def scale(A: T.Buffer((8,), "float32"), s: T.float32):
        T.Assert(s != T.float32(0), "ValueError: scale: s must be nonzero")
        for i in range(8):
            A[i] = A[i] * s

    @T.prim_func
    def caller(a: T.handle, s: T.float32):
        A = T.match_buffer(a, (8,), "float32")
        T.evaluate(T.call_extern("int32", "scale", a, s))
        for i in range(8):
            A[i] = A[i] + T.float32(1)


@I.ir_module
class Kern:
    @T.prim_func
    def saxpy(a: T.handle, b: T.handle, alpha: T.float32, d: T.int32):
        n = T.int64()
        A = T.match_buffer(a, (n, 4), "float32")
        B = T.match_buffer(b, (n, 4), "float32")
        for i in T.parallel(n):
            for j in range(4):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B[vi, vj] = A[vi, vj] * alpha + T.Cast("float32", 7 // d)

    @T.prim_func
    def rowsum(a: T.handle, s: T.handle, limit: T.float64):
        m = T.int32()
        A = T.match_buffer(a, (m, 3), "float64")
        S = T.match_buffer(s, (m,), "float64")
        T.Assert(limit > T.float64(0), "limit must be positive")
        for i in range(m):
            S[i] = T.min(A[i, 0] + A[i, 1] + A[i, 2], limit)

    @T.prim_func
    def scale(A: T.Buffer((8,), "float32"), s: T.float32):
        T.Assert(s != T.float32(0), "ValueError: scale: s must be nonzero")
        for i in range(8):
            A[i] = A[i] * s


PAIR_MODULE: IRModule = Pair  # @I.ir_module returns an IRModule
KERN_MODULE: IRModule = Kern


@T.prim_func
def gather(a: T.handle, idx: T.handle, out: T.handle):
    n = T.int32()
    m = T.int32()
    A = T.match_buffer(a, (n,), "float32")
    Ix = T.match_buffer(idx, (m,), "int32")
    Out = T.match_buffer(out, (m,), "float32")
    for i in range(m):
        Out[i] = A[Ix[i]]


@T.prim_func
def doubled(A: T.Buffer((16,), "float32")):
    D = T.compute((16,), lambda i: A[i] * T.float32(2))
    return D
