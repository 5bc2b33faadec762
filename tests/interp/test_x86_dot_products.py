"""x86's integer dot-product intrinsics as TVM's tensorized int8 kernels call them
(``T.call_llvm_pure_intrin`` on operands reinterpreted as ``int32x16``): the interpreter
gives each instruction's definition (checked against numpy on the bytes), and the native
build agrees where the host has the instructions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tvmscript
from tvmscript import tir as T


def _host_flags() -> set[str]:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    for line in text.splitlines():
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    return set()


_FLAGS = _host_flags()
_VNNI = pytest.mark.skipif(not {"avx512f", "avx512bw", "avx512_vnni"} <= _FLAGS,
                           reason="the host lacks AVX-512 VNNI (target icelake-server)")
_TARGET = "llvm -mcpu=icelake-server"


@T.prim_func
def vpdpbusd(A: T.Buffer((64,), "uint8"), B: T.Buffer((64,), "int8"), C: T.Buffer((16,), "int32")):
    C[0:16] = T.call_llvm_pure_intrin(
        "int32x16", "llvm.x86.avx512.vpdpbusd.512", T.uint32(3), C[0:16],
        T.reinterpret("int32x16", A[0:64]), T.reinterpret("int32x16", B[0:64]))


@T.prim_func
def vpdpbusds(A: T.Buffer((64,), "uint8"), B: T.Buffer((64,), "int8"), C: T.Buffer((16,), "int32")):
    C[0:16] = T.call_llvm_pure_intrin(
        "int32x16", "llvm.x86.avx512.vpdpbusds.512", T.uint32(3), C[0:16],
        T.reinterpret("int32x16", A[0:64]), T.reinterpret("int32x16", B[0:64]))


@T.prim_func
def vpdpwssd(A: T.Buffer((32,), "int16"), B: T.Buffer((32,), "int16"), C: T.Buffer((16,), "int32")):
    C[0:16] = T.call_llvm_pure_intrin(
        "int32x16", "llvm.x86.avx512.vpdpwssd.512", T.uint32(3), C[0:16],
        T.reinterpret("int32x16", A[0:32]), T.reinterpret("int32x16", B[0:32]))


@T.prim_func
def pmaddubsw(A: T.Buffer((64,), "uint8"), B: T.Buffer((64,), "int8"), C: T.Buffer((32,), "int16")):
    C[0:32] = T.call_llvm_pure_intrin("int16x32", "llvm.x86.avx512.pmaddubs.w.512",
                                      T.uint32(2), A[0:64], B[0:64])


def _operands(rng: np.random.Generator, kind: str) -> list[np.ndarray[Any, Any]]:
    if kind == "vpdpwssd":
        a = rng.integers(-(2**15), 2**15, 32).astype(np.int16)
        b = rng.integers(-(2**15), 2**15, 32).astype(np.int16)
        a[:2] = b[:2] = -(2**15)
        c = rng.integers(-(2**31), 2**31, 16).astype(np.int32)
        return [a, b, c]
    a = rng.integers(0, 256, 64).astype(np.uint8)
    b = rng.integers(-128, 128, 64).astype(np.int8)
    a[:8], b[:8] = 255, -128  # sums at the saturation edges
    if kind == "pmaddubsw":
        return [a, b, np.zeros(32, np.int16)]
    c = rng.integers(-(2**31), 2**31, 16).astype(np.int32)
    c[0], c[1] = 2**31 - 1, -(2**31)
    return [a, b, c]


def _expected(kind: str, a: Any, b: Any, c: Any) -> np.ndarray[Any, Any]:
    products = a.astype(np.int64) * b.astype(np.int64)
    if kind == "pmaddubsw":
        return np.clip(products.reshape(32, 2).sum(1), -(2**15), 2**15 - 1).astype(np.int16)
    group = 2 if kind == "vpdpwssd" else 4
    total = c.astype(np.int64) + products.reshape(16, group).sum(1)
    if kind == "vpdpbusds":
        return np.clip(total, -(2**31), 2**31 - 1).astype(np.int32)
    return ((total + 2**31) % 2**32 - 2**31).astype(np.int32)


_KERNELS = {"vpdpbusd": vpdpbusd, "vpdpbusds": vpdpbusds, "vpdpwssd": vpdpwssd,
            "pmaddubsw": pmaddubsw}


@pytest.mark.parametrize("kind", sorted(_KERNELS))
def test_interpreter_follows_the_instruction(kind: str) -> None:
    rng = np.random.default_rng(len(kind))
    a, b, c = _operands(rng, kind)
    want = _expected(kind, a, b, c)
    tvmscript.build(_KERNELS[kind], target="interp")(a, b, c)
    np.testing.assert_array_equal(c, want)


@_VNNI
@pytest.mark.parametrize("kind", sorted(_KERNELS))
def test_native_agrees(kind: str) -> None:
    rng = np.random.default_rng(7 + len(kind))
    a, b, c = _operands(rng, kind)
    want = _expected(kind, a, b, c)
    tvmscript.build(_KERNELS[kind], target=_TARGET, cache=False)(a, b, c)
    np.testing.assert_array_equal(c, want)


def test_operands_of_another_width_are_refused() -> None:
    @T.prim_func
    def narrow(A: T.Buffer((32,), "uint8"), B: T.Buffer((64,), "int8"),
               C: T.Buffer((16,), "int32")):
        C[0:16] = T.call_llvm_pure_intrin(
            "int32x16", "llvm.x86.avx512.vpdpbusd.512", T.uint32(3), C[0:16],
            T.reinterpret("int32x8", A[0:32]), T.reinterpret("int32x16", B[0:64]))

    with pytest.raises(TypeError, match="as wide as"):
        tvmscript.build(narrow, target="interp")(
            np.zeros(32, np.uint8), np.zeros(64, np.int8), np.zeros(16, np.int32))
