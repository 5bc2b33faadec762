from tvm.script import tir as T


@T.prim_func
def loop_kinds(A: T.Buffer((4, 8, 16), "float32"), B: T.Buffer((4, 8, 16), "float32")):
    for i in T.parallel(4):
        for j in T.unroll(8):
            for k in T.vectorized(16):
                with T.block("B"):
                    vi, vj, vk = T.axis.remap("SSS", [i, j, k])
                    B[vi, vj, vk] = A[vi, vj, vk] + T.float32(1)
