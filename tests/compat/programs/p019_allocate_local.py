from tvm.script import tir as T


@T.prim_func
def alloc_local(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(16):
        acc_data = T.allocate([1], "float32", "local")
        acc = T.buffer_decl([1], "float32", data=acc_data, scope="local")
        acc[0] = A[i]
        B[i] = acc[0] * acc[0]
