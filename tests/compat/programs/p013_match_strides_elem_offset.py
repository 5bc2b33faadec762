from tvm.script import tir as T


@T.prim_func
def strided_view(a: T.handle, b: T.handle) -> None:
    A = T.match_buffer(a, (32, 32), "float32")
    B = T.match_buffer(b, (32, 32), "float32")
    for io in range(2):
        with T.block("outer"):
            vio = T.axis.spatial(2, io)
            s0 = T.int32()
            s1 = T.int32()
            off = T.int32()
            A_sub = T.match_buffer(A[vio * 16 : vio * 16 + 16, 0:32], (16, 32), "float32", strides=[s0, s1], elem_offset=off, offset_factor=1)
            for i, j in T.grid(16, 32):
                B[vio * 16 + i, j] = A_sub[i, j]
