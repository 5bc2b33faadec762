from tvm.script import tir as T


@T.prim_func
def slice_copy(A: T.Buffer((4, 16), "float32"), B: T.Buffer((4, 16), "float32")):
    for i in range(4):
        for j in T.serial(4):
            B[i, j * 4 : j * 4 + 4] = A[i, j * 4 : j * 4 + 4]
