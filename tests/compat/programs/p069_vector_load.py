from tvm.script import tir as T


@T.prim_func
def vec4(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    for i in T.serial(16):
        B[i * 4 : i * 4 + 4] = A[i * 4 : i * 4 + 4] * T.Broadcast(T.float32(2), 4)
