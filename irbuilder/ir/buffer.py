"""Buffers (views over a data pointer), ranges, iteration variables and regions."""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .dtype import DataType, as_dtype
from .expr import (
    BufferLoad,
    Call,
    CallKind,
    ExprLike,
    IntImm,
    PointerType,
    PrimExpr,
    Ramp,
    Var,
    _set,
    const,
    convert,
)
from .span import Span

__all__ = [
    "Buffer",
    "BufferRegion",
    "IterKind",
    "IterVar",
    "MatchBufferRegion",
    "Range",
    "default_elem_offset",
    "make_data_var",
]


def default_elem_offset(shape: Sequence[PrimExpr]) -> IntImm:
    """The ``elem_offset`` a buffer gets when none is given: 0 of TVM's index type for it,
    int32 (this library's default index type), except that a 0-d buffer takes int64, as
    TVM's (``BufferNode::DefaultIndexType``: no first dimension to take it from, TVM's
    default index type is int64)."""
    return IntImm(as_dtype("int32" if shape else "int64"), 0)


# the field default, replaced by default_elem_offset(shape) when the buffer is built
_DEFAULT_OFFSET = IntImm(as_dtype("int32"), 0)


@dataclass(frozen=True, eq=False, slots=True)
class Range:
    """The half-open interval ``[min, min + extent)``."""

    min: PrimExpr
    extent: PrimExpr
    span: Span | None = field(default=None, kw_only=True, repr=False)

    @staticmethod
    def from_min_extent(begin: ExprLike, extent: ExprLike) -> Range:
        return Range(convert(begin), convert(extent))

    __hash__ = object.__hash__


class IterKind(enum.Enum):
    """The role of a block iteration variable (``T.axis.*``)."""

    SPATIAL = "S"
    REDUCE = "R"
    SCAN = "C"
    OPAQUE = "O"
    THREAD = "T"


@dataclass(frozen=True, eq=False, slots=True)
class IterVar:
    """An iteration variable with its domain and role; it defines ``var``."""

    var: Var
    dom: Range
    kind: IterKind = IterKind.SPATIAL
    thread_tag: str = ""
    span: Span | None = field(default=None, kw_only=True, repr=False)

    __hash__ = object.__hash__


def make_data_var(name: str, dtype: DataType, scope: str = "global") -> Var:
    """A fresh ``handle`` var that points to ``dtype`` elements."""
    return Var(name, as_dtype("handle"), PointerType(dtype, scope))


