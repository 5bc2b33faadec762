from tvm.script import tir as T


@T.prim_func
def annotated(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in T.serial(16, annotations={"pragma_unroll_explicit": 1}):
        with T.block("B"):
            vi = T.axis.S(16, i)
            T.reads(A[vi])
            T.writes(B[vi])
            T.block_attr({"meta_schedule.tiling_structure": "SSRSRS"})
            B[vi] = A[vi]
