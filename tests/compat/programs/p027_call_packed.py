from tvm.script import tir as T


@T.prim_func
def packed(a: T.handle, b: T.handle):
    A = T.match_buffer(a, (16,), "float32")
    B = T.match_buffer(b, (16,), "float32")
    T.evaluate(T.call_packed("tvm.contrib.my_func", A.data, B.data, 16))
