from tvm.script import tir as T


@T.prim_func
def buffer_kwargs(A: T.Buffer((4, 4), "float32", offset_factor=1), B: T.Buffer(16, "float32")):
    for i, j in T.grid(4, 4):
        B[i * 4 + j] = A[i, j]
