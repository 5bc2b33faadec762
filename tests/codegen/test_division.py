"""Integer/float division semantics: floor vs truncation, zero divisors, INT_MIN / -1."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from cgkit import build, elementwise, rand

from irbuilder.ir import Div, FloorDiv, FloorMod, IntImm, Mod, PrimExpr, as_dtype

N = 64


def _trunc_div(a: np.ndarray, b: np.ndarray) -> Any:
    q = np.abs(a.astype(np.int64)) // np.abs(b.astype(np.int64))
    return (np.sign(a) * np.sign(b) * q).astype(a.dtype)


def _reference(op: str, a: np.ndarray, b: np.ndarray) -> Any:
    if a.dtype.kind == "f":
        return {
            "floordiv": np.floor(a / b),
            "floormod": np.remainder(a, b),
            "div": a / b,
            "mod": np.fmod(a, b),
        }[op].astype(a.dtype)
    if op == "floordiv":
        return np.floor_divide(a, b)
    if op == "floormod":
        return np.remainder(a, b)
    if op == "div":
        return _trunc_div(a, b)
    return np.fmod(a, b)


_OPS = {"floordiv": FloorDiv, "floormod": FloorMod, "div": Div, "mod": Mod}


@pytest.mark.parametrize(
    "dtype", ["int8", "int16", "int32", "int64", "uint8", "uint32", "uint64", "float32", "float64"]
)
@pytest.mark.parametrize("op", sorted(_OPS))
def test_division_matches_numpy(dtype: str, op: str) -> None:
    rng = np.random.default_rng(10)
    node = _OPS[op]
    f = elementwise("k", dtype, [dtype, dtype], N, lambda a, b: node(a, b))
    lib = build(f)
    a = rand(dtype, N, rng, low=-100, high=100)
    b = rand(dtype, N, rng, low=-9, high=9, nonzero=True)
    out = np.zeros(N, dtype)
    assert lib["k"](a, b, out) == 0
    expected = _reference(op, a, b)
    if np.dtype(dtype).kind == "f":
        np.testing.assert_allclose(out, expected, rtol=1e-6, atol=1e-6)
    else:
        np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("dtype", ["int8", "int32", "int64"])
@pytest.mark.parametrize("divisor", [1, 2, 8, 7, -3, -8, 64])
@pytest.mark.parametrize("op", sorted(_OPS))
def test_constant_divisor_fast_paths(dtype: str, divisor: int, op: str) -> None:
    node = _OPS[op]
    dt = as_dtype(dtype)

    def fn(a: PrimExpr) -> PrimExpr:
        return node(a, IntImm(dt, divisor))

    f = elementwise("k", dtype, [dtype], N, fn)
    lib = build(f)
    a = np.arange(-N // 2, N // 2).astype(dtype)
    out = np.zeros(N, dtype)
    lib["k"](a, out)
    np.testing.assert_array_equal(out, _reference(op, a, np.full(N, divisor, dtype)))
    if divisor in (8, 64) and op in ("floordiv", "floormod"):
        assert "sdiv" not in lib.ir and "srem" not in lib.ir  # shift / mask fast path


@pytest.mark.parametrize("dtype", ["int8", "int32", "int64", "uint32"])
@pytest.mark.parametrize("op", sorted(_OPS))
def test_integer_division_by_zero_raises(dtype: str, op: str) -> None:
    node = _OPS[op]
    f = elementwise("k", dtype, [dtype, dtype], 4, lambda a, b: node(a, b))
    lib = build(f)
    a = np.array([1, 2, 3, 4], dtype)
    b = np.array([1, 1, 0, 1], dtype)
    out = np.zeros(4, dtype)
    with pytest.raises(ZeroDivisionError, match="by zero"):
        lib["k"](a, b, out)
    b[2] = 1
    assert lib["k"](a, b, out) == 0  # the kernel stays usable after an error


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64"])
def test_int_min_divided_by_minus_one_raises_overflow(dtype: str) -> None:
    f = elementwise("k", dtype, [dtype, dtype], 4, lambda a, b: FloorDiv(a, b))
    g = elementwise("g", dtype, [dtype, dtype], 4, lambda a, b: FloorMod(a, b))
    h = elementwise("h", dtype, [dtype, dtype], 4, lambda a, b: Div(a, b))
    m = elementwise("m", dtype, [dtype, dtype], 4, lambda a, b: Mod(a, b))
    lib = build([f, g, h, m])
    lo = np.iinfo(dtype).min
    a = np.array([lo, lo, 7, -7], dtype)
    b = np.array([-1, 1, -1, -1], dtype)
    out = np.zeros(4, dtype)
    for name in ("k", "h"):
        with pytest.raises(OverflowError, match=f"{lo} divided by -1 does not fit {dtype}"):
            lib[name](a, b, out)
        b[0] = 2  # every other quotient, -1 divisors included, is exact
        lib[name](a, b, out)
        want = np.array([lo // 2, lo, -7, 7], dtype)
        np.testing.assert_array_equal(out, want)
        b[0] = -1
    for name in ("g", "m"):  # the remainder of INT_MIN / -1 is 0 and fits
        lib[name](a, b, out)
        np.testing.assert_array_equal(out, np.zeros(4, dtype))


def test_int_min_divided_by_minus_one_in_vector_lanes_raises() -> None:
    import tvmscript
    from tvmscript import tir as T

    @T.prim_func
    def k(A: T.Buffer((16,), "int32"), B: T.Buffer((16,), "int32"), C: T.Buffer((16,), "int32")):
        for io in range(2):
            for ii in T.vectorized(8):
                C[io * 8 + ii] = A[io * 8 + ii] // B[io * 8 + ii]

    kernel = tvmscript.build(k)
    assert "<8 x i32>" in kernel.get_source("ll")
    a = np.arange(16, dtype=np.int32) - 8
    b = np.full(16, -1, np.int32)
    out = np.zeros(16, np.int32)
    kernel(a, b, out)
    np.testing.assert_array_equal(out, -a)
    a[11] = np.iinfo(np.int32).min
    with pytest.raises(OverflowError, match="does not fit int32"):
        kernel(a, b, out)


def test_constant_minus_one_divisor_raises_only_for_int_min() -> None:
    f = elementwise(
        "k", "int32", ["int32"], 2, lambda a: FloorDiv(a, IntImm(as_dtype("int32"), -1))
    )
    lib = build(f)
    out = np.zeros(2, np.int32)
    lib["k"](np.array([-(2**31) + 1, 5], np.int32), out)
    np.testing.assert_array_equal(out, [2**31 - 1, -5])
    with pytest.raises(OverflowError, match="integer division overflow"):
        lib["k"](np.array([-(2**31), 5], np.int32), out)


def test_constant_int_min_over_minus_one_is_not_folded() -> None:
    # A constant INT_MIN // -1 reaches lowering's constant folder, which must keep it.
    lo, minus_one = IntImm(as_dtype("int32"), -(2**31)), IntImm(as_dtype("int32"), -1)
    f = elementwise("k", "int32", ["int32"], 2, lambda a: a + FloorDiv(lo, minus_one))
    lib = build(f)
    with pytest.raises(OverflowError, match="integer division overflow"):
        lib["k"](np.zeros(2, np.int32), np.zeros(2, np.int32))
