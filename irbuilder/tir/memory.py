"""Buffers and memory: ``T.Buffer``, ``T.match_buffer``, ``T.allocate``,
``T.decl_buffer``, ``T.alloc_buffer`` and ``T.Ptr``.

``align <= 0`` means the default alignment (64 bytes) and ``offset_factor=0``
means 1, as in TVM; ``elem_offset=None`` is the constant 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..builder import IRBuilderError
from ..frames import AllocateFrame, BlockFrame, DeclBufferFrame, PrimFuncFrame
from ..ir import (
    Buffer,
    BufferLoad,
    BufferRegion,
    DataType,
    ExprLike,
    IntImm,
    MatchBufferRegion,
    PointerType,
    PrimExpr,
    Range,
    Sub,
    Var,
    const,
    convert,
    default_elem_offset,
    make_data_var,
)
from ..ir.expr_text import expr_text
from ..ir.linear_form import to_linear
from ._common import DTypeArg, as_expr, as_shape, builder, index_expr, span, to_dtype

__all__ = [
    "ALLOCATE_CONST_DATA",
    "Buffer_",
    "Ptr",
    "alloc_buffer",
    "allocate",
    "allocate_const",
    "decl_buffer",
    "match_buffer",
]

ALLOCATE_CONST_DATA = "tir.allocate_const_data"
"""Annotation of an ``Allocate`` made by ``T.allocate_const``: the constant elements (a tuple
of Python numbers, row-major). ``lowering.transforms.allocate_const`` turns it into initial
stores."""

ALLOCATE_CONST_LIMIT = 1 << 16
"""The most elements a ``T.allocate_const`` may hold (each becomes one store when built)."""

_DEFAULT_ALIGN = 64


def make_buffer(
    what: str,
    shape: Any,
    dtype: DTypeArg = "float32",
    data: Var | None = None,
    strides: Sequence[ExprLike] | None = None,
    elem_offset: ExprLike | None = None,
    scope: str = "global",
    align: int = -1,
    offset_factor: int = 0,
    buffer_type: str = "",
    axis_separators: Sequence[int] | None = None,
) -> Buffer:
    """A new Buffer with TVM's argument conventions; ``what`` names the caller in errors."""
    # TVM's "auto" (auto-broadcast) gives a dimension of extent 1 a zero stride; our entry
    # checks require the array's shape to match, so the only index of such a dimension is 0
    # and the buffer behaves as a default one (not recorded, printed without it).
    if buffer_type not in ("", "default", "auto"):
        raise NotImplementedError(f"{what}: buffer_type={buffer_type!r} is not supported")
    element = to_dtype(dtype)
    dims = as_shape(shape, what)
    if data is None:
        data = make_data_var("buffer_data", element, scope)
    elif not isinstance(data, Var) or not data.dtype.is_handle:
        raise TypeError(f"{what}: data must be a handle Var (e.g. A.data), got {data!r}")
    stride_exprs = tuple(index_expr(s, what) for s in strides) if strides else ()
    offset = default_elem_offset(dims) if elem_offset is None else index_expr(elem_offset, what)
    return Buffer(
        "buffer",
        data,
        dims,
        element,
        stride_exprs,
        offset,
        scope,
        align if align > 0 else _DEFAULT_ALIGN,
        offset_factor if offset_factor > 0 else 1,
        tuple(axis_separators or ()),
        span=span(),
    )


