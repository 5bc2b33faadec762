"""Entry checks (TVM's MakePackedAPI role): validate numpy arguments, bind data and dims.

For each buffer parameter ``A`` (handle ``h``), at the top of the body, in order:

1. ``assert array_ndim(h) == ndim, "TypeError: A: expected ndim == 2"``
2. ``assert array_dtype_is(h, "float32"), "TypeError: A: expected dtype float32"``
3. per dim ``i``: a constant is checked for equality; the first occurrence of a
   symbolic dim ``n`` binds it (``LetStmt(n, cast(array_shape(h, i)))``), later
   occurrences are checked against it; other expressions are checked once every
   var in them is bound (after all parameters);
4. strides (bytes): without explicit strides the code indexes row-major, so each
   dim of length > 1 must have the C-contiguous stride; constant explicit strides
   are checked, symbolic ones are bound (``array_stride(h, i) / itemsize``);
5. writability (``array_flags(h) & NPY_ARRAY_WRITEABLE``) if the body stores to it;
6. ``LetStmt(A.data, array_data(h))``.

Unused buffer parameters get only the ndim and dtype checks. The function gets
the attribute ``entry_checked`` (the verifier then expects these LetStmts to
define the buffers' data and symbolic vars). Running the pass twice is a no-op.
"""

from __future__ import annotations

from dataclasses import dataclass

from irbuilder.ir import (
    AssertStmt,
    Buffer,
    Call,
    CallKind,
    Cast,
    FloorDiv,
    IntImm,
    LetStmt,
    PrimExpr,
    PrimFunc,
    Span,
    Stmt,
    StringImm,
    Var,
    as_dtype,
    const,
    seq,
)

from .analysis import buffer_accesses, free_vars, mul
from .pass_infra import function_pass
from .verifier import ENTRY_CHECKED_ATTR

__all__ = ["NPY_ARRAY_WRITEABLE", "entry_checks"]

NPY_ARRAY_WRITEABLE = 0x0400
"""numpy's flag bit for writable arrays (``ndarray.flags.writeable``)."""

_INT64 = "int64"


def _builtin(dtype: str, op: str, *args: PrimExpr) -> Call:
    return Call(as_dtype(dtype), op, args, CallKind.BUILTIN)


def _i64(expr: PrimExpr) -> PrimExpr:
    if isinstance(expr, IntImm):
        return const(expr.value, _INT64)
    return expr if expr.dtype == expr.dtype.with_bits(64) else Cast(expr.dtype.with_bits(64), expr)


@dataclass
class _Assert:
    condition: PrimExpr
    message: str
    span: Span | None = None


@dataclass
class _Let:
    var: Var
    value: PrimExpr
    span: Span | None = None


_Item = _Assert | _Let


