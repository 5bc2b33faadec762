"""Scalar and vector value semantics of the reference interpreter, per data type.

Representation (the only one the interpreter uses):

- an ``int``/``uint``/``bool`` scalar is a Python ``int`` already wrapped to the
  type's range (bool is 0 or 1);
- a float scalar is a numpy scalar of the exact width (``np.float16/32/64``), so
  arithmetic happens in that precision;
- a vector is a 1-d numpy array of its lanes with the element's numpy dtype.

Every vector operation is the scalar operation mapped over the lanes, so the
scalar rules below are the single definition of the semantics:

- integer ``+ - *``, negation and casts between integer types wrap to the width;
  ``Div``/``Mod`` truncate toward zero, ``FloorDiv``/``FloorMod`` round toward
  minus infinity; integer division by zero raises ``ZeroDivisionError``;
  ``INT_MIN / -1`` raises ``OverflowError`` (and ``INT_MIN % -1`` is 0);
- float ``Div`` is IEEE division; float ``Mod`` is ``fmod``; float ``FloorDiv`` is
  ``floor(a / b)``; float ``FloorMod`` is ``fmod(a, b)``, plus ``b`` when it is nonzero
  and its sign differs from ``b``'s (Python's ``%`` up to the sign of a zero);
- ``Min(a, b)`` is ``a if a < b else b`` and ``Max(a, b)`` is ``a if a > b else b``
  (so a NaN first operand yields the second one, as TVM's select-based codegen);
- float comparisons are IEEE: ordered for ``== < <= > >=`` (false on NaN), unordered
  for ``!=`` (true on NaN, LLVM ``fcmp une``);
- float -> integer casts *saturate* (LLVM ``llvm.fptosi.sat``/``fptoui.sat``):
  values beyond the range clamp to it, NaN becomes 0; any -> bool is ``!= 0``
  (NaN -> true); integer -> float and float -> float round to nearest even once;
- arithmetic on ``bool`` operands works on one bit (LLVM ``i1``: ``1 + 1 == 0``);
- shifts by an amount outside ``[0, bits)`` (LLVM poison) are defined here as 0 for
  ``shift_left`` and for ``shift_right`` of unsigned types, and as the sign fill
  (0 or -1) for ``shift_right`` of signed types;
- ``round`` rounds half away from zero (``llvm.round``); ``nearbyint`` rounds half
  to even.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from irbuilder.ir import INT_BINARY_OPS, DataType, TypeCode, as_dtype, int_binary, wrap_int

__all__ = [
    "Scalar",
    "Value",
    "binary",
    "cast",
    "element_numpy_dtype",
    "from_numpy",
    "from_python",
    "logical_not",
    "pack",
    "reinterpret",
    "scalar_binary",
    "select",
    "to_lanes",
    "to_numpy",
    "truthy",
    "unpack_scalar",
    "wrap_int",
]

Scalar = int | np.floating[Any]
Value = Any  # a Scalar, a numpy vector of lanes, or (for handles) a pointer/array object

_BOOL = as_dtype("bool")


@lru_cache(maxsize=256)
def element_numpy_dtype(dtype: DataType) -> np.dtype[Any]:
    """The numpy dtype of one lane of ``dtype`` (cached: this is on every access path)."""
    return dtype.element_of().numpy_dtype


def _float_type(dtype: DataType) -> Callable[[Any], np.floating[Any]]:
    return element_numpy_dtype(dtype).type


def from_python(value: int | float | bool, dtype: DataType) -> Value:
    """A value of ``dtype`` from a Python number (vectors broadcast it to every lane)."""
    element = dtype.element_of()
    scalar: Scalar
    if element.is_float:
        scalar = _float_type(element)(value)
    elif element.is_bool:
        scalar = 1 if value else 0
    elif element.is_integer:
        if isinstance(value, float):
            scalar = _float_to_int(value, element)
        else:
            scalar = wrap_int(int(value), element)
    else:
        raise TypeError(f"no value of type {dtype} can be made from {value!r}")
    if dtype.lanes == 1:
        return scalar
    return pack([scalar] * dtype.lanes, dtype)


def to_lanes(value: Value, dtype: DataType) -> list[Scalar]:
    """The lanes of a value of ``dtype`` as a list of scalars."""
    if dtype.lanes == 1:
        return [value]
    if not isinstance(value, np.ndarray) or value.shape != (dtype.lanes,):
        raise TypeError(f"expected a {dtype} vector, got {value!r}")
    return [unpack_scalar(value[i], dtype.element_of()) for i in range(dtype.lanes)]


def unpack_scalar(item: Any, element: DataType) -> Scalar:
    """One numpy element as an interpreter scalar of ``element``."""
    if element.is_float:
        return _float_type(element)(item)
    if element.is_bool:
        return 1 if item else 0
    return int(item)


def pack(lanes: Sequence[Scalar], dtype: DataType) -> Value:
    """Build a value of ``dtype`` from its lanes (a scalar when there is one lane)."""
    if len(lanes) != dtype.lanes:
        raise TypeError(f"{dtype} needs {dtype.lanes} lanes, got {len(lanes)}")
    if dtype.lanes == 1:
        return lanes[0]
    return np.array(list(lanes), dtype=element_numpy_dtype(dtype))


def to_numpy(value: Value, dtype: DataType) -> np.ndarray[Any, Any]:
    """A 1-d numpy array (one entry per lane) holding ``value``."""
    return np.array(to_lanes(value, dtype), dtype=element_numpy_dtype(dtype))


def from_numpy(array: np.ndarray[Any, Any], dtype: DataType) -> Value:
    """Inverse of :func:`to_numpy`."""
    element = dtype.element_of()
    return pack([unpack_scalar(array[i], element) for i in range(dtype.lanes)], dtype)


def truthy(value: Value, what: str = "condition") -> bool:
    """Python truth of a scalar bool value (vectors are rejected)."""
    if isinstance(value, np.ndarray):
        raise TypeError(f"{what} must be a scalar, got a vector of {value.size} lanes")
    return bool(value)


# ---------------------------------------------------------------------------
# Binary operators
# ---------------------------------------------------------------------------


_FloatOp = Callable[[Any, Any], Any]


def _float_floormod(a: Any, b: Any) -> Any:
    # fmod is exact; moving the remainder into b's sign adds one rounding (Python's %).
    r = np.fmod(a, b)
    if r != 0 and (r < 0) != (b < 0):
        r = r + b
    return r


_FLOAT_OPS: dict[str, _FloatOp] = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
    "mod": np.fmod,
    "floordiv": lambda a, b: np.floor(a / b),
    "floormod": lambda a, b: _float_floormod(a, b),
    "min": lambda a, b: a if a < b else b,
    "max": lambda a, b: a if a > b else b,
}

_COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    "eq": lambda a, b: bool(a == b),
    "ne": lambda a, b: bool(a != b),  # NaN != x is true: IEEE unordered not-equal
    "lt": lambda a, b: bool(a < b),
    "le": lambda a, b: bool(a <= b),
    "gt": lambda a, b: bool(a > b),
    "ge": lambda a, b: bool(a >= b),
}

_LOGICAL: dict[str, Callable[[int, int], int]] = {
    "and": lambda a, b: 1 if (a and b) else 0,
    "or": lambda a, b: 1 if (a or b) else 0,
}

BINARY_OPS = INT_BINARY_OPS | frozenset(_FLOAT_OPS) | frozenset(_COMPARE)
"""Names accepted by :func:`binary`."""


# int_binary's operators that always have a value: the result wrapped to the width.
_INT_WRAPPING: dict[str, Callable[[int, int], int]] = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "min": min,
    "max": max,
}
_SIGNED = TypeCode.INT
_UNSIGNED = TypeCode.UINT
_IEEE = TypeCode.FLOAT
_IEEE_TYPES: dict[int, Callable[[Any], np.floating[Any]]] = {
    16: np.float16,
    32: np.float32,
    64: np.float64,
}


def _scalar_binary(
    op: str, a: Scalar, b: Scalar, element: DataType, quiet: bool = False
) -> Scalar:
    # quiet: the caller has numpy's floating-point errors ignored already (np.errstate).
    code = element.code
    if code == _SIGNED or code == _UNSIGNED:  # the common cases first, as below
        wrapping = _INT_WRAPPING.get(op)
        if wrapping is not None:  # what int_binary does for them
            bits = element.bits
            wrapped = wrapping(int(a), int(b)) & ((1 << bits) - 1)
            if code == _SIGNED and wrapped >= 1 << (bits - 1):
                wrapped -= 1 << bits
            return wrapped
    elif code == _IEEE:
        fop = _FLOAT_OPS.get(op)
        ieee = _IEEE_TYPES.get(element.bits)
        if fop is not None and ieee is not None:  # _float_type(element) is ieee
            if quiet:
                return ieee(fop(ieee(a), ieee(b)))
            with np.errstate(all="ignore"):
                return ieee(fop(ieee(a), ieee(b)))
    compare = _COMPARE.get(op)
    if compare is not None:
        return 1 if compare(a, b) else 0
    logical = _LOGICAL.get(op)
    if logical is not None:
        return logical(int(a), int(b))
    if element.is_float:
        fop = _FLOAT_OPS.get(op)
        if fop is None:
            raise TypeError(f"operator {op!r} is not defined on {element}")
        ftype = _float_type(element)
        with np.errstate(all="ignore"):  # IEEE results (inf, NaN) are the semantics
            return ftype(fop(ftype(a), ftype(b)))
    if not (element.is_integer or element.is_bool):
        raise TypeError(f"operator {op!r} is not defined on {element}")
    ia, ib = int(a), int(b)
    if op not in INT_BINARY_OPS:
        raise TypeError(f"operator {op!r} is not defined on {element}")
    result = int_binary(op, ia, ib, element)
    if result is None:  # what has no value raises, as the compiled kernel does
        if ib == 0:
            what = "division" if op in ("div", "floordiv") else "modulo"
            raise ZeroDivisionError(f"integer {what} by zero")
        raise OverflowError(f"integer division overflow: {ia} divided by -1 does not fit {element}")
    return result


scalar_binary = _scalar_binary
"""``binary`` for scalar operands (``operand.lanes == 1``)."""


def binary(op: str, a: Value, b: Value, operand: DataType) -> Value:
    """Apply the binary operator ``op`` to two values of type ``operand``, lane-wise."""
    if operand.lanes == 1:
        return _scalar_binary(op, a, b, operand)
    element = operand.element_of()
    result_element = _BOOL if op in _COMPARE else element
    lanes = [
        _scalar_binary(op, x, y, element)
        for x, y in zip(to_lanes(a, operand), to_lanes(b, operand))
    ]
    return pack(lanes, result_element.with_lanes(operand.lanes))


def logical_not(a: Value, dtype: DataType) -> Value:
    """Logical negation of a bool value."""
    return pack([0 if x else 1 for x in to_lanes(a, dtype)], dtype)


def select(cond: Value, cond_type: DataType, a: Value, b: Value, dtype: DataType) -> Value:
    """Lane-wise ``a if cond else b``; a scalar condition picks whole values."""
    if cond_type.lanes == 1:
        return a if cond else b
    return pack(
        [
            x if c else y
            for c, x, y in zip(to_lanes(cond, cond_type), to_lanes(a, dtype), to_lanes(b, dtype))
        ],
        dtype,
    )


# ---------------------------------------------------------------------------
# Casts
# ---------------------------------------------------------------------------


def _float_to_int(value: float, element: DataType) -> int:
    # Saturating conversion (llvm.fptosi.sat / llvm.fptoui.sat): NaN -> 0, clamp to range.
    if math.isnan(value):
        return 0
    low, high = int(element.min_value), int(element.max_value)
    if math.isinf(value):
        return high if value > 0 else low
    return max(low, min(high, math.trunc(value)))


def _cast_scalar(value: Scalar, src: DataType, dst: DataType) -> Scalar:
    if dst.is_bool:
        return 1 if value != 0 else 0  # NaN != 0 is true
    if src.is_float:
        if dst.is_float:
            with np.errstate(all="ignore"):  # overflow to inf is the semantics
                narrowed = np.array(value, dtype=src.numpy_dtype).astype(dst.numpy_dtype)
            return _float_type(dst)(narrowed)
        return _float_to_int(float(value), dst)
    # src is an integer or bool: an exact Python int
    ivalue = int(value)
    if dst.is_float:
        # One rounding from the exact integer, as sitofp/uitofp: numpy's C cast from the
        # source integer type does that (a detour through float64 could round twice).
        holder = np.array(ivalue, dtype=src.numpy_dtype if not src.is_bool else np.uint8)
        return _float_type(dst)(holder.astype(dst.numpy_dtype))
    if dst.is_integer:
        return wrap_int(ivalue, dst)
    raise TypeError(f"cannot cast {src} to {dst}")


def cast(value: Value, src: DataType, dst: DataType) -> Value:
    """Convert ``value`` of type ``src`` to ``dst`` (same lanes), lane-wise."""
    if src.lanes != dst.lanes:
        raise TypeError(f"cannot cast {src} to {dst}: lanes differ")
    if src.is_handle or dst.is_handle:
        if src.is_handle and dst.is_handle:
            return value
        address = getattr(value, "address", None)  # a memory.Pointer (no import: a cycle)
        if src.is_handle and dst.is_integer and dst.lanes == 1 and isinstance(address, int):
            return wrap_int(address, dst)
        raise TypeError(f"cannot cast {src} to {dst}")
    se, de = src.element_of(), dst.element_of()
    if src.lanes == 1:  # one lane: what pack(to_lanes(...)) gives
        return _cast_scalar(value, se, de)
    return pack([_cast_scalar(x, se, de) for x in to_lanes(value, src)], dst)


def reinterpret(value: Value, src: DataType, dst: DataType) -> Value:
    """Bit cast between types of the same total size (bool occupies one byte)."""
    raw = to_numpy(value, src)
    if src.is_bool:
        raw = raw.astype(np.uint8)
    if raw.nbytes != dst.itemsize:
        raise TypeError(f"reinterpret: {src} ({raw.nbytes} bytes) and {dst} differ in size")
    viewed = raw.view(np.uint8 if dst.is_bool else dst.element_of().numpy_dtype)
    return from_numpy(viewed, dst)