class _BufferFactory:
    """``T.Buffer(shape, dtype="float32", ...)`` or ``T.Buffer[shape, dtype]``: a buffer: a
    parameter annotation, or (with ``data=``) a view of existing memory.

    Parameters
    ----------
    shape : int, PrimExpr or tuple of them
        The extents; symbolic ones are variables (``n = T.int32()``).
    dtype : str or type object
        The element type (``"float32"``, ``T.int8``, ...).
    data : Var, optional
        The data pointer to view (default: a new one).
    strides : tuple, optional
        Element strides per dimension (default: row-major contiguous).
    elem_offset : int or PrimExpr, optional
        Offset of the first element from ``data``, in elements.
    scope : str
        Storage scope (``"global"``, ``"shared"``, ``"local"``; all plain memory on a CPU).
    align, offset_factor, buffer_type, axis_separators
        As in TVM; kept and printed.

    Returns
    -------
    Buffer
        As a parameter annotation, an array argument whose ndim, dtype, shape and
        strides the kernel checks at entry.

    Examples
    --------
    >>> @T.prim_func
    ... def scale(A: T.Buffer((3,), "float32"), s: T.float32):
    ...     for i in range(3):
    ...         A[i] = A[i] * s
    >>> a = np.ones(3, dtype="float32"); tvmscript.build(scale)(a, 2.0); print(a)
    [2. 2. 2.]
    """

    def __call__(
        self,
        shape: Any,
        dtype: DTypeArg = "float32",
        data: Var | None = None,
        strides: Sequence[ExprLike] | None = None,
        elem_offset: ExprLike | None = None,
        scope: str = "global",
        align: int = 0,
        offset_factor: int = 0,
        buffer_type: str = "",
        axis_separators: Sequence[int] | None = None,
    ) -> Buffer:
        """A new Buffer object (see the class documentation)."""
        return make_buffer(
            "T.Buffer",
            shape,
            dtype,
            data,
            strides,
            elem_offset,
            scope,
            align,
            offset_factor,
            buffer_type,
            axis_separators,
        )

    def __getitem__(self, key: Any) -> Buffer:
        """The subscript spelling ``T.Buffer[shape, dtype]`` (older TVMScript)."""
        if isinstance(key, tuple) and len(key) == 2 and not isinstance(key[1], (int, PrimExpr)):
            return self(key[0], key[1])
        return self(key)

    def __repr__(self) -> str:
        return "T.Buffer"


Buffer_ = _BufferFactory()
"""The ``T.Buffer`` object (exported as ``Buffer`` in the T namespace)."""


def Ptr(dtype: DTypeArg, storage_scope: str = "global") -> PointerType:
    """A pointer type annotation (``x: T.Ptr("float32")``); the parser makes the var.

    Parameters
    ----------
    dtype : str or type object
        The pointed-to element type.
    storage_scope : str
        The memory scope.

    Returns
    -------
    PointerType

    Examples
    --------
    >>> print(T.Ptr("float32"))
    PointerType(element=DataType('float32'), scope='global')
    """
    return PointerType(to_dtype(dtype), storage_scope)


def allocate(
    extents: Sequence[ExprLike] | ExprLike,
    dtype: DTypeArg,
    scope: str = "global",
    condition: ExprLike = True,
    annotations: dict[str, Any] | None = None,
) -> AllocateFrame:
    """Allocate ``prod(extents)`` elements; the frame yields the **data pointer**.

    Declare a buffer over the pointer with ``T.decl_buffer(shape, dtype, data=ptr)``. Our
    ``Allocate`` keeps one flattened extent (TVM keeps the list).

    Parameters
    ----------
    extents : list of int or PrimExpr
        The allocation's shape.
    dtype : str or type object
        Element type.
    scope : str
        Storage scope (``"global"``, ``"shared"``, ``"local"``).
    condition : bool or PrimExpr
        Allocate only where it holds (TVM's conditional allocation).
    annotations : dict, optional
        Recorded on the ``Allocate`` node.

    Returns
    -------
    AllocateFrame
        ``ptr = T.allocate(...)`` in a kernel; ``with T.allocate(...) as ptr`` in an
        IRBuilder.

    Examples
    --------
    >>> @T.prim_func
    ... def scratch(A: T.Buffer((3,), "float32")):
    ...     ptr = T.allocate([3], "float32", "global")
    ...     S = T.decl_buffer((3,), "float32", data=ptr)
    ...     for i in range(3):
    ...         S[i] = A[i] + T.float32(1)
    ...     for i in range(3):
    ...         A[i] = S[2 - i]
    >>> a = np.arange(3, dtype="float32"); tvmscript.build(scratch)(a); print(a)
    [3. 2. 1.]
    """
    builder("T.allocate")
    element = to_dtype(dtype)
    dims = as_shape(extents, "T.allocate")
    cond = as_expr(condition, "T.allocate")
    data = make_data_var("buffer_data", element, scope)
    return AllocateFrame(data, element, _product(dims), cond, annotations or {})


