"""bfloat16 on the CPU, as TVM legalises it: storage in uint16, arithmetic in float32.

Every bfloat16 buffer of the function's boundary, and every internal one TVM would not
promote, becomes a uint16 buffer of the same shape (a numpy caller passes ``uint16`` arrays
holding the bfloat16 bits, e.g. ``(f32.view(np.uint32) >> 16).astype(np.uint16)`` for
truncation). A load widens the bits to float32 (``bits << 16``), a store narrows with
round-to-nearest-even (NaN stays a quiet NaN). As TVM's BF16ComputeLegalize does, every
bfloat16 operation (arithmetic, casts, calls, constants) computes in float32 *without*
rounding: a value is rounded to bfloat16 only when it is stored into bfloat16 storage, and
an internal bfloat16 allocation of constant size whose data pointer is never used directly
is promoted to a float32 buffer (no rounding at all). Vector bfloat16 values and bfloat16
scalar parameters are refused (:class:`UnsupportedConstructError`). Applied before lowering
and before the interpreter, so both run the same float32 program.
"""

from __future__ import annotations

import dataclasses
import math
import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from irbuilder.ir import (
    Allocate,
    Block,
    Buffer,
    BufferLoad,
    BufferStore,
    Call,
    CallKind,
    Cast,
    DataType,
    FloatImm,
    IntImm,
    Let,
    LetStmt,
    MatchBufferRegion,
    PointerType,
    PrimExpr,
    PrimFunc,
    Select,
    Stmt,
    Var,
    as_dtype,
)
from irbuilder.ir.functor import StmtExprMutator

from .support import UnsupportedConstructError

__all__ = [
    "BFLOAT16",
    "Codec",
    "legalize_bfloat16",
    "legalize_type",
    "round_to_bfloat16",
    "uses_bfloat16",
    "uses_type",
]

_BF16 = as_dtype("bfloat16")
_F32 = as_dtype("float32")
_U16 = as_dtype("uint16")
_U32 = as_dtype("uint32")


def round_to_bfloat16(value: float) -> float:
    """``value`` rounded to the nearest bfloat16 (ties to even), as a Python float."""
    if math.isnan(value):
        return value
    try:
        bits = struct.unpack("<I", struct.pack("<f", value))[0]
    except OverflowError:
        return math.copysign(math.inf, value)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16
    return float(struct.unpack("<f", struct.pack("<I", bits & 0xFFFFFFFF))[0])


def _u32(value: int) -> PrimExpr:
    return IntImm(_U32, value)


def _call(dtype: Any, op: str, *args: PrimExpr, kind: CallKind = CallKind.INTRINSIC) -> PrimExpr:
    return Call(as_dtype(dtype), op, tuple(args), kind)


def _widen(bits: PrimExpr) -> PrimExpr:
    """uint16 bfloat16 bits -> the float32 value."""
    shifted = _call(_U32, "shift_left", Cast(_U32, bits), _u32(16))
    return _call(_F32, "reinterpret", shifted, kind=CallKind.BUILTIN)


def _narrow(value: PrimExpr) -> PrimExpr:
    """A float32 value -> uint16 bfloat16 bits, rounded to nearest even; NaN -> 0x7FC0."""
    bits = _call(_U32, "reinterpret", value, kind=CallKind.BUILTIN)
    odd = _call(_U32, "bitwise_and", _call(_U32, "shift_right", bits, _u32(16)), _u32(1))
    rounded = _call(_U32, "shift_right", bits + _u32(0x7FFF) + odd, _u32(16))
    is_nan = _call(as_dtype("bool"), "isnan", value)
    return Cast(_U16, Select(is_nan, _u32(0x7FC0), rounded))


def _round(value: PrimExpr) -> PrimExpr:
    """A float32 value rounded to bfloat16 precision (still float32)."""
    return _widen(_narrow(value))


@dataclass(frozen=True)
class Codec:
    """A low-precision float type computed in float32: its storage type and conversions."""

    dtype: DataType
    storage: DataType
    widen: Callable[[PrimExpr], PrimExpr]
    """Storage bits -> the float32 value."""
    narrow: Callable[[PrimExpr], PrimExpr]
    """A float32 value -> storage bits (rounded to nearest even)."""
    round_constant: Callable[[float], float]

    def round(self, value: PrimExpr) -> PrimExpr:
        """A float32 value rounded to this type's precision (still float32)."""
        return self.widen(self.narrow(value))


