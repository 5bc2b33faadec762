"""Tests of lowering.arith: folding, canonical linear forms and interval bounds."""

from __future__ import annotations

import math

import numpy as np
import pytest

from irbuilder.ir import (
    EQ,
    LT,
    Add,
    Cast,
    Div,
    FloatImm,
    FloorDiv,
    FloorMod,
    IntImm,
    Max,
    Min,
    Mod,
    Mul,
    Not,
    Select,
    SizeVar,
    Sub,
    Var,
    as_dtype,
    structural_equal,
)
from lowering.arith import (
    Analyzer,
    IntBound,
    fold_cast,
    fold_node,
    from_linear,
    to_linear,
    wrap_int,
)

I32 = as_dtype("int32")
I8 = as_dtype("int8")
U8 = as_dtype("uint8")
F32 = as_dtype("float32")
F64 = as_dtype("float64")
BOOL = as_dtype("bool")


def i32(v: int) -> IntImm:
    return IntImm(I32, v)


def f32(v: float) -> FloatImm:
    return FloatImm(F32, v)


# -- folding ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cls", "a", "b", "expected"),
    [
        (Add, 2**31 - 1, 1, -(2**31)),  # wraps
        (Mul, 65536, 65536, 0),
        (Sub, -(2**31), 1, 2**31 - 1),
        (Div, -7, 2, -3),  # truncates toward zero
        (Mod, -7, 2, -1),
        (FloorDiv, -7, 2, -4),  # floors
        (FloorMod, -7, 2, 1),
        (FloorMod, 7, -2, -1),
        (Min, 3, -4, -4),
        (Max, 3, -4, 3),
    ],
)
def test_fold_int32(cls: type, a: int, b: int, expected: int) -> None:
    folded = fold_node(cls(i32(a), i32(b)))
    assert isinstance(folded, IntImm) and folded.dtype == I32
    assert folded.value == expected


@pytest.mark.parametrize("cls", [Div, Mod, FloorDiv, FloorMod])
def test_division_by_zero_is_never_folded(cls: type) -> None:
    assert fold_node(cls(i32(5), i32(0))) is None
    assert fold_node(Div(f32(1.0), f32(0.0))) is None


def test_fold_int8_and_uint8_wrap() -> None:
    folded = fold_node(Add(IntImm(I8, 100), IntImm(I8, 100)))
    assert isinstance(folded, IntImm) and folded.value == -56
    folded = fold_node(Sub(IntImm(U8, 1), IntImm(U8, 2)))
    assert isinstance(folded, IntImm) and folded.value == 255


def test_fold_float32_rounds_like_float32() -> None:
    folded = fold_node(Add(f32(0.1), f32(0.2)))
    assert isinstance(folded, FloatImm)
    assert folded.value == float(np.float32(0.1) + np.float32(0.2))
    assert folded.value != 0.1 + 0.2
    folded64 = fold_node(Add(FloatImm(F64, 0.1), FloatImm(F64, 0.2)))
    assert isinstance(folded64, FloatImm) and folded64.value == 0.1 + 0.2


def test_fold_float_overflow_gives_inf_and_nan_min_is_kept() -> None:
    folded = fold_node(Mul(f32(3e38), f32(10.0)))
    assert isinstance(folded, FloatImm) and math.isinf(folded.value)
    assert fold_node(Min(f32(float("nan")), f32(1.0))) is None


def test_fold_comparisons_and_logic() -> None:
    lt = fold_node(LT(i32(1), i32(2)))
    assert isinstance(lt, IntImm) and lt.dtype == BOOL and lt.value == 1
    nan_eq = fold_node(EQ(f32(float("nan")), f32(float("nan"))))
    assert isinstance(nan_eq, IntImm) and nan_eq.value == 0
    neg = fold_node(Not(IntImm(BOOL, 1)))
    assert isinstance(neg, IntImm) and neg.value == 0
    sel = fold_node(Select(IntImm(BOOL, 0), i32(1), i32(2)))
    assert isinstance(sel, IntImm) and sel.value == 2


