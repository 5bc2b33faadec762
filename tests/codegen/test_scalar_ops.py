"""Scalar arithmetic, casts and comparisons on every dtype, compiled and compared with numpy."""

from __future__ import annotations

import re

import numpy as np
import pytest
from cgkit import build, elementwise, rand

from irbuilder.ir import (
    EQ,
    GE,
    GT,
    LE,
    LT,
    NE,
    Add,
    And,
    Cast,
    Max,
    Min,
    Mul,
    Not,
    Or,
    Select,
    Sub,
    as_dtype,
)

N = 64
NUMERIC = [
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float16",
    "float32",
    "float64",
]
ALL = ["bool", *NUMERIC]


@pytest.mark.parametrize("dtype", NUMERIC)
def test_add_sub_mul(dtype: str) -> None:
    rng = np.random.default_rng(0)
    f = elementwise("k", dtype, [dtype, dtype], N, lambda a, b: Sub(Add(Mul(a, b), a), b))
    lib = build(f, fp_contract=False)  # no FMA: each operation rounds, as in numpy
    a, b = rand(dtype, N, rng), rand(dtype, N, rng)
    out = np.zeros(N, dtype)
    with np.errstate(over="ignore"):
        expected = a * b + a - b  # integer overflow wraps, as in the kernel
    assert lib["k"](a, b, out) == 0
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_multiply_add_contracts_to_fma_by_default(dtype: str) -> None:
    rng = np.random.default_rng(1)
    f = elementwise("k", dtype, [dtype, dtype, dtype], N, lambda a, b, c: Add(Mul(a, b), c))
    lib = build(f)
    assert re.search(r"fmul contract ", lib.ir) and re.search(r"fadd contract ", lib.ir)
    assert "fmul contract" not in build(f, fp_contract=False).ir
    # Inputs where a * b + c cancels: the fused result (one rounding) is exact here.
    a = rand(dtype, N, rng)
    b = rand(dtype, N, rng)
    c = -(a * b)  # the product rounded: a*b + c is exactly the product's rounding error
    out = np.zeros(N, dtype)
    assert lib["k"](a, b, c, out) == 0
    wide = np.longdouble
    exact = (a.astype(wide) * b.astype(wide) + c.astype(wide)).astype(dtype)
    if dtype == "float32":  # float64 holds the float32 product exactly
        np.testing.assert_array_equal(out, exact)
    assert np.count_nonzero(out) > 0  # separate rounding would give all zeros


@pytest.mark.parametrize("dtype", NUMERIC)
def test_min_max(dtype: str) -> None:
    rng = np.random.default_rng(1)
    f = elementwise("k", dtype, [dtype, dtype], N, lambda a, b: Add(Min(a, b), Max(a, b)))
    lib = build(f)
    a, b = rand(dtype, N, rng, high=50), rand(dtype, N, rng, high=50)
    out = np.zeros(N, dtype)
    lib["k"](a, b, out)
    np.testing.assert_array_equal(out, np.minimum(a, b) + np.maximum(a, b))


@pytest.mark.parametrize("src", ALL)
@pytest.mark.parametrize("dst", ALL)
def test_cast(src: str, dst: str) -> None:
    rng = np.random.default_rng(2)
    f = elementwise("k", dst, [src], N, lambda a: Cast(as_dtype(dst), a))
    lib = build(f)
    # Values every type represents exactly (floats integral so float->int is defined).
    a = rand(src, N, rng, low=0 if dst.startswith("u") else -100, high=100)
    if np.dtype(src).kind == "f":
        a = np.round(a)
    out = np.zeros(N, dst)
    lib["k"](a, out)
    np.testing.assert_array_equal(out, a.astype(dst))


def test_signed_unsigned_conversions_use_the_right_extension() -> None:
    f = elementwise("k", "int64", ["int8"], 4, lambda a: Cast(as_dtype("int64"), a))
    g = elementwise("g", "int64", ["uint8"], 4, lambda a: Cast(as_dtype("int64"), a))
    h = elementwise("h", "float32", ["uint32"], 4, lambda a: Cast(as_dtype("float32"), a))
    lib = build([f, g, h])
    out = np.zeros(4, np.int64)
    lib["k"](np.array([-1, -128, 127, 0], np.int8), out)
    np.testing.assert_array_equal(out, [-1, -128, 127, 0])
    lib["g"](np.array([255, 128, 1, 0], np.uint8), out)
    np.testing.assert_array_equal(out, [255, 128, 1, 0])
    fout = np.zeros(4, np.float32)
    lib["h"](np.array([4_000_000_000, 1, 2**31, 0], np.uint32), fout)
    np.testing.assert_array_equal(fout, np.array([4_000_000_000, 1, 2**31, 0], np.float32))


_CMPS = {
    "lt": (LT, np.less),
    "le": (LE, np.less_equal),
    "gt": (GT, np.greater),
    "ge": (GE, np.greater_equal),
    "eq": (EQ, np.equal),
    "ne": (NE, np.not_equal),
}


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("op", sorted(_CMPS))
def test_compare(dtype: str, op: str) -> None:
    node, ref = _CMPS[op]
    rng = np.random.default_rng(3)
    f = elementwise("k", "bool", [dtype, dtype], N, lambda a, b: node(a, b))
    lib = build(f)
    a, b = rand(dtype, N, rng, low=-5, high=5), rand(dtype, N, rng, low=-5, high=5)
    if np.dtype(dtype).kind == "u":
        # Values above the signed range: a signed compare would get these wrong.
        a[::3] = np.iinfo(dtype).max - a[::3]
    if np.dtype(dtype).kind == "f":
        a[1] = np.nan
    out = np.zeros(N, bool)
    lib["k"](a, b, out)
    np.testing.assert_array_equal(out, ref(a, b))


def test_logical_and_select() -> None:
    rng = np.random.default_rng(4)
    f = elementwise(
        "k",
        "int32",
        ["bool", "bool", "int32", "int32"],
        N,
        lambda p, q, a, b: Select(Or(And(p, Not(q)), Not(p)), a, b),
    )
    lib = build(f)
    p, q = rand("bool", N, rng), rand("bool", N, rng)
    a, b = rand("int32", N, rng), rand("int32", N, rng)
    out = np.zeros(N, np.int32)
    lib["k"](p, q, a, b, out)
    np.testing.assert_array_equal(out, np.where((p & ~q) | ~p, a, b))


def test_float16_is_computed_in_float32_and_rounded() -> None:
    f = elementwise("k", "float16", ["float16", "float16"], 8, lambda a, b: Mul(a, b))
    lib = build(f)
    a = np.linspace(-3, 3, 8).astype(np.float16)
    b = np.linspace(1, 7, 8).astype(np.float16)
    out = np.zeros(8, np.float16)
    lib["k"](a, b, out)
    np.testing.assert_array_equal(out, a * b)
    assert "half" in lib.ir and "fpext half" in lib.ir
