"""The ``T.<intrinsic>`` builders, made from the intrinsic table (``irbuilder.ir.intrinsics``).

Float math (``exp``, ``sqrt``, ``atan2``...) needs float operands: a Python number becomes a
float32 constant, an integer expression is a TypeError asking for ``T.cast`` (TVM would build
an integer-typed call that fails later in codegen). Rounding (``floor``, ``ceil``, ``round``,
``trunc``, ``nearbyint``) of an integer returns it unchanged, and ``isnan``/``isinf`` of an
integer is ``False`` (``isfinite`` ``True``), as in TVM. Every builder accepts and ignores a
``dtype=`` keyword, as TVM's ``_op_wrapper`` does.
"""

from __future__ import annotations

from typing import Any

from ..ir import (
    Call,
    CallKind,
    ExprLike,
    IntrinsicSpec,
    Operands,
    PrimExpr,
    as_dtype,
    const,
    promote,
)
from ._common import as_expr

__all__ = ["intrinsic_call"]


def _float_arg(x: ExprLike, what: str) -> PrimExpr:
    if isinstance(x, (bool, int, float)):
        return const(float(x), "float32")
    expr = as_expr(x, what)
    if not expr.dtype.is_float:
        raise TypeError(
            f"{what} needs a float argument, got {expr.dtype} (use T.cast(x, 'float32'))"
        )
    return expr


def _operands(args: tuple[Any, ...], what: str) -> tuple[PrimExpr, ...]:
    for value in args:
        if not isinstance(value, (PrimExpr, bool, int, float)):
            raise TypeError(f"{what}: expected expressions or numbers, got {type(value).__name__}")
    if len(args) == 1:
        return (as_expr(args[0], what),)
    if len(args) == 2:
        return promote(args[0], args[1])
    exprs = [as_expr(a, what) for a in args]
    return tuple(e if e.dtype == exprs[0].dtype else e.astype(exprs[0].dtype) for e in exprs)


def intrinsic_call(spec: IntrinsicSpec, args: tuple[Any, ...]) -> PrimExpr:
    """``T.<spec.name>(*args)``: check the operands against the declaration, build the call."""
    what = f"T.{spec.name}"
    if len(args) != spec.arity:
        # Python's own wording, as if T.<name> were a plain def.
        plural = "" if spec.arity == 1 else "s"
        verb = "was" if len(args) == 1 else "were"
        raise TypeError(
            f"{spec.name}() takes {spec.arity} positional argument{plural} "
            f"but {len(args)} {verb} given"
        )
    kind = spec.operands
    if kind is Operands.FLOAT:
        if not any(isinstance(a, PrimExpr) for a in args):
            exprs = tuple(_float_arg(a, what) for a in args)
        else:
            exprs = _operands(args, what)
            if not exprs[0].dtype.is_float:
                noun = "float arguments" if spec.arity > 1 else "a float argument"
                raise TypeError(
                    f"{what} needs {noun}, got {exprs[0].dtype} (use T.cast(x, 'float32'))"
                )
        return Call(exprs[0].dtype, spec.name, exprs, CallKind.INTRINSIC)
    if spec.name == "fabs" and isinstance(args[0], (bool, int, float)):
        args = (_float_arg(args[0], what),)
    exprs = _operands(args, what)
    element = exprs[0].dtype.element_of()
    if kind is Operands.ROUNDING:
        if element.is_integer:
            return exprs[0]
        _float_arg(exprs[0], what)
    elif kind is Operands.CLASSIFY:
        bool_type = as_dtype("bool").with_lanes(exprs[0].dtype.lanes)
        if not exprs[0].dtype.is_float:
            return const(spec.name == "isfinite", bool_type)
        return Call(bool_type, spec.name, exprs, CallKind.INTRINSIC)
    elif kind is Operands.INTEGER or kind is Operands.BITS:
        if not (element.is_integer or (kind is Operands.BITS and element.is_bool)):
            noun = "integer operands" if spec.arity > 1 else "an integer operand"
            if kind is Operands.BITS:
                noun += " or bools"
            raise TypeError(f"{what} needs {noun}, got {exprs[0].dtype}")
    elif kind is Operands.NUMBER:
        if isinstance(args[0], (int, float)) and not isinstance(args[0], bool):
            return const(args[0] if args[0] >= 0 else -args[0])
        if element.is_uint:
            return exprs[0]
        if not (element.is_int or exprs[0].dtype.is_float):
            raise TypeError(f"{what} needs a number, got {exprs[0].dtype}")
        if spec.name == "fabs" and element.is_int:
            return Call(exprs[0].dtype, "abs", exprs, CallKind.INTRINSIC)
    return Call(exprs[0].dtype, spec.name, exprs, CallKind.INTRINSIC)
