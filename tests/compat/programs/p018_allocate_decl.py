from tvm.script import tir as T


@T.prim_func
def alloc_decl(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    buf = T.allocate([16], "float32", "global")
    tmp = T.decl_buffer((16,), "float32", data=buf)
    for i in range(16):
        tmp[i] = A[i] + T.float32(1)
    for i in range(16):
        B[i] = tmp[i]
