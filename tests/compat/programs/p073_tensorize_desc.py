from tvm.script import tir as T


@T.prim_func
def dot_desc(a: T.handle, b: T.handle, c: T.handle) -> None:
    A = T.match_buffer(a, (4,), "int8", offset_factor=1)
    B = T.match_buffer(b, (4,), "int8", offset_factor=1)
    C = T.match_buffer(c, (1,), "int32", offset_factor=1)
    with T.block("root"):
        T.reads(C[0], A[0:4], B[0:4])
        T.writes(C[0])
        for k in range(4):
            with T.block("update"):
                vk = T.axis.remap("R", [k])
                C[0] = C[0] + T.Cast("int32", A[vk]) * T.Cast("int32", B[vk])
