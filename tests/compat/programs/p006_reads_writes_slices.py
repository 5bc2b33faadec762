from tvm.script import tir as T


@T.prim_func
def rowsum(A: T.Buffer((32, 64), "float32"), B: T.Buffer((32,), "float32")):
    for i, k in T.grid(32, 64):
        with T.block("rowsum"):
            vi = T.axis.spatial(32, i)
            vk = T.axis.reduce(64, k)
            T.reads(A[vi, 0:64])
            T.writes(B[vi])
            with T.init():
                B[vi] = T.float32(0.0)
            B[vi] = B[vi] + A[vi, vk]
