from tvm.script import tir as T


@T.prim_func
def fused(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32")):
    for fused in T.serial(64):
        with T.block("B"):
            vi = T.axis.spatial(8, fused // 8)
            vj = T.axis.spatial(8, fused % 8)
            T.reads(A[vi, vj])
            T.writes(B[vi, vj])
            B[vi, vj] = A[vi, vj]
