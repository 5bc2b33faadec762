from tvm.script import tir as T


@T.prim_func
def saxpy(a: T.float32, x: T.handle, y: T.handle, n: T.int32):
    X = T.match_buffer(x, (n,), "float32")
    Y = T.match_buffer(y, (n,), "float32")
    for i in T.serial(n):
        Y[i] = a * X[i] + Y[i]
