from tvm.script import tir as T


@T.prim_func
def offset_axis(A: T.Buffer((32,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial((8, 24), i + 8)
            B[vi - 8] = A[vi]
