from tvm.script import tir as T


@T.prim_func
def access_ptr(A: T.Buffer((16,), "float32")):
    T.evaluate(T.call_extern("int32", "fill", T.tvm_access_ptr(T.type_annotation(dtype="float32"), A.data, 0, 16, 2), 16))
