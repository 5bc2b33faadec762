from tvm.script import tir as T


@T.prim_func
def prefix(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(16):
        with T.block("scan"):
            vi = T.axis.scan(16, i)
            T.reads(A[vi], B[vi - 1])
            T.writes(B[vi])
            if vi == 0:
                B[vi] = A[vi]
            else:
                B[vi] = B[vi - 1] + A[vi]
