from tvm.script import tir as T


@T.prim_func
def casts(A: T.Buffer((16,), "int32"), B: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float16")):
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            B[vi] = T.Cast("float32", A[vi]) + T.cast(A[vi], "float32")
            C[vi] = T.float16(B[vi])
