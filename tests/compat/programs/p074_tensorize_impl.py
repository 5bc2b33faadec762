from tvm.script import tir as T


@T.prim_func
def dot_impl(a: T.handle, b: T.handle, c: T.handle) -> None:
    A = T.match_buffer(a, (4,), "int8", offset_factor=1)
    B = T.match_buffer(b, (4,), "int8", offset_factor=1)
    C = T.match_buffer(c, (1,), "int32", offset_factor=1)
    with T.block("root"):
        T.reads(C[0], A[0:4], B[0:4])
        T.writes(C[0])
        T.evaluate(T.call_extern("int32", "dot4_i8", C.access_ptr("w"), A.access_ptr("r"), B.access_ptr("r")))
