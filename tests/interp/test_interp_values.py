"""Scalar/vector semantics of the interpreter, directly and through small kernels."""

from __future__ import annotations

import math

import numpy as np
import pytest
from interp_helpers import buf, func, store

from backend.interp import interpret
from backend.interp import values as V
from backend.interp.intrinsics import call_extern_math, call_intrinsic
from irbuilder.ir import (
    Call,
    CallKind,
    Cast,
    Div,
    FloorDiv,
    FloorMod,
    Mod,
    PrimExpr,
    Var,
    as_dtype,
    const,
)

I8 = as_dtype("int8")
I32 = as_dtype("int32")
U8 = as_dtype("uint8")
F32 = as_dtype("float32")
F16 = as_dtype("float16")
BOOL = as_dtype("bool")

OPERANDS = [(a, b) for a in (-7, -6, -1, 0, 1, 6, 7) for b in (-3, -2, -1, 1, 2, 3)]


def _run_scalar(expr_of: object, dtype: str, *scalars: int | float) -> object:
    """Evaluate ``expr_of(*params)`` in a kernel storing to a 1-element buffer."""
    params = [Var(f"p{i}", as_dtype(dtype)) for i in range(len(scalars))]
    expr: PrimExpr = expr_of(*params)  # type: ignore[operator]
    out = buf("out", (1,), str(expr.dtype))
    f = func([*params, out], store(out, [0], expr))
    result = np.zeros(1, dtype=as_dtype(str(expr.dtype)).numpy_dtype)
    interpret(f, [*scalars, result])
    return result[0]


@pytest.mark.parametrize(("a", "b"), OPERANDS)
def test_floor_division_matches_python(a: int, b: int) -> None:
    assert V.binary("floordiv", a, b, I32) == a // b
    assert V.binary("floormod", a, b, I32) == a % b


@pytest.mark.parametrize(("a", "b"), OPERANDS)
def test_truncating_division_matches_c(a: int, b: int) -> None:
    assert V.binary("div", a, b, I32) == int(a / b)
    assert V.binary("mod", a, b, I32) == int(math.fmod(a, b))


