from tvm.script import tir as T


@T.prim_func
def with_root(a: T.handle, c: T.handle) -> None:
    A = T.match_buffer(a, (16, 16), "float32")
    C = T.match_buffer(c, (16, 16), "float32")
    # body
    # with T.block("root")
    B = T.alloc_buffer((16, 16), "float32")
    for i0, i1 in T.grid(16, 16):
        with T.block("B"):
            i, j = T.axis.remap("SS", [i0, i1])
            T.reads(A[i, j])
            T.writes(B[i, j])
            B[i, j] = A[i, j] * T.float32(2)
    for i0, i1 in T.grid(16, 16):
        with T.block("C"):
            i, j = T.axis.remap("SS", [i0, i1])
            T.reads(B[i, j])
            T.writes(C[i, j])
            C[i, j] = B[i, j] + T.float32(1)
