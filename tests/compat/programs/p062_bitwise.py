from tvm.script import tir as T


@T.prim_func
def bits(A: T.Buffer((16,), "int32"), B: T.Buffer((16,), "int32")):
    for i in range(16):
        B[i] = T.bitwise_and(A[i], 255) + T.shift_left(A[i], 2) + T.shift_right(A[i], 1) + T.bitwise_or(A[i], 1) + T.bitwise_xor(A[i], 3) + (A[i] & 7) + (A[i] | 8) + (A[i] << 1) + (A[i] >> 1)
