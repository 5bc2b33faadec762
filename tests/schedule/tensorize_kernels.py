"""Tensor intrinsics and kernels shared by ``test_tensorize.py`` and the trace cases: a
16x4 multiply-accumulate written with vectorized loops, a 4-wide dot product written with an
LLVM vector reduction (and one calling an extern function), registered on import; a packed
matmul and batched row dots to tensorize with them."""

from __future__ import annotations

from tvmscript import tir as T

# -- intrinsics -------------------------------------------------------------------------


@T.prim_func
def mac16x4_desc(a: T.handle, b: T.handle, c: T.handle):
    A = T.match_buffer(a, (4,), "float32", offset_factor=1)
    B = T.match_buffer(b, (4, 16), "float32", offset_factor=1)
    C = T.match_buffer(c, (16,), "float32", offset_factor=1)
    with T.block("root"):
        T.reads(C[0:16], A[0:4], B[0:4, 0:16])
        T.writes(C[0:16])
        for i, k in T.grid(16, 4):
            with T.block("mac"):
                vi, vk = T.axis.remap("SR", [i, k])
                C[vi] = C[vi] + A[vk] * B[vk, vi]


@T.prim_func
def mac16x4_impl(a: T.handle, b: T.handle, c: T.handle):
    A = T.match_buffer(a, (4,), "float32", offset_factor=1)
    B = T.match_buffer(b, (4, 16), "float32", offset_factor=1)
    C = T.match_buffer(c, (16,), "float32", offset_factor=1)
    with T.block("root"):
        T.reads(C[0:16], A[0:4], B[0:4, 0:16])
        T.writes(C[0:16])
        for k in range(4):
            for i in T.vectorized(16):
                C[i] = C[i] + A[k] * B[k, i]


@T.prim_func
def dot4_desc(a: T.handle, b: T.handle, c: T.handle):
    A = T.match_buffer(a, (4,), "float32", offset_factor=1)
    B = T.match_buffer(b, (4,), "float32", offset_factor=1)
    C = T.match_buffer(c, (), "float32", offset_factor=1)
    with T.block("root"):
        T.reads(C[()], A[0:4], B[0:4])
        T.writes(C[()])
        for k in range(4):
            with T.block("dot"):
                vk = T.axis.reduce(4, k)
                C[()] = C[()] + A[vk] * B[vk]


@T.prim_func
def dot4_impl(a: T.handle, b: T.handle, c: T.handle):
    A = T.match_buffer(a, (4,), "float32", offset_factor=1)
    B = T.match_buffer(b, (4,), "float32", offset_factor=1)
    C = T.match_buffer(c, (), "float32", offset_factor=1)
    with T.block("root"):
        T.reads(C[()], A[0:4], B[0:4])
        T.writes(C[()])
        T.block_attr({"intrin": "dot4"})
        C[()] = C[()] + T.call_llvm_pure_intrin(
            "float32", "llvm.vector.reduce.fadd.v4f32", T.float32(0),
            A.vload([0], "float32x4") * B.vload([0], "float32x4"),
        )


@T.prim_func
def dot4_extern_impl(a: T.handle, b: T.handle, c: T.handle):
    # pointers passed on: offsets are variables, bound to where each view starts
    a_off = T.int32()
    b_off = T.int32()
    c_off = T.int32()
    A = T.match_buffer(a, (4,), "float32", elem_offset=a_off)
    B = T.match_buffer(b, (4,), "float32", elem_offset=b_off)
    C = T.match_buffer(c, (), "float32", elem_offset=c_off)
    with T.block("root"):
        T.reads(C[()], A[0:4], B[0:4])
        T.writes(C[()])
        T.evaluate(
            T.call_extern("int32", "tvms_test_dot4", C.access_ptr("rw"), A.access_ptr("r"),
                          B.access_ptr("r"))
        )


T.TensorIntrin.register("test_mac16x4", mac16x4_desc, mac16x4_impl, override=True)
T.TensorIntrin.register("test_dot4", dot4_desc, dot4_impl, override=True)
T.TensorIntrin.register("test_dot4_extern", dot4_desc, dot4_extern_impl, override=True)

# -- kernels ----------------------------------------------------------------------------


@T.prim_func
def packed_matmul(X: T.Buffer((6, 32), "float32"), W: T.Buffer((32, 48), "float32"),
                  Y: T.Buffer((6, 48), "float32")):
    for m, n, k in T.grid(6, 48, 32):
        with T.block("Y"):
            vm, vn, vk = T.axis.remap("SSR", [m, n, k])
            with T.init():
                Y[vm, vn] = T.float32(0)
            Y[vm, vn] = Y[vm, vn] + X[vm, vk] * W[vk, vn]


@T.prim_func
def row_dots(P: T.Buffer((3, 5, 12), "float32"), Q: T.Buffer((5, 12), "float32"),
             R: T.Buffer((3, 5), "float32")):
    for b, r, k in T.grid(3, 5, 12):
        with T.block("R"):
            vb, vr, vk = T.axis.remap("SSR", [b, r, k])
            with T.init():
                R[vb, vr] = T.float32(0)
            R[vb, vr] = R[vb, vr] + P[vb, vr, vk] * Q[vr, vk]
