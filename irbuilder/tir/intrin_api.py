"""Typed ``T.<intrinsic>`` functions: one per scripted entry of the intrinsic table.

The table (:mod:`irbuilder.ir.intrinsics`) declares each intrinsic once; these functions give
type checkers (mypy, pyright) a signature to check calls against, and each only forwards to
:func:`irbuilder.tir.intrin.intrinsic_call` with its table entry. ``tests/tvm_surface`` checks
that the names and arities here are exactly the table's. Every function accepts and ignores
a ``dtype=`` keyword, as TVM's ``_op_wrapper`` does; the docstrings are the table's.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from ..ir import INTRINSICS, ExprLike, PrimExpr
from ..ir.intrinsics import IntrinsicSpec, Operands, Result
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

_OPERANDS = {
    Operands.FLOAT: "float (scalar or vector); an integer is a TypeError",
    Operands.INTEGER: "integer (scalar or vector)",
    Operands.BITS: "integer or bool (scalar or vector)",
    Operands.NUMBER: "float or integer (scalar or vector)",
    Operands.ROUNDING: "float (scalar or vector); an integer is returned unchanged",
    Operands.CLASSIFY: "float (scalar or vector); for an integer the answer is a constant",
}
_SAMPLE = {
    Operands.INTEGER: "T.int32()",
    Operands.BITS: "T.int32()",
    Operands.NUMBER: "T.float32()",
}


def _intrinsic_doc(spec: IntrinsicSpec, function: Callable[..., PrimExpr]) -> str:
    """The numpy-style docstring of ``T.<spec.name>``, made from its table entry."""
    params = [p for p in inspect.signature(function).parameters if p != "dtype"]
    result = "bool (with the operand's lanes)" if spec.result is Result.BOOL else "the operand's"
    sample = _SAMPLE.get(spec.operands, "T.float32()")
    args = ", ".join([sample] * len(params))
    shown = "bool" if spec.result is Result.BOOL else ("int32" if "int" in sample else "float32")
    return (
        f"{spec.doc}\n\n"
        "    Parameters\n    ----------\n"
        f"    {', '.join(params)} : PrimExpr or number\n"
        f"        {_OPERANDS[spec.operands].capitalize()}.\n"
        "    dtype : optional\n"
        "        Accepted and ignored (TVM's wrapper).\n\n"
        "    Returns\n    -------\n    PrimExpr\n"
        f"        A call of the intrinsic ``{spec.name}``; its type is {result}.\n\n"
        "    Examples\n    --------\n"
        f"    >>> print(T.{spec.name}({args}).dtype)\n"
        f"    {shown}\n"
    )


for _name, _function in INTRINSIC_BUILDERS.items():
    _function.__doc__ = _intrinsic_doc(INTRINSICS[_name], _function)
del _name, _function
