from tvm.script import tir as T


@T.prim_func
def meta(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32")):
    for i, j in T.grid(8, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            idx = T.meta_var((vi, vj))
            B[idx] = A[idx] + T.float32(1)
