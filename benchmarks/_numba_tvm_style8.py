"""numba twins of ``benchmarks/tvm_style8.py``'s kernels: the fastest plain form a numba user
writes (``prange`` over rows, ``fastmath``): the matmul in i-k-j order with a row
accumulator, the dense layer as a dot product of rows. Imported only when numba is
importable."""

from __future__ import annotations

from typing import Any

from benchmarks._numba_tvm_style5 import nb_matmul, nb_matmul_nt


def numba_twins() -> dict[str, Any]:
    """Kernel name -> numba function."""
    return dict(gemm_perm=nb_matmul, gemm_pack=nb_matmul, gemm_cache=nb_matmul,
                dense_pack_init=nb_matmul_nt)
