from tvm.script import tir as T


@T.prim_func
def int64_shapes(A: T.Buffer((T.int64(16), T.int64(8)), "float32"), B: T.Buffer((T.int64(16), T.int64(8)), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    for i0, i1 in T.grid(T.int64(16), T.int64(8)):
        with T.block("B"):
            v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
            T.reads(A[v_i0, v_i1])
            T.writes(B[v_i0, v_i1])
            B[v_i0, v_i1] = A[v_i0, v_i1] + T.float32(1)
