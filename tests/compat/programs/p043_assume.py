from tvm.script import tir as T


@T.prim_func
def assume(A: T.Buffer((16,), "int32")):
    T.evaluate(T.assume(A[0] >= 0))
    for i in range(16):
        A[i] = A[i] + 1
