from tvm.script import tir as T


@T.prim_func
def add_one(a: T.handle, b: T.handle):
    A = T.match_buffer(a, shape=(16, 16), dtype="int32")
    B = T.match_buffer(b, shape=(16, 16), dtype="int32")
    for i in T.serial(16):
        for j in T.serial(0, 16):
            with T.block("B"):
                vi = T.axis.spatial(16, i)
                vj = T.axis.spatial(16, j)
                B[vi, vj] = A[vi, vj] + 1
