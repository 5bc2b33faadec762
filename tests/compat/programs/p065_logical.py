from tvm.script import tir as T


@T.prim_func
def logical(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(16):
        if i > 2 and i < 12 or i == 0:
            B[i] = A[i]
        elif not (i == 14):
            B[i] = T.float32(0)
        else:
            B[i] = T.float32(1)
