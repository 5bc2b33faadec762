from tvm.script import tir as T


@T.prim_func
def strided(a: T.handle, b: T.handle):
    A = T.match_buffer(a, (16, 16), "float32", strides=(32, 1))
    B = T.match_buffer(b, (16, 16), "float32", elem_offset=0, align=64, offset_factor=1)
    for i, j in T.grid(16, 16):
        B[i, j] = A[i, j]
