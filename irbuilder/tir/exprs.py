"""Expression builders: min/max, divisions, select, casts, calls, math intrinsics,
typed limits, bitwise operations and ``T.meta_var``.

Math intrinsics build ``Call(INTRINSIC)`` with the ``T.*`` name as ``op``. Float
math (``exp``, ``sqrt``, ``sin``...) needs float operands: a Python number
becomes a float32 constant, an integer expression is a TypeError asking for
``T.cast`` (TVM would build an integer-typed call that fails later in codegen).
Rounding (``floor``, ``ceil``, ``round``, ``trunc``) of an integer returns it
unchanged, and ``isnan``/``isinf`` of an integer is ``False``, as in TVM.
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
    const,
    promote,
)
from ._common import DTypeArg, as_expr, to_dtype

__all__ = [
    "Broadcast_",
    "Cast_",
    "MetaVar",
    "Ramp_",
    "Select_",
    "Shuffle_",
    "abs",
    "assume",
    "bitwise_and",
    "bitwise_not",
    "bitwise_or",
    "bitwise_xor",
    "call_extern",
    "call_intrin",
    "call_pure_extern",
    "cast",
    "ceil",
    "cos",
    "erf",
    "exp",
    "exp2",
    "fabs",
    "floor",
    "floordiv",
    "floormod",
    "if_then_else",
    "isinf",
    "isnan",
    "likely",
    "log",
    "log10",
    "log2",
    "max",
    "max_value",
    "meta_var",
    "min",
    "min_value",
    "pow",
    "reinterpret",
    "round",
    "rsqrt",
    "shift_left",
    "shift_right",
    "sigmoid",
    "sin",
    "sqrt",
    "tan",
    "tanh",
    "trunc",
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
    if isinstance(x, IntImm) and isinstance(y, IntImm) and not x.dtype.is_bool:
        return x if x.value <= y.value else y
    return Min(x, y)


def max(a: ExprLike, b: ExprLike) -> PrimExpr:
    """The larger of two values (operands promoted to a common type)."""
    x, y = _pair(a, b, "T.max")
    if isinstance(x, IntImm) and isinstance(y, IntImm) and not x.dtype.is_bool:
        return x if x.value >= y.value else y
    return Max(x, y)


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
    if isinstance(x, IntImm) and isinstance(y, IntImm) and y.value != 0:
        q = (x.value // y.value) if (x.value >= 0) == (y.value > 0) else -(-x.value // y.value)
        return const(q, x.dtype)
    return Div(x, y)


def truncmod(a: ExprLike, b: ExprLike) -> PrimExpr:
    """Remainder of :func:`truncdiv` (sign follows the dividend, C's ``%``)."""
    x, y = _pair(a, b, "T.truncmod")
    _integers(x, y, "T.truncmod")
    if isinstance(x, IntImm) and isinstance(y, IntImm) and y.value != 0:
        q = truncdiv(x, y)
        assert isinstance(q, IntImm)
        return const(x.value - q.value * y.value, x.dtype)
    return Mod(x, y)


def _bool_cond(cond: ExprLike, what: str) -> PrimExpr:
    expr = as_expr(cond, what)
    if not expr.dtype.element_of().is_bool:
        raise TypeError(f"{what}: condition must be bool, got {expr.dtype}")
    return expr


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


def reinterpret(dtype: DTypeArg, x: ExprLike) -> PrimExpr:
    """The bits of ``x`` read as ``dtype`` (total bit widths must agree)."""
    target = to_dtype(dtype)
    expr = as_expr(x, "T.reinterpret")
    if target.bits * target.lanes != expr.dtype.bits * expr.dtype.lanes:
        raise TypeError(f"T.reinterpret: cannot reinterpret {expr.dtype} as {target}")
    return Call(target, "reinterpret", (expr,), CallKind.BUILTIN)


def likely(cond: ExprLike) -> PrimExpr:
    """Mark ``cond`` as likely true (a branch hint)."""
    c = _bool_cond(cond, "T.likely")
    return Call(c.dtype, "likely", (c,), CallKind.BUILTIN)


def assume(cond: ExprLike) -> PrimExpr:
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


def call_extern(dtype: DTypeArg, func_name: str, *args: Any) -> PrimExpr:
    """Call the C function ``func_name`` (may have side effects)."""
    target = to_dtype(dtype)
    return Call(target, func_name, _call_args(args, "T.call_extern"), CallKind.EXTERN)


def call_pure_extern(dtype: DTypeArg, func_name: str, *args: Any) -> PrimExpr:
    """Call the side-effect-free C function ``func_name``."""
    target = to_dtype(dtype)
    return Call(target, func_name, _call_args(args, "T.call_pure_extern"), CallKind.PURE_EXTERN)


def call_intrin(dtype: DTypeArg, op: str, *args: Any) -> PrimExpr:
    """Call an intrinsic by name (``"exp"`` or TVM's ``"tir.exp"``)."""
    target = to_dtype(dtype)
    name = op.removeprefix("tir.")
    kind = CallKind.BUILTIN if name in _BUILTINS else CallKind.INTRINSIC
    return Call(target, name, _call_args(args, "T.call_intrin"), kind)


# -- math -------------------------------------------------------------------------


def _float_arg(x: ExprLike, what: str) -> PrimExpr:
    if isinstance(x, (bool, int, float)):
        return const(float(x), "float32")
    expr = as_expr(x, what)
    if not expr.dtype.is_float:
        raise TypeError(
            f"{what} needs a float argument, got {expr.dtype} (use T.cast(x, 'float32'))"
        )
    return expr


def _unary(op: str, x: ExprLike) -> PrimExpr:
    expr = _float_arg(x, f"T.{op}")
    return Call(expr.dtype, op, (expr,), CallKind.INTRINSIC)


def exp(x: ExprLike) -> PrimExpr:
    """e ** x."""
    return _unary("exp", x)


def exp2(x: ExprLike) -> PrimExpr:
    """2 ** x."""
    return _unary("exp2", x)


def log(x: ExprLike) -> PrimExpr:
    """Natural logarithm."""
    return _unary("log", x)


def log2(x: ExprLike) -> PrimExpr:
    """Base-2 logarithm."""
    return _unary("log2", x)


def log10(x: ExprLike) -> PrimExpr:
    """Base-10 logarithm."""
    return _unary("log10", x)


def sqrt(x: ExprLike) -> PrimExpr:
    """Square root."""
    return _unary("sqrt", x)


def rsqrt(x: ExprLike) -> PrimExpr:
    """1 / sqrt(x)."""
    return _unary("rsqrt", x)


def sin(x: ExprLike) -> PrimExpr:
    """Sine."""
    return _unary("sin", x)


def cos(x: ExprLike) -> PrimExpr:
    """Cosine."""
    return _unary("cos", x)


def tan(x: ExprLike) -> PrimExpr:
    """Tangent."""
    return _unary("tan", x)


def tanh(x: ExprLike) -> PrimExpr:
    """Hyperbolic tangent."""
    return _unary("tanh", x)


def sigmoid(x: ExprLike) -> PrimExpr:
    """1 / (1 + exp(-x))."""
    return _unary("sigmoid", x)


def erf(x: ExprLike) -> PrimExpr:
    """The error function."""
    return _unary("erf", x)


def fabs(x: ExprLike) -> PrimExpr:
    """Absolute value of a float."""
    return _unary("fabs", x)


def pow(x: ExprLike, y: ExprLike) -> PrimExpr:
    """x ** y for floats (Python numbers adapt to the other operand)."""
    if not isinstance(x, PrimExpr) and not isinstance(y, PrimExpr):
        a, b = _float_arg(x, "T.pow"), _float_arg(y, "T.pow")
    else:
        a, b = _pair(x, y, "T.pow")
    if not a.dtype.is_float:
        raise TypeError(f"T.pow needs float arguments, got {a.dtype} (use T.cast(x, 'float32'))")
    return Call(a.dtype, "pow", (a, b), CallKind.INTRINSIC)


def abs(x: ExprLike) -> PrimExpr:
    """Absolute value: ``Call("abs")`` for floats and signed ints; unsigned ints unchanged."""
    expr = as_expr(x, "T.abs")
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        return const(x if x >= 0 else -x)
    if expr.dtype.element_of().is_uint:
        return expr
    if not (expr.dtype.element_of().is_int or expr.dtype.is_float):
        raise TypeError(f"T.abs needs a number, got {expr.dtype}")
    return Call(expr.dtype, "abs", (expr,), CallKind.INTRINSIC)


def _rounding(op: str, x: ExprLike) -> PrimExpr:
    expr = as_expr(x, f"T.{op}")
    if expr.dtype.element_of().is_integer:
        return expr
    return _unary(op, expr)


def floor(x: ExprLike) -> PrimExpr:
    """Round toward minus infinity (integers unchanged)."""
    return _rounding("floor", x)


def ceil(x: ExprLike) -> PrimExpr:
    """Round toward plus infinity (integers unchanged)."""
    return _rounding("ceil", x)


def round(x: ExprLike) -> PrimExpr:
    """Round to nearest, ties to even (integers unchanged)."""
    return _rounding("round", x)


def trunc(x: ExprLike) -> PrimExpr:
    """Round toward zero (integers unchanged)."""
    return _rounding("trunc", x)


def _classify(op: str, x: ExprLike) -> PrimExpr:
    expr = as_expr(x, f"T.{op}")
    bool_type = as_dtype("bool").with_lanes(expr.dtype.lanes)
    if not expr.dtype.is_float:
        return const(False, bool_type)
    return Call(bool_type, op, (expr,), CallKind.INTRINSIC)


def isnan(x: ExprLike) -> PrimExpr:
    """Whether ``x`` is NaN (always False for integers)."""
    return _classify("isnan", x)


def isinf(x: ExprLike) -> PrimExpr:
    """Whether ``x`` is infinite (always False for integers)."""
    return _classify("isinf", x)


# -- limits and bits -----------------------------------------------------------------


def max_value(dtype: DTypeArg) -> PrimExpr:
    """The largest finite value of ``dtype``."""
    target = to_dtype(dtype)
    return const(target.max_value, target)


def min_value(dtype: DTypeArg) -> PrimExpr:
    """The lowest finite value of ``dtype``."""
    target = to_dtype(dtype)
    return const(target.min_value, target)


def _bits(op: str, a: ExprLike, b: ExprLike) -> PrimExpr:
    x, y = _pair(a, b, f"T.{op}")
    if not x.dtype.element_of().is_integer:
        raise TypeError(f"T.{op} needs integer operands, got {x.dtype}")
    return Call(x.dtype, op, (x, y), CallKind.INTRINSIC)


def bitwise_and(a: ExprLike, b: ExprLike) -> PrimExpr:
    """Bitwise and of integers."""
    return _bits("bitwise_and", a, b)


def bitwise_or(a: ExprLike, b: ExprLike) -> PrimExpr:
    """Bitwise or of integers."""
    return _bits("bitwise_or", a, b)


def bitwise_xor(a: ExprLike, b: ExprLike) -> PrimExpr:
    """Bitwise exclusive or of integers."""
    return _bits("bitwise_xor", a, b)


def shift_left(a: ExprLike, b: ExprLike) -> PrimExpr:
    """``a << b`` for integers."""
    return _bits("shift_left", a, b)


def shift_right(a: ExprLike, b: ExprLike) -> PrimExpr:
    """``a >> b`` for integers (arithmetic for signed types)."""
    return _bits("shift_right", a, b)


def bitwise_not(a: ExprLike) -> PrimExpr:
    """Bitwise complement of an integer."""
    expr = as_expr(a, "T.bitwise_not")
    if not expr.dtype.element_of().is_integer:
        raise TypeError(f"T.bitwise_not needs an integer operand, got {expr.dtype}")
    return Call(expr.dtype, "bitwise_not", (expr,), CallKind.INTRINSIC)


@dataclass(frozen=True)
class MetaVar:
    """A value marked with ``T.meta_var`` for parse-time use; the parser unwraps ``value``."""

    value: Any


def meta_var(value: Any) -> MetaVar:
    """Mark ``value`` (any Python object) to be used at parse time, not as IR."""
    return MetaVar(value)
