"""Loops ``parallelize_loops`` makes parallel run in parallel only when their arrays do not
overlap (the ``tvmscript.parallel_if`` test); otherwise one iteration after another, as
written. The late rewrites that interleave iterations (jam, column lanes, row lanes) must
keep that: with overlapping arguments every kernel here gives the interpreter's bits, on
both pinned targets. (Jam and column lanes interleaved such loops unconditionally: a
column cumulative sum and a matmul with a local accumulator gave other numbers.)"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from late_kit import AVX2, AVX512, one_storage, run_reference, runs_avx2

import tvmscript
from irbuilder.ir import PrimFunc
from lowering.target import Target
from tvmscript import tir as T

@T.prim_func
def rowsum_local(A: T.Buffer((64, 1100), "float32"), O: T.Buffer((64,), "float32")):
    for i in range(64):
        acc = T.alloc_buffer((1,), "float32")
        acc[0] = T.float32(0)
        for j in range(1100):
            acc[0] = acc[0] + A[i, j]
        O[i] = acc[0]

@T.prim_func
def rowsum_direct(A: T.Buffer((64, 1100), "float32"), O: T.Buffer((64,), "float32")):
    for i in range(64):
        O[i] = T.float32(0)
        for j in range(1100):
            O[i] = O[i] + A[i, j]

@T.prim_func
def colcumsum(A: T.Buffer((300, 256), "float32"), O: T.Buffer((300, 256), "float32")):
    for j in range(256):
        O[0, j] = A[0, j]
        for i in range(1, 300):
            O[i, j] = O[i - 1, j] + A[i, j]

@T.prim_func
def colsum(A: T.Buffer((300, 256), "float32"), O: T.Buffer((256,), "float32")):
    for j in range(256):
        O[j] = T.float32(0)
        for i in range(300):
            O[j] = O[j] + A[i, j]

@T.prim_func
def matmul_grid(A: T.Buffer((40, 33), "float32"), B: T.Buffer((33, 70), "float32"), C: T.Buffer((40, 70), "float32")):
    for i, j in T.grid(40, 70):
        acc = T.alloc_buffer((1,), "float32")
        acc[0] = T.float32(0)
        for k in range(33):
            acc[0] = acc[0] + A[i, k] * B[k, j]
        C[i, j] = acc[0]

@T.prim_func
def matmul_direct(A: T.Buffer((40, 33), "float32"), B: T.Buffer((33, 70), "float32"), C: T.Buffer((40, 70), "float32")):
    for i, j in T.grid(40, 70):
        C[i, j] = T.float32(0)
        for k in range(33):
            C[i, j] = C[i, j] + A[i, k] * B[k, j]

@T.prim_func
def scale_rows(A: T.Buffer((300, 256), "float32"), O: T.Buffer((300, 256), "float32")):
    for i in range(300):
        for j in range(256):
            O[i, j] = A[i, j] * T.float32(2) + A[i, 0]

@T.prim_func
def transpose(A: T.Buffer((256, 300), "float32"), O: T.Buffer((300, 256), "float32")):
    for i in range(300):
        for j in range(256):
            O[i, j] = A[j, i]

@T.prim_func
def batch_rows(A: T.Buffer((6, 21, 600), "float32"), O: T.Buffer((6, 21), "float32")):
    for b, i in T.grid(6, 21):
        O[b, i] = T.float32(0)
        for j in range(600):
            O[b, i] = O[b, i] + A[b, i, j]

@T.prim_func
def stencil(A: T.Buffer((300, 256), "float32"), O: T.Buffer((300, 256), "float32")):
    for i in range(1, 299):
        for j in range(1, 255):
            O[i, j] = A[i - 1, j] + A[i + 1, j] + A[i, j - 1] + A[i, j + 1]


KERNELS = [rowsum_local, rowsum_direct, colcumsum, colsum, matmul_grid, matmul_direct,
           scale_rows, transpose, batch_rows, stencil]


def _targets() -> list[Any]:
    avx512 = pytest.param(AVX512, id="znver4", marks=pytest.mark.skipif(
        bool(AVX512.missing_on_host()), reason="the host lacks AVX-512 (target znver4)"))
    return [pytest.param(AVX2, id="znver3", marks=runs_avx2), avx512]


def _bits(a: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    return a.view(np.int32)  # NaN and infinity (in-place stencils blow up) compare too


@pytest.mark.parametrize("target", _targets())
@pytest.mark.parametrize("func", KERNELS, ids=[f.name for f in KERNELS])
def test_overlapping_arguments_give_the_serial_numbers(func: PrimFunc, target: Target) -> None:
    sizes = [int(np.prod([int(d) for d in b.shape])) for b in func.buffer_map.values()]
    inputs = [sum(sizes[:i]) for i in range(len(sizes) - 1)]
    kernel = tvmscript.build(func, target=target, cache=False, fp_contract=False)
    # the output starts inside the last input (and at its end: no overlap)
    for shift in (0, 1, 7, 64, sizes[-2] // 2, sizes[-2]):
        offsets = [*inputs, inputs[-1] + shift]
        want = one_storage(func, offsets, np.random.default_rng(shift))
        run_reference(func, want)  # once per shift: the znver3 and znver4 runs share it
        got = one_storage(func, offsets, np.random.default_rng(shift))
        kernel(*got)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(_bits(g), _bits(w))
