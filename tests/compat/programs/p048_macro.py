from tvm.script import tir as T


@T.macro
def store_twice(buf, i, value):
    buf[i] = value
    buf[i] = buf[i] + value


@T.prim_func
def use_macro(A: T.Buffer((8,), "float32")):
    for i in range(8):
        store_twice(A, i, T.float32(1))
