from tvm.script import tir as T


@T.prim_func
def attrs(A: T.Buffer((16,), "float32")):
    with T.attr(0, "pragma_scope", "parallel_launch_point"):
        for i in range(16):
            A[i] = T.float32(1)
