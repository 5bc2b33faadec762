from tvm.script import tir as T


@T.prim_func
def dot(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32"), C: T.Buffer((1,), "float32")):
    for k in range(64):
        with T.block("dot"):
            vk = T.axis.R(64, k)
            with T.init():
                C[0] = T.float32(0)
            C[0] = C[0] + A[vk] * B[vk]