def test_fold_casts() -> None:
    c = fold_cast(I8, i32(300))
    assert isinstance(c, IntImm) and c.value == 44
    c = fold_cast(I32, f32(-3.7))
    assert isinstance(c, IntImm) and c.value == -3  # truncation
    assert fold_cast(I8, f32(1000.0)) is None  # out of range: poison, not folded
    assert fold_cast(I32, f32(float("nan"))) is None
    c = fold_cast(F32, i32(16777217))
    assert isinstance(c, FloatImm) and c.value == 16777216.0
    c = fold_cast(BOOL, f32(0.5))
    assert isinstance(c, IntImm) and c.value == 1
    folded = fold_node(Cast(F32, FloatImm(F64, 0.1)))
    assert isinstance(folded, FloatImm) and folded.value == float(np.float32(0.1))


def test_wrap_int() -> None:
    assert wrap_int(2**31, I32) == -(2**31)
    assert wrap_int(-1, U8) == 255
    assert wrap_int(5, BOOL) == 1


# -- canonical forms ----------------------------------------------------------


def test_linear_form_merges_terms_and_orders_by_first_appearance() -> None:
    i, j = Var("i"), Var("j")
    form = to_linear(i * 16 + j + 4 - 4)
    assert [(a is i, c) for a, c in form.live_terms()] == [(True, 16), (False, 1)]
    assert form.const == 0
    assert structural_equal(from_linear(form), Add(Mul(i, i32(16)), j))


def test_from_linear_negative_terms() -> None:
    i, j = Var("i"), Var("j")
    assert structural_equal(from_linear(to_linear(5 - i)), Sub(i32(5), i))
    assert structural_equal(from_linear(to_linear(j - i * 2)), Sub(j, Mul(i, i32(2))))
    assert structural_equal(from_linear(to_linear(i - 3)), Sub(i, i32(3)))


def test_linear_form_merges_structurally_equal_atoms() -> None:
    i, j = Var("i"), Var("j")
    form = to_linear(Mul(i, j) * 2 - Mul(i, j))
    assert len(form.live_terms()) == 1 and form.live_terms()[0][1] == 1


def test_linear_form_rejects_floats() -> None:
    with pytest.raises(TypeError, match="float32"):
        to_linear(Var("x", F32))


# -- bounds -------------------------------------------------------------------


def test_bounds_of_index_expressions() -> None:
    i, j = Var("i"), Var("j")
    an = Analyzer()
    an.bind(i, IntBound(0, 15))
    an.bind(j, IntBound(0, 15))
    assert an.const_int_bound(i * 16 + j) == IntBound(0, 255)
    assert an.const_int_bound(FloorMod(i - 20, i32(8))) == IntBound(0, 7)
    assert an.const_int_bound(FloorDiv(i * 16 + j, i32(16))) == IntBound(0, 15)
    assert an.const_int_bound(Min(i, j - 3)) == IntBound(-3, 12)
    assert an.const_int_bound(SizeVar("n")) == IntBound(0, 2**31 - 1)


def test_bound_that_may_overflow_is_the_full_range() -> None:
    i = Var("i")
    an = Analyzer()
    an.bind(i, IntBound(0, 2**30))
    assert an.const_int_bound(i * 4) == IntBound.of_dtype(I32)


def test_constraints_tighten_var_bounds() -> None:
    i, n = Var("i"), Var("n")
    an = Analyzer()
    # i + 1 < 10 says nothing about an unbounded i: i + 1 may wrap around
    an.add_constraint(LT(i + 1, i32(10)))
    assert an.const_int_bound(i) == IntBound.of_dtype(I32)
    an.add_constraint(i < 100)
    an.add_constraint(LT(i + 1, i32(10)))
    an.add_constraint(i >= 2)
    assert an.const_int_bound(i) == IntBound(2, 8)
    with an.scope():
        an.add_constraint(EQ(n, i32(4)))
        assert an.const_int_bound(n) == IntBound(4, 4)
    assert an.const_int_bound(n) == IntBound.of_dtype(I32)


def test_prove_uses_cancellation() -> None:
    i = Var("i")
    an = Analyzer()
    an.bind(i, IntBound(0, 100))
    assert an.can_prove(i < i + 1)
    assert an.prove(i * 2 + 1 == i * 2) is False
    assert an.prove(i < 50) is None
