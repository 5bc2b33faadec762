"""The entry builtins of lowered code: ``T.array_*`` and ``T.format_message``.

``insert_entry_checks`` writes the argument checks of a kernel's entry with these calls
(``get_source("tir")`` shows them), and the printed, lowered function re-parses through
them. Each reads one field of the numpy array passed for a handle parameter; the code
generator lowers them to loads from the array object (docs/calling-convention.md). They
are builtin calls: a kernel may use them too, only on a handle parameter of its own.
"""

from __future__ import annotations

from typing import Any

from irbuilder import ir as _ir
from irbuilder.ir import Call, CallKind, PrimExpr, StringImm, Var, as_dtype, convert

__all__ = [
    "array_data",
    "array_descr",
    "array_dtype_is",
    "array_flags",
    "array_ndim",
    "array_shape",
    "array_stride",
    "format_message",
]


def _builtin(name: str, dtype: str, *args: Any) -> PrimExpr:
    exprs = tuple(StringImm(a) if isinstance(a, str) else convert(a) for a in args)
    return Call(as_dtype(dtype), name, exprs, CallKind.BUILTIN)


def array_data(handle: Var) -> PrimExpr:
    """The data pointer of the numpy array passed for ``handle``.

    Parameters
    ----------
    handle : Var
        A handle parameter of the kernel.

    Returns
    -------
    PrimExpr
        A ``handle``-typed call: the address of the array's first element.

    Examples
    --------
    >>> from tvmscript import tir as T
    >>> T.array_data(T.handle()).dtype
    DataType('handle')
    """
    return _builtin("array_data", "handle", handle)


def array_ndim(handle: Var) -> PrimExpr:
    """The number of dimensions of the numpy array passed for ``handle``.

    Parameters
    ----------
    handle : Var
        A handle parameter of the kernel.

    Returns
    -------
    PrimExpr
        An ``int32`` call.

    Examples
    --------
    >>> from tvmscript import tir as T
    >>> T.array_ndim(T.handle()).dtype
    DataType('int32')
    """
    return _builtin("array_ndim", "int32", handle)


def array_shape(handle: Var, axis: Any) -> PrimExpr:
    """The extent of dimension ``axis`` of the numpy array passed for ``handle``.

    Parameters
    ----------
    handle : Var
        A handle parameter of the kernel.
    axis : int or PrimExpr
        The dimension, counted from 0; the entry checks ``array_ndim`` first.

    Returns
    -------
    PrimExpr
        An ``int64`` call.

    Examples
    --------
    >>> from tvmscript import tir as T
    >>> T.array_shape(T.handle(), 1).args[1]
    IntImm(int32, 1)
    """
    return _builtin("array_shape", "int64", handle, axis)


def array_stride(handle: Var, axis: Any) -> PrimExpr:
    """The stride of dimension ``axis`` of the array passed for ``handle``, in bytes.

    Parameters
    ----------
    handle : Var
        A handle parameter of the kernel.
    axis : int or PrimExpr
        The dimension, counted from 0.

    Returns
    -------
    PrimExpr
        An ``int64`` call (numpy's ``strides[axis]``; may be zero or negative).

    Examples
    --------
    >>> from tvmscript import tir as T
    >>> T.array_stride(T.handle(), 0).dtype
    DataType('int64')
    """
    return _builtin("array_stride", "int64", handle, axis)


def array_flags(handle: Var) -> PrimExpr:
    """numpy's flag bits of the array passed for ``handle`` (writeable, aligned, ...).

    Parameters
    ----------
    handle : Var
        A handle parameter of the kernel.

    Returns
    -------
    PrimExpr
        An ``int32`` call; the entry tests bits of it (``NPY_ARRAY_WRITEABLE`` is 0x400).

    Examples
    --------
    >>> from tvmscript import tir as T
    >>> T.array_flags(T.handle()).op
    'array_flags'
    """
    return _builtin("array_flags", "int32", handle)


def array_dtype_is(handle: Var, dtype: str) -> PrimExpr:
    """Whether the array passed for ``handle`` has element type ``dtype``.

    Parameters
    ----------
    handle : Var
        A handle parameter of the kernel.
    dtype : str
        A TVMScript type name (``"float32"``, ``"int8"``, ``"bool"``).

    Returns
    -------
    PrimExpr
        A ``bool`` call.

    Examples
    --------
    >>> from tvmscript import tir as T
    >>> T.array_dtype_is(T.handle(), "float32").args[1]
    StringImm('float32')
    """
    return _builtin("array_dtype_is", "bool", handle, dtype)


def array_descr(handle: Var) -> PrimExpr:
    """The numpy dtype object of the array passed for ``handle``, for error messages.

    Parameters
    ----------
    handle : Var
        A handle parameter of the kernel.

    Returns
    -------
    PrimExpr
        A ``handle`` call, valid only as a value of :func:`format_message` (it prints as
        the array's dtype, e.g. ``float64``).

    Examples
    --------
    >>> from tvmscript import tir as T
    >>> h = T.handle()
    >>> msg = T.format_message("TypeError: expected float32, got {}", T.array_descr(h))
    >>> msg.args[1].op
    'array_descr'
    """
    return _builtin("array_descr", "handle", handle)


def format_message(template: str, *values: Any) -> PrimExpr:
    """An assertion message with run-time values: each ``{}`` takes the next value.

    Values are scalar integers or bools (or ``T.array_descr(h)``), at most four;
    ``{{`` and ``}}`` are literal braces.

    Parameters
    ----------
    template : str
        The message; a ``TypeError: ``, ``ValueError: `` or ``IndexError: `` prefix picks
        the exception raised, ``AssertionError`` otherwise.
    *values : PrimExpr
        One per ``{}``.

    Returns
    -------
    PrimExpr
        Valid only as the message of ``assert`` / ``T.Assert``.

    Examples
    --------
    >>> from tvmscript import tir as T
    >>> n = T.int32()
    >>> msg = T.format_message("ValueError: expected 4 rows, got {}", n)
    >>> msg.op, len(msg.args)
    ('format_message', 2)
    """
    if not isinstance(template, str):
        raise TypeError(
            f"T.format_message: the template must be a string, got {type(template).__name__}"
        )
    return _ir.format_message(template, *(convert(v) for v in values))