class _Builder:
    def __init__(self) -> None:
        self.span: Span | None = None  # the buffer being checked: errors point at it
        self.items: list[_Item] = []
        self.bound: dict[Var, None] = {}
        self.deferred: list[_Assert] = []

    def check(self, condition: PrimExpr, message: str, needs: PrimExpr | None = None) -> None:
        item = _Assert(condition, message, self.span)
        if needs is not None and any(v not in self.bound for v in free_vars(needs)):
            self.deferred.append(item)
        else:
            self.items.append(item)

    def bind(self, var: Var, value: PrimExpr) -> None:
        if value.dtype != var.dtype:
            value = Cast(var.dtype, value)
        self.items.append(_Let(var, value, self.span))
        self.bound[var] = None

    def match(self, expected: PrimExpr, actual: PrimExpr, message: str) -> None:
        """Bind ``expected`` if it is an unbound var, else check ``actual == expected``."""
        if isinstance(expected, Var) and expected not in self.bound:
            self.bind(expected, actual)
        else:
            self.check(actual == _i64(expected), message, needs=expected)

    def param(self, handle: Var, buffer: Buffer, used: bool, stored: bool) -> None:
        name = buffer.name
        self.span = buffer.span
        ndim = _builtin("int32", "array_ndim", handle)
        self.check(ndim == buffer.ndim, f"TypeError: {name}: expected ndim == {buffer.ndim}")
        dtype = str(buffer.dtype)
        self.check(
            _builtin("bool", "array_dtype_is", handle, StringImm(dtype)),
            f"TypeError: {name}: expected dtype {dtype}",
        )
        for i, dim in enumerate(buffer.shape):
            actual = _builtin(_INT64, "array_shape", handle, const(i))
            self.match(dim, actual, f"ValueError: {name}: expected shape[{i}] == {_show(dim)}")
        if used:
            self._strides(handle, buffer)
        if stored:
            flags = _builtin("int32", "array_flags", handle)
            writable = Call(as_dtype("int32"), "bitwise_and", (flags, const(NPY_ARRAY_WRITEABLE)))
            self.check(writable != 0, f"ValueError: {name}: expected a writable array")
        if used:
            self.bind(buffer.data, _builtin("handle", "array_data", handle))

    def _strides(self, handle: Var, buffer: Buffer) -> None:
        name = buffer.name
        itemsize = const(buffer.dtype.itemsize, _INT64)
        if buffer.strides:
            for i, stride in enumerate(buffer.strides):
                actual = _builtin(_INT64, "array_stride", handle, const(i))
                if isinstance(stride, Var) and stride not in self.bound:
                    self.bind(stride, FloorDiv(actual, itemsize))
                else:
                    self.check(
                        actual == mul(_i64(stride), itemsize),
                        f"ValueError: {name}: expected strides[{i}] == "
                        f"{_show(stride)} * {buffer.dtype.itemsize} bytes",
                        needs=stride,
                    )
            return
        expected: PrimExpr = itemsize
        for i in reversed(range(buffer.ndim)):
            dim = buffer.shape[i]
            stride = _builtin(_INT64, "array_stride", handle, const(i))
            extent = _builtin(_INT64, "array_shape", handle, const(i))
            self.check(
                (extent <= 1) | (stride == expected),
                f"ValueError: {name}: expected a C-contiguous array "
                f"(strides[{i}] == {_show(expected)} bytes)",
                needs=expected,
            )
            expected = mul(expected, _i64(dim))

    def build(self, body: Stmt) -> Stmt:
        items = self.items + self.deferred
        result = body
        pending: list[Stmt] = []
        for item in reversed(items):
            if isinstance(item, _Assert):
                message = StringImm(item.message, span=item.span)
                pending.insert(0, AssertStmt(item.condition, message, span=item.span))
            else:
                result = LetStmt(item.var, item.value, seq([*pending, result]), span=item.span)
                pending = []
        return seq([*pending, result])


def _show(expr: PrimExpr) -> str:
    """Short text of a shape/stride expression for messages."""
    if isinstance(expr, IntImm):
        return str(expr.value)
    if isinstance(expr, Var):
        return expr.name
    if isinstance(expr, Cast):
        return _show(expr.value)
    symbol = getattr(type(expr), "symbol", None)
    a, b = getattr(expr, "a", None), getattr(expr, "b", None)
    if isinstance(symbol, str) and isinstance(a, PrimExpr) and isinstance(b, PrimExpr):
        return f"({_show(a)} {symbol} {_show(b)})"
    return type(expr).__name__


@function_pass("entry_checks")
def entry_checks(func: PrimFunc) -> PrimFunc:
    """Prepend argument checks and data/shape bindings for every buffer param (see module)."""
    if func.attrs.get(ENTRY_CHECKED_ATTR):
        return func
    accesses = buffer_accesses(func.body)
    builder = _Builder()
    for param in func.params:
        if param not in func.buffer_map:
            builder.bound[param] = None  # scalar params are already defined: check, not bind
    for param in func.params:
        buffer = func.buffer_map.get(param)
        if buffer is None:
            continue
        if buffer.axis_separators:
            raise ValueError(
                f"buffer {buffer.name!r}: axis_separators are not supported by the CPU backend"
            )
        used = buffer.data in accesses.data_vars
        builder.param(param, buffer, used, accesses.stores_to(buffer.data))
    # Symbolic layout vars never bound from a shape or stride (e.g. a symbolic
    # elem_offset) are defined as zero: numpy hands us a pointer to element 0.
    for buffer in func.buffer_map.values():
        if isinstance(buffer.elem_offset, Var) and buffer.elem_offset not in builder.bound:
            builder.bind(buffer.elem_offset, const(0, buffer.elem_offset.dtype))
    body = builder.build(func.body)
    return func.with_body(body).with_attr(ENTRY_CHECKED_ATTR, True)
