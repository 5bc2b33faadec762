"""numba twins of ``benchmarks/tvm_style8.py``'s kernels: the fastest plain form a numba user
writes (``prange`` over rows, ``fastmath``): the matmul in i-k-j order with a row
accumulator (the ReLU applied to the row as it is stored), the dense layer as a dot product
of rows. Imported only when numba is
importable."""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit, prange

from benchmarks._numba_tvm_style5 import nb_matmul, nb_matmul_nt


@njit(parallel=True, fastmath=True, cache=False)
def nb_matmul_relu(A, B, C):
    n, K = A.shape
    m = B.shape[1]
    for i in prange(n):
        row = np.zeros(m, np.float32)
        for k in range(K):
            a = A[i, k]
            for j in range(m):
                row[j] += a * B[k, j]
        for j in range(m):
            C[i, j] = max(row[j], np.float32(0))


def numba_twins() -> dict[str, Any]:
    """Kernel name -> numba function."""
    return dict(gemm_perm=nb_matmul, gemm_pack=nb_matmul, gemm_cache=nb_matmul,
                dense_pack_init=nb_matmul_nt, mm_relu_blitz=nb_matmul_relu,
                mm_relu_tiles=nb_matmul_relu, gemm_shared=nb_matmul)
