"""bfloat16 and the float8 types (TVM v0.16 spellings): parse, print, compare, and build as
TVM legalises them (uint16/uint8 storage, float32 arithmetic rounded after each operation;
numpy passes the bit patterns)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from surface_kit import round_trip

from irbuilder.ir import FloatImm, as_dtype
from lowering.cpu.legalize_bf16 import round_to_bfloat16
from lowering.cpu.legalize_fp8 import E4M3_FORMAT, E5M2_FORMAT
from lowering.cpu.support import UnsupportedConstructError
from lowering.target import Target
from tvmscript import build
from tvmscript import tir as T


def to_bf16(values: object) -> np.ndarray:
    bits = np.asarray(values, np.float32).view(np.uint32).astype(np.uint64)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)


def from_bf16(bits: np.ndarray) -> np.ndarray:
    return (bits.astype(np.uint32) << 16).view(np.float32)


def _same(got: list[float], want: list[float]) -> bool:
    return all((math.isnan(x) and math.isnan(y)) or x == y for x, y in zip(got, want))


def test_float8_conversions_are_tvms_bit_moves() -> None:
    # TVM's FP8 legalisation moves fields: no subnormals, NaN or infinity codes
    assert E4M3_FORMAT.decode(0x7F) == 480.0  # all ones: an ordinary number
    assert E4M3_FORMAT.decode(0x01) == 1.125 * 2.0**-7  # zero exponent widens as normal
    assert E4M3_FORMAT.decode(0x38) == 1.0 and E4M3_FORMAT.encode(1.0) == 0x38
    assert E4M3_FORMAT.encode(2.0**-8) == 0 and E4M3_FORMAT.encode(-(2.0**-8)) == 0
    assert E4M3_FORMAT.encode(1.0625) == 0x38 and E4M3_FORMAT.encode(1.1875) == 0x3A  # ties even
    assert E5M2_FORMAT.decode(0x7C) == 65536.0 and E5M2_FORMAT.decode(0x3C) == 1.0
    assert E5M2_FORMAT.encode(-1.5) == 0xBE


@pytest.mark.parametrize("dtype", ["e4m3_float8", "e5m2_float8"])
def test_float8_every_code_widens_and_narrows_as_tvm_legalises(dtype: str) -> None:
    fmt = E4M3_FORMAT if dtype == "e4m3_float8" else E5M2_FORMAT
    func = round_trip(f"""
        @T.prim_func
        def f(A: T.Buffer((256,), "{dtype}"), B: T.Buffer((256,), "float32"),
              C: T.Buffer((256,), "{dtype}"), D: T.Buffer((256,), "{dtype}")):
            for i in range(256):
                B[i] = T.Cast("float32", A[i])
                C[i] = A[i] * T.{dtype}(1.5)
                D[i] = T.Cast("{dtype}", B[i] * T.float32(0.3))
        """)
    codes = np.arange(256, dtype=np.uint8)
    values = [fmt.decode(int(c)) for c in codes]
    want_c = [fmt.round_constant(float(np.float32(v) * np.float32(1.5))) for v in values]
    want_d = [fmt.round_constant(float(np.float32(v) * np.float32(0.3))) for v in values]
    for target in ("llvm", "interp"):
        b = np.zeros(256, np.float32)
        c, d = np.zeros(256, np.uint8), np.zeros(256, np.uint8)
        build(func, target=target)(codes, b, c, d)
        np.testing.assert_array_equal(b, np.array(values, np.float32))
        assert _same([fmt.decode(int(x)) for x in c], want_c)
        assert _same([fmt.decode(int(x)) for x in d], want_d)


def test_bfloat16_computes_in_float32_rounded_at_stores() -> None:
    # TVM's BF16ComputeLegalize: operations (casts to bfloat16 included) compute in float32
    # without rounding; a value is rounded to bfloat16 where it is stored into bfloat16 memory.
    func = round_trip("""
        @T.prim_func
        def f(A: T.Buffer((8,), "bfloat16"), B: T.Buffer((8,), "bfloat16"),
              C: T.Buffer((8,), "float32")):
            for i in range(8):
                B[i] = A[i] * A[i] + T.bfloat16(1.5)
                x: T.bfloat16 = T.bfloat16(C[i])
                C[i] = T.Cast("float32", B[i]) + T.Cast("float32", x)
        """)
    a = to_bf16([0.1, 1.0, 2.5, -3.3, 100.7, 1e-3, np.nan, -0.0])
    c0 = np.array([0.3, 1, 2, 3, 4, 5, 6, 1e30], np.float32)
    av = from_bf16(a)
    want_b = to_bf16(av * av + np.float32(1.5))
    want_c = from_bf16(want_b) + c0
    for target in ("llvm", "interp"):
        b, c = np.zeros(8, np.uint16), c0.copy()
        build(func, target=target)(a, b, c)
        assert b.tolist() == want_b.tolist()
        np.testing.assert_array_equal(c, want_c)
        assert np.isnan(from_bf16(b)[6])


def test_internal_bfloat16_buffer_is_promoted_to_float32() -> None:
    # A constant-size bfloat16 allocation of the kernel's own holds float32 values (TVM
    # promotes it); only the store into the output buffer rounds.
    func = round_trip("""
        @T.prim_func
        def f(A: T.Buffer((256,), "bfloat16"), B: T.Buffer((256,), "bfloat16")):
            tmp = T.alloc_buffer((256,), "bfloat16")
            for i in range(256):
                tmp[i] = A[i] * T.bfloat16(1.1)
            for i in range(256):
                B[i] = tmp[i] * T.bfloat16(3.0)
        """)
    a = np.arange(0x3F80, 0x4080, dtype=np.uint16)  # every bfloat16 in [1, 4)
    av = from_bf16(a)
    want = to_bf16(av * np.float32(1.1) * np.float32(3.0))
    rounded_between = to_bf16(from_bf16(to_bf16(av * np.float32(1.1))) * np.float32(3.0))
    assert (want != rounded_between).any()
    for target in ("llvm", "interp"):
        b = np.zeros(256, np.uint16)
        build(func, target=target)(a, b)
        assert b.tolist() == want.tolist()


def test_low_precision_dtype_facts() -> None:
    bf16 = as_dtype("bfloat16x8")
    assert bf16.is_float and bf16.is_low_precision_float and bf16.itemsize == 16
    assert str(bf16.numpy_dtype) == "uint16" and str(as_dtype("e4m3_float8").numpy_dtype) == "uint8"
    assert as_dtype("e4m3_float8").max_value == 448.0
    constant = T.bfloat16(2.5)
    assert isinstance(constant, FloatImm) and str(constant.dtype) == "bfloat16"
    with pytest.raises(ValueError, match="does not fit"):
        T.e4m3_float8(1000.0)
    assert round_to_bfloat16(1.0 + 2**-8) == 1.0 and round_to_bfloat16(1.0 + 3 * 2**-9) == 1.0078125


def test_bfloat16_vectors_and_scalar_params_are_refused() -> None:
    func = round_trip("""
        @T.prim_func
        def f(A: T.Buffer((8,), "bfloat16"), s: T.bfloat16):
            A[0] = s
        """)
    with pytest.raises(UnsupportedConstructError, match="bfloat16 scalar parameter \\('s'\\)"):
        build(func)


def test_scalable_vector_dtypes_parse_print_and_are_refused() -> None:
    scalable = as_dtype("float32xvscalex4")
    assert scalable.scalable and scalable.lanes == 4 and str(scalable) == "float32xvscalex4"
    assert scalable != as_dtype("float32x4") and scalable.element_of() == as_dtype("float32")
    func = round_trip("""
        @T.prim_func
        def f(A: T.Buffer((16,), "float32xvscalex4"), B: T.Buffer((16,), "float32")):
            for i in range(16):
                B[i] = T.Cast("float32", T.vscale() * 4)
        """)
    with pytest.raises(UnsupportedConstructError, match="scalable vector type float32xvscalex4"):
        build(func)


def test_bfloat16_return_value_is_a_python_float() -> None:
    func = round_trip("""
        @T.prim_func
        def f(A: T.Buffer((4,), "bfloat16")) -> T.bfloat16:
            return A[0] + A[1]
        """)
    a = to_bf16([1.0, 2.00390625, 0, 0])  # 2.00390625 rounds to 2.0 in bfloat16
    for target in ("llvm", "interp"):
        assert build(func, target=target)(a) == 3.0


def _float8_add(dtype: str, n: int) -> object:
    return round_trip(f"""
        @T.prim_func
        def add(A: T.Buffer(({n},), "{dtype}"), B: T.Buffer(({n},), "{dtype}"),
                C: T.Buffer(({n},), "{dtype}")):
            for i in range({n}):
                C[i] = A[i] + B[i]
        """)


@pytest.mark.parametrize("dtype", ["e4m3_float8", "e5m2_float8"])
def test_float8_sums_of_every_pair_of_codes_match_tvms_legalised_program(dtype: str) -> None:
    # what TVM's FP8ComputeLegalize + FP8StorageLegalize make of C = A + B (float32 promotion)
    fmt = E4M3_FORMAT if dtype == "e4m3_float8" else E5M2_FORMAT
    a = np.repeat(np.arange(256, dtype=np.uint8), 256)
    b = np.tile(np.arange(256, dtype=np.uint8), 256)
    widened = np.array([fmt.decode(c) for c in range(256)], np.float32)
    want = np.array([fmt.encode(float(v)) for v in widened[a] + widened[b]], np.uint8)
    if not Target("llvm -mcpu=znver3").missing_on_host():
        c = np.zeros(65536, np.uint8)
        build(_float8_add(dtype, 65536), target="llvm -mcpu=znver3")(a, b, c)
        np.testing.assert_array_equal(c, want)
    picked = np.arange(0, 65536, 32)  # the interpreter on a sample of the pairs
    c_ref = np.zeros(picked.size, np.uint8)
    build(_float8_add(dtype, picked.size), target="interp")(a[picked], b[picked], c_ref)
    np.testing.assert_array_equal(c_ref, want[picked])
