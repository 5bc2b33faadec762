from tvm.script import tir as T


@T.prim_func
def let_stmt(A: T.Buffer((16,), "int32"), B: T.Buffer((16,), "int32")):
    for i in range(16):
        v: T.int32 = A[i] * 2
        B[i] = v + 1
