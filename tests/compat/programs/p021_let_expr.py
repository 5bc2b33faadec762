from tvm.script import tir as T


@T.prim_func
def let_expr(A: T.Buffer((16,), "int32"), B: T.Buffer((16,), "int32")):
    for i in range(16):
        x = T.int32()
        B[i] = T.Let(x * x + 1, where={x: A[i]})