def allocate_const(
    data: Any,
    dtype: DTypeArg,
    extents: Sequence[ExprLike] | ExprLike,
    annotations: dict[str, Any] | None = None,
) -> AllocateFrame:
    """Memory holding the constants ``data``, which the kernel only reads.

    Built as an allocation filled by one store per element (at most 65536 elements).

    Parameters
    ----------
    data : list or numpy.ndarray
        The values, flattened row-major.
    dtype : str or type object
        Element type.
    extents : list of int
        The shape; its product is the number of values.
    annotations : dict, optional
        Recorded on the ``Allocate`` node.

    Returns
    -------
    AllocateFrame
        Yields the data pointer; declare a buffer over it with ``T.decl_buffer``.

    Examples
    --------
    >>> @T.prim_func
    ... def lookup(I: T.Buffer((2,), "int32"), O: T.Buffer((2,), "int32")):
    ...     tab = T.allocate_const([10, 20, 30], "int32", [3])
    ...     Tab = T.decl_buffer((3,), "int32", data=tab)
    ...     for i in range(2):
    ...         O[i] = Tab[I[i]]
    >>> o = np.zeros(2, dtype="int32")
    >>> tvmscript.build(lookup)(np.array([2, 0], dtype="int32"), o); print(o)
    [30 10]
    """
    builder("T.allocate_const")
    element = to_dtype(dtype)
    dims = as_shape(extents, "T.allocate_const")
    if not all(isinstance(d, IntImm) for d in dims):
        raise TypeError("T.allocate_const needs constant extents")
    count = 1
    for dim in dims:
        assert isinstance(dim, IntImm)
        count *= dim.value
    if count > ALLOCATE_CONST_LIMIT:
        raise ValueError(
            f"T.allocate_const: {count} elements; at most {ALLOCATE_CONST_LIMIT} are supported "
            "(the build initialises them one store each)"
        )
    values = np.asarray(data).reshape(-1)
    if values.size != count:
        raise ValueError(
            f"T.allocate_const: {values.size} values for extents of {count} elements"
        )
    # Each value must be a constant of the element type (a fraction into an integer type or
    # an out-of-range value is an error, as for T.int32(1.5)).
    constants = tuple(_const_value(v, element) for v in values.tolist())
    data_var = make_data_var("buffer_data", element, "global")
    notes = {**(annotations or {}), ALLOCATE_CONST_DATA: constants}
    return AllocateFrame(data_var, element, _product(dims), convert(True), notes)


def _const_value(value: Any, element: DataType) -> bool | int | float:
    if not isinstance(value, (bool, int, float)):
        raise TypeError(f"T.allocate_const: expected numbers, got {type(value).__name__}")
    number = getattr(const(value, element), "value", value)  # range and fraction checks
    if element.is_bool:
        return bool(number)
    return float(number) if element.is_float else int(number)


def _product(dims: Sequence[PrimExpr]) -> PrimExpr:
    if not dims:
        return convert(1)
    result = dims[0]
    for dim in dims[1:]:
        result = result * dim
    return result


