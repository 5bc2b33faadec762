from tvm.script import tir as T


@T.prim_func
def env(A: T.Buffer((256,), "float32"), B: T.Buffer((256,), "float32")):
    threadIdx_x = T.env_thread("threadIdx.x")
    blockIdx_x = T.env_thread("blockIdx.x")
    T.launch_thread(blockIdx_x, 4)
    T.launch_thread(threadIdx_x, 64)
    B[blockIdx_x * 64 + threadIdx_x] = A[blockIdx_x * 64 + threadIdx_x]
