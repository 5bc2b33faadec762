from tvm.script import tir as T


@T.prim_func
def copy2d(A: T.Buffer[(8, 8), "float32"], B: T.Buffer[(8, 8), "float32"]) -> None:
    for i, j in T.grid(8, 8):
        with T.block("copy"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj]
