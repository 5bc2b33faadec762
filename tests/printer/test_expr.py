"""Expression printing: precedence, constants, folding guards, calls."""

from __future__ import annotations

import pytest

from irbuilder.ir import (
    EQ,
    GE,
    GT,
    LE,
    LT,
    NE,
    Add,
    And,
    Broadcast,
    Call,
    CallKind,
    Cast,
    Div,
    FloatImm,
    FloorDiv,
    FloorMod,
    IntImm,
    Let,
    Max,
    Min,
    Mod,
    Mul,
    Not,
    Or,
    PrimExpr,
    Ramp,
    Select,
    Shuffle,
    StringImm,
    Sub,
    Var,
    as_dtype,
    assert_structural_equal,
    const,
)
from tvmscript.printer import script

from .mini_eval import evaluate

a, b, c = Var("a"), Var("b"), Var("c")
x, y = Var("x", as_dtype("float32")), Var("y", as_dtype("float32"))
p, q = Var("p", as_dtype("bool")), Var("q", as_dtype("bool"))
n64 = Var("n", as_dtype("int64"))
NAMES = {"a": a, "b": b, "c": c, "x": x, "y": y, "p": p, "q": q, "n": n64}


def i32(v: int) -> IntImm:
    return IntImm(as_dtype("int32"), v)


def roundtrip(expr: PrimExpr) -> str:
    """Print, evaluate back with Python semantics, require the same structure."""
    text = script(expr)
    assert_structural_equal(evaluate(text, NAMES), expr)
    return text


PRECEDENCE = [
    (Add(a, Mul(b, c)), "a + b * c"),
    (Mul(Add(a, b), c), "(a + b) * c"),
    (Mul(a, Add(b, c)), "a * (b + c)"),
    (Sub(Sub(a, b), c), "a - b - c"),
    (Sub(a, Sub(b, c)), "a - (b - c)"),
    (Sub(a, Add(b, c)), "a - (b + c)"),
    (Add(a, Add(b, c)), "a + (b + c)"),
    (Add(Add(a, b), c), "a + b + c"),
    (FloorDiv(a, Mul(b, c)), "a // (b * c)"),
    (Mul(FloorDiv(a, b), c), "a // b * c"),
    (FloorMod(Add(a, b), c), "(a + b) % c"),
    (FloorDiv(FloorMod(a, b), c), "a % b // c"),
    (Div(x, Mul(y, x)), "x / (y * x)"),
    (Mul(Div(x, y), x), "x / y * x"),
    (LT(Add(a, b), c), "a + b < c"),
    (EQ(LT(a, b), p), "(a < b) == p"),
    (NE(p, GE(a, b)), "p != (a >= b)"),
    (And(LT(a, b), GT(b, c)), "a < b and b > c"),
    (Or(And(p, q), p), "p and q or p"),
    (And(Or(p, q), p), "(p or q) and p"),
    (And(p, Or(q, p)), "p and (q or p)"),
    (And(p, And(q, p)), "p and (q and p)"),
    (Not(And(p, q)), "not (p and q)"),
    (Not(LE(a, b)), "not a <= b"),
    (And(Not(p), q), "not p and q"),
    (EQ(Not(p), q), "(not p) == q"),
    (Mul(Min(a, b), c), "T.min(a, b) * c"),
    (Add(Mod(a, b), Div(a, b)), "T.truncmod(a, b) + T.truncdiv(a, b)"),
    (Mul(a, i32(-1)), "a * -1"),
    (Sub(a, i32(-3)), "a - -3"),
    (Mul(i32(-2), a), "-2 * a"),
]


@pytest.mark.parametrize(("expr", "text"), PRECEDENCE, ids=[t for _, t in PRECEDENCE])
def test_precedence_minimal_parentheses(expr: PrimExpr, text: str) -> None:
    assert roundtrip(expr) == text


