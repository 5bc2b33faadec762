"""Constant folding of one node whose operands are constants, with exact TIR semantics.

Integer results wrap to the dtype's width; ``Div``/``Mod`` truncate toward zero,
``FloorDiv``/``FloorMod`` round toward minus infinity. A division by zero is never
folded (the error, or the undefined result, belongs to run time). Float results are
computed in the dtype's precision (numpy ``float16``/``float32``, Python ``float``
for ``float64``) so that folding matches what the compiled code computes; float
division by zero, float ``%``/``//`` and NaN-sensitive ``min``/``max`` are left alone.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from irbuilder.ir import (
    BINARY_OP_NAMES,
    EQ,
    GE,
    GT,
    INT_BINARY_OPS,
    LE,
    LT,
    NE,
    Add,
    And,
    BinaryOp,
    Cast,
    DataType,
    Div,
    FloatImm,
    IntImm,
    Max,
    Min,
    Mul,
    Not,
    Or,
    PrimExpr,
    Select,
    Sub,
    as_dtype,
    int_binary,
    wrap_int,
)

__all__ = ["const_value", "fold_binary", "fold_cast", "fold_node", "make_const", "wrap_int"]

_BOOL = as_dtype("bool")


def const_value(expr: PrimExpr) -> int | float | None:
    """The Python value of an ``IntImm``/``FloatImm``, else ``None``."""
    if isinstance(expr, IntImm):
        return expr.value
    if isinstance(expr, FloatImm):
        return expr.value
    return None


def _round_float(value: float, dtype: DataType) -> float:
    if dtype.bits == 64:
        return float(value)
    with np.errstate(all="ignore"):
        return float(dtype.numpy_dtype.type(value))


def make_const(value: int | float, dtype: DataType) -> PrimExpr:
    """A scalar constant of ``dtype``: integers wrap, floats round to the dtype."""
    if dtype.is_float:
        return FloatImm(dtype, _round_float(float(value), dtype))
    return IntImm(dtype, wrap_int(int(value), dtype))


def _fold_int(cls: type[BinaryOp], x: int, y: int, dtype: DataType) -> PrimExpr | None:
    op = BINARY_OP_NAMES.get(cls)
    if op is None or op not in INT_BINARY_OPS:
        return None
    if dtype.is_bool and cls not in (And, Or, Min, Max):
        return None
    result = int_binary(op, x, y, dtype)
    return None if result is None else IntImm(dtype, result)


def _fold_float(cls: type[BinaryOp], x: float, y: float, dtype: DataType) -> PrimExpr | None:
    if dtype.bits == 64:
        a: Any = float(x)
        b: Any = float(y)
    else:
        a = dtype.numpy_dtype.type(x)
        b = dtype.numpy_dtype.type(y)
    with np.errstate(all="ignore"):
        if cls is Add:
            result = a + b
        elif cls is Sub:
            result = a - b
        elif cls is Mul:
            result = a * b
        elif cls is Div:
            if float(b) == 0.0:
                return None
            result = a / b
        elif cls in (Min, Max):
            if math.isnan(float(a)) or math.isnan(float(b)):
                return None  # NaN semantics of min/max depend on the code generator
            result = min(a, b) if cls is Min else max(a, b)
        else:
            return None
    return FloatImm(dtype, _round_float(float(result), dtype))


def _compare(cls: type[BinaryOp], a: float, b: float) -> bool | None:
    if cls is EQ:
        return a == b
    if cls is NE:
        return a != b
    if cls is LT:
        return a < b
    if cls is LE:
        return a <= b
    if cls is GT:
        return a > b
    if cls is GE:
        return a >= b
    return None


def fold_binary(node: BinaryOp, a: PrimExpr, b: PrimExpr) -> PrimExpr | None:
    """The constant value of ``type(node)(a, b)`` when both are scalar constants."""
    x, y = const_value(a), const_value(b)
    if x is None or y is None or a.dtype != b.dtype:
        return None
    cls = type(node)
    if a.dtype.is_float and a.dtype.bits != 64:
        x = float(a.dtype.numpy_dtype.type(x))
        y = float(a.dtype.numpy_dtype.type(y))
    compared = _compare(cls, x, y)
    if compared is not None:
        return IntImm(_BOOL, 1 if compared else 0)
    if isinstance(x, int) and isinstance(y, int):
        return _fold_int(cls, x, y, a.dtype)
    return _fold_float(cls, float(x), float(y), a.dtype)


def fold_cast(target: DataType, value: PrimExpr) -> PrimExpr | None:
    """The constant ``Cast(target, value)`` for a scalar constant ``value``, if defined."""
    source = const_value(value)
    if source is None or target.is_vector or target.is_handle:
        return None
    if target.is_bool:
        return IntImm(_BOOL, 1 if source != 0 else 0)
    if isinstance(source, int):
        if target.is_integer:
            return IntImm(target, wrap_int(source, target))
        if abs(source) > 2**53:
            return None  # a double rounding through Python floats could differ
        return make_const(float(source), target)
    if target.is_float:
        return make_const(source, target)
    # float -> integer truncates toward zero; out of range or NaN is poison in LLVM
    if not math.isfinite(source):
        return None
    truncated = math.trunc(source)
    if not target.min_value <= truncated <= target.max_value:
        return None
    return IntImm(target, truncated)


def fold_node(expr: PrimExpr) -> PrimExpr | None:
    """Fold ``expr`` itself when its operands are constants (binary, Not, Cast, Select)."""
    if isinstance(expr, BinaryOp):
        return fold_binary(expr, expr.a, expr.b)
    if isinstance(expr, Not) and isinstance(expr.a, IntImm):
        return IntImm(_BOOL, 0 if expr.a.value else 1)
    if isinstance(expr, Cast):
        return fold_cast(expr.dtype, expr.value)
    if isinstance(expr, Select) and isinstance(expr.condition, IntImm):
        return expr.true_value if expr.condition.value else expr.false_value
    return None
