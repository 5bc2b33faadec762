"""Entry checks (TVM's MakePackedAPI role): validate numpy arguments, bind data and dims.

For each buffer parameter ``A`` (handle ``h``), at the top of the body, in order:

1. ``assert array_ndim(h) == 2, format_message("TypeError: A: expected ndim == 2, got {}",
   array_ndim(h))``
2. ``assert array_dtype_is(h, "float32"), format_message("TypeError: A: expected dtype
   float32, got {}", array_descr(h))``
3. per dim ``i``: a constant is checked for equality; the first occurrence of a
   symbolic dim ``n`` binds it (``LetStmt(n, cast(array_shape(h, i)))``), later
   occurrences are checked against it; other expressions are checked once every
   var in them is bound (after all parameters);
4. strides (bytes): without explicit strides the code indexes row-major, so each
   dim of length > 1 must have the C-contiguous stride; constant explicit strides
   are checked, symbolic ones are bound (``array_stride(h, i) / itemsize``);
5. writability (``array_flags(h) & NPY_ARRAY_WRITEABLE``) if the body stores to it;
6. ``LetStmt(A.data, array_data(h))``.

Every failed check names the parameter, the expected and the actual value (a
``format_message`` assertion message: ``"ValueError: B: expected shape[0] == n = 3, got
5"``).

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
    expr_text,
    format_message,
    seq,
)

from ..analysis import buffer_accesses, free_vars, mul
from ..checks.verifier import ENTRY_CHECKED_ATTR
from ..pass_infra import function_pass

__all__ = ["NPY_ARRAY_WRITEABLE", "insert_entry_checks"]

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
    message: str  # a format_message template: each {} is filled from ``values``
    values: tuple[PrimExpr, ...] = ()
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

    def check(
        self,
        condition: PrimExpr,
        message: str,
        *values: PrimExpr,
        needs: PrimExpr | None = None,
    ) -> None:
        item = _Assert(condition, message, values, self.span)
        if needs is not None and any(v not in self.bound for v in free_vars(needs)):
            self.deferred.append(item)
        else:
            self.items.append(item)

    def bind(self, var: Var, value: PrimExpr) -> None:
        if value.dtype != var.dtype:
            value = Cast(var.dtype, value)
        self.items.append(_Let(var, value, self.span))
        self.bound[var] = None

    def match(self, expected: PrimExpr, actual: PrimExpr, what: str) -> None:
        """Bind ``expected`` if it is an unbound var, else check ``actual == expected``."""
        if isinstance(expected, Var) and expected not in self.bound:
            self.bind(expected, actual)
            return
        text, values = _expected(expected)
        self.check(
            actual == _i64(expected),
            f"{what} == {text}, got {{}}",
            *values,
            actual,
            needs=expected,
        )

    def param(self, handle: Var, buffer: Buffer, used: bool, stored: bool) -> None:
        name = buffer.name
        self.span = buffer.span
        ndim = _builtin("int32", "array_ndim", handle)
        self.check(
            ndim == buffer.ndim,
            f"TypeError: {name}: expected ndim == {buffer.ndim}, got {{}}",
            ndim,
        )
        dtype = str(buffer.dtype)
        self.check(
            _builtin("bool", "array_dtype_is", handle, StringImm(dtype)),
            f"TypeError: {name}: expected dtype {dtype}, got {{}}",
            _builtin("handle", "array_descr", handle),
        )
        for i, dim in enumerate(buffer.shape):
            actual = _builtin(_INT64, "array_shape", handle, const(i))
            self.match(dim, actual, f"ValueError: {name}: expected shape[{i}]")
        if used:
            self._strides(handle, buffer)
        if stored:
            flags = _builtin("int32", "array_flags", handle)
            writable = Call(as_dtype("int32"), "bitwise_and", (flags, const(NPY_ARRAY_WRITEABLE)))
            self.check(
                writable != 0, f"ValueError: {name}: expected a writable array, got a read-only one"
            )
        if used:
            self.bind(buffer.data, _builtin("handle", "array_data", handle))

    def _strides(self, handle: Var, buffer: Buffer) -> None:
        name = buffer.name
        itemsize = const(buffer.dtype.itemsize, _INT64)
        # An array with no element addresses nothing: its strides are not checked (numpy 2
        # gives empty arrays zero strides), nor are those of dimensions of length 1.
        # A constant extent was checked above, so only symbolic dims can make it empty.
        empty: list[PrimExpr] = []
        for i, dim in enumerate(buffer.shape):
            if isinstance(dim, IntImm):
                if dim.value == 0:
                    return
                continue
            empty.append(_builtin(_INT64, "array_shape", handle, const(i)) == 0)

        def unchecked_or(extent: PrimExpr, holds: PrimExpr) -> PrimExpr:
            cond = extent <= 1
            for term in empty:
                cond = cond | term
            return cond | holds
        if buffer.strides:
            for i, stride in enumerate(buffer.strides):
                actual = _builtin(_INT64, "array_stride", handle, const(i))
                if isinstance(stride, Var) and stride not in self.bound:
                    self.bind(stride, FloorDiv(actual, itemsize))
                else:
                    extent = _builtin(_INT64, "array_shape", handle, const(i))
                    text, values = _expected(mul(_i64(stride), itemsize))
                    self.check(
                        unchecked_or(extent, actual == mul(_i64(stride), itemsize)),
                        f"ValueError: {name}: expected strides[{i}] == {text} bytes, got {{}}",
                        *values,
                        actual,
                        needs=stride,
                    )
            return
        expected: PrimExpr = itemsize
        for i in reversed(range(buffer.ndim)):
            dim = buffer.shape[i]
            stride = _builtin(_INT64, "array_stride", handle, const(i))
            extent = _builtin(_INT64, "array_shape", handle, const(i))
            text, values = _expected(expected)
            self.check(
                unchecked_or(extent, stride == expected),
                f"ValueError: {name}: expected a C-contiguous array "
                f"(strides[{i}] == {text} bytes), got strides[{i}] == {{}}",
                *values,
                stride,
                needs=expected,
            )
            expected = mul(expected, _i64(dim))

    def build(self, body: Stmt) -> Stmt:
        items = self.items + self.deferred
        result = body
        pending: list[Stmt] = []
        for item in reversed(items):
            if isinstance(item, _Assert):
                message: PrimExpr
                if item.values:
                    message = format_message(item.message, *item.values, span=item.span)
                else:
                    text = item.message.replace("{{", "{").replace("}}", "}")
                    message = StringImm(text, span=item.span)
                pending.insert(0, AssertStmt(item.condition, message, span=item.span))
            else:
                result = LetStmt(item.var, item.value, seq([*pending, result]), span=item.span)
                pending = []
        return seq([*pending, result])


def _expected(expr: PrimExpr) -> tuple[str, tuple[PrimExpr, ...]]:
    """Message text of an expected value: a constant inline, else its name and its value."""
    if isinstance(expr, IntImm):
        return str(expr.value), ()
    text = expr_text(expr, casts=False).replace("{", "{{").replace("}", "}}")
    return f"{text} = {{}}", (_i64(expr),)


def check_layout_vars_defined(func: PrimFunc) -> None:
    """Refuse a variable used only inside a compound shape or stride (``(n * 32,)``).

    Nothing defines it: a scalar parameter, or a dimension, stride or elem_offset of a
    parameter buffer that is exactly the variable, does. TVM refuses such a function when it
    builds it; so do both our targets, naming it (a ``ValueError``).
    """
    bound = {p for p in func.params if p not in func.buffer_map}
    for buffer in func.buffer_map.values():
        for expr in (*buffer.shape, *buffer.strides, buffer.elem_offset):
            if isinstance(expr, Var):
                bound.add(expr)
    for buffer in func.buffer_map.values():
        fields = [("shape", d) for d in buffer.shape] + [("strides", s) for s in buffer.strides]
        counts: dict[str, int] = {}
        for field, expr in fields:
            k = counts.get(field, 0)
            counts[field] = k + 1
            for var in free_vars(expr):
                if var not in bound:
                    raise ValueError(
                        f"buffer {buffer.name!r}: {field}[{k}] = {expr_text(expr, casts=False)} "
                        f"uses {var.name!r}, which no parameter defines (make {var.name!r} a "
                        f"scalar parameter, or a dimension of its own)"
                    )


@function_pass("insert_entry_checks")
def insert_entry_checks(func: PrimFunc) -> PrimFunc:
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
    check_layout_vars_defined(func)
    body = builder.build(func.body)
    return func.with_body(body).with_attr(ENTRY_CHECKED_ATTR, True)
