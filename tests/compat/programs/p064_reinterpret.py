from tvm.script import tir as T


@T.prim_func
def bitcast(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "int32")):
    for i in range(16):
        B[i] = T.reinterpret("int32", A[i])
