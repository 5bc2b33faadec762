# Matmul with handle params, list-shaped match_buffer and an init block.
from tvm.script import tir as T


@T.prim_func
def main(a: T.handle, b: T.handle, c: T.handle) -> None:
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    A = T.match_buffer(a, [64, 32], dtype="float32")
    B = T.match_buffer(b, [48, 32], dtype="float32")
    C = T.match_buffer(c, [64, 48], dtype="float32")
    for i, j, k in T.grid(64, 48, 32):
        with T.block("update"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vj, vk]
