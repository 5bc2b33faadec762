from tvm.script import tir as T


@T.prim_func
def ptr_param(data: T.handle("float32"), n: T.int32):
    A = T.decl_buffer((n,), "float32", data=data)
    for i in range(n):
        A[i] = T.float32(0)
