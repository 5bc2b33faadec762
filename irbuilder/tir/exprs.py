"""Expression builders: min/max, divisions, select, casts, calls, typed limits and
``T.meta_var``. The math and bit intrinsics are made from the intrinsic table in
:mod:`irbuilder.tir.intrin`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..ir import (
    Broadcast,
    Call,
    CallKind,
    Cast,
    DataType,
    Div,
    ExprLike,
    FloatImm,
    IntImm,
    Max,
    Min,
    Mod,
    PrimExpr,
    Ramp,
    Select,
    Shuffle,
    StringImm,
    as_dtype,
    binary,
    const,
    promote,
)
from ._common import DTypeArg, as_condition, as_expr, to_dtype
from .tvm_ops import TVM_OPS

__all__ = [
    "Broadcast_",
    "Cast_",
    "MetaVar",
    "Ramp_",
    "Select_",
    "Shuffle_",
    "assume",
    "call_extern",
    "call_intrin",
    "call_pure_extern",
    "cast",
    "ceildiv",
    "infinity",
    "floordiv",
    "floormod",
    "if_then_else",
    "likely",
    "max",
    "max_value",
    "meta_var",
    "min",
    "min_value",
    "reinterpret",
    "truncdiv",
    "truncmod",
]

# The runtime builtins (irbuilder.tir.runtime) are builtins too; listed here rather than
# imported so that this module stays free of the frame machinery.
_BUILTINS = frozenset(
    {
        "likely",
        "reinterpret",
        "assume",
        "if_then_else",
        "prefetch",
        "ret",
        "tvm_call_packed",
        "tvm_call_cpacked",
        "address_of",
        "tvm_access_ptr",
        "type_annotation",
        "tvm_thread_allreduce",
        "tvm_storage_sync",
        "tvm_stack_alloca",
        "tvm_stack_make_shape",
        "tvm_stack_make_array",
    }
)


def _pair(a: ExprLike, b: ExprLike, what: str) -> tuple[PrimExpr, PrimExpr]:
    for value in (a, b):
        if not isinstance(value, (PrimExpr, bool, int, float)):
            raise TypeError(f"{what}: expected expressions or numbers, got {type(value).__name__}")
    return promote(a, b)


def min(a: ExprLike, b: ExprLike) -> PrimExpr:
    """The smaller of two values (operands promoted to a common type)."""
    x, y = _pair(a, b, "T.min")
    return binary(Min, x, y)


def max(a: ExprLike, b: ExprLike) -> PrimExpr:
    """The larger of two values (operands promoted to a common type)."""
    x, y = _pair(a, b, "T.max")
    return binary(Max, x, y)


def floordiv(a: ExprLike, b: ExprLike) -> PrimExpr:
    """Division rounding toward minus infinity (Python's ``//``)."""
    x, y = _pair(a, b, "T.floordiv")
    return x // y


def floormod(a: ExprLike, b: ExprLike) -> PrimExpr:
    """Remainder with the divisor's sign (Python's ``%``)."""
    x, y = _pair(a, b, "T.floormod")
    return x % y


def _integers(x: PrimExpr, y: PrimExpr, what: str) -> None:
    if not x.dtype.element_of().is_integer:
        raise TypeError(f"{what} needs integer operands, got {x.dtype}")


def truncdiv(a: ExprLike, b: ExprLike) -> PrimExpr:
    """Integer division rounding toward zero (C's ``/``)."""
    x, y = _pair(a, b, "T.truncdiv")
    _integers(x, y, "T.truncdiv")
    return binary(Div, x, y)


def truncmod(a: ExprLike, b: ExprLike) -> PrimExpr:
    """Remainder of :func:`truncdiv` (sign follows the dividend, C's ``%``)."""
    x, y = _pair(a, b, "T.truncmod")
    _integers(x, y, "T.truncmod")
    return binary(Mod, x, y)


def _bool_cond(cond: ExprLike, what: str) -> PrimExpr:
    return as_condition(cond, what)


def if_then_else(
    cond: ExprLike, t: ExprLike, f: ExprLike, dtype: DTypeArg | None = None
) -> PrimExpr:
    """``t if cond else f``, evaluating only the chosen branch (a BUILTIN call).

    ``dtype=`` (older TVM spelling) converts both branches to that type.
    """
    c = _bool_cond(cond, "T.if_then_else")
    x, y = _pair(t, f, "T.if_then_else")
    if dtype is not None:
        target = to_dtype(dtype)
        x, y = cast(x, target), cast(y, target)
    return Call(x.dtype, "if_then_else", (c, x, y), CallKind.BUILTIN)


def Select_(cond: ExprLike, t: ExprLike, f: ExprLike) -> PrimExpr:
    """``T.Select``: ``t if cond else f`` with both sides evaluated."""
    c = _bool_cond(cond, "T.Select")
    x, y = _pair(t, f, "T.Select")
    return Select(c, x, y)


def cast(x: ExprLike, dtype: DTypeArg) -> PrimExpr:
    """Convert ``x`` to ``dtype`` (no node when it already has that type)."""
    target = to_dtype(dtype)
    expr = as_expr(x, "T.cast")
    if isinstance(expr, (IntImm, FloatImm)) and target.is_scalar and not isinstance(x, PrimExpr):
        return const(expr.value, target)
    return expr.astype(target)


def Cast_(dtype: DTypeArg, x: ExprLike) -> PrimExpr:
    """``T.Cast(dtype, x)``: always a Cast node (TVM's node constructor order)."""
    target = to_dtype(dtype)
    return Cast(target, as_expr(x, "T.Cast"))


def reinterpret(*args: Any, dtype: DTypeArg | None = None) -> PrimExpr:
    """``T.reinterpret(dtype, x)`` or ``T.reinterpret(x, dtype=...)``: the bits of ``x``
    read as ``dtype`` (total bit widths must agree)."""
    if dtype is not None:
        args = (dtype, *args)
    if len(args) != 2:
        raise TypeError("T.reinterpret takes (dtype, value)")
    target, x = to_dtype(args[0]), args[1]
    expr = as_expr(x, "T.reinterpret")
    if target.bits * target.lanes != expr.dtype.bits * expr.dtype.lanes:
        raise TypeError(f"T.reinterpret: cannot reinterpret {expr.dtype} as {target}")
    return Call(target, "reinterpret", (expr,), CallKind.BUILTIN)


def likely(cond: ExprLike, dtype: DTypeArg | None = None) -> PrimExpr:
    """Mark ``cond`` as likely true (a branch hint)."""
    c = _bool_cond(cond, "T.likely")
    return Call(c.dtype, "likely", (c,), CallKind.BUILTIN)


def assume(cond: ExprLike = True, dtype: DTypeArg | None = None) -> PrimExpr:
    """A fact the compiler may assume; use as ``T.evaluate(T.assume(c))``."""
    c = _bool_cond(cond, "T.assume")
    return Call(as_dtype("bool"), "assume", (c,), CallKind.BUILTIN)


def Ramp_(base: ExprLike, stride: ExprLike, lanes: int) -> PrimExpr:
    """``T.Ramp``: the vector ``base + stride * [0, lanes)``."""
    b, s = _pair(base, stride, "T.Ramp")
    return Ramp(b, s, int(lanes))


def Broadcast_(value: ExprLike, lanes: int) -> PrimExpr:
    """``T.Broadcast``: a vector of ``lanes`` copies of ``value``."""
    return Broadcast(as_expr(value, "T.Broadcast"), int(lanes))


def Shuffle_(vectors: Sequence[PrimExpr], indices: Sequence[int | IntImm]) -> PrimExpr:
    """``T.Shuffle``: concatenate ``vectors`` and pick lanes by constant ``indices``."""
    return Shuffle(tuple(as_expr(v, "T.Shuffle") for v in vectors), tuple(int(i) for i in indices))


def _call_args(args: Sequence[Any], what: str) -> tuple[PrimExpr, ...]:
    return tuple(as_expr(a, what) if not isinstance(a, str) else _string(a) for a in args)


def _string(text: str) -> PrimExpr:
    return StringImm(text)


def _dtype_forward(
    args: tuple[Any, ...], dtype: DTypeArg | None, what: str
) -> tuple[DataType, str, tuple[Any, ...]]:
    # TVM's call forms: f(dtype, name, *args) or f(name, *args, dtype=...).
    if dtype is None:
        if len(args) < 2:
            raise TypeError(f"{what} takes a result dtype and a function name")
        dtype, args = args[0], args[1:]
    elif not args:
        raise TypeError(f"{what} takes a function name")
    name = args[0]
    if not isinstance(name, str):
        raise TypeError(f"{what}: the function name must be a string, got {name!r}")
    if isinstance(dtype, str) and dtype in ("", "void"):
        # TVM's void result (DataType("")); the IR has no void type, and types the
        # results of TVM's void ops `handle` (irbuilder/tir/tvm_ops.py) as here.
        dtype = "handle"
    return to_dtype(dtype), name, args[1:]


def call_extern(*args: Any, dtype: DTypeArg | None = None) -> PrimExpr:
    """``T.call_extern(dtype, name, *args)`` or ``T.call_extern(name, *args, dtype=...)``:
    call the C function ``name`` (may have side effects)."""
    target, name, rest = _dtype_forward(args, dtype, "T.call_extern")
    return Call(target, name, _call_args(rest, "T.call_extern"), CallKind.EXTERN)


def call_pure_extern(*args: Any, dtype: DTypeArg | None = None) -> PrimExpr:
    """Call the side-effect-free C function ``name`` (the forms of :func:`call_extern`)."""
    target, name, rest = _dtype_forward(args, dtype, "T.call_pure_extern")
    return Call(target, name, _call_args(rest, "T.call_pure_extern"), CallKind.PURE_EXTERN)


def call_intrin(*args: Any, dtype: DTypeArg | None = None) -> PrimExpr:
    """Call an intrinsic by name (``"exp"`` or TVM's ``"tir.exp"``); the forms of
    :func:`call_extern`."""
    target, op, rest = _dtype_forward(args, dtype, "T.call_intrin")
    name = op.removeprefix("tir.")
    kind = CallKind.BUILTIN if name in _BUILTINS or name in TVM_OPS else CallKind.INTRINSIC
    return Call(target, name, _call_args(rest, "T.call_intrin"), kind)


def ceildiv(a: ExprLike, b: ExprLike) -> PrimExpr:
    """Integer division rounding toward plus infinity: ``floordiv(a + b - 1, b)``, as TVM."""
    x, y = _pair(a, b, "T.ceildiv")
    _integers(x, y, "T.ceildiv")
    return (x + y - 1) // y


def infinity(dtype: DTypeArg) -> PrimExpr:
    """Positive infinity of the float type ``dtype``."""
    target = to_dtype(dtype)
    if not target.is_float:
        raise TypeError(f"T.infinity needs a float dtype, got {target}")
    return const(float("inf"), target)


# -- limits and bits -----------------------------------------------------------------


def max_value(dtype: DTypeArg) -> PrimExpr:
    """The largest finite value of ``dtype``."""
    target = to_dtype(dtype)
    return const(target.max_value, target)


def min_value(dtype: DTypeArg) -> PrimExpr:
    """The lowest finite value of ``dtype``."""
    target = to_dtype(dtype)
    return const(target.min_value, target)


@dataclass(frozen=True)
class MetaVar:
    """A value marked with ``T.meta_var`` for parse-time use; the parser unwraps ``value``."""

    value: Any


def meta_var(value: Any) -> MetaVar:
    """Mark ``value`` (any Python object) to be used at parse time, not as IR."""
    return MetaVar(value)
