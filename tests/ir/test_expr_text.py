"""The shared message text of expressions (irbuilder.ir.expr_text)."""

import pytest

from irbuilder.ir import (
    EQ,
    LT,
    Add,
    And,
    Buffer,
    BufferLoad,
    Call,
    CallKind,
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
    PrimExpr,
    Ramp,
    StringImm,
    Sub,
    Var,
    as_dtype,
    expr_text,
    make_data_var,
    strip_parens,
)

I32, I64, F32 = as_dtype("int32"), as_dtype("int64"), as_dtype("float32")
n, i = Var("n", I32), Var("i", I32)
x = Var("x", F32)
A = Buffer("A", make_data_var("A", F32), (IntImm(I32, 16),), F32)


def c(value: int) -> IntImm:
    return IntImm(I32, value)


@pytest.mark.parametrize(
    "expr,text",
    [
        (n, "n"),
        (c(-3), "-3"),
        (FloatImm(F32, 0.5), "0.5"),
        (StringImm("s"), "'s'"),
        (Add(n, c(1)), "(n + 1)"),
        (Sub(Mul(n, c(2)), i), "((n * 2) - i)"),
        (FloorDiv(n, c(2)), "(n // 2)"),
        (FloorMod(i, c(4)), "(i % 4)"),
        (Div(n, c(2)), "T.truncdiv(n, 2)"),
        (Mod(n, c(2)), "T.truncmod(n, 2)"),
        (Div(x, FloatImm(F32, 2.0)), "(x / 2.0)"),
        (Min(n, c(8)), "T.min(n, 8)"),
        (Max(n, c(8)), "T.max(n, 8)"),
        (LT(i, n), "(i < n)"),
        (And(LT(i, n), EQ(n, c(4))), "((i < n) and (n == 4))"),
        (Not(LT(i, n)), "(not (i < n))"),
        (Cast(I64, n), "T.Cast('int64', n)"),
        (BufferLoad(A, (Add(i, c(1)),)), "A[(i + 1)]"),
        (Ramp(Add(i, c(1)), c(1), 4), "T.Ramp(i + 1, 1, 4)"),
        (Call(I32, "abs", (n,), CallKind.PURE_EXTERN), "T.abs(n)"),
    ],
)
def test_expr_text_samples(expr: PrimExpr, text: str) -> None:
    assert expr_text(expr) == text


def test_casts_hidden_for_shape_text() -> None:
    assert expr_text(Mul(Cast(I64, n), IntImm(I64, 4)), casts=False) == "(n * 4)"


def test_names_rename_loads_by_data_var() -> None:
    assert expr_text(BufferLoad(A, (i,)), {A.data: "A_logical"}) == "A_logical[i]"


def test_long_text_is_cut_at_the_limit() -> None:
    expr = Call(I32, "f", tuple(Add(i, c(k)) for k in range(40)), CallKind.PURE_EXTERN)
    text = expr_text(expr)
    assert len(text) == 120 and text.endswith("...")
    assert len(expr_text(expr, limit=None)) > 120
    assert expr_text(expr, limit=10) == expr_text(expr)[:7] + "..."


def test_deep_nesting_is_elided() -> None:
    expr: PrimExpr = i
    for _ in range(20):
        expr = Not(EQ(expr, expr)) if expr.dtype.is_bool else Add(expr, c(1))
    assert "..." in expr_text(expr, limit=None)


def test_strip_parens_only_when_they_wrap_the_whole_text() -> None:
    assert strip_parens("(i + 1)") == "i + 1"
    assert strip_parens("(i + 1) * (j + 1)") == "(i + 1) * (j + 1)"
    assert strip_parens("n") == "n"