def decl_buffer(
    shape: Any,
    dtype: DTypeArg = "float32",
    data: Var | None = None,
    strides: Sequence[ExprLike] | None = None,
    elem_offset: ExprLike | None = None,
    scope: str = "global",
    align: int = -1,
    offset_factor: int = 0,
    buffer_type: str = "",
    axis_separators: Sequence[int] | None = None,
) -> DeclBufferFrame:
    """Declare a buffer for the rest of the scope (a ``DeclBuffer``).

    Without ``data`` the memory is allocated too (``Allocate`` + ``DeclBuffer``); with
    ``data=other.data`` (or a ``T.allocate`` pointer) the buffer is a view of that memory
    with its own shape.

    Parameters
    ----------
    shape : int, PrimExpr or tuple of them
        The extents; symbolic ones are variables (``n = T.int32()``).
    dtype : str or type object
        The element type (``"float32"``, ``T.int8``, ...).
    data : Var, optional
        The data pointer to view (default: a new one).
    strides : tuple, optional
        Element strides per dimension (default: row-major contiguous).
    elem_offset : int or PrimExpr, optional
        Offset of the first element from ``data``, in elements.
    scope : str
        Storage scope (``"global"``, ``"shared"``, ``"local"``; all plain memory on a CPU).
    align, offset_factor, buffer_type, axis_separators
        As in TVM; kept and printed.

    Returns
    -------
    DeclBufferFrame
        ``B = T.decl_buffer(...)`` in a kernel; ``with T.decl_buffer(...) as B`` in an
        IRBuilder.

    Examples
    --------
    >>> @T.prim_func
    ... def as_matrix(A: T.Buffer((4,), "int32"), B: T.Buffer((2, 2), "int32")):
    ...     M = T.decl_buffer((2, 2), "int32", data=A.data)
    ...     for i, j in T.grid(2, 2):
    ...         B[i, j] = M[j, i]
    >>> b = np.zeros((2, 2), dtype="int32")
    >>> tvmscript.build(as_matrix)(np.arange(4, dtype="int32"), b); print(b)
    [[0 2]
     [1 3]]
    """
    builder("T.decl_buffer")
    buffer = make_buffer(
        "T.decl_buffer",
        shape,
        dtype,
        data,
        strides,
        elem_offset,
        scope,
        align,
        offset_factor,
        buffer_type,
        axis_separators,
    )
    extent = _product(buffer.shape) if data is None else None
    return DeclBufferFrame(buffer, extent)


def alloc_buffer(
    shape: Any,
    dtype: DTypeArg = "float32",
    data: Var | None = None,
    strides: Sequence[ExprLike] | None = None,
    elem_offset: ExprLike | None = None,
    scope: str = "global",
    align: int = -1,
    offset_factor: int = 0,
    buffer_type: str = "",
    axis_separators: Sequence[int] | None = None,
) -> Buffer:
    """Allocate a buffer owned by the innermost ``T.block`` (its ``alloc_buffers``).

    Outside any block (TVM 0.13+ sugar) the buffer goes to the function's implicit
    ``root`` block, which wraps the whole function body. Its contents start undefined.

    Parameters
    ----------
    shape : int, PrimExpr or tuple of them
        The extents; symbolic ones are variables (``n = T.int32()``).
    dtype : str or type object
        The element type (``"float32"``, ``T.int8``, ...).
    data : None
        Must be None (use ``T.decl_buffer(data=...)`` for a view).
    strides : tuple, optional
        Element strides per dimension (default: row-major contiguous).
    elem_offset : int or PrimExpr, optional
        Offset of the first element from ``data``, in elements.
    scope : str
        Storage scope (``"global"``, ``"shared"``, ``"local"``; all plain memory on a CPU).
    align, offset_factor, buffer_type, axis_separators
        As in TVM; kept and printed.

    Returns
    -------
    Buffer
        The new buffer, live for the whole block.

    Examples
    --------
    >>> @T.prim_func
    ... def twice_plus(A: T.Buffer((3,), "float32"), B: T.Buffer((3,), "float32")):
    ...     tmp = T.alloc_buffer((3,), "float32")
    ...     for i in range(3):
    ...         tmp[i] = A[i] * T.float32(2)
    ...     for i in range(3):
    ...         B[i] = tmp[i] + T.float32(1)
    >>> b = np.zeros(3, dtype="float32")
    >>> tvmscript.build(twice_plus)(np.arange(3, dtype="float32"), b); print(b)
    [1. 3. 5.]
    """
    b = builder("T.alloc_buffer")
    scope = scope or "global"  # TVM: the empty scope is the global one
    if data is not None:
        raise TypeError("T.alloc_buffer allocates its own data; use T.decl_buffer(data=...)")
    buffer = make_buffer(
        "T.alloc_buffer",
        shape,
        dtype,
        None,
        strides,
        elem_offset,
        scope,
        align,
        offset_factor,
        buffer_type,
        axis_separators,
    )
    block = b.find(BlockFrame)
    if block is not None:
        block.alloc_buffers.append(buffer)
        return buffer
    func = b.find(PrimFuncFrame)
    if func is None:
        top = b.top()
        where = "outside any frame" if top is None else f"inside {top.kind}"
        raise IRBuilderError(f"T.alloc_buffer must be inside T.prim_func or T.block, not {where}")
    func.root_alloc_buffers.append(buffer)
    return buffer


