from tvm.script import tir as T


@T.prim_func
def int64_loops(A: T.Buffer((T.int64(64),), "float32"), B: T.Buffer((T.int64(64),), "float32")):
    for i in T.serial(T.int64(64)):
        with T.block("B"):
            vi = T.axis.spatial(T.int64(64), i)
            B[vi] = A[vi]
