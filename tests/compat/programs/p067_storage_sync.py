from tvm.script import tir as T


@T.prim_func
def sync(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32")):
    tx = T.launch_thread("threadIdx.x", 128)
    S = T.allocate([128], "float32", "shared")
    S_buf = T.decl_buffer((128,), "float32", data=S, scope="shared")
    S_buf[tx] = A[tx]
    T.evaluate(T.tvm_storage_sync("shared"))
    B[tx] = S_buf[127 - tx]