BFLOAT16 = Codec(_BF16, _U16, _widen, _narrow, round_to_bfloat16)


def uses_type(func: PrimFunc, dtype: DataType) -> bool:
    """Whether ``func`` has a buffer, variable or expression of ``dtype``."""
    found: list[bool] = []

    class _Find(StmtExprMutator):
        def visit_expr(self, expr: PrimExpr) -> PrimExpr:
            if expr.dtype.element_of() == dtype:
                found.append(True)
                return expr
            return super().visit_expr(expr)

        def visit_buffer(self, buffer: Buffer) -> Buffer:
            if buffer.dtype.element_of() == dtype:
                found.append(True)
            return buffer

    _Find().visit_stmt(func.body)
    return bool(found) or any(b.dtype.element_of() == dtype for b in func.buffer_map.values())


def uses_bfloat16(func: PrimFunc) -> bool:
    """Whether ``func`` has a bfloat16 buffer, variable or expression."""
    return uses_type(func, _BF16)


def _promoted_data_vars(func: PrimFunc, dtype: DataType) -> set[int]:
    """Ids of the data vars of internal ``dtype`` allocations computed in float32 storage.

    TVM's compute legalisation promotes a constant-size allocation (here also a block's
    ``alloc_buffer``, an allocation once blocks are lowered) unless its data var is used as
    a value (passed to an extern, ...); views (match buffers) of a promoted buffer follow it.
    """
    allocated: set[int] = set()
    opaque: set[int] = set()
    views: list[MatchBufferRegion] = []

    class _Plan(StmtExprMutator):
        def visit_allocate_(self, node: Allocate) -> Stmt:
            if node.dtype.element_of() == dtype and isinstance(node.extent, IntImm):
                allocated.add(id(node.buffer_var))
            return self.generic_mutate(node)

        def visit_block_(self, node: Block) -> Stmt:
            for buf in node.alloc_buffers:
                constant = all(isinstance(d, IntImm) for d in buf.shape)
                if buf.dtype.element_of() == dtype and constant:
                    allocated.add(id(buf.data))
            views.extend(node.match_buffers)
            return self.generic_mutate(node)

        def visit_expr(self, expr: PrimExpr) -> PrimExpr:
            if isinstance(expr, Var) and expr.dtype.is_handle:
                opaque.add(id(expr))
            return super().visit_expr(expr)

    _Plan().visit_stmt(func.body)
    promoted = allocated - opaque
    changed = True
    while changed:
        changed = False
        for match in views:
            if id(match.source.buffer.data) in promoted and id(match.buffer.data) not in promoted:
                promoted.add(id(match.buffer.data))
                changed = True
    return promoted


