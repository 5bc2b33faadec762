from tvm.script import tir as T


@T.prim_func
def opaque(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(16):
        with T.block("opaque"):
            T.reads(A[i])
            T.writes(B[i])
            B[i] = A[i]
