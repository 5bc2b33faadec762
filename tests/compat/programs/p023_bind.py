from tvm.script import tir as T


@T.prim_func
def bind_stmt(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(16):
        t = T.bind(A[i] * T.float32(0.5))
        B[i] = t + t
