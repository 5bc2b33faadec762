from tvm.script import tir as T


@T.prim_func
def tile_view(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32")):
    for io, jo in T.grid(4, 4):
        with T.block("tile"):
            vio, vjo = T.axis.remap("SS", [io, jo])
            T.reads(A[vio * 16 : vio * 16 + 16, vjo * 16 : vjo * 16 + 16])
            T.writes(B[vio * 16 : vio * 16 + 16, vjo * 16 : vjo * 16 + 16])
            A_sub = T.match_buffer(A[vio * 16 : vio * 16 + 16, vjo * 16 : vjo * 16 + 16], (16, 16), offset_factor=1)
            B_sub = T.match_buffer(B[vio * 16 : vio * 16 + 16, vjo * 16 : vjo * 16 + 16], (16, 16), offset_factor=1)
            for i, j in T.grid(16, 16):
                B_sub[i, j] = A_sub[i, j]
