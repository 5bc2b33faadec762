from tvm.script import tir as T


@T.prim_func
def decl_only(A: T.Buffer((4, 4), "float32"), B: T.Buffer((16,), "float32")):
    A_flat = T.decl_buffer((16,), "float32", data=A.data)
    for i in T.serial(16):
        B[i] = A_flat[i]
