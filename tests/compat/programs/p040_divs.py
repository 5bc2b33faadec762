from tvm.script import tir as T


@T.prim_func
def divs(A: T.Buffer((64,), "int32"), B: T.Buffer((64,), "int32")):
    for i in range(64):
        with T.block("B"):
            vi = T.axis.spatial(64, i)
            B[vi] = T.truncdiv(A[vi], 3) + T.floordiv(A[vi], 4) + T.floormod(A[vi], 5) + T.truncmod(A[vi], 6) + vi // 8 + vi % 8
