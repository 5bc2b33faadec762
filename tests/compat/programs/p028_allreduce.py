from tvm.script import tir as T


@T.prim_func
def allreduce(A: T.Buffer((128,), "float32"), B: T.Buffer((1,), "float32")):
    for tx in T.thread_binding(128, thread="threadIdx.x"):
        with T.block("reduce"):
            T.reads(A[0:128])
            T.writes(B[0])
            red_buf = T.alloc_buffer((1,), scope="local")
            T.attr(T.comm_reducer(lambda x, y: x + y, [T.float32(0)]), "reduce_scope", T.reinterpret("handle", T.uint64(0)))
            T.evaluate(T.tvm_thread_allreduce(T.uint32(1), A[tx], T.bool(True), red_buf[0], tx))
            B[0] = red_buf[0]