@dataclass(frozen=True, eq=False, slots=True)
class Buffer:
    """A typed, shaped view of memory starting at the pointer ``data``.

    Several buffers may share one ``data`` var (aliases). A buffer is
    identified by the object; ``name`` is a printing hint. Subscripting builds
    loads (``A[i, j]``) and regions (``A[0:4, j]``).
    """

    name: str
    data: Var
    shape: tuple[PrimExpr, ...]
    dtype: DataType
    strides: tuple[PrimExpr, ...] = ()
    elem_offset: PrimExpr = _DEFAULT_OFFSET
    scope: str = "global"
    data_alignment: int = 64
    offset_factor: int = 1
    axis_separators: tuple[int, ...] = ()
    span: Span | None = field(default=None, kw_only=True, repr=False)

    __hash__ = object.__hash__

    def __post_init__(self) -> None:
        _set(self, "dtype", as_dtype(self.dtype))
        _set(self, "shape", tuple(convert(s) for s in self.shape))
        _set(self, "strides", tuple(convert(s) for s in self.strides))
        if self.elem_offset is _DEFAULT_OFFSET:
            _set(self, "elem_offset", default_elem_offset(self.shape))
        _set(self, "elem_offset", convert(self.elem_offset))
        _set(self, "axis_separators", tuple(int(a) for a in self.axis_separators))
        if not self.data.dtype.is_handle:
            raise TypeError(
                f"buffer {self.name!r}: data must be a handle var, got {self.data.dtype}"
            )
        for dim in self.shape:
            if isinstance(dim, IntImm) and dim.value < 0:
                raise ValueError(f"buffer {self.name!r}: negative dimension {dim.value}")
        if self.strides and len(self.strides) != len(self.shape):
            raise ValueError(
                f"buffer {self.name!r}: {len(self.strides)} strides for {len(self.shape)} dims"
            )

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def set_name_hint(self, name: str) -> None:
        """Rename for printing (and the data var, when it follows the buffer's name)."""
        old = self.name
        _set(self, "name", name)
        if self.data.name in (old, f"{old}_data", "data", "v"):
            self.data.set_name_hint(f"{name}_data")

    if TYPE_CHECKING:
        # ``C[i] = v`` in a @T.prim_func body is parsed, never run; type checkers must
        # accept it (tvmscript.mypy_plugin, docs/typing.md).
        def __setitem__(self, key: Any, value: Any) -> None: ...

    def __getitem__(self, key: Any) -> Any:
        # TVM takes a list of indices too (`B[spatial]` after `for *spatial, k in ...`).
        indices = tuple(key) if isinstance(key, (tuple, list)) else (key,)
        if any(isinstance(i, slice) and i.step is not None for i in indices):
            return self._strided_load(indices)
        if any(isinstance(i, slice) for i in indices):
            return self._region(indices)
        exprs = tuple(convert(i) for i in indices)
        if len(exprs) != len(self.shape):
            raise IndexError(
                f"buffer {self.name!r} has {len(self.shape)} dimensions, "
                f"indexed with {len(exprs)} indices"
            )
        return BufferLoad(self, exprs)

    def _strided_load(self, indices: Sequence[Any]) -> BufferLoad:
        # TVM's Buffer.__getitem__: a slice with a step is a vector load of a Ramp.
        if len(indices) != len(self.shape):
            raise IndexError(
                f"buffer {self.name!r} has {len(self.shape)} dimensions, "
                f"indexed with {len(indices)} indices"
            )
        exprs: list[PrimExpr] = []
        for index, extent in zip(indices, self.shape):
            if not isinstance(index, slice):
                exprs.append(convert(index))
                continue
            begin = convert(0 if index.start is None else index.start)
            stop = extent if index.stop is None else convert(index.stop)
            step = convert(1 if index.step is None else index.step)
            count = _simplify_extent(stop, begin)
            if not (isinstance(count, IntImm) and isinstance(step, IntImm) and step.value > 0):
                raise ValueError(
                    f"buffer {self.name!r}: a strided slice needs a constant length and step"
                )
            lanes = -(-count.value // step.value)
            if lanes == 1:
                exprs.append(begin)
            else:
                exprs.append(Ramp(begin, step.astype(begin.dtype), lanes))
        return BufferLoad(self, tuple(exprs))

    def _region(self, indices: Sequence[Any]) -> BufferRegion:
        if len(indices) != len(self.shape):
            raise IndexError(
                f"buffer {self.name!r} has {len(self.shape)} dimensions, region has {len(indices)}"
            )
        ranges: list[Range] = []
        for index, extent in zip(indices, self.shape):
            if isinstance(index, slice):
                if index.step not in (None, 1):
                    raise ValueError(f"buffer {self.name!r}: region slices need step 1")
                begin = convert(0 if index.start is None else index.start)
                stop = extent if index.stop is None else convert(index.stop)
                ranges.append(Range(begin, _simplify_extent(stop, begin)))
            elif isinstance(index, Ramp):
                ranges.append(Range(index.base, convert(index.lanes)))
            else:
                # The unit extent has the index's type, as TVM's (int64 index: int64 1).
                point = convert(index)
                unit = point.dtype.is_int and point.dtype.lanes == 1
                ranges.append(Range(point, const(1, point.dtype) if unit else convert(1)))
        return BufferRegion(self, tuple(ranges))

    def access_ptr(
        self,
        access_mask: str | int,
        ptr_type: str = "handle",
        content_lanes: int = 1,
        offset: ExprLike = 0,
        extent: ExprLike | None = None,
    ) -> PrimExpr:
        """TVM's ``A.access_ptr("rw")``: the builtin ``tvm_access_ptr(type_annotation,
        data, elem_offset + offset, extent, mask)`` (mask bits: 1 read, 2 write)."""
        if isinstance(access_mask, str):
            if not access_mask or set(access_mask) - {"r", "w"}:
                raise ValueError(f"access_ptr: mask must be 'r', 'w' or 'rw', got {access_mask!r}")
            mask = ("r" in access_mask) * 1 + ("w" in access_mask) * 2
        else:
            mask = int(access_mask)
        dtype = self.dtype if content_lanes == 1 else self.dtype.with_lanes(content_lanes)
        begin = convert(offset)
        begin = self.elem_offset if _is_zero(begin) else self.elem_offset + begin
        if extent is None:
            size: PrimExpr = convert(1)
            for dim in self.shape:
                size = dim if _is_one(size) else size * dim
            extent = size if _is_zero(convert(offset)) else size - convert(offset)
        handle = as_dtype(ptr_type)
        annotation = Call(dtype, "type_annotation", (), CallKind.BUILTIN)
        args = (annotation, self.data, begin, convert(extent), convert(mask))
        return Call(handle, "tvm_access_ptr", args, CallKind.BUILTIN)

    def _vector_indices(
        self, begin: Sequence[ExprLike], lanes: int, what: str
    ) -> tuple[PrimExpr, ...]:
        indices = [convert(i) for i in begin]
        if len(indices) != len(self.shape):
            raise IndexError(
                f"buffer {self.name!r}.{what}: {len(indices)} indices for {len(self.shape)} dims"
            )
        factor, rest = divmod(lanes, self.dtype.lanes)
        if rest:
            raise TypeError(f"buffer {self.name!r}.{what}: {lanes} lanes of {self.dtype}")
        if factor > 1:
            indices[-1] = Ramp(indices[-1], convert(1).astype(indices[-1].dtype), factor)
        return tuple(indices)

    def vload(self, begin: Sequence[ExprLike], dtype: Any = None) -> PrimExpr:
        """TVM's ``A.vload([i, j], "float32x4")``: a load of ``dtype``'s lanes starting at
        ``begin`` (the last index becomes a unit-stride ramp)."""
        value_dtype = self.dtype if dtype is None else as_dtype(dtype)
        if value_dtype.element_of() != self.dtype.element_of():
            raise TypeError(f"buffer {self.name!r}.vload: {value_dtype} from a {self.dtype} buffer")
        return BufferLoad(self, self._vector_indices(begin, value_dtype.lanes, "vload"))

    def vstore(self, begin: Sequence[ExprLike], value: ExprLike) -> Any:
        """TVM's ``A.vstore([i, j], v)``: the ``BufferStore`` of the vector ``v`` at ``begin``."""
        from .stmt import BufferStore  # stmt imports this module

        expr = convert(value)
        if expr.dtype.element_of() != self.dtype.element_of():
            raise TypeError(f"buffer {self.name!r}.vstore: {expr.dtype} into a {self.dtype} buffer")
        return BufferStore(self, expr, self._vector_indices(begin, expr.dtype.lanes, "vstore"))

    def offset_of(self, indices: Sequence[ExprLike]) -> list[PrimExpr]:
        """TVM's ``A.offset_of([i, j])``: the element offset of ``A[i, j]`` from the data
        pointer (``elem_offset`` plus the strided sum), as a one-element list."""
        exprs = [convert(i) for i in indices]
        if len(exprs) != len(self.shape):
            raise IndexError(f"buffer {self.name!r}.offset_of: {len(exprs)} indices")
        strides = list(self.strides)
        if not strides:
            running: PrimExpr = convert(1)
            for dim in reversed(self.shape):
                strides.insert(0, running)
                running = dim if _is_one(running) else running * dim
        total = self.elem_offset
        for index, stride in zip(exprs, strides):
            term = index if _is_one(stride) else index * stride
            total = term if _is_zero(total) else total + term
        return [total]

    def get_flattened_buffer(self) -> Buffer:
        """TVM's ``A.get_flattened_buffer()``: a 1-d buffer over the same data (no strides)."""
        if self.strides:
            raise ValueError(f"buffer {self.name!r}: get_flattened_buffer of a strided buffer")
        size: PrimExpr = convert(1)
        for dim in self.shape:
            size = dim if _is_one(size) else size * dim
        return Buffer(
            self.name,
            self.data,
            (size,),
            self.dtype,
            elem_offset=self.elem_offset,
            scope=self.scope,
            data_alignment=self.data_alignment,
            offset_factor=self.offset_factor,
        )

    def full_region(self) -> BufferRegion:
        """The region covering the whole buffer."""
        return BufferRegion(self, tuple(Range(convert(0), s) for s in self.shape))

    def __repr__(self) -> str:
        shape = ", ".join(str(getattr(s, "value", s)) for s in self.shape)
        return f"Buffer({self.name!r}, ({shape}), {self.dtype})"


def _is_zero(expr: PrimExpr) -> bool:
    return isinstance(expr, IntImm) and expr.value == 0 and not expr.dtype.is_bool


def _is_one(expr: PrimExpr) -> bool:
    return isinstance(expr, IntImm) and expr.value == 1 and not expr.dtype.is_bool


def _simplify_extent(stop: PrimExpr, begin: PrimExpr) -> PrimExpr:
    """``stop - begin``, folded to a constant when the variables cancel (TVM simplifies a
    slice's extent: ``B[v * 16 : v * 16 + 16]`` has extent 16)."""
    if isinstance(begin, IntImm) and begin.value == 0:
        return stop
    # the printer's form of any region, ``B[m : m + e]``: the extent is ``e`` as it was
    from .structural import structural_equal  # here: structural imports this module

    if type(stop).__name__ == "Add" and structural_equal(stop.a, begin):  # type: ignore[attr-defined]
        extent: PrimExpr = stop.b  # type: ignore[attr-defined]
        return extent
    terms: dict[int, int] = {}
    total = [0]

    def collect(expr: PrimExpr, scale: int) -> bool:
        if isinstance(expr, IntImm):
            total[0] += expr.value * scale
            return True
        if isinstance(expr, Var):
            terms[id(expr)] = terms.get(id(expr), 0) + scale
            return True
        name = type(expr).__name__
        if name in ("Add", "Sub"):
            sign = 1 if name == "Add" else -1
            return collect(expr.a, scale) and collect(expr.b, sign * scale)  # type: ignore[attr-defined]
        if name == "Mul":
            a, b = expr.a, expr.b  # type: ignore[attr-defined]
            if isinstance(b, IntImm):
                return collect(a, scale * b.value)
            if isinstance(a, IntImm):
                return collect(b, scale * a.value)
        return False

    if (
        begin.dtype == stop.dtype
        and collect(stop, 1)
        and collect(begin, -1)
        and not any(terms.values())
    ):
        return const(total[0], stop.dtype)
    return stop - begin


@dataclass(frozen=True, eq=False, slots=True)
class BufferRegion:
    """A rectangular region of a buffer, one Range per dimension."""

    buffer: Buffer
    region: tuple[Range, ...]
    span: Span | None = field(default=None, kw_only=True, repr=False)

    __hash__ = object.__hash__

    def __post_init__(self) -> None:
        _set(self, "region", tuple(self.region))


@dataclass(frozen=True, eq=False, slots=True)
class MatchBufferRegion:
    """Binds ``buffer`` (defined here) to view the region ``source``."""

    buffer: Buffer
    source: BufferRegion
    span: Span | None = field(default=None, kw_only=True, repr=False)

    __hash__ = object.__hash__
