"""Math and bit intrinsics and the libm extern table of the reference interpreter.

Math intrinsics compute with numpy in the operand's precision (a float32 ``exp``
returns a float32 computed by numpy's float32 routine); ``erf`` goes through
``math.erf`` in double precision and rounds once to the operand type. ``T.round``
rounds half to even like numpy (``llvm.roundeven``), as does ``nearbyint``; the C
library's ``round``/``roundf`` externs round half away from zero.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from irbuilder.ir import INTRINSICS as INTRINSIC_TABLE
from irbuilder.ir import DataType, Operands, Result, as_dtype

from .values import Scalar, Value, pack, to_lanes, wrap_int

__all__ = ["EXTERN_MATH", "INTRINSICS", "call_extern_math", "call_intrinsic"]

_BOOL = as_dtype("bool")
_F32 = as_dtype("float32")
_F64 = as_dtype("float64")


INTRINSICS = frozenset(INTRINSIC_TABLE)
"""Intrinsic names :func:`call_intrinsic` evaluates (bitwise binaries go through values)."""

_ROUNDING = Operands.ROUNDING
_BITS = Operands.BITS


def _lanewise(
    fn: Callable[..., Scalar], args: Sequence[Value], arg_type: DataType, result: DataType
) -> Value:
    columns = [to_lanes(a, arg_type) for a in args]
    with np.errstate(all="ignore"):  # log(-1) is NaN, exp(1000) is inf: IEEE semantics
        return pack([fn(*lane) for lane in zip(*columns)], result)


def call_intrinsic(
    name: str, args: Sequence[Value], arg_types: Sequence[DataType], result: DataType
) -> Value:
    """Evaluate the math/bit intrinsic ``name`` lane-wise, as the intrinsic table defines it;
    unknown names raise."""
    spec = INTRINSIC_TABLE.get(name)
    if spec is None:
        raise NotImplementedError(f"the interpreter does not implement intrinsic {name!r}")
    if not args:
        raise TypeError(f"intrinsic {name!r} needs arguments")
    arg_type = arg_types[0]
    element = arg_type.element_of()
    if spec.result is Result.BOOL:
        pred = spec.float_impl
        if not element.is_float or pred is None:
            constant = 1 if name == "isfinite" else 0
            return _lanewise(lambda x: constant, args, arg_type, result)
        return _lanewise(lambda x: 1 if pred(x) else 0, args, arg_type, result)
    if element.is_float and spec.float_impl is not None and len(args) == spec.arity:
        ftype = element.numpy_dtype.type
        fn = spec.float_impl
        if element.bits == 64:
            return _lanewise(lambda *xs: ftype(fn(*(ftype(x) for x in xs))), args, arg_type,
                             result)
        # Narrower floats are computed in float64 and rounded once: the correctly rounded
        # result on every host (numpy's own float32 exp, sin, ... differ by an ulp between
        # its AVX2 and AVX-512 code paths), which the reference interpreter must not.
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            return _lanewise(
                lambda *xs: ftype(fn(*(np.float64(ftype(x)) for x in xs))), args, arg_type,
                result,
            )
    if element.is_integer:
        int_fn = spec.int_impl
        if int_fn is not None and len(args) == spec.arity:
            bits = element.bits
            return _lanewise(
                lambda *xs: wrap_int(int_fn(*(int(x) for x in xs), bits), element),
                args,
                arg_type,
                result,
            )
        if spec.operands is _ROUNDING and len(args) == 1:
            return args[0]  # integral already
    bit_fn = spec.int_impl
    if element.is_bool and spec.operands is _BITS and bit_fn is not None:
        # A bool is a 1-bit unsigned integer here (as in TVM and LLVM's i1): keep one bit.
        return _lanewise(lambda *xs: bit_fn(*(int(x) for x in xs), 1) & 1, args, arg_type,
                         result)
    types = ", ".join(str(t) for t in arg_types)
    raise TypeError(f"intrinsic {name!r} is not defined for arguments ({types})")


# libm symbol -> (intrinsic, precision). The 'f' suffix is the float32 variant.
EXTERN_MATH: dict[str, tuple[str, DataType]] = {}
for _base in (
    "exp", "exp2", "exp10", "expm1", "log", "log2", "log10", "log1p", "sqrt", "sin", "cos",
    "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "erf",
    "erfc", "cbrt", "fabs", "floor", "ceil", "trunc", "round", "nearbyint", "pow", "atan2",
    "fmod", "hypot", "copysign", "nextafter",
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
