"""The float8 types on the CPU: uint8 storage, float32 arithmetic rounded to float8 at stores.

``e5m2_float8`` (5 exponent bits, bias 15, infinities) and ``e4m3_float8`` (the ``fn``
variant: 4 exponent bits, bias 7, no infinities, NaN ``0x7F``, largest 448) are legalised
like bfloat16 (:mod:`lowering.cpu.legalize_bf16`): operations compute in float32 and a value
is rounded to the float8 type where it is stored into float8 memory, to nearest with ties to
even (subnormals included); internal constant-size float8 allocations hold float32. A
value too large becomes infinity for e5m2 and NaN for e4m3 (as ml_dtypes converts).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from irbuilder.ir import (
    Call,
    CallKind,
    Cast,
    FloatImm,
    IntImm,
    Let,
    PrimExpr,
    Select,
    Var,
    as_dtype,
)

from .legalize_bf16 import Codec

__all__ = ["E4M3", "E4M3_FORMAT", "E5M2", "E5M2_FORMAT", "Float8Format"]

_F32 = as_dtype("float32")
_U32 = as_dtype("uint32")
_I32 = as_dtype("int32")
_U8 = as_dtype("uint8")
_BOOL = as_dtype("bool")


@dataclass(frozen=True)
class Float8Format:
    """Exponent and mantissa widths, bias, and how infinity and NaN are encoded."""

    exponent_bits: int
    mantissa_bits: int
    bias: int
    has_inf: bool

    @property
    def max_finite_code(self) -> int:
        if self.has_inf:  # the all-ones exponent is inf/NaN
            return ((1 << self.exponent_bits) - 2) << self.mantissa_bits | (
                (1 << self.mantissa_bits) - 1
            )
        return (1 << (self.exponent_bits + self.mantissa_bits)) - 2  # all ones is NaN

    @property
    def nan_code(self) -> int:
        if self.has_inf:
            return ((1 << self.exponent_bits) - 1) << self.mantissa_bits | (
                1 << (self.mantissa_bits - 1)
            )
        return (1 << (self.exponent_bits + self.mantissa_bits)) - 1

    @property
    def overflow_code(self) -> int:
        """What a value beyond the largest finite one becomes (inf, or NaN without inf)."""
        if self.has_inf:
            return ((1 << self.exponent_bits) - 1) << self.mantissa_bits
        return self.nan_code

    def decode(self, code: int) -> float:
        """The value of an 8-bit code (Python reference)."""
        sign = -1.0 if code & 0x80 else 1.0
        e = (code >> self.mantissa_bits) & ((1 << self.exponent_bits) - 1)
        m = code & ((1 << self.mantissa_bits) - 1)
        if (code & 0x7F) == self.nan_code or (
            self.has_inf and e == (1 << self.exponent_bits) - 1 and m != 0
        ):
            return math.nan
        if self.has_inf and e == (1 << self.exponent_bits) - 1:
            return sign * math.inf
        if e == 0:
            return sign * m * 2.0 ** (1 - self.bias - self.mantissa_bits)
        return sign * (1 + m / (1 << self.mantissa_bits)) * 2.0 ** (e - self.bias)

    def round_constant(self, value: float) -> float:
        """``value`` rounded to this format (nearest, ties to even code), as a float."""
        if math.isnan(value):
            return value
        best = min(
            (c for c in range(256) if not math.isnan(self.decode(c))),
            key=lambda c: (abs(self.decode(c) - value), c & 1),
        )
        largest = self.decode(self.max_finite_code)
        limit = largest + (largest - self.decode(self.max_finite_code - 1)) / 2
        # A tie at the limit goes to the even code: the largest one if its code is even.
        even = self.max_finite_code % 2 == 0
        if abs(value) > limit or (abs(value) == limit and not even):
            return math.copysign(math.inf, value) if self.has_inf else math.nan
        return math.copysign(self.decode(best), value) if value == 0 else self.decode(best)


def _u32(value: int) -> PrimExpr:
    return IntImm(_U32, value)


def _call(dtype: str, op: str, *args: PrimExpr) -> PrimExpr:
    kind = CallKind.BUILTIN if op == "reinterpret" else CallKind.INTRINSIC
    return Call(as_dtype(dtype), op, tuple(args), kind)


def _shr(x: PrimExpr, n: int) -> PrimExpr:
    return _call("uint32", "shift_right", x, _u32(n))


def _shl(x: PrimExpr, n: int) -> PrimExpr:
    return _call("uint32", "shift_left", x, _u32(n))


def _and(x: PrimExpr, mask: int) -> PrimExpr:
    return _call("uint32", "bitwise_and", x, _u32(mask))


def _or(x: PrimExpr, y: PrimExpr) -> PrimExpr:
    return _call("uint32", "bitwise_or", x, y)


def _narrow(fmt: Float8Format, value_expr: PrimExpr) -> PrimExpr:
    """float32 -> 8-bit code, rounded to nearest even (the value bound once by a Let: the
    conversion uses it several times)."""
    m, bias = fmt.mantissa_bits, fmt.bias
    value = Var("f8_value", _F32)
    bits = _call("uint32", "reinterpret", value)
    sign = _shl(_shr(bits, 31), 7)
    magnitude = _and(bits, 0x7FFFFFFF)
    shift = 23 - m
    odd = _and(_shr(magnitude, shift), 1)
    rounded = _shr(magnitude + _u32((1 << (shift - 1)) - 1) + odd, shift)  # exponent | mantissa
    exponent = Cast(_I32, _shr(rounded, m)) - IntImm(_I32, 127 - bias)
    normal = _or(_shl(Cast(_U32, exponent), m), _and(rounded, (1 << m) - 1))
    scaled = _call("float32", "fabs", value) * FloatImm(_F32, 2.0 ** (bias - 1 + m))
    subnormal = Cast(_U32, _call("float32", "nearbyint", scaled))
    code = Select(exponent >= IntImm(_I32, 1), normal, subnormal)
    code = Select(code > _u32(fmt.max_finite_code), _u32(fmt.overflow_code), code)
    is_nan = Call(_BOOL, "isnan", (value,), CallKind.INTRINSIC)
    return Let(value, value_expr, Cast(_U8, _or(sign, Select(is_nan, _u32(fmt.nan_code), code))))


def _widen(fmt: Float8Format, code: PrimExpr) -> PrimExpr:
    """8-bit code -> the float32 value."""
    m, e_bits, bias = fmt.mantissa_bits, fmt.exponent_bits, fmt.bias
    u = Var("f8_bits", _U32)
    sign = _shr(u, 7)
    e = _and(_shr(u, m), (1 << e_bits) - 1)
    mantissa = _and(u, (1 << m) - 1)
    normal_bits = _or(_or(_shl(sign, 31), _shl(e + _u32(127 - bias), 23)), _shl(mantissa, 23 - m))
    normal = _call("float32", "reinterpret", normal_bits)
    magnitude = Cast(_F32, mantissa) * FloatImm(_F32, 2.0 ** (1 - bias - m))
    negative = sign == _u32(1)
    subnormal = Select(negative, magnitude * FloatImm(_F32, -1.0), magnitude)
    value = Select(e == _u32(0), subnormal, normal)
    nan = FloatImm(_F32, math.nan)
    if fmt.has_inf:
        top = e == _u32((1 << e_bits) - 1)
        inf = Select(negative, FloatImm(_F32, -math.inf), FloatImm(_F32, math.inf))
        return Let(u, Cast(_U32, code), Select(top, Select(mantissa == _u32(0), inf, nan), value))
    return Let(u, Cast(_U32, code), Select(_and(u, 0x7F) == _u32(fmt.nan_code), nan, value))


def _codec(name: str, fmt: Float8Format) -> Codec:
    return Codec(
        as_dtype(name),
        _U8,
        lambda code: _widen(fmt, code),
        lambda value: _narrow(fmt, value),
        fmt.round_constant,
    )


E4M3_FORMAT = Float8Format(exponent_bits=4, mantissa_bits=3, bias=7, has_inf=False)
E5M2_FORMAT = Float8Format(exponent_bits=5, mantissa_bits=2, bias=15, has_inf=True)
E4M3 = _codec("e4m3_float8", E4M3_FORMAT)
E5M2 = _codec("e5m2_float8", E5M2_FORMAT)