CONSTANTS = [
    (i32(3), "3"),
    (i32(-7), "-7"),
    (const(True), "True"),
    (const(False), "False"),
    (IntImm(as_dtype("int8"), -5), "T.int8(-5)"),
    (IntImm(as_dtype("int16"), 7), "T.int16(7)"),
    (IntImm(as_dtype("int64"), 2**40), "T.int64(1099511627776)"),
    (IntImm(as_dtype("uint8"), 255), "T.uint8(255)"),
    (IntImm(as_dtype("uint16"), 1), "T.uint16(1)"),
    (IntImm(as_dtype("uint32"), 9), "T.uint32(9)"),
    (IntImm(as_dtype("uint64"), 2**64 - 1), "T.uint64(18446744073709551615)"),
    (FloatImm(as_dtype("float16"), 0.5), "T.float16(0.5)"),
    (FloatImm(as_dtype("float32"), 1.5), "T.float32(1.5)"),
    (FloatImm(as_dtype("float32"), 2.0), "T.float32(2)"),
    (FloatImm(as_dtype("float32"), -0.0), "T.float32(-0.0)"),
    (FloatImm(as_dtype("float32"), 0.1), "T.float32(0.1)"),
    (FloatImm(as_dtype("float64"), 1e300), "T.float64(1e+300)"),
    (FloatImm(as_dtype("float64"), -2.0), "T.float64(-2)"),
    (FloatImm(as_dtype("float32"), float("inf")), 'T.float32("inf")'),
    (FloatImm(as_dtype("float32"), float("-inf")), 'T.float32("-inf")'),
    (FloatImm(as_dtype("float64"), float("nan")), 'T.float64("nan")'),
    (StringImm('say "hi"\n'), "'say \"hi\"\\n'"),
    (StringImm("plain"), '"plain"'),
]


@pytest.mark.parametrize(("expr", "text"), CONSTANTS, ids=[t for _, t in CONSTANTS])
def test_constants_of_every_type(expr: PrimExpr, text: str) -> None:
    assert script(expr) == text
    if not isinstance(expr, StringImm):
        assert_structural_equal(evaluate(text, NAMES), expr)


FOLDING = [
    (Add(i32(1), i32(2)), "T.Add(1, 2)"),
    (Sub(i32(1), i32(2)), "T.Sub(1, 2)"),
    (Mul(IntImm(as_dtype("int64"), 3), IntImm(as_dtype("int64"), 4)), "T.Mul(T.int64(3), T.int64(4))"),  # noqa: E501
    (FloorDiv(i32(7), i32(2)), "T.FloorDiv(7, 2)"),
    (FloorMod(i32(7), i32(2)), "T.FloorMod(7, 2)"),
    (Div(i32(7), i32(2)), "T.Div(7, 2)"),
    (Mod(i32(7), i32(2)), "T.Mod(7, 2)"),
    (Min(i32(1), i32(2)), "T.Min(1, 2)"),
    (Max(i32(1), i32(2)), "T.Max(1, 2)"),
    (LT(i32(1), i32(2)), "T.LT(1, 2)"),
    (EQ(i32(1), i32(2)), "T.EQ(1, 2)"),
    (And(const(True), const(False)), "T.And(True, False)"),
    (Or(const(True), const(False)), "T.Or(True, False)"),
    (Not(const(True)), "T.Not(True)"),
    (And(const(True), p), "T.And(True, p)"),  # `True and p` would parse as p
    (Or(p, const(False)), "T.Or(p, False)"),
    (Add(FloatImm(as_dtype("float32"), 1.0), FloatImm(as_dtype("float32"), 2.0)),
     "T.float32(1) + T.float32(2)"),  # floats do not fold
    (Mul(Add(i32(1), i32(2)), a), "T.Add(1, 2) * a"),
]  # fmt: skip


@pytest.mark.parametrize(("expr", "text"), FOLDING, ids=[t for _, t in FOLDING])
def test_constant_operands_print_without_folding(expr: PrimExpr, text: str) -> None:
    assert roundtrip(expr) == text