class _Legalize(StmtExprMutator):
    def __init__(self, func: PrimFunc, codec: Codec) -> None:
        self.func = func
        self.codec = codec
        self.buffers: dict[int, Buffer] = {}
        self.vars: dict[int, Var] = {}
        self.promoted = _promoted_data_vars(func, codec.dtype)

    def storage_of(self, data: Var) -> DataType:
        return _F32 if id(data) in self.promoted else self.codec.storage

    def refuse(self, what: str) -> None:
        raise UnsupportedConstructError(what, self.func.span, self.func.name)

    def data_var(self, var: Var) -> Var:
        mapped = self.vars.get(id(var))
        if mapped is None:
            pointer = var.type_annotation
            assert pointer is not None
            mapped = Var(var.name, var.dtype, PointerType(self.storage_of(var), pointer.scope))
            self.vars[id(var)] = mapped
        return mapped

    def visit_buffer(self, buffer: Buffer) -> Buffer:
        if buffer.dtype.element_of() != self.codec.dtype:
            return buffer
        if buffer.dtype.is_vector:
            self.refuse(f"a {buffer.dtype} buffer ({buffer.name!r})")
        mapped = self.buffers.get(id(buffer))
        if mapped is None:
            shape = tuple(self.visit_expr(d) for d in buffer.shape)
            mapped = dataclasses.replace(
                buffer, data=self.data_var(buffer.data), dtype=self.storage_of(buffer.data),
                shape=shape,
            )
            self.buffers[id(buffer)] = mapped
        return mapped

    def visit_allocate_(self, node: Allocate) -> Stmt:
        if node.dtype.element_of() != self.codec.dtype:
            return self.generic_mutate(node)
        body = self.visit_stmt(node.body)
        extent = self.visit_expr(node.extent)
        return dataclasses.replace(
            node,
            buffer_var=self.data_var(node.buffer_var),
            dtype=self.storage_of(node.buffer_var),
            extent=extent,
            body=body,
        )

    def visit_let_stmt_(self, node: LetStmt) -> Stmt:
        new = self.generic_mutate(node)
        var = self.visit_expr(node.var)
        assert isinstance(var, Var)
        return new if var is new.var else dataclasses.replace(new, var=var)

    def visit_buffer_store_(self, node: BufferStore) -> Stmt:
        store = self.generic_mutate(node)
        if node.buffer.dtype.element_of() != self.codec.dtype:
            return store
        if id(node.buffer.data) in self.promoted:
            return store  # float32 storage: the value as computed
        return dataclasses.replace(store, value=self.codec.narrow(store.value))

    def visit_expr(self, expr: PrimExpr) -> PrimExpr:
        if isinstance(expr, Let) and expr.var.dtype.element_of() == self.codec.dtype:
            var, value = self.visit_expr(expr.var), self.visit_expr(expr.value)
            return Let(var, value, self.visit_expr(expr.body))  # type: ignore[arg-type]
        if expr.dtype.element_of() != self.codec.dtype:
            if isinstance(expr, Var) and id(expr) in self.vars:
                return self.vars[id(expr)]
            return super().visit_expr(expr)
        if expr.dtype.is_vector:
            self.refuse(f"a {expr.dtype} value")
        if isinstance(expr, FloatImm):
            return FloatImm(_F32, expr.value)
        if isinstance(expr, Var):
            mapped = self.vars.get(id(expr))
            if mapped is None:
                mapped = Var(expr.name, _F32)
                self.vars[id(expr)] = mapped
            return mapped
        if isinstance(expr, BufferLoad):
            load = self.generic_mutate(expr)
            if id(expr.buffer.data) in self.promoted:
                return load
            return self.codec.widen(load)
        if isinstance(expr, Cast):
            value = self.visit_expr(expr.value)
            return value if value.dtype == _F32 else Cast(_F32, value)
        if isinstance(expr, Call) and expr.op == "reinterpret":
            (source,) = expr.args
            return self.codec.widen(Cast(self.codec.storage, self.visit_expr(source)))
        new = self.generic_mutate(expr)
        if isinstance(new, Call):
            new = dataclasses.replace(new, dtype=_F32)
            if new.kind is CallKind.BUILTIN:
                return new  # if_then_else, likely: the value of a bfloat16 operand
        return new  # computed in float32, rounded only where it is stored


def legalize_bfloat16(func: PrimFunc) -> PrimFunc:
    """``func`` with bfloat16 storage in uint16 and bfloat16 arithmetic in float32."""
    return legalize_type(func, BFLOAT16)


def legalize_type(func: PrimFunc, codec: Codec) -> PrimFunc:
    """``func`` with ``codec.dtype`` stored as ``codec.storage`` and computed in float32."""
    dtype = codec.dtype
    if not uses_type(func, dtype) and func.ret_type != dtype:
        return func
    for param in func.params:
        if param.dtype.element_of() == dtype:
            raise UnsupportedConstructError(
                f"a {dtype} scalar parameter ({param.name!r})", func.span, func.name
            )
    legal = _Legalize(func, codec)
    buffer_map = {param: legal.visit_buffer(buf) for param, buf in func.buffer_map.items()}
    body = legal.visit_stmt(func.body)
    # A low-precision return value reaches Python as a float (computed in float32, rounded).
    ret_type = _F32 if func.ret_type == dtype else func.ret_type
    return PrimFunc(func.params, body, ret_type, buffer_map, func.attrs, span=func.span)
