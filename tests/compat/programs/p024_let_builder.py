from tvm.script import tir as T


@T.prim_func
def let_builder(n: T.int32, A: T.Buffer((16,), "int32")):
    m = T.int32()
    with T.LetStmt(n + 1, var=m):
        for i in range(16):
            A[i] = m
