"""Narrow integer products in register tiles, two reduction steps per ``pmaddwd``
(``lowering/late/pair_products.py``): int8 / uint8 / int16 operands accumulated in int32
give numpy's numbers exactly (odd and symbolic step counts, extremes of each type), on
every x86 width (SSE2, AVX2, AVX-512); operands that do not fit 16-bit lanes keep the
one-step tile; the intrinsic runs in the interpreter and by name in a user's kernel."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from late_kit import AVX2, AVX512, agrees_with_interpreter, pinned_targets, runs_avx2

import tvmscript
from lowering.target import Target
from tvmscript import tir as T

SSE2 = Target("llvm -mcpu=x86-64")
"""A baseline x86-64 machine: 128-bit vectors, ``pmaddwd`` of 4 lanes."""


def _targets() -> list[Any]:
    return [
        pytest.param(SSE2, "llvm.x86.sse2.pmadd.wd", id="x86-64"),
        pytest.param(AVX2, "llvm.x86.avx2.pmadd.wd", id="znver3", marks=runs_avx2),
        pytest.param(AVX512, "llvm.x86.avx512.pmaddw.d.512", id="znver4",
                     marks=pytest.mark.skipif(bool(AVX512.missing_on_host()),
                                              reason="the host lacks AVX-512 (target znver4)")),
    ]


@T.prim_func
def dense_int8(A: T.Buffer((32, 96), "int8"), B: T.Buffer((64, 96), "int8"),
               C: T.Buffer((32, 64), "int32")):
    for i, j, k in T.grid(32, 64, 96):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = 0
            C[vi, vj] = C[vi, vj] + T.Cast("int32", A[vi, vk]) * T.Cast("int32", B[vj, vk])


@T.prim_func
def matmul_u8_i8_odd(A: T.Buffer((16, 37), "uint8"), B: T.Buffer((37, 64), "int8"),
                     C: T.Buffer((16, 64), "int32")):
    for i in T.parallel(16):
        for j in range(64):
            C[i, j] = 0
            for k in range(37):
                C[i, j] = C[i, j] + T.Cast("int32", B[k, j]) * T.Cast("int32", A[i, k])


@T.prim_func
def matmul_i16(A: T.Buffer((8, 20), "int16"), B: T.Buffer((20, 32), "int16"),
               C: T.Buffer((8, 32), "int32")):
    for i, j in T.grid(8, 32):
        C[i, j] = 0
        for k in range(20):
            C[i, j] = C[i, j] + T.Cast("int32", A[i, k]) * T.Cast("int32", B[k, j])


@T.prim_func
def matmul_u16(A: T.Buffer((8, 20), "uint16"), B: T.Buffer((20, 32), "uint16"),
               C: T.Buffer((8, 32), "int32")):
    for i, j in T.grid(8, 32):
        C[i, j] = 0
        for k in range(20):
            C[i, j] = C[i, j] + T.Cast("int32", A[i, k]) * T.Cast("int32", B[k, j])


@T.prim_func
def matmul_symbolic(a: T.handle, b: T.handle, c: T.handle):
    m, n, kk = T.int32(), T.int32(), T.int32()
    A = T.match_buffer(a, (m, kk), "int8")
    B = T.match_buffer(b, (kk, n), "int8")
    C = T.match_buffer(c, (m, n), "int32")
    for i, j, k in T.grid(m, n, kk):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = 0
            C[vi, vj] = C[vi, vj] + T.Cast("int32", A[vi, vk]) * T.Cast("int32", B[vk, vj])


def _ints(rng: np.random.Generator, shape: tuple[int, ...], dtype: str) -> np.ndarray[Any, Any]:
    info = np.iinfo(dtype)
    values = rng.integers(int(info.min), int(info.max) + 1, shape, dtype=np.int64)
    flat = values.reshape(-1)
    flat[: flat.size // 8] = info.min  # the extremes, where 16-bit lanes could overflow
    flat[flat.size // 8: flat.size // 4] = info.max
    rng.shuffle(flat)
    return values.astype(dtype)


def _wrapped(product: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """int64 sums as int32 arithmetic leaves them (wrapping)."""
    return ((product + 2**31) % 2**32 - 2**31).astype(np.int32)


def _built(func: Any, target: Target) -> tuple[Any, str]:
    kernel = tvmscript.build(func, target=target, cache=False)
    return kernel, kernel.get_source("tir")


@pytest.mark.parametrize("target, intrinsic", _targets())
def test_dense_int8_pairs_steps_exactly(target: Target, intrinsic: str) -> None:
    kernel, tir = _built(dense_int8, target)
    assert intrinsic in tir
    assert "k_pair" in tir
    rng = np.random.default_rng(0)
    for _ in range(3):
        a, b = _ints(rng, (32, 96), "int8"), _ints(rng, (64, 96), "int8")
        c = np.full((32, 64), 7, np.int32)
        kernel(a, b, c)
        np.testing.assert_array_equal(c, a.astype(np.int64) @ b.astype(np.int64).T)


@pytest.mark.parametrize("target, intrinsic", _targets())
def test_mixed_signs_and_an_odd_step_count(target: Target, intrinsic: str) -> None:
    kernel, tir = _built(matmul_u8_i8_odd, target)
    assert intrinsic in tir
    rng = np.random.default_rng(1)
    a, b = _ints(rng, (16, 37), "uint8"), _ints(rng, (37, 64), "int8")
    c = np.zeros((16, 64), np.int32)
    kernel(a, b, c)
    np.testing.assert_array_equal(c, a.astype(np.int64) @ b.astype(np.int64))


@pytest.mark.parametrize("target, intrinsic", _targets())
def test_int16_extremes_wrap_as_int32_arithmetic(target: Target, intrinsic: str) -> None:
    kernel, tir = _built(matmul_i16, target)
    assert intrinsic in tir
    rng = np.random.default_rng(2)
    a, b = _ints(rng, (8, 20), "int16"), _ints(rng, (20, 32), "int16")
    a[0, :2] = b[:2, 0] = -32768  # a pair of (-2^15)^2: 2^31, one past int32
    c = np.zeros((8, 32), np.int32)
    kernel(a, b, c)
    np.testing.assert_array_equal(c, _wrapped(a.astype(np.int64) @ b.astype(np.int64)))
    interpreted = np.zeros((8, 32), np.int32)
    tvmscript.build(matmul_i16, target="interp")(a, b, interpreted)
    np.testing.assert_array_equal(c, interpreted)


@runs_avx2
def test_unsigned_16_bit_operands_keep_one_step_tiles() -> None:
    kernel, tir = _built(matmul_u16, AVX2)
    assert "pmadd" not in tir
    rng = np.random.default_rng(3)
    a, b = _ints(rng, (8, 20), "uint16"), _ints(rng, (20, 32), "uint16")
    c = np.zeros((8, 32), np.int32)
    kernel(a, b, c)
    np.testing.assert_array_equal(c, _wrapped(a.astype(np.int64) @ b.astype(np.int64)))


@runs_avx2
@pytest.mark.parametrize("m, n, k", [(8, 32, 64), (8, 32, 33), (4, 16, 1), (3, 16, 10),
                                     (8, 48, 7)])
def test_symbolic_extents(m: int, n: int, k: int) -> None:
    kernel, tir = _built(matmul_symbolic, AVX2)
    assert "llvm.x86.avx2.pmadd.wd" in tir
    rng = np.random.default_rng(m * 1000 + n * 10 + k)
    a, b = _ints(rng, (m, k), "int8"), _ints(rng, (k, n), "int8")
    c = np.zeros((m, n), np.int32)
    kernel(a, b, c)
    np.testing.assert_array_equal(c, a.astype(np.int64) @ b.astype(np.int64))


@T.prim_func
def user_pmaddwd(A: T.Buffer((16,), "int16"), B: T.Buffer((16,), "int16"),
                 C: T.Buffer((8,), "int32")):
    C[0:8] = T.call_llvm_pure_intrin("int32x8", "llvm.x86.avx2.pmadd.wd", T.uint32(2),
                                     A[0:16], B[0:16])


@T.prim_func
def user_pmaddwd_512(A: T.Buffer((32,), "int16"), B: T.Buffer((32,), "int16"),
                     C: T.Buffer((16,), "int32")):
    C[0:16] = T.call_llvm_pure_intrin("int32x16", "llvm.x86.avx512.pmaddw.d.512",
                                      T.uint32(2), A[0:32], B[0:32])


def _pairs_expected(a: np.ndarray[Any, Any], b: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    products = a.astype(np.int64) * b.astype(np.int64)
    return _wrapped(products[0::2] + products[1::2])


@pytest.mark.parametrize("func, lanes, target", [
    pytest.param(user_pmaddwd, 8, AVX2, id="avx2", marks=runs_avx2),
    pytest.param(user_pmaddwd_512, 16, AVX512, id="avx512", marks=pytest.mark.skipif(
        bool(AVX512.missing_on_host()), reason="the host lacks AVX-512 (target znver4)")),
])
def test_a_target_intrinsic_named_by_the_user(func: Any, lanes: int, target: Target) -> None:
    # a target's intrinsic is named in full (no type suffix appended: ".512" is not one)
    rng = np.random.default_rng(4)
    a, b = _ints(rng, (2 * lanes,), "int16"), _ints(rng, (2 * lanes,), "int16")
    a[:2] = b[:2] = -32768
    want = _pairs_expected(a, b)
    for kernel in (tvmscript.build(func, target=target, cache=False),
                   tvmscript.build(func, target="interp")):
        c = np.zeros(lanes, np.int32)
        kernel(a, b, c)
        np.testing.assert_array_equal(c, want)


@pytest.mark.parametrize("func", [dense_int8, matmul_u8_i8_odd, matmul_i16],
                         ids=["dense_int8", "u8_i8_parallel", "i16"])
@pytest.mark.parametrize("target", pinned_targets())
def test_pair_tiles_agree_with_the_interpreter(func: Any, target: Target) -> None:
    # default threads (every core for the parallel loop), three runs on fresh copies
    def make() -> list[np.ndarray[Any, Any]]:
        rng = np.random.default_rng(9)
        return [_ints(rng, tuple(int(d) for d in b.shape), str(b.dtype))
                for b in func.buffer_map.values()]

    assert "pmadd" in tvmscript.build(func, target=target, cache=False).get_source("tir")
    agrees_with_interpreter(func, make, target)
