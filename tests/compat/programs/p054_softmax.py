from tvm.script import tir as T


@T.prim_func
def softmax(A: T.Buffer((4, 32), "float32"), C: T.Buffer((4, 32), "float32")):
    T.func_attr({"global_symbol": "softmax", "tir.noalias": T.bool(True)})
    maxv = T.alloc_buffer((4,), "float32")
    expsum = T.alloc_buffer((4,), "float32")
    for i, k in T.grid(4, 32):
        with T.block("maxv"):
            vi, vk = T.axis.remap("SR", [i, k])
            T.reads(A[vi, vk])
            T.writes(maxv[vi])
            with T.init():
                maxv[vi] = T.float32(-3.4028234663852886e38)
            maxv[vi] = T.max(maxv[vi], A[vi, vk])
    for i, k in T.grid(4, 32):
        with T.block("expsum"):
            vi, vk = T.axis.remap("SR", [i, k])
            T.reads(A[vi, vk], maxv[vi])
            T.writes(expsum[vi])
            with T.init():
                expsum[vi] = T.float32(0)
            expsum[vi] = expsum[vi] + T.exp(A[vi, vk] - maxv[vi])
    for i, j in T.grid(4, 32):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[vi, vj], maxv[vi], expsum[vi])
            T.writes(C[vi, vj])
            C[vi, vj] = T.exp(A[vi, vj] - maxv[vi]) / expsum[vi]
