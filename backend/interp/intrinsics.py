"""Math and bit intrinsics and the libm extern table of the reference interpreter.

Math intrinsics compute with numpy in the operand's precision (a float32 ``exp``
returns a float32 computed by numpy's float32 routine); ``erf`` goes through
``math.erf`` in double precision and rounds once to the operand type. ``T.round``
rounds half to even like numpy (``llvm.roundeven``), as does ``nearbyint``; the C
library's ``round``/``roundf`` externs round half away from zero.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from irbuilder.ir import DataType, as_dtype

from .values import Scalar, Value, pack, to_lanes, wrap_int

__all__ = ["EXTERN_MATH", "INTRINSICS", "call_extern_math", "call_intrinsic"]

_BOOL = as_dtype("bool")
_F32 = as_dtype("float32")
_F64 = as_dtype("float64")


def _round_half_away(x: Any) -> Any:
    f = float(x)
    if not math.isfinite(f):
        return x
    whole = math.trunc(f)
    if abs(f - whole) >= 0.5:  # f - whole is exact in double precision
        whole += 1 if f > 0 else -1
    return type(x)(math.copysign(float(whole), f))


def _sigmoid(x: Any) -> Any:
    one = type(x)(1)
    return one / (one + np.exp(-x))


def _erf(x: Any) -> Any:
    return type(x)(math.erf(float(x)))


_FLOAT_UNARY: dict[str, Callable[[Any], Any]] = {
    "exp": np.exp,
    "exp2": np.exp2,
    "exp10": lambda x: np.power(type(x)(10), x),
    "expm1": np.expm1,
    "log": np.log,
    "log2": np.log2,
    "log10": np.log10,
    "log1p": np.log1p,
    "sqrt": np.sqrt,
    "rsqrt": lambda x: type(x)(1) / np.sqrt(x),
    "sin": np.sin,
    "cos": np.cos,
    "tan": np.tan,
    "asin": np.arcsin,
    "acos": np.arccos,
    "atan": np.arctan,
    "sinh": np.sinh,
    "cosh": np.cosh,
    "tanh": np.tanh,
    "asinh": np.arcsinh,
    "acosh": np.arccosh,
    "atanh": np.arctanh,
    "sigmoid": _sigmoid,
    "erf": _erf,
    "fabs": np.fabs,
    "floor": np.floor,
    "ceil": np.ceil,
    "trunc": np.trunc,
    "round": np.rint,
    "round_half_away": _round_half_away,
    "nearbyint": np.rint,
}

_FLOAT_BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "pow": np.power,
    "atan2": np.arctan2,
    "fmod": np.fmod,
    "hypot": np.hypot,
    "copysign": np.copysign,
    "nextafter": np.nextafter,
}

_PREDICATES: dict[str, Callable[[Any], bool]] = {
    "isnan": lambda x: bool(np.isnan(x)),
    "isinf": lambda x: bool(np.isinf(x)),
    "isfinite": lambda x: bool(np.isfinite(x)),
}


def _popcount(x: int, element: DataType) -> int:
    return bin(x & ((1 << element.bits) - 1)).count("1")


def _clz(x: int, element: DataType) -> int:
    # llvm.ctlz with is_zero_poison = false: clz(0) is the bit width.
    return element.bits - (x & ((1 << element.bits) - 1)).bit_length()


def _int_abs(x: int, element: DataType) -> int:
    return wrap_int(abs(x), element)


_INT_UNARY: dict[str, Callable[[int, DataType], int]] = {
    "abs": _int_abs,
    "fabs": _int_abs,
    "bitwise_not": lambda x, e: wrap_int(~x, e),
    "popcount": _popcount,
    "clz": _clz,
}

INTRINSICS = (
    frozenset(_FLOAT_UNARY)
    | frozenset(_FLOAT_BINARY)
    | frozenset(_PREDICATES)
    | frozenset(_INT_UNARY)
    | {"abs"}
)
"""Intrinsic names :func:`call_intrinsic` evaluates (bitwise binaries go through values)."""


def _lanewise(
    fn: Callable[..., Scalar], args: Sequence[Value], arg_type: DataType, result: DataType
) -> Value:
    columns = [to_lanes(a, arg_type) for a in args]
    with np.errstate(all="ignore"):  # log(-1) is NaN, exp(1000) is inf: IEEE semantics
        return pack([fn(*lane) for lane in zip(*columns)], result)


def call_intrinsic(
    name: str, args: Sequence[Value], arg_types: Sequence[DataType], result: DataType
) -> Value:
    """Evaluate the math/bit intrinsic ``name`` lane-wise; unknown names raise."""
    if not args:
        raise TypeError(f"intrinsic {name!r} needs arguments")
    arg_type = arg_types[0]
    element = arg_type.element_of()
    if name in _PREDICATES:
        pred = _PREDICATES[name]
        if not element.is_float:
            return _lanewise(lambda x: 0, args, arg_type, result)
        return _lanewise(lambda x: 1 if pred(x) else 0, args, arg_type, result)
    if element.is_float:
        ftype = element.numpy_dtype.type
        unary = _FLOAT_UNARY.get("fabs" if name == "abs" else name)
        if unary is not None and len(args) == 1:
            return _lanewise(lambda x: ftype(unary(ftype(x))), args, arg_type, result)
        binary_fn = _FLOAT_BINARY.get(name)
        if binary_fn is not None and len(args) == 2:
            return _lanewise(
                lambda x, y: ftype(binary_fn(ftype(x), ftype(y))), args, arg_type, result
            )
    elif element.is_integer:
        int_fn = _INT_UNARY.get(name)
        if int_fn is not None and len(args) == 1:
            return _lanewise(lambda x: int_fn(int(x), element), args, arg_type, result)
        if (
            name in ("floor", "ceil", "trunc", "round", "round_half_away", "nearbyint")
            and len(args) == 1
        ):
            return args[0]  # integral already
    if name in INTRINSICS:
        types = ", ".join(str(t) for t in arg_types)
        raise TypeError(f"intrinsic {name!r} is not defined for arguments ({types})")
    raise NotImplementedError(f"the interpreter does not implement intrinsic {name!r}")


# libm symbol -> (intrinsic, precision). The 'f' suffix is the float32 variant.
EXTERN_MATH: dict[str, tuple[str, DataType]] = {}
for _base in (
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "sin", "cos", "tan",
    "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "erf",
    "fabs", "floor", "ceil", "trunc", "round", "nearbyint", "pow", "atan2", "fmod",
    "hypot", "copysign", "nextafter",
):  # fmt: skip
    EXTERN_MATH[_base] = (_base, _F64)
    EXTERN_MATH[_base + "f"] = (_base, _F32)
EXTERN_MATH["round"] = ("round_half_away", _F64)
EXTERN_MATH["roundf"] = ("round_half_away", _F32)
EXTERN_MATH["rint"] = ("nearbyint", _F64)
EXTERN_MATH["rintf"] = ("nearbyint", _F32)
EXTERN_MATH["fmin"] = ("fmin", _F64)
EXTERN_MATH["fminf"] = ("fmin", _F32)
EXTERN_MATH["fmax"] = ("fmax", _F64)
EXTERN_MATH["fmaxf"] = ("fmax", _F32)


def call_extern_math(
    symbol: str, args: Sequence[Value], arg_types: Sequence[DataType], result: DataType
) -> Value:
    """Call the libm function ``symbol`` on scalars, in the precision its name implies."""
    intrinsic, precision = EXTERN_MATH[symbol]
    ftype = precision.numpy_dtype.type
    converted: list[Any] = []
    for value, vtype in zip(args, arg_types):
        if vtype.is_vector:
            raise TypeError(f"extern {symbol!r} takes scalars, got a {vtype} argument")
        converted.append(ftype(value))
    if intrinsic in ("fmin", "fmax"):
        # C fmin/fmax return the other operand when one is NaN.
        out = (np.fmin if intrinsic == "fmin" else np.fmax)(converted[0], converted[1])
    else:
        out = call_intrinsic(intrinsic, converted, [precision] * len(converted), precision)
    if result.is_float:
        return result.numpy_dtype.type(out)
    raise TypeError(f"extern {symbol!r} returns a float, the call's type is {result}")
