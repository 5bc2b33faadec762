"""Scalar and vector data types, spelled as TVM spells them (``"float32x8"``)."""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np

__all__ = ["DataType", "DataTypeLike", "TypeCode", "as_dtype"]


class TypeCode(enum.IntEnum):
    """The kind of a data type; the numbers match DLPack's type codes."""

    INT = 0
    UINT = 1
    FLOAT = 2
    HANDLE = 3
    BFLOAT = 4
    BOOL = 6
    # Not DLPack codes (TVM v0.16 numbers them 6 and 7, clashing with our BOOL).
    E4M3_FLOAT = 16
    E5M2_FLOAT = 17


_CODE_NAMES = {
    TypeCode.INT: "int",
    TypeCode.UINT: "uint",
    TypeCode.FLOAT: "float",
    TypeCode.HANDLE: "handle",
    TypeCode.BOOL: "bool",
    TypeCode.BFLOAT: "bfloat",
    TypeCode.E4M3_FLOAT: "e4m3_float",
    TypeCode.E5M2_FLOAT: "e5m2_float",
}
_ALLOWED_BITS = {
    TypeCode.INT: (8, 16, 32, 64),
    TypeCode.UINT: (8, 16, 32, 64),
    TypeCode.FLOAT: (16, 32, 64),
    TypeCode.HANDLE: (64,),
    TypeCode.BOOL: (1,),
    TypeCode.BFLOAT: (16,),
    TypeCode.E4M3_FLOAT: (8,),
    TypeCode.E5M2_FLOAT: (8,),
}
_DTYPE_RE = re.compile(
    r"^(int|uint|float|bfloat|e4m3_float|e5m2_float|bool|handle)(\d+)?(?:x(vscalex)?(\d+))?$"
)
_LOW_PRECISION = (TypeCode.BFLOAT, TypeCode.E4M3_FLOAT, TypeCode.E5M2_FLOAT)
# The codes the hot type tests read: a module global costs a fraction of an enum class
# attribute (``TypeCode.INT``), and the compilers ask these tests millions of times.
_INT_CODE = TypeCode.INT
_UINT_CODE = TypeCode.UINT
_FLOAT_CODE = TypeCode.FLOAT
_BOOL_CODE = TypeCode.BOOL
_HANDLE_CODE = TypeCode.HANDLE
_INTEGER_CODES = (TypeCode.INT, TypeCode.UINT)
# Largest finite values (numpy has no such types).
_LOW_PRECISION_MAX = {
    TypeCode.BFLOAT: 3.3895313892515355e38,
    TypeCode.E4M3_FLOAT: 448.0,
    TypeCode.E5M2_FLOAT: 57344.0,
}


