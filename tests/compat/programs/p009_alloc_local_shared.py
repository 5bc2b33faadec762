from tvm.script import tir as T


@T.prim_func
def staged(A: T.Buffer((64,), "float32"), C: T.Buffer((64,), "float32")):
    B_shared = T.alloc_buffer((64,), scope="shared")
    B_local = T.alloc_buffer([64], dtype="float32", scope="local")
    for i in range(64):
        with T.block("B_shared"):
            vi = T.axis.spatial(64, i)
            B_shared[vi] = A[vi]
    for i in range(64):
        with T.block("B_local"):
            vi = T.axis.spatial(64, i)
            B_local[vi] = B_shared[vi] + T.float32(1)
    for i in range(64):
        with T.block("C"):
            vi = T.axis.spatial(64, i)
            C[vi] = B_local[vi]
