from tvm.script import ir as I
from tvm.script import tir as T


@I.ir_module
class Module:
    @T.prim_func
    def main(a: T.handle, b: T.handle):
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        A = T.match_buffer(a, (32, 32), "float32")
        B = T.match_buffer(b, (32, 32), "float32")
        A_local = T.alloc_buffer((32, 32), "float32", scope="local")
        for i, j in T.grid(32, 32):
            with T.block("A_local"):
                v0, v1 = T.axis.remap("SS", [i, j])
                T.reads(A[v0, v1])
                T.writes(A_local[v0, v1])
                A_local[v0, v1] = A[v0, v1]
        for i, j in T.grid(32, 32):
            with T.block("B"):
                v0, v1 = T.axis.remap("SS", [i, j])
                T.reads(A_local[v0, v1])
                T.writes(B[v0, v1])
                B[v0, v1] = A_local[v0, v1] * T.float32(0.5)
