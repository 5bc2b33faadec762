"""Vector loads at data-dependent indices (``T[Idx[Ramp]]``) are hardware gathers
(``llvm.masked.gather``) on AVX-512 targets and per-lane loads elsewhere; strided Ramps stay
per-lane loads everywhere. Both forms load the same elements: bit-identical results."""

from __future__ import annotations

import numpy as np
import pytest
from pinned import AVX2, AVX512, lower_for, needs_host_features

import tvmscript
from backend.codegen import CodegenOptions, generate
from irbuilder.ir import PrimFunc
from lowering.target import Target
from tvmscript import tir as T

N = 3 << 21  # 24 MiB of output, 48 MiB with the index: vectorize_streams makes the loop an
# explicit vector gather


@T.prim_func
def gather(Tb: T.Buffer((4096,), "float32"), Idx: T.Buffer((N,), "int32"),
           Out: T.Buffer((N,), "float32")):
    for i in range(N):
        Out[i] = Tb[Idx[i]]


@T.prim_func
def gather32(Tb: T.Buffer((4096,), "float32"), Idx: T.Buffer((300,), "int32"),
             Out: T.Buffer((300,), "float32")):
    for i in T.vectorized(300):
        Out[i] = Tb[Idx[i]]


@T.prim_func
def gather64(Tb: T.Buffer((1000,), "float64"), Idx: T.Buffer((200,), "int64"),
             Out: T.Buffer((200,), "float64")):
    for i in T.vectorized(200):
        Out[i] = Tb[Idx[i]] * T.float64(2)


@T.prim_func
def gather_int(Tb: T.Buffer((300,), "int32"), Idx: T.Buffer((64,), "int32"),
               Out: T.Buffer((64,), "int32")):
    for i in T.vectorized(64):
        Out[i] = Tb[Idx[i] + 7] + Tb[Idx[i]]


@T.prim_func
def strided(A: T.Buffer((256,), "float32"), Out: T.Buffer((64,), "float32")):
    for i in T.vectorized(64):
        Out[i] = A[i * 4]


def _ir(func: PrimFunc, target: Target) -> str:
    return generate([lower_for(func, target)], CodegenOptions(target=target)).text


@pytest.mark.parametrize("func", [gather, gather32, gather64, gather_int],
                         ids=["stream", "f32", "f64", "i32"])
def test_gathers_are_hardware_gathers_on_avx512_only(func: PrimFunc) -> None:
    assert "@llvm.masked.gather" in _ir(func, AVX512)
    assert "@llvm.masked.gather" not in _ir(func, AVX2)


def test_strided_loads_stay_per_lane() -> None:
    assert "@llvm.masked.gather" not in _ir(strided, AVX512)


def _inputs(func: PrimFunc, rng: np.random.Generator) -> list[np.ndarray]:
    table, index, out = func.buffer_map.values()
    size, count = int(table.shape[0]), int(index.shape[0])
    t = rng.standard_normal(size) * 100 if table.dtype.is_float else rng.integers(-99, 99, size)
    return [
        t.astype(str(table.dtype)),
        rng.integers(0, size - 7, count).astype(str(index.dtype)),
        np.zeros(count, str(out.dtype)),
    ]


@pytest.mark.parametrize("target", [
    pytest.param(AVX2, id="avx2", marks=needs_host_features(AVX2)),
    pytest.param(AVX512, id="avx512", marks=needs_host_features(AVX512)),
])
@pytest.mark.parametrize("func", [gather32, gather64, gather_int, strided],
                         ids=["f32", "f64", "i32", "strided"])
def test_bit_identical_to_the_interpreter(func: PrimFunc, target: Target) -> None:
    kernel = tvmscript.build(func, target=target, cache=False)
    reference = tvmscript.build(func, target="interp")
    for seed in range(2):
        rng = np.random.default_rng(seed)
        if func is strided:
            args = [rng.standard_normal(256).astype("float32"), np.zeros(64, "float32")]
        else:
            args = _inputs(func, rng)
        want = [a.copy() for a in args]
        reference(*want)
        for _ in range(3):  # the gather kernel runs in parallel chunks: several runs
            got = [a.copy() for a in args]
            kernel(*got)
            np.testing.assert_array_equal(got[-1], want[-1])


@pytest.mark.parametrize("target", [
    pytest.param(AVX2, id="avx2", marks=needs_host_features(AVX2)),
    pytest.param(AVX512, id="avx512", marks=needs_host_features(AVX512)),
])
def test_streamed_gather_copies_the_table_elements(target: Target) -> None:
    # 4M elements: numpy's fancy indexing is the reference (a gather copies bits)
    kernel = tvmscript.build(gather, target=target, cache=False)
    rng = np.random.default_rng(5)
    table = rng.standard_normal(4096).astype("float32")
    index = rng.integers(0, 4096, N).astype("int32")
    for offset in (0, 3):  # the output on and off a cache-line boundary
        storage = np.zeros(N + offset, "float32")
        out = storage[offset:]
        for _ in range(2):
            out[:] = 0
            kernel(table, index, out)
            np.testing.assert_array_equal(out, table[index])
