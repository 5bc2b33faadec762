from tvm.script import tir as T


@T.prim_func
def literals(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float64")):
    for i in range(8):
        A[i] = T.float32(0.0) + T.float32(1e-5) + T.float32(-3.5) + 1.5
        B[i] = T.float64(2) * T.Cast("float64", A[i])