def match_buffer(
    param: Var | Buffer | BufferRegion | BufferLoad,
    shape: Any = None,
    dtype: DTypeArg | None = None,
    data: Var | None = None,
    strides: Sequence[ExprLike] | None = None,
    elem_offset: ExprLike | None = None,
    scope: str = "global",
    align: int = -1,
    offset_factor: int = 0,
    buffer_type: str = "",
    axis_separators: Sequence[int] | None = None,
) -> Buffer:
    """Bind a buffer: to a handle parameter (in a function) or to a region (in a block).

    In a function, ``param`` is a ``T.handle`` parameter and the buffer goes to the
    function's ``buffer_map`` (used like a ``T.Buffer`` parameter). In a block, ``param``
    is a region such as ``A[0:4, 0:4]`` (or a whole buffer) and the new buffer is a view of
    it; ``shape`` defaults to the region's extents and ``dtype`` to the source's.

    Parameters
    ----------
    param : Var, BufferRegion, BufferLoad or Buffer
        The handle parameter, or the region to view.
    shape : int, PrimExpr or tuple of them, optional
        The extents (symbolic ones are bound from the argument); in a block, by default the
        region's.
    dtype : str or type object, optional
        The element type (``"float32"``, ``T.int8``, ...).
    data : Var, optional
        The data pointer to view (default: a new one).
    strides : tuple, optional
        Element strides per dimension (default: row-major contiguous).
    elem_offset : int or PrimExpr, optional
        Offset of the first element from ``data``, in elements.
    scope : str
        Storage scope (``"global"``, ``"shared"``, ``"local"``; all plain memory on a CPU).
    align, offset_factor, buffer_type, axis_separators
        As in TVM; kept and printed.

    Returns
    -------
    Buffer
        The bound buffer.

    Examples
    --------
    >>> @T.prim_func
    ... def inc(a: T.handle, n: T.int32):
    ...     A = T.match_buffer(a, (n,), "int64")
    ...     for i in range(n):
    ...         A[i] = A[i] + T.int64(1)
    >>> arr = np.array([5, 6], dtype="int64"); tvmscript.build(inc)(arr, 2); print(arr)
    [6 7]
    """
    b = builder("T.match_buffer")
    top = b.top()
    if isinstance(top, BlockFrame):
        region = _as_region(param)
        extents = [r.extent for r in region.region] if shape is None else shape
        if elem_offset is None and offset_factor != 0:
            # As in TVM: with an offset_factor and no elem_offset, the view's offset is a
            # new variable, bound to where its region starts (``sub.elem_offset``).
            dims = as_shape(extents, "T.match_buffer")
            elem_offset = Var("elem_offset", dims[0].dtype if dims else to_dtype("int32"))
        buffer = make_buffer(
            "T.match_buffer",
            extents,
            region.buffer.dtype if dtype is None else dtype,
            data,
            strides,
            elem_offset,
            scope,
            align,
            offset_factor,
            buffer_type,
            axis_separators,
        )
        _check_region_shape(buffer.shape, region)
        top.match_buffers.append(MatchBufferRegion(buffer, region, span=span()))
        return buffer
    if isinstance(top, PrimFuncFrame):
        if not isinstance(param, Var) or not any(p is param for p in top.params):
            raise IRBuilderError(
                "T.match_buffer in T.prim_func needs a handle parameter added with T.arg, "
                f"got {param!r}"
            )
        if any(k is param for k in top.buffer_map):
            raise IRBuilderError(f"T.match_buffer: parameter {param.name!r} is already matched")
        if shape is None:
            raise TypeError("T.match_buffer on a parameter needs a shape")
        buffer = make_buffer(
            "T.match_buffer",
            shape,
            "float32" if dtype is None else dtype,
            data,
            strides,
            elem_offset,
            scope,
            align,
            offset_factor,
            buffer_type,
            axis_separators,
        )
        buffer.set_name_hint(param.name)
        top.buffer_map[param] = buffer
        return buffer
    where = "outside any frame" if top is None else f"inside {top.kind}"
    raise IRBuilderError(
        f"T.match_buffer must be directly inside T.prim_func or T.block, not {where}"
    )


