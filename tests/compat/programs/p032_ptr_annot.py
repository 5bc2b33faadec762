from tvm.script import tir as T


@T.prim_func
def ptr_annot(data: T.Ptr(T.float32)):
    A = T.decl_buffer((8,), "float32", data=data)
    for i in range(8):
        A[i] = A[i] + T.float32(1)
