from tvm.script import tir as T


@T.prim_func
def math_ops(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            B[vi] = T.exp(A[vi]) + T.sqrt(T.fabs(A[vi])) + T.log(A[vi] + T.float32(1)) + T.tanh(A[vi]) + T.sigmoid(A[vi]) + T.pow(A[vi], T.float32(2)) + T.min(A[vi], T.float32(1)) + T.max(A[vi], T.float32(-1)) + T.floor(A[vi]) + T.ceil(A[vi]) + T.round(A[vi]) + T.erf(A[vi]) + T.rsqrt(A[vi] + T.float32(1))
