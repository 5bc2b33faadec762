from tvm.script import tir as T


@T.prim_func
def launch_with(A: T.Buffer((64,), "float32")):
    with T.launch_thread("blockIdx.x", 4) as bx:
        with T.launch_thread("threadIdx.x", 16) as tx:
            A[bx * 16 + tx] = T.float32(0)
