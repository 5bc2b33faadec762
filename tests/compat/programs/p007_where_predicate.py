from tvm.script import tir as T


@T.prim_func
def split_pad(A: T.Buffer((100,), "float32"), B: T.Buffer((100,), "float32")):
    for io, ii in T.grid(13, 8):
        with T.block("B"):
            vi = T.axis.spatial(100, io * 8 + ii)
            T.where(io * 8 + ii < 100)
            T.reads(A[vi])
            T.writes(B[vi])
            B[vi] = A[vi] * T.float32(3)
