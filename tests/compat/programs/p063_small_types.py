from tvm.script import tir as T


@T.prim_func
def quant(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "int8"), C: T.Buffer((16,), "uint8"), D: T.Buffer((16,), "float16")):
    for i in range(16):
        with T.block("q"):
            vi = T.axis.spatial(16, i)
            B[vi] = T.Cast("int8", T.max(T.min(A[vi], T.float32(127)), T.float32(-128)))
            C[vi] = T.uint8(3)
            D[vi] = T.Cast("float16", A[vi])
