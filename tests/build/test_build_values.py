"""Values through build() vs numpy: every dtype, intrinsics, division semantics, vectors."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest
from kits import binary, buf, make, unary

import tvmscript
from irbuilder import tir as T
from irbuilder.ir import PrimExpr

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64"]
N = 37


def _data(dtype: str, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.integers(0, 2, N).astype(bool)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(info.min, info.max, N, dtype=dt, endpoint=True)
    return (rng.standard_normal(N) * 100).astype(dt)


def _check(got: np.ndarray, want: np.ndarray) -> None:
    if got.dtype.kind == "f":
        rtol = {2: 1e-3, 4: 1e-5, 8: 1e-12}[got.dtype.itemsize]
        np.testing.assert_allclose(got, want, rtol=rtol, atol=0)
    else:
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", [d for d in DTYPES if d != "bool"])
@pytest.mark.parametrize("op", ["add", "mul"])
def test_arithmetic_every_dtype(dtype: str, op: str) -> None:
    fn: Callable[[PrimExpr, PrimExpr], PrimExpr] = (
        (lambda x, y: x + y) if op == "add" else (lambda x, y: x * y))
    k = tvmscript.build(binary(f"{op}_{dtype}", N, dtype, dtype, fn))
    a, b = _data(dtype, 1), _data(dtype, 2)
    c = np.zeros(N, dtype)
    k(a, b, c)
    with np.errstate(over="ignore"):
        want = (a + b) if op == "add" else (a * b)
    _check(c, want.astype(dtype))


@pytest.mark.parametrize("src", DTYPES)
@pytest.mark.parametrize("dst", ["bool", "int8", "int32", "uint16", "int64", "float32",
                                 "float64"])
def test_casts(src: str, dst: str) -> None:
    a = _data(src, 3)
    if np.dtype(src).kind == "f" and np.dtype(dst).kind in "iu":
        a = np.clip(a, -100, 100).astype(src)  # in range: out-of-range casts saturate
        if np.dtype(dst).kind == "u":
            a = np.abs(a)
    k = tvmscript.build(unary(f"cast_{src}_{dst}", N, src, dst, lambda x: T.Cast(dst, x)))
    b = np.zeros(N, dst)
    k(a, b)
    if dst == "bool":
        want = a != 0
    else:
        with np.errstate(invalid="ignore", over="ignore"):
            want = a.astype(dst)
    _check(b, want)


_UNARY: dict[str, tuple[Callable[[PrimExpr], PrimExpr], Callable[[np.ndarray], np.ndarray],
                        tuple[float, float]]] = {
    "exp": (T.exp, np.exp, (-20, 20)),
    "exp2": (T.exp2, np.exp2, (-20, 20)),
    "log": (T.log, np.log, (0.01, 100)),
    "log2": (T.log2, np.log2, (0.01, 100)),
    "log10": (T.log10, np.log10, (0.01, 100)),
    "sqrt": (T.sqrt, np.sqrt, (0, 100)),
    "rsqrt": (T.rsqrt, lambda x: 1 / np.sqrt(x), (0.01, 100)),
    "sin": (T.sin, np.sin, (-10, 10)),
    "cos": (T.cos, np.cos, (-10, 10)),
    "tan": (T.tan, np.tan, (-1.2, 1.2)),
    "tanh": (T.tanh, np.tanh, (-10, 10)),
    "sigmoid": (T.sigmoid, lambda x: 1 / (1 + np.exp(-x)), (-10, 10)),
    "erf": (T.erf, np.vectorize(math.erf), (-3, 3)),
    "fabs": (T.fabs, np.abs, (-10, 10)),
    "floor": (T.floor, np.floor, (-10, 10)),
    "ceil": (T.ceil, np.ceil, (-10, 10)),
    "round": (T.round, np.round, (-10, 10)),
    "trunc": (T.trunc, np.trunc, (-10, 10)),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(_UNARY))
@pytest.mark.parametrize("lanes", [1, 8])
def test_math_intrinsics(name: str, dtype: str, lanes: int) -> None:
    fn, ref, (lo, hi) = _UNARY[name]
    n = 64

    def body() -> None:
        A, B = buf("A", (n,), dtype), buf("B", (n,), dtype)
        if lanes == 1:
            with T.serial(n) as i:
                T.buffer_store(B, fn(A[i]), [i])
        else:
            with T.serial(n // lanes) as o, T.vectorized(lanes) as v:
                T.buffer_store(B, fn(A[o * lanes + v]), [o * lanes + v])

    k = tvmscript.build(make(f"m_{name}_{lanes}", body))
    a = np.random.default_rng(0).uniform(lo, hi, n).astype(dtype)
    a[:4] = [lo, hi, (lo + hi) / 2, 0.5 if lo <= 0.5 <= hi else lo]
    b = np.zeros(n, dtype)
    k(a, b)
    want = ref(a.astype("float64"))
    rtol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(b, want.astype(dtype), rtol=rtol, atol=1e-6 if
                               dtype == "float32" else 1e-13)


def test_pow_isnan_isinf() -> None:
    k = tvmscript.build(binary("powk", 5, "float32", "float32", T.pow))
    a = np.array([2, 3, 0.5, 10, 1.5], "float32")
    b = np.array([3, -1, 2, 0.5, 7], "float32")
    c = np.zeros(5, "float32")
    k(a, b, c)
    np.testing.assert_allclose(c, a.astype("float64") ** b, rtol=1e-5)
    x = np.array([np.nan, np.inf, -np.inf, 1.0, 0.0], "float32")
    for name, fn, ref in (("nan", T.isnan, np.isnan), ("inf", T.isinf, np.isinf)):
        kk = tvmscript.build(unary(f"is{name}", 5, "float32", "bool", fn))
        out = np.zeros(5, bool)
        kk(x, out)
        np.testing.assert_array_equal(out, ref(x))


_DIV: dict[str, tuple[Callable[[PrimExpr, PrimExpr], PrimExpr],
                      Callable[[np.ndarray, np.ndarray], np.ndarray]]] = {
    "floordiv": (T.floordiv, lambda a, b: a // b),
    "floormod": (T.floormod, lambda a, b: a % b),
    "truncdiv": (T.truncdiv, lambda a, b: np.trunc(a / b).astype(a.dtype)),
    "truncmod": (T.truncmod, np.fmod),
}


@pytest.mark.parametrize("dtype", ["int8", "int32", "int64"])
@pytest.mark.parametrize("op", sorted(_DIV))
def test_division_on_negative_values(dtype: str, op: str) -> None:
    fn, ref = _DIV[op]
    vals = np.array([-7, 7, -8, 8, -1, 0, 1, 5, -5, 100, -100], dtype)
    a = np.repeat(vals, 8)
    b = np.tile(np.array([3, -3, 2, -2, 1, -1, 7, -7], dtype), len(vals))
    n = a.size
    k = tvmscript.build(binary(f"{op}_{dtype}", n, dtype, dtype, fn))
    c = np.zeros(n, dtype)
    k(a, b, c)
    want = ref(a.astype("int64"), b.astype("int64")).astype(dtype)
    np.testing.assert_array_equal(c, want)


def test_integer_division_by_zero_raises() -> None:
    k = tvmscript.build(binary("fdiv0", 4, "int32", "int32", T.floordiv))
    a = np.array([1, 2, 3, 4], "int32")
    b = np.array([1, 1, 0, 1], "int32")
    with pytest.raises(ZeroDivisionError):
        k(a, b, np.zeros(4, "int32"))


@pytest.mark.parametrize("lanes", [4, 8, 16])
@pytest.mark.parametrize("dtype", ["float32", "int32", "float64", "int8"])
def test_vector_lanes(lanes: int, dtype: str) -> None:
    n = lanes * 5

    def vec_loop() -> None:
        A, B = buf("A", (n,), dtype), buf("B", (n,), dtype)
        with T.serial(n // lanes) as o, T.vectorized(lanes) as v:
            x = o * lanes + v
            T.buffer_store(B, A[x] * T.Cast(dtype, 3) + T.Cast(dtype, 1), [x])

    def ramp() -> None:
        A, B = buf("A", (n,), dtype), buf("B", (n,), dtype)
        with T.serial(n // lanes) as o:
            idx = T.Ramp(o * lanes, 1, lanes)
            one = T.Broadcast(T.Cast(dtype, 1), lanes)
            three = T.Broadcast(T.Cast(dtype, 3), lanes)
            T.buffer_store(B, A[idx] * three + one, [idx])

    a = (np.arange(n) - n // 2).astype(dtype)
    with np.errstate(over="ignore"):
        want = (a * np.array(3, dtype) + np.array(1, dtype)).astype(dtype)
    for kind, body in (("vec", vec_loop), ("ramp", ramp)):
        k = tvmscript.build(make(f"{kind}_{dtype}_{lanes}", body))
        b = np.zeros(n, dtype)
        k(a, b)
        _check(b, want)
        if kind == "ramp":
            assert f"<{lanes} x" in k.get_source("ll")
