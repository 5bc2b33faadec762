from tvm.script import tir as T


@T.prim_func
def select_likely(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(16):
        if T.likely(i < 15):
            B[i] = T.Select(A[i] > T.float32(0), A[i], T.float32(0))
        else:
            B[i] = A[i]
