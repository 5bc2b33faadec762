from tvm.script import tir as T


@T.prim_func
def asserting(n: T.int32, A: T.Buffer((16,), "float32")):
    assert n <= 16, "n too large"
    T.Assert(n >= 0, "n negative")
    for i in range(n):
        A[i] = T.float32(0)
