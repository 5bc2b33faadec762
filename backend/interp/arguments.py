"""Binding (and checking) a PrimFunc's arguments for the reference interpreter.

Buffer params take numpy arrays (anything else is converted by the compiled entry's slow-path
conversion, :func:`backend.abi.call_args.as_ndarray`, with its messages); their data var
points at the array's memory, and unbound symbolic dims, strides (in elements) and
``elem_offset`` vars are bound from the first array that mentions them. Checks, when asked
for, raise:

- ``TypeError``: wrong argument count, wrong array dtype, a non-number for a scalar;
- ``ValueError``: wrong rank, extent, strides (non-contiguous array for a buffer
  without strides), or a read-only array for a buffer the function writes;
- ``ValueError``: an integer scalar outside its type's range.

Every message names the parameter.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from irbuilder.ir import (
    Buffer,
    BufferStore,
    IntImm,
    PrimExpr,
    PrimFunc,
    Var,
    expr_text,
    post_order_visit,
)

from ..abi.call_args import as_ndarray
from . import values as V
from .memory import Pointer, pointer_to_array

__all__ = ["ArrayArg", "bind_arguments", "written_data_vars"]


@dataclass(frozen=True, slots=True)
class ArrayArg:
    """The value of a buffer param's handle: the array and a pointer to its data."""

    array: np.ndarray[Any, Any]
    pointer: Pointer


def written_data_vars(func: PrimFunc) -> set[int]:
    """``id`` of every data var that some ``BufferStore`` of ``func`` writes through."""
    written: set[int] = set()

    def visit(node: Any) -> None:
        if isinstance(node, BufferStore):
            written.add(id(node.buffer.data))

    post_order_visit(func.body, visit)
    return written


def _scalar(param: Var, arg: Any, check: bool) -> V.Value:
    dtype = param.dtype
    name = param.name
    if dtype.is_float:
        if check and not isinstance(arg, (numbers.Real, np.bool_)):
            raise TypeError(f"argument {name!r}: expected a number for {dtype}, got {arg!r}")
        return V.from_python(float(arg), dtype)
    if dtype.is_bool:
        if check and not isinstance(arg, (bool, np.bool_, numbers.Integral)):
            raise TypeError(f"argument {name!r}: expected a bool, got {arg!r}")
        return 1 if arg else 0
    if dtype.is_integer:
        if check and not isinstance(arg, (numbers.Integral, np.bool_)):
            raise TypeError(f"argument {name!r}: expected an integer for {dtype}, got {arg!r}")
        value = int(arg)
        if check and not dtype.min_value <= value <= dtype.max_value:
            raise ValueError(f"argument {name!r}: {value} does not fit in {dtype}")
        return V.wrap_int(value, dtype)
    if dtype.is_handle:
        if isinstance(arg, np.ndarray):
            return ArrayArg(arg, pointer_to_array(arg, name))
        return arg
    raise TypeError(f"argument {name!r}: unsupported parameter type {dtype}")


def _as_array(
    func_name: str, param: Var, buffer: Buffer, arg: Any, check: bool
) -> np.ndarray[Any, Any]:
    array = as_ndarray(arg, func_name, param.name, str(buffer.dtype.element_of()))
    if check:
        expected = buffer.dtype.element_of().numpy_dtype
        # The messages are the native entry checks' (lowering.abi.entry_checks).
        if array.ndim != buffer.ndim:
            raise TypeError(f"{buffer.name}: expected ndim == {buffer.ndim}, got {array.ndim}")
        if array.dtype != expected:
            raise TypeError(f"{buffer.name}: expected dtype {buffer.dtype}, got {array.dtype}")
    return array


def bind_arguments(
    func: PrimFunc,
    args: Sequence[Any],
    bind: Callable[[Var, Any], None],
    lookup: Callable[[Var], Any],
    evaluate: Callable[[PrimExpr], Any],
    *,
    check: bool,
    written: set[int] | None = None,
) -> None:
    """Bind ``func``'s params (and their buffers' vars) to ``args``; check them if asked.

    ``written`` is :func:`written_data_vars` of ``func`` (computed when omitted).
    """
    params = func.params
    if len(args) != len(params):
        raise TypeError(
            f"{func.name}() takes {len(params)} argument{'s' if len(params) != 1 else ''} "
            f"({len(args)} given)"
        )
    arrays: list[tuple[Var, Buffer, np.ndarray[Any, Any]]] = []
    for param, arg in zip(params, args):
        buffer = func.buffer_map.get(param)
        if buffer is None:
            bind(param, _scalar(param, arg, check))
            continue
        array = _as_array(func.name, param, buffer, arg, check)
        pointer = pointer_to_array(array, param.name)
        bind(param, ArrayArg(array, pointer))
        bind(buffer.data, pointer)
        arrays.append((param, buffer, array))
        itemsize = buffer.dtype.itemsize
        for k, dim in enumerate(buffer.shape):
            if isinstance(dim, Var) and k < array.ndim and lookup(dim) is None:
                bind(dim, V.wrap_int(array.shape[k], dim.dtype))
        for k, stride in enumerate(buffer.strides):
            if isinstance(stride, Var) and k < array.ndim and lookup(stride) is None:
                if check and array.strides[k] % itemsize:
                    raise ValueError(
                        f"argument {param.name!r}: stride {array.strides[k]} bytes of "
                        f"dim {k} is not a multiple of the element size {itemsize}"
                    )
                bind(stride, V.wrap_int(array.strides[k] // itemsize, stride.dtype))
        if isinstance(buffer.elem_offset, Var) and lookup(buffer.elem_offset) is None:
            bind(buffer.elem_offset, 0)
    if not check:
        return
    if written is None:
        written = written_data_vars(func)
    for param, buffer, array in arrays:
        _check_layout(param, buffer, array, evaluate)
        if id(buffer.data) in written and not array.flags.writeable:
            raise ValueError(f"{buffer.name}: expected a writable array, got a read-only one")


def _check_layout(
    param: Var, buffer: Buffer, array: np.ndarray[Any, Any], evaluate: Callable[[PrimExpr], Any]
) -> None:
    for k, dim in enumerate(buffer.shape):
        expected = int(evaluate(dim))
        if array.shape[k] != expected:
            shown = expr_text(dim, casts=False)
            text = str(expected) if isinstance(dim, IntImm) else f"{shown} = {expected}"
            raise ValueError(f"{buffer.name}: expected shape[{k}] == {text}, got {array.shape[k]}")
    itemsize = buffer.dtype.itemsize
    if array.size == 0:
        return  # no element is addressed (numpy 2 gives empty arrays zero strides)
    if buffer.strides:
        for k, stride in enumerate(buffer.strides):
            expected = int(evaluate(stride)) * itemsize
            if array.shape[k] > 1 and array.strides[k] != expected:
                raise ValueError(
                    f"{buffer.name}: expected strides[{k}] == {expected} bytes, "
                    f"got {array.strides[k]}"
                )
        return
    contiguous = itemsize
    for k in reversed(range(array.ndim)):
        if array.shape[k] > 1 and array.strides[k] != contiguous:
            raise ValueError(
                f"{buffer.name}: expected a C-contiguous array (strides[{k}] == {contiguous} "
                f"bytes), got strides[{k}] == {array.strides[k]}"
            )
        contiguous *= array.shape[k]