def _check_region_shape(shape: Sequence[PrimExpr], region: BufferRegion) -> None:
    """Refuse a view whose shape cannot be the region's, as TVM's MatchBufferRegion does:
    the view's dimensions match the region's last ones extent for extent, and the region's
    leading extra dimensions have extent 1 (no reshaping: a (4,) region is no (2, 2) view).
    A shape variable is bound to the extent; symbolic extents are refused only when
    provably different (the lowering binds or checks the rest)."""
    name, rank, k = region.buffer.name, len(region.region), len(shape)
    if k > rank:
        raise ValueError(
            f"T.match_buffer: a {k}-d view of a {rank}-d region of {name!r}; the view may "
            "drop leading dimensions of extent 1, not add any"
        )
    extents = [r.extent for r in region.region]
    for dim, extent in enumerate(extents[: rank - k]):
        if _provably_unequal(extent, const(1, extent.dtype)):
            raise ValueError(
                f"T.match_buffer: the region of {name!r} has extent {expr_text(extent)} in "
                f"dimension {dim}, which the {k}-d view drops; only extent-1 dimensions can "
                "be dropped"
            )
    for dim, (want, extent) in enumerate(zip(shape, extents[rank - k :])):
        if not isinstance(want, Var) and _provably_unequal(want, extent):
            raise ValueError(
                f"T.match_buffer: shape[{dim}] is {expr_text(want)} but the region of "
                f"{name!r} has extent {expr_text(extent)} there"
            )


def _provably_unequal(a: PrimExpr, b: PrimExpr) -> bool:
    if isinstance(a, IntImm) and isinstance(b, IntImm):
        return a.value != b.value
    if a.dtype != b.dtype or not a.dtype.is_int:
        return False
    gap = to_linear(Sub(a, b), wrap=False)
    return gap.is_const and gap.const != 0


def _as_region(value: Any) -> BufferRegion:
    """A BufferRegion from a region, a whole buffer or a point load."""
    if isinstance(value, BufferRegion):
        return value
    if isinstance(value, Buffer):
        return value.full_region()
    if isinstance(value, BufferLoad):
        # the unit extent has the index's type, as TVM's BufferRegion::FromPoint
        return BufferRegion(
            value.buffer,
            tuple(
                Range(i, const(1, i.dtype) if i.dtype.is_int and i.dtype.lanes == 1 else convert(1))
                for i in value.indices
            ),
        )
    raise TypeError(f"expected a buffer region such as A[0:4, j], got {type(value).__name__}")
