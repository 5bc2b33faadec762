"""TVM 0.27 twins of ``benchmarks/user_kernels.py``, written the TVM-user way too.

* ``alloc_*``: ``benchmarks/_tvm_alloc.py`` (``T.alloc_buffer`` tiles in the parallel body);
* ``block_*``: 0.27 spells a block ``T.sblock``; its ``tirx`` well-formedness check refuses
  blocks at parse time, so the functions are parsed with ``check_well_formed=False`` and
  ``tvm.compile``'s default pipeline lowers the blocks;
* ``compute_*``: ``te.compute`` / ``te.sum`` and ``te.create_prim_func``, unscheduled (what
  a TVM user gets from te before writing a schedule).

Imported only when tvm is importable.
"""


from __future__ import annotations

from typing import Any

from ._tvm_alloc import build_tvm_alloc_suite
from ._tvm_strong import compile_runner


def tvm_user_funcs(tvm: Any, T: Any) -> dict[str, Any]:
    """The block and te forms as PrimFuncs (the alloc forms come from ``_tvm_alloc``)."""
    from tvm import te

    @T.prim_func(check_well_formed=False)
    def block_matmul(A: T.Buffer((1024, 1024), "float32"), B: T.Buffer((1024, 1024), "float32"),
                     C: T.Buffer((1024, 1024), "float32")):
        for i in T.parallel(1024):
            for j, k in T.grid(1024, 1024):
                with T.sblock("C"):
                    vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                    with T.init():
                        C[vi, vj] = T.float32(0)
                    C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]

    @T.prim_func(check_well_formed=False)
    def block_rowsum(A: T.Buffer((4096, 4096), "float32"), B: T.Buffer((4096,), "float32")):
        for i in T.parallel(4096):
            for j in range(4096):
                with T.sblock("B"):
                    vi, vj = T.axis.remap("SR", [i, j])
                    with T.init():
                        B[vi] = T.float32(0)
                    B[vi] = B[vi] + A[vi, vj]

    @T.prim_func(check_well_formed=False)
    def block_softmax(A: T.Buffer((4096, 1024), "float32"), B: T.Buffer((4096, 1024), "float32")):
        M = T.alloc_buffer((4096,), "float32")
        S = T.alloc_buffer((4096,), "float32")
        for i in T.parallel(4096):
            for j in range(1024):
                with T.sblock("max"):
                    vi, vj = T.axis.remap("SR", [i, j])
                    with T.init():
                        M[vi] = T.float32(-3.4e38)
                    M[vi] = T.max(M[vi], A[vi, vj])
            for j in range(1024):
                with T.sblock("sum"):
                    vi, vj = T.axis.remap("SR", [i, j])
                    with T.init():
                        S[vi] = T.float32(0)
                    S[vi] = S[vi] + T.exp(A[vi, vj] - M[vi])
            for j in range(1024):
                with T.sblock("norm"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B[vi, vj] = T.exp(A[vi, vj] - M[vi]) / S[vi]

    n = 1 << 24
    A = te.placeholder((n,), "float32", name="A")
    B = te.placeholder((n,), "float32", name="B")
    C = te.placeholder((n,), "float32", name="C")
    E = te.compute((n,), lambda i: te.exp(A[i]), name="E")
    F = te.compute((n,), lambda i: E[i] * B[i], name="F")
    D = te.compute((n,), lambda i: F[i] + C[i], name="D")
    compute_fused = te.create_prim_func([A, B, C, D])

    R = te.placeholder((4096, 4096), "float32", name="A")
    k = te.reduce_axis((0, 4096), name="k")
    S = te.compute((4096,), lambda i: te.sum(R[i, k], axis=k), name="B")
    compute_rowsum = te.create_prim_func([R, S])

    return {"block_matmul": block_matmul, "block_rowsum": block_rowsum,
            "block_softmax": block_softmax, "compute_fused": compute_fused,
            "compute_rowsum": compute_rowsum}


def build_tvm_user(tvm: Any, T: Any, inputs: dict[str, dict[str, Any]],
                   bases: dict[str, str]) -> dict[str, Any]:
    """Runners of the rows named in ``bases``, which maps a row to the suite kernel whose
    arrays it runs on."""
    runners = {}
    if "alloc_matmul" in bases or "alloc_conv2d" in bases:
        alloc = build_tvm_alloc_suite(tvm, T, inputs)
        runners = {"alloc_matmul": alloc["matmul_tiled"], "alloc_conv2d": alloc["conv2d"]}
    for name, func in tvm_user_funcs(tvm, T).items():
        if name in bases:
            runners[name] = compile_runner(tvm, func, inputs[bases[name]])
    return {name: run for name, run in runners.items() if name in bases}
