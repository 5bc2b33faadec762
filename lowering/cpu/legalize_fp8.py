"""The float8 types on the CPU, as TVM legalises them: uint8 storage, float32 arithmetic,
TVM's bit conversions at loads and stores.

TVM v0.16 builds float8 for targets without it (every CPU) with FP8ComputeLegalize and
FP8StorageLegalize: a float8 value is widened to float32 by moving its fields (the exponent
rebiased, ``+120`` for ``e4m3_float8``, ``+112`` for ``e5m2_float8``), operations compute in
float32, and a value stored into float8 memory is narrowed by adding half a unit of the last
place (ties to even) and taking the fields back. The conversions are TVM's exactly, including
what they do outside the normal range: no subnormals (a code with a zero exponent widens as if
it were normal; a value below the smallest normal narrows to +0), no infinity or NaN codes
(they widen as ordinary numbers), and an exponent too large wraps around in the 8-bit result.
So a TVM program and its legalised form (TVM's own before/after tests) compute the same
bits here. :class:`Float8Format` holds the Python reference of both conversions.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from irbuilder.ir import (
    Call,
    CallKind,
    Cast,
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
    """Exponent and mantissa widths and bias, and TVM's conversions (Python reference)."""

    exponent_bits: int
    mantissa_bits: int
    bias: int

    @property
    def rebias(self) -> int:
        """What widening adds to the exponent field (float32's bias minus this one's)."""
        return 127 - self.bias

    def decode(self, code: int) -> float:
        """The float32 value TVM widens an 8-bit code to."""
        m = self.mantissa_bits
        exponent = (code >> m) & ((1 << self.exponent_bits) - 1)
        bits = ((code >> 7) << 31) | ((exponent + self.rebias) << 23) | (
            (code & ((1 << m) - 1)) << (23 - m))
        return float(np.array([bits], np.uint32).view(np.float32)[0])

    def encode(self, value: float) -> int:
        """The 8-bit code TVM narrows a float32 value to."""
        m, shift = self.mantissa_bits, 23 - self.mantissa_bits
        bits = int(np.array([value], np.float32).view(np.uint32)[0])
        bits = (bits + ((bits >> shift) & 1) + (1 << (shift - 1)) - 1) & 0xFFFFFFFF
        exponent = ((bits << 1) & 0xFFFFFFFF) >> 24
        if exponent < self.rebias:
            return 0
        fields = ((exponent - self.rebias) << m) & 0xFF
        return ((bits >> shift) & ((1 << m) - 1)) | fields | ((bits >> 31) << 7)

    def round_constant(self, value: float) -> float:
        """``value`` stored into this type and loaded back."""
        return self.decode(self.encode(value))


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
    """float32 -> 8-bit code, TVM's narrowing (the value's bits bound once by a Let)."""
    m, shift = fmt.mantissa_bits, 23 - fmt.mantissa_bits
    raw = Var("f8_value", _U32)
    bits = raw + _and(_shr(raw, shift), 1) + _u32((1 << (shift - 1)) - 1)  # wraps as uint32
    exponent = _shr(_and(_shl(bits, 1), 0xFFFFFFFF), 24)
    mantissa = _and(_shr(bits, shift), (1 << m) - 1)
    fields = _and(_shl(_and(exponent - _u32(fmt.rebias), 0xFF), m), 0xFF)
    code = _or(_or(mantissa, fields), _shl(_shr(bits, 31), 7))
    narrowed = Select(exponent < _u32(fmt.rebias), _u32(0), code)
    return Let(raw, _call("uint32", "reinterpret", value_expr), Cast(_U8, narrowed))


def _widen(fmt: Float8Format, code: PrimExpr) -> PrimExpr:
    """8-bit code -> float32, TVM's widening."""
    m = fmt.mantissa_bits
    u = Var("f8_bits", _U32)
    exponent = _and(_shr(u, m), (1 << fmt.exponent_bits) - 1) + _u32(fmt.rebias)
    bits = _or(_or(_shl(_shr(u, 7), 31), _shl(exponent, 23)), _shl(_and(u, (1 << m) - 1), 23 - m))
    return Let(u, Cast(_U32, code), _call("float32", "reinterpret", bits))


def _codec(name: str, fmt: Float8Format) -> Codec:
    return Codec(
        as_dtype(name),
        _U8,
        lambda code: _widen(fmt, code),
        lambda value: _narrow(fmt, value),
        fmt.round_constant,
    )


E4M3_FORMAT = Float8Format(exponent_bits=4, mantissa_bits=3, bias=7)
E5M2_FORMAT = Float8Format(exponent_bits=5, mantissa_bits=2, bias=15)
E4M3 = _codec("e4m3_float8", E4M3_FORMAT)
E5M2 = _codec("e5m2_float8", E5M2_FORMAT)
