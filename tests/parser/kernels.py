# ruff: noqa: UP037, F821  (T.Buffer[shape, "dtype"] annotations are TVMScript, not type hints)
"""Module-level kernels covering the TIR statements, used by several test files."""

from __future__ import annotations

from tvmscript import ir as I
from tvmscript import tir as T

from .registry import roundtrip


@roundtrip
@T.prim_func
def loops(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        for j in T.serial(8):
            A[i, j] = T.float32(0)
    for i in T.parallel(8):
        B[i] = T.float32(1)
    for i in T.vectorized(8):
        B[i] = B[i] + T.float32(1)
    for i in T.unroll(2, 8):
        B[i] = B[i] * T.float32(2)
    for i, j in T.grid(8, 8):
        A[i, j] = A[i, j] + B[j]
    for t in T.thread_binding(8, thread="threadIdx.x"):
        B[t] = T.float32(3)


@roundtrip
@T.prim_func
def control(A: T.Buffer((8,), "int32"), n: T.int32):
    for i in range(8):
        if i < 2:
            A[i] = 0
        elif i < 5 and n > 0:
            A[i] = 1
        else:
            A[i] = 2
    while A[0] < 10:
        A[0] += 1
    assert n > 0, "ValueError: n must be positive"
    T.evaluate(T.call_extern("int32", "puts", "hi"))
    A[1] = T.Select(0 <= n < 8, n, 0)
    A[2] = n if n > 1 else 1
    A[3] = T.if_then_else(not n == 2, 1, 2)


@roundtrip
@T.prim_func
def bindings(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "int32")):
    x = A[0] + 1.0
    y: T.int32 = B[0] * 2
    k = 3  # a Python value: no LetStmt
    A[1] = x
    B[1] = y + k
    B[k] = y


@roundtrip
@T.prim_func
def memory(A: T.Buffer((16,), "float32")):
    data = T.allocate([16], "float32", "global")
    buf = T.decl_buffer((4, 4), "float32", data=data)
    alias = T.decl_buffer((16,), "float32", data=A.data)
    tmp = T.decl_buffer((4,), "float32")
    for i in range(4):
        tmp[i] = alias[i]
        buf[i, 0] = tmp[i]
    A[0] = buf[0, 0]


@roundtrip
@T.prim_func
def blocks(
    A: T.Buffer((16, 16), "float32"),
    B: T.Buffer((16, 16), "float32"),
    C: T.Buffer((16, 16), "float32"),
):
    for i, j, k in T.grid(16, 16, 16):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            T.reads(A[vi, vk], B[vk, vj])
            T.writes(C[vi, vj])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
    for i in range(4):
        with T.block("S"):
            vi = T.axis.spatial(4, i)
            T.reads(A[vi * 4 : vi * 4 + 4, 0:16])
            T.writes(B[vi, 0:4])
            B[vi, 0] = A[vi * 4, 0]


@roundtrip
@T.prim_func
def vectors(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(4):
        B[T.Ramp(i * 4, 1, 4)] = A[T.Ramp(i * 4, 1, 4)] + T.Broadcast(T.float32(1), 4)


@roundtrip
@T.prim_func
def old_buffer_syntax(A: T.Buffer[(16,), "float32"], B: T.Buffer[(4, 4), "float32"]):
    B[1, 2] = A[3]


@roundtrip
@T.prim_func
def handles(a: T.handle, n: T.int32):
    A = T.match_buffer(a, (n, 4), "float32")
    for i, j in T.grid(n, 4):
        A[i, j] = T.float32(0)


@roundtrip
@T.prim_func
def symbolic(a: T.handle):
    m = T.int32()
    A = T.match_buffer(a, (m,), "int32")
    for i in range(m):
        A[i] = i


@roundtrip
@T.prim_func
def let_scoped(A: T.Buffer((4,), "float32")):
    with T.LetStmt(A[0] * T.float32(2)) as x:
        A[1] = x
    with T.attr(A.data, "storage_alignment", 128):
        A[2] = T.float32(3)


@roundtrip
@T.prim_func
def returns_int(A: T.Buffer((4,), "float32")) -> T.int32:
    T.func_attr({"tir.noalias": True})
    T.evaluate(0)


@roundtrip
@I.ir_module
class Module:
    I.module_attrs({"target": "llvm"})

    @T.prim_func
    def add(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        for i in range(4):
            B[i] = A[i] + T.float32(1)

    @T.prim_func(private=True)
    def helper(A: T.Buffer((4,), "float32")):
        A[0] = T.float32(0)