def test_division_nodes_in_a_kernel() -> None:
    table = {Div: int(-7 / 2), Mod: int(math.fmod(-7, 2)), FloorDiv: -7 // 2, FloorMod: -7 % 2}
    for node, expected in table.items():
        got = _run_scalar(lambda a, b, n=node: n(a, b), "int32", -7, 2)
        assert got == expected, node.__name__


@pytest.mark.parametrize("op", ["div", "mod", "floordiv", "floormod"])
def test_integer_division_by_zero_raises(op: str) -> None:
    with pytest.raises(ZeroDivisionError):
        V.binary(op, 5, 0, I32)


def test_division_by_zero_in_kernel_raises() -> None:
    with pytest.raises(ZeroDivisionError):
        _run_scalar(lambda a, b: FloorDiv(a, b), "int32", 3, 0)


def test_int_min_divided_by_minus_one_raises_overflow() -> None:
    low = -(2**31)
    for op in ("div", "floordiv"):
        with pytest.raises(OverflowError, match="-2147483648 divided by -1 does not fit int32"):
            V.binary(op, low, -1, I32)
        assert V.binary(op, low + 1, -1, I32) == 2**31 - 1
    assert V.binary("mod", low, -1, I32) == 0
    assert V.binary("floormod", low, -1, I32) == 0


def test_float_division_by_zero_is_ieee() -> None:
    assert V.binary("div", np.float32(1), np.float32(0), F32) == np.inf
    assert math.isnan(V.binary("floormod", np.float32(1), np.float32(0), F32))


def test_int8_wraps_around() -> None:
    assert V.binary("add", 127, 1, I8) == -128
    assert V.binary("mul", 100, 3, I8) == 44
    assert V.binary("sub", 0, 1, U8) == 255
    got = _run_scalar(lambda a: a + const(1, "int8"), "int8", 127)
    assert got == -128


def test_float32_arithmetic_is_single_precision() -> None:
    third = V.binary("div", np.float32(1), np.float32(3), F32)
    assert isinstance(third, np.float32)
    assert third == np.float32(1) / np.float32(3)
    big = V.binary("add", np.float32(16777216), np.float32(1), F32)
    assert big == np.float32(16777216)  # 2**24 + 1 rounds back in float32


def test_float16_arithmetic_rounds_to_half() -> None:
    got = V.binary("add", np.float16(2048), np.float16(1), F16)
    assert isinstance(got, np.float16)
    assert got == np.float16(2048)


def test_nan_comparisons_are_ieee() -> None:
    nan = np.float32("nan")
    assert V.binary("eq", nan, nan, F32) == 0
    assert V.binary("ne", nan, nan, F32) == 1
    assert V.binary("lt", nan, np.float32(1), F32) == 0


def test_min_max_select_semantics_with_nan() -> None:
    nan, one = np.float32("nan"), np.float32(1)
    assert V.binary("min", nan, one, F32) == one
    assert math.isnan(V.binary("min", one, nan, F32))
    assert V.binary("max", nan, one, F32) == one


@pytest.mark.parametrize(
    ("value", "dtype", "expected"),
    [
        (1e10, "int32", 2**31 - 1),
        (-1e10, "int32", -(2**31)),
        (float("nan"), "int32", 0),
        (float("inf"), "int8", 127),
        (-3.9, "int32", -3),
        (3.9, "int32", 3),
        (-5.0, "uint8", 0),
        (300.0, "uint8", 255),
        (1e30, "int64", 2**63 - 1),
    ],
)
def test_float_to_int_casts_saturate(value: float, dtype: str, expected: int) -> None:
    assert V.cast(np.float32(value), F32, as_dtype(dtype)) == expected


def test_saturating_cast_in_kernel() -> None:
    got = _run_scalar(lambda x: Cast(as_dtype("int8"), x), "float32", 1000.0)
    assert got == 127


def test_int_casts_wrap_and_bool_casts_test_nonzero() -> None:
    assert V.cast(300, I32, U8) == 44
    assert V.cast(-1, I32, as_dtype("uint32")) == 2**32 - 1
    assert V.cast(256, I32, BOOL) == 1
    assert V.cast(0, I32, BOOL) == 0
    assert V.cast(np.float32("nan"), F32, BOOL) == 1
    assert V.cast(1, BOOL, F32) == np.float32(1)


def test_int64_to_float32_rounds_once() -> None:
    # 2**60 + 2**36 + 1 is just above the float32 midpoint between 2**60 and 2**60 + 2**37;
    # rounding through float64 first would land exactly on the midpoint and round to even.
    value = 2**60 + 2**36 + 1
    got = V.cast(value, as_dtype("int64"), F32)
    assert got == np.float32(2**60 + 2**37)


def test_shifts_and_out_of_range_amounts() -> None:
    assert V.binary("shift_left", 1, 3, I8) == 8
    assert V.binary("shift_left", 1, 7, I8) == -128
    assert V.binary("shift_right", -16, 2, I8) == -4
    assert V.binary("shift_right", 240, 2, U8) == 60
    assert V.binary("shift_left", 1, 8, I8) == 0
    assert V.binary("shift_right", -5, 9, I8) == -1
    assert V.binary("shift_right", 5, 9, I8) == 0
    assert V.binary("shift_right", 200, -1, U8) == 0


def test_bitwise_ops_wrap() -> None:
    assert V.binary("bitwise_and", -1, 0x0F, I8) == 0x0F
    assert V.binary("bitwise_xor", 0x7F, -1, I8) == -128
    assert call_intrinsic("bitwise_not", [0], [U8], U8) == 255
    assert call_intrinsic("popcount", [-1], [I32], I32) == 32
    assert call_intrinsic("clz", [1], [I32], I32) == 31


@pytest.mark.parametrize(
    ("x", "expected"), [(0.5, 0.0), (-0.5, -0.0), (1.5, 2.0), (2.5, 2.0), (0.49999997, 0.0)]
)
def test_round_is_half_to_even_like_numpy(x: float, expected: float) -> None:
    got = call_intrinsic("round", [np.float32(x)], [F32], F32)
    assert got == np.float32(expected) == np.round(np.float32(x))
    assert isinstance(got, np.float32)


@pytest.mark.parametrize(("x", "expected"), [(0.5, 1.0), (-0.5, -1.0), (2.5, 3.0)])
def test_libm_round_extern_is_half_away_from_zero(x: float, expected: float) -> None:
    got = call_intrinsic("round_half_away", [np.float32(x)], [F32], F32)
    assert got == np.float32(expected)


def test_math_intrinsics_keep_precision() -> None:
    x = np.float32(0.3)
    for name in ("exp", "log", "sqrt", "sin", "tanh", "sigmoid", "erf", "rsqrt"):
        got = call_intrinsic(name, [x], [F32], F32)
        assert isinstance(got, np.float32), name
    assert call_intrinsic("exp", [x], [F32], F32) == np.float32(math.exp(float(x)))
    # float32 math is computed in float64 and rounded once: the same bits on every host
    # (numpy's float32 exp(20) is an ulp high on AVX-512 hosts: 485165216)
    assert call_intrinsic("exp", [np.float32(20)], [F32], F32) == np.float32(485165184)
    assert call_intrinsic("sin", [np.float32(1e4)], [F32], F32) == np.float32(math.sin(1e4))
    assert call_intrinsic("erf", [x], [F32], F32) == np.float32(math.erf(float(x)))
    assert call_intrinsic("isnan", [np.float32("nan")], [F32], BOOL) == 1
    assert call_intrinsic("isinf", [np.float32("-inf")], [F32], BOOL) == 1
    assert call_intrinsic("abs", [-(2**31)], [I32], I32) == -(2**31)
    assert call_intrinsic("pow", [np.float32(2), np.float32(10)], [F32, F32], F32) == 1024


def test_unknown_intrinsic_raises() -> None:
    with pytest.raises(NotImplementedError, match="frobnicate"):
        call_intrinsic("frobnicate", [np.float32(1)], [F32], F32)


def test_vector_ops_are_lanewise() -> None:
    f4 = as_dtype("float32x4")
    a = np.array([1, 2, 3, 4], dtype=np.float32)
    b = np.array([4, 3, 2, 1], dtype=np.float32)
    np.testing.assert_array_equal(V.binary("mul", a, b, f4), a * b)
    lt = V.binary("lt", a, b, f4)
    assert lt.dtype == np.bool_
    np.testing.assert_array_equal(lt, [True, True, False, False])
    np.testing.assert_array_equal(
        V.cast(np.array([1.5, -1.5, 1e9, np.nan], dtype=np.float32), f4, as_dtype("int8x4")),
        [1, -1, 127, 0],
    )


def test_reinterpret_bit_casts() -> None:
    bits = V.reinterpret(np.float32(1.0), F32, I32)
    assert bits == 0x3F800000
    back = V.reinterpret(0x3F800000, I32, F32)
    assert back == np.float32(1.0)
    got = _run_scalar(
        lambda x: Call(as_dtype("int32"), "reinterpret", (x,), CallKind.BUILTIN), "float32", -2.0
    )
    assert got == np.array([-2.0], dtype=np.float32).view(np.int32)[0]


def test_extern_libm_calls() -> None:
    got = call_extern_math("expf", [np.float32(1)], [F32], F32)
    assert isinstance(got, np.float32) and got == np.float32(math.e)
    got64 = call_extern_math("sqrt", [np.float64(2)], [as_dtype("float64")], as_dtype("float64"))
    assert got64 == math.sqrt(2)
    assert call_extern_math("fminf", [np.float32("nan"), np.float32(2)], [F32, F32], F32) == 2


@pytest.mark.parametrize(
    ("a", "b"), [(-7.5, 2.0), (7.5, -2.0), (-1e-8, 1.0), (5.0, 2.5), (1.0, 0.1)]
)
def test_float_floormod_follows_python(a: float, b: float) -> None:
    got = V.binary("floormod", np.float64(a), np.float64(b), as_dtype("float64"))
    assert got == a % b
    assert V.binary("floordiv", np.float64(a), np.float64(b), as_dtype("float64")) == math.floor(
        a / b
    )
