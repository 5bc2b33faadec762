"""Typed ``T.<intrinsic>`` functions: one per scripted entry of the intrinsic table.

The table (:mod:`irbuilder.ir.intrinsics`) declares each intrinsic once; these functions give
type checkers (mypy, pyright) a signature to check calls against, and each only forwards to
:func:`irbuilder.tir.intrin.intrinsic_call` with its table entry. ``tests/tvm_surface`` checks
that the names and arities here are exactly the table's. Every function accepts and ignores
a ``dtype=`` keyword, as TVM's ``_op_wrapper`` does; the docstrings are the table's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..ir import INTRINSICS, ExprLike, PrimExpr
from .intrin import intrinsic_call

__all__ = [
    "abs",
    "acos",
    "acosh",
    "asin",
    "asinh",
    "atan",
    "atan2",
    "atanh",
    "bitwise_and",
    "bitwise_not",
    "bitwise_or",
    "bitwise_xor",
    "ceil",
    "clz",
    "copysign",
    "cos",
    "cosh",
    "erf",
    "exp",
    "exp10",
    "exp2",
    "fabs",
    "floor",
    "fmod",
    "hypot",
    "isfinite",
    "isinf",
    "isnan",
    "ldexp",
    "log",
    "log10",
    "log1p",
    "log2",
    "nearbyint",
    "nextafter",
    "popcount",
    "pow",
    "q_multiply_shift",
    "round",
    "rsqrt",
    "shift_left",
    "shift_right",
    "sigmoid",
    "sin",
    "sinh",
    "sqrt",
    "tan",
    "tanh",
    "trunc",
]


def abs(x: ExprLike, /, *, dtype: Any = None) -> PrimExpr:
    return intrinsic_call(INTRINSICS["abs"], (x,))


def acos(x: ExprLike, /, *, dtype: Any = None) -> PrimExpr:
    return intrinsic_call(INTRINSICS["acos"], (x,))


def acosh(x: ExprLike, /, *, dtype: Any = None) -> PrimExpr:
    return intrinsic_call(INTRINSICS["acosh"], (x,))


def asin(x: ExprLike, /, *, dtype: Any = None) -> PrimExpr:
    return intrinsic_call(INTRINSICS["asin"], (x,))


def asinh(x: ExprLike, /, *, dtype: Any = None) -> PrimExpr:
    return intrinsic_call(INTRINSICS["asinh"], (x,))


def atan(x: ExprLike, /, *, dtype: Any = None) -> PrimExpr:
    return intrinsic_call(INTRINSICS["atan"], (x,))


def atan2(x: ExprLike, y: ExprLike, /, *, dtype: Any = None) -> PrimExpr:
    return intrinsic_call(INTRINSICS["atan2"], (x, y))


def atanh(x: ExprLike, /, *, dtype: Any = None) -> PrimExpr:
    return intrinsic_call(INTRINSICS["atanh"], (x,))


def bitwise_and(x: ExprLike, y: ExprLike, /, *, dtype: Any = None) -> PrimExpr:
    return intrinsic_call(INTRINSICS["bitwise_and"], (x, y))


def bitwise_not(x: ExprLike, /, *, dtype: Any = None) -> PrimExpr:
    return intrinsic_call(INTRINSICS["bitwise_not"], (x,))


def bitwise_or(x: ExprLike, y: ExprLike, /, *, dtype: Any = None) -> PrimExpr:
    return intrinsic_call(INTRINSICS["bitwise_or"], (x, y))


def bitwise_xor(x: ExprLike, y: ExprLike, /, *, dtype: Any = None) -> PrimExpr:
    return intrinsic_call(INTRINSICS["bitwise_xor"], (x, y))


def ceil(x: ExprLike, /, *, dtype: Any = None) -> PrimExpr:
    return intrinsic_call(INTRINSICS["ceil"], (x,))


def clz(x: ExprLike, /, *, dtype: Any = None) -> PrimExpr:
    return intrinsic_call(INTRINSICS["clz"], (x,))


def copysign(x: ExprLike, y: ExprLike, /, *, dtype: Any = None) -> PrimExpr:
    return intrinsic_call(INTRINSICS["copysign"], (x, y))


def cos(x: ExprLike, /, *, dtype: Any = None) -> PrimExpr:
    return intrinsic_call(INTRINSICS["cos"], (x,))


def cosh(x: ExprLike, /, *, dtype: Any = None) -> PrimExpr:
    return intrinsic_call(INTRINSICS["cosh"], (x,))


def erf(x: ExprLike, /, *, dtype: Any = None) -> PrimExpr:
    return intrinsic_call(INTRINSICS["erf"], (x,))


def exp(x: ExprLike, /, *, dtype: Any = None) -> PrimExpr:
    return intrinsic_call(INTRINSICS["exp"], (x,))


def exp10(x: ExprLike, /, *, dtype: Any = None) -> PrimExpr:
    return intrinsic_call(INTRINSICS["exp10"], (x,))


def exp2(x: ExprLike, /, *, dtype: Any = None) -> PrimExpr:
    return intrinsic_call(INTRINSICS["exp2"], (x,))


def fabs(x: ExprLike, /, *, dtype: Any = None) -> PrimExpr:
    return intrinsic_call(INTRINSICS["fabs"], (x,))


def floor(x: ExprLike, /, *, dtype: Any = None) -> PrimExpr:
    return intrinsic_call(INTRINSICS["floor"], (x,))


def fmod(x: ExprLike, y: ExprLike, /, *, dtype: Any = None) -> PrimExpr:
    return intrinsic_call(INTRINSICS["fmod"], (x, y))


def hypot(x: ExprLike, y: ExprLike, /, *, dtype: Any = None) -> PrimExpr:
    return intrinsic_call(INTRINSICS["hypot"], (x, y))


def isfinite(x: ExprLike, /, *, dtype: Any = None) -> PrimExpr:
    return intrinsic_call(INTRINSICS["isfinite"], (x,))


def isinf(x: ExprLike, /, *, dtype: Any = None) -> PrimExpr:
    return intrinsic_call(INTRINSICS["isinf"], (x,))


def isnan(x: ExprLike, /, *, dtype: Any = None) -> PrimExpr:
    return intrinsic_call(INTRINSICS["isnan"], (x,))


def ldexp(x: ExprLike, y: ExprLike, /, *, dtype: Any = None) -> PrimExpr:
    return intrinsic_call(INTRINSICS["ldexp"], (x, y))


def log(x: ExprLike, /, *, dtype: Any = None) -> PrimExpr:
    return intrinsic_call(INTRINSICS["log"], (x,))


def log10(x: ExprLike, /, *, dtype: Any = None) -> PrimExpr:
    return intrinsic_call(INTRINSICS["log10"], (x,))


def log1p(x: ExprLike, /, *, dtype: Any = None) -> PrimExpr:
    return intrinsic_call(INTRINSICS["log1p"], (x,))


def log2(x: ExprLike, /, *, dtype: Any = None) -> PrimExpr:
    return intrinsic_call(INTRINSICS["log2"], (x,))


def nearbyint(x: ExprLike, /, *, dtype: Any = None) -> PrimExpr:
    return intrinsic_call(INTRINSICS["nearbyint"], (x,))


def nextafter(x: ExprLike, y: ExprLike, /, *, dtype: Any = None) -> PrimExpr:
    return intrinsic_call(INTRINSICS["nextafter"], (x, y))


def popcount(x: ExprLike, /, *, dtype: Any = None) -> PrimExpr:
    return intrinsic_call(INTRINSICS["popcount"], (x,))


def pow(x: ExprLike, y: ExprLike, /, *, dtype: Any = None) -> PrimExpr:
    return intrinsic_call(INTRINSICS["pow"], (x, y))


def q_multiply_shift(
    x: ExprLike, y: ExprLike, q: ExprLike, s: ExprLike, /, *, dtype: Any = None
) -> PrimExpr:
    return intrinsic_call(INTRINSICS["q_multiply_shift"], (x, y, q, s))


def round(x: ExprLike, /, *, dtype: Any = None) -> PrimExpr:
    return intrinsic_call(INTRINSICS["round"], (x,))


def rsqrt(x: ExprLike, /, *, dtype: Any = None) -> PrimExpr:
    return intrinsic_call(INTRINSICS["rsqrt"], (x,))


def shift_left(x: ExprLike, y: ExprLike, /, *, dtype: Any = None) -> PrimExpr:
    return intrinsic_call(INTRINSICS["shift_left"], (x, y))


def shift_right(x: ExprLike, y: ExprLike, /, *, dtype: Any = None) -> PrimExpr:
    return intrinsic_call(INTRINSICS["shift_right"], (x, y))


def sigmoid(x: ExprLike, /, *, dtype: Any = None) -> PrimExpr:
    return intrinsic_call(INTRINSICS["sigmoid"], (x,))


def sin(x: ExprLike, /, *, dtype: Any = None) -> PrimExpr:
    return intrinsic_call(INTRINSICS["sin"], (x,))


def sinh(x: ExprLike, /, *, dtype: Any = None) -> PrimExpr:
    return intrinsic_call(INTRINSICS["sinh"], (x,))


def sqrt(x: ExprLike, /, *, dtype: Any = None) -> PrimExpr:
    return intrinsic_call(INTRINSICS["sqrt"], (x,))


def tan(x: ExprLike, /, *, dtype: Any = None) -> PrimExpr:
    return intrinsic_call(INTRINSICS["tan"], (x,))


def tanh(x: ExprLike, /, *, dtype: Any = None) -> PrimExpr:
    return intrinsic_call(INTRINSICS["tanh"], (x,))


def trunc(x: ExprLike, /, *, dtype: Any = None) -> PrimExpr:
    return intrinsic_call(INTRINSICS["trunc"], (x,))



INTRINSIC_BUILDERS: dict[str, Callable[..., PrimExpr]] = {name: globals()[name] for name in __all__}
"""``T.<name>`` of every scripted intrinsic of the table."""

for _name, _function in INTRINSIC_BUILDERS.items():
    _function.__doc__ = INTRINSICS[_name].doc
del _name, _function