@dataclass(frozen=True, eq=False, slots=True)
class DataType:
    """A data type: a code, a bit width and a number of vector lanes.

    Construct with :func:`as_dtype` (``as_dtype("float32x8")``); instances are
    value objects, compared and hashed by their fields.
    """

    code: TypeCode
    bits: int
    lanes: int = 1
    scalable: bool = False
    """A scalable vector (``float32xvscalex4``: ``lanes * vscale`` lanes; parse and print
    only, the CPU build refuses it)."""
    _name: str = field(init=False, repr=False, compare=False)
    """The printed name, kept because a type also compares (and hashes) as that string."""

    def __post_init__(self) -> None:
        if self.bits not in _ALLOWED_BITS[self.code]:
            raise ValueError(f"unsupported bit width {self.bits} for {_CODE_NAMES[self.code]}")
        if self.lanes < 1:
            raise ValueError(f"vector lanes must be >= 1, got {self.lanes}")
        name = _CODE_NAMES[self.code]
        if self.code not in (TypeCode.BOOL, TypeCode.HANDLE):
            name += str(self.bits)
        if self.scalable:
            name += f"xvscalex{self.lanes}"
        elif self.lanes != 1:
            name += f"x{self.lanes}"
        object.__setattr__(self, "_name", name)

    def __str__(self) -> str:
        return self._name

    def __repr__(self) -> str:
        return f"DataType({str(self)!r})"

    # The dataclass' own comparison and hash, with an identity test first: types are
    # compared at every node built, and most comparisons meet the very same object.
    # A string compares by the printed name, as TVM's ``buffer.dtype == "float32"`` (a
    # ``str`` there) does; the hash is the name's so that the two agree.
    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if other.__class__ is not self.__class__:
            if isinstance(other, str):
                return self._name == other
            return NotImplemented
        assert isinstance(other, DataType)
        return (self.code, self.bits, self.lanes, self.scalable) == (
            other.code,
            other.bits,
            other.lanes,
            other.scalable,
        )

    def __hash__(self) -> int:
        return hash(self._name)

    @property
    def dtype(self) -> np.dtype[Any]:
        """The numpy dtype of a scalar type, so that numpy takes a buffer's type where TVM
        gives a string (``np.zeros(shape).astype(buffer.dtype)``); a vector, handle or
        low-precision float type has none."""
        if self.is_vector or self.is_handle or self.code in _LOW_PRECISION:
            raise TypeError(f"{self} has no numpy dtype")
        return self.numpy_dtype

    @property
    def is_int(self) -> bool:
        return self.code == _INT_CODE

    @property
    def is_uint(self) -> bool:
        return self.code == _UINT_CODE

    @property
    def is_integer(self) -> bool:
        """Signed or unsigned integer (not bool)."""
        return self.code in _INTEGER_CODES

    @property
    def is_float(self) -> bool:
        """A floating-point type: float16/32/64, bfloat16 and the float8 types."""
        return self.code == _FLOAT_CODE or self.code in _LOW_PRECISION

    @property
    def is_low_precision_float(self) -> bool:
        """bfloat16, e4m3_float8 or e5m2_float8 (no numpy type: stored as uint16/uint8)."""
        return self.code in _LOW_PRECISION

    @property
    def is_bool(self) -> bool:
        return self.code == _BOOL_CODE

    @property
    def is_handle(self) -> bool:
        return self.code == _HANDLE_CODE

    @property
    def is_scalar(self) -> bool:
        return self.lanes == 1 and not self.scalable

    @property
    def is_vector(self) -> bool:
        return self.lanes > 1 or self.scalable

    @property
    def itemsize(self) -> int:
        """Bytes one element occupies in memory (bool is stored as one byte)."""
        return max(self.bits, 8) // 8 * self.lanes

    def with_lanes(self, lanes: int) -> DataType:
        if lanes == self.lanes and not self.scalable:
            return self  # an equal value object; most calls ask for the type at hand
        return as_dtype(DataType(self.code, self.bits, lanes))

    def element_of(self) -> DataType:
        """The scalar type of one lane."""
        return self.with_lanes(1)

    def with_bits(self, bits: int) -> DataType:
        return as_dtype(DataType(self.code, bits, self.lanes, self.scalable))

    @property
    def min_value(self) -> int | float:
        """Lowest representable value of one lane."""
        code = self.code
        if code == _INT_CODE:
            return -(1 << (self.bits - 1))
        if code == _UINT_CODE or code == _BOOL_CODE:
            return 0
        if self.code in _LOW_PRECISION:
            return -_LOW_PRECISION_MAX[self.code]
        if self.is_float:
            return float(np.finfo(self.numpy_dtype).min)
        raise TypeError(f"{self} has no minimum value")

    @property
    def max_value(self) -> int | float:
        """Highest representable value of one lane."""
        code = self.code
        if code == _INT_CODE:
            return (1 << (self.bits - 1)) - 1
        if code == _UINT_CODE:
            return (1 << self.bits) - 1
        if code == _BOOL_CODE:
            return 1
        if self.code in _LOW_PRECISION:
            return _LOW_PRECISION_MAX[self.code]
        if self.is_float:
            return float(np.finfo(self.numpy_dtype).max)
        raise TypeError(f"{self} has no maximum value")

    @property
    def numpy_dtype(self) -> np.dtype[Any]:
        """The numpy dtype of one lane (bfloat16 is stored as uint16, float8 as uint8)."""
        if self.is_handle:
            raise TypeError("handle has no numpy equivalent")
        if self.code in _LOW_PRECISION:
            return np.dtype(f"uint{self.bits}")
        return np.dtype("bool" if self.is_bool else str(self.element_of()))


DataTypeLike = DataType | str | np.dtype[Any] | type


@lru_cache(maxsize=512)
def _parse(text: str) -> DataType:
    aliases = {"float": "float32", "int": "int32", "double": "float64", "uint": "uint32"}
    text = aliases.get(text, text)
    match = _DTYPE_RE.match(text)
    if match is None:
        raise ValueError(f"unknown data type {text!r}")
    name, bits_text, scalable, lanes_text = match.groups()
    code = next(c for c, n in _CODE_NAMES.items() if n == name)
    if code == TypeCode.BOOL:
        bits = 1
        if bits_text not in (None, "1", "8"):
            raise ValueError(f"unknown data type {text!r}")
    elif code == TypeCode.HANDLE:
        bits = 64
        if bits_text not in (None, "64"):
            raise ValueError(f"unknown data type {text!r}")
    else:
        if bits_text is None:
            raise ValueError(f"data type {text!r} needs a bit width")
        bits = int(bits_text)
        if code == TypeCode.UINT and bits == 1:
            # TVM's bool is the one-bit unsigned type: "uint1" (and "uint1x4") name it.
            code = TypeCode.BOOL
    lanes = int(lanes_text) if lanes_text else 1
    return DataType(code, bits, lanes, scalable is not None)


def as_dtype(value: DataTypeLike) -> DataType:
    """Convert a string (``"int32"``, ``"float32x4"``), numpy dtype or DataType."""
    if isinstance(value, DataType):
        return value
    if isinstance(value, str):
        return _parse(value)
    if value is bool:
        return _parse("bool")
    if value is int:
        return _parse("int32")
    if value is float:
        return _parse("float32")
    if not isinstance(value, (np.dtype, type)):
        # numpy would take any object with a ``.dtype`` (an expression's DataType, which
        # converts since DataType has a numpy ``.dtype``: numpy before 2.4 accepted it with a
        # DeprecationWarning, 2.4 refuses it): an expression is no data type on any numpy
        raise TypeError(f"cannot interpret {value!r} as a data type")
    try:
        np_dtype = np.dtype(value)
    except TypeError as err:
        raise TypeError(f"cannot interpret {value!r} as a data type") from err
    return _parse("bool" if np_dtype == np.bool_ else str(np_dtype))