REFLECTION = [
    (LT(i32(0), a), "T.int32(0) < a"),
    (GE(i32(5), a), "T.int32(5) >= a"),
    (EQ(const(True), p), "T.bool(True) == p"),
    (NE(IntImm(as_dtype("int64"), 1), n64), "T.int64(1) != n"),
    (GT(a, i32(0)), "a > 0"),
]


@pytest.mark.parametrize(("expr", "text"), REFLECTION, ids=[t for _, t in REFLECTION])
def test_comparison_with_literal_left_operand_is_not_reflected(expr: PrimExpr, text: str) -> None:
    assert roundtrip(expr) == text


def test_dtype_kept_through_promotion() -> None:
    one64 = IntImm(as_dtype("int64"), 1)
    assert roundtrip(Add(n64, one64)) == "n + T.int64(1)"
    assert roundtrip(Add(Cast(as_dtype("int64"), a), one64)) == 'T.Cast("int64", a) + T.int64(1)'
    assert roundtrip(Mul(x, FloatImm(as_dtype("float32"), 0.5))) == "x * T.float32(0.5)"


OTHER = [
    (Cast(as_dtype("float32"), a), 'T.Cast("float32", a)'),
    (Select(p, a, b), "T.Select(p, a, b)"),
    (Select(LT(a, b), x, y), "T.Select(a < b, x, y)"),
    (Ramp(a, i32(2), 4), "T.Ramp(a, 2, 4)"),
    (Broadcast(x, 8), "T.Broadcast(x, 8)"),
    (Shuffle((Ramp(a, i32(1), 4), Ramp(b, i32(1), 4)), (0, 5)), "T.Shuffle([T.Ramp(a, 1, 4), T.Ramp(b, 1, 4)], [0, 5])"),  # noqa: E501
    (Call(as_dtype("float32"), "exp", (x,)), "T.exp(x)"),
    (Call(as_dtype("float32"), "pow", (x, y)), "T.pow(x, y)"),
    (Call(as_dtype("bool"), "isnan", (x,)), "T.isnan(x)"),
    (Call(as_dtype("int32"), "bitwise_and", (a, b)), "T.bitwise_and(a, b)"),
    (Call(as_dtype("float32"), "exp", (a,)), 'T.call_intrin("float32", "exp", a)'),
    (Call(as_dtype("float32"), "weird", (x, i32(1))), 'T.call_intrin("float32", "weird", x, 1)'),
    (Call(as_dtype("bool"), "likely", (LT(a, b),), CallKind.BUILTIN), "T.likely(a < b)"),
    (Call(as_dtype("float32"), "if_then_else", (p, x, y), CallKind.BUILTIN), "T.if_then_else(p, x, y)"),  # noqa: E501
    (Call(as_dtype("int32"), "reinterpret", (x,), CallKind.BUILTIN), 'T.reinterpret("int32", x)'),
    (Call(as_dtype("float32"), "sinf", (x,), CallKind.EXTERN), 'T.call_extern("float32", "sinf", x)'),  # noqa: E501
    (Call(as_dtype("float32"), "cosf", (x,), CallKind.PURE_EXTERN), 'T.call_pure_extern("float32", "cosf", x)'),  # noqa: E501
    (Call(as_dtype("int32"), "f", (), CallKind.EXTERN), 'T.call_extern("int32", "f")'),
]  # fmt: skip


@pytest.mark.parametrize(("expr", "text"), OTHER, ids=[t for _, t in OTHER])
def test_other_expressions(expr: PrimExpr, text: str) -> None:
    assert roundtrip(expr) == text


def test_let_expression_declares_nothing_outside_a_function() -> None:
    v = Var("v")
    expr = Let(v, Add(a, i32(1)), Mul(v, v))
    assert script(expr) == "T.Let(v * v, where={v: a + 1})"
    assert_structural_equal(evaluate(script(expr), {**NAMES, "v": v}), expr)


def test_unknown_object_is_rejected_with_its_type() -> None:
    with pytest.raises(TypeError, match="cannot print dict as TVMScript"):
        script({})
