"""Byte-addressed memory of the reference interpreter.

Each data var points into a :class:`Storage`: one flat ``uint8`` numpy array.
Argument arrays are viewed in place (writes reach the caller's array, aliases
of one data var share the bytes); allocations get fresh storage filled with a
recognisable garbage pattern (NaN for float element types, ``0xCD`` bytes
otherwise) because TIR leaves allocated memory uninitialised and a test that
reads it should see nonsense, not zeros. Every access is bounds-checked and
raises ``IndexError`` naming the buffer (compiled code would just corrupt memory).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

from irbuilder.ir import DataType

from .values import Value, element_numpy_dtype, from_numpy, to_numpy

__all__ = ["GARBAGE_BYTE", "Pointer", "Storage", "allocate", "pointer_to_array"]

GARBAGE_BYTE = 0xCD
"""Fill byte of fresh allocations whose element type is not a float."""


class Storage:
    """One contiguous block of bytes that pointers point into."""

    __slots__ = ("_views", "bytes", "name")

    def __init__(self, data: np.ndarray[Any, Any], name: str) -> None:
        self.bytes = data
        self.name = name
        self._views: dict[tuple[np.dtype[Any], int], tuple[Any, np.ndarray[Any, Any]]] = {}

    def typed_view(self, dtype: np.dtype[Any], itemsize: int, phase: int) -> np.ndarray[Any, Any]:
        """The bytes from ``phase`` on as a 1-d array of ``dtype`` (``itemsize`` bytes per
        element; a trailing partial element left out), over the same memory: element ``k``
        is the bytes ``phase + k * itemsize`` on. Kept for the next access."""
        key = (dtype, phase)
        entry = self._views.get(key)
        if entry is not None and entry[0] is self.bytes:
            return entry[1]
        data = self.bytes
        count = max(data.size - phase, 0) // itemsize
        view = data[phase : phase + count * itemsize].view(dtype)
        self._views[key] = (data, view)
        return view

    def __repr__(self) -> str:
        return f"Storage({self.name!r}, {self.bytes.size} bytes)"


@dataclass(frozen=True, slots=True)
class Pointer:
    """A ``handle`` value: a byte ``offset`` into ``storage``."""

    storage: Storage
    offset: int

    def __add__(self, nbytes: int) -> Pointer:
        return Pointer(self.storage, self.offset + nbytes)

    @property
    def address(self) -> int:
        """The machine address it stands for (what ``T.Cast("uint64", data)`` gives): argument
        arrays are viewed in place, so two arguments over one memory compare as compiled
        code sees them."""
        return int(self.storage.bytes.ctypes.data) + self.offset

    def copy_from(self, source: Pointer, nbytes: int, what: str) -> None:
        """``memcpy(self, source, nbytes)`` (overlapping ranges copy as ``memmove``)."""
        data = source._span(0, nbytes, what).copy()
        self._span(0, nbytes, what)[:] = data

    def _span(self, byte_offset: int, nbytes: int, what: str) -> np.ndarray[Any, Any]:
        start = self.offset + byte_offset
        size = self.storage.bytes.size
        if start < 0 or start + nbytes > size:
            raise IndexError(
                f"{what}: out-of-bounds access of {nbytes} bytes at byte {start} "
                f"of {self.storage.name!r} ({size} bytes)"
            )
        return self.storage.bytes[start : start + nbytes]

    def load(self, byte_offset: int, dtype: DataType, what: str) -> Value:
        """Read one value of ``dtype`` (scalar or vector) at ``byte_offset``."""
        raw = self._span(byte_offset, dtype.itemsize, what)
        if dtype.is_bool:
            return from_numpy(raw != 0, dtype)
        lanes = raw.view(element_numpy_dtype(dtype))
        if dtype.lanes == 1:  # fast path: scalars are most accesses
            item = lanes[0]
            return item if dtype.is_float else int(item)
        return from_numpy(lanes, dtype)

    def store(self, byte_offset: int, dtype: DataType, value: Value, what: str) -> None:
        """Write one value of ``dtype`` at ``byte_offset``."""
        raw = self._span(byte_offset, dtype.itemsize, what)
        data = to_numpy(value, dtype)
        if dtype.is_bool:
            data = data.astype(np.uint8)
        if not raw.flags.writeable:
            raise ValueError(f"{what}: cannot write to read-only memory {self.storage.name!r}")
        raw[:] = data.view(np.uint8)

    def fill(self, byte: int, nbytes: int, what: str) -> None:
        """``memset``: set ``nbytes`` bytes to ``byte`` (taken modulo 256)."""
        raw = self._span(0, nbytes, what)
        if not raw.flags.writeable:
            raise ValueError(f"{what}: cannot write to read-only memory {self.storage.name!r}")
        raw[:] = byte & 0xFF


def allocate(nbytes: int, element: DataType, name: str) -> Pointer:
    """Fresh storage of ``nbytes`` bytes filled with the garbage pattern for ``element``."""
    if nbytes < 0:
        raise ValueError(f"allocation {name!r} has a negative size of {nbytes} bytes")
    if element.is_float:
        count = -(-nbytes // element.element_of().itemsize)
        filled = np.full(count, np.nan, dtype=element.element_of().numpy_dtype)
        data = filled.view(np.uint8)[:nbytes].copy()
    else:
        data = np.full(nbytes, GARBAGE_BYTE, dtype=np.uint8)
    return Pointer(Storage(data, name), 0)


def pointer_to_array(array: np.ndarray[Any, Any], name: str) -> Pointer:
    """A pointer to element 0 of ``array`` over a byte view of all the memory it spans.

    Works for any strides (negative, broadcast, non-contiguous): the view starts
    at the lowest address the array touches and ends after the highest.
    """
    if array.size == 0:
        return Pointer(Storage(np.zeros(0, dtype=np.uint8), name), 0)
    low = high = 0
    lowest_index: list[int] = []
    for extent, stride in zip(array.shape, array.strides):
        reach = (extent - 1) * stride
        if reach < 0:
            low += reach
            lowest_index.append(extent - 1)
        else:
            high += reach
            lowest_index.append(0)
    span = high - low + array.itemsize
    # ``array[()]`` of a 0-d array is a scalar copy; ``array[...]`` is a view of it.
    window = array[tuple(slice(i, i + 1) for i in lowest_index)] if lowest_index else array[...]
    first = window.reshape(1).view(np.uint8)
    data = as_strided(first, shape=(span,), strides=(1,), writeable=array.flags.writeable)
    return Pointer(Storage(data, name), -low)
