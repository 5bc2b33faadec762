"""What TIR gives Python's logical operators, which values count as IR, and ``range``.

* :data:`TIR_HOOKS`: ``and``/``or``/``not``/chained comparisons/``x if c else y`` keep
  Python's meaning on Python values and build ``And``/``Or``/``Not``/``Select`` as soon
  as an operand is a :class:`PrimExpr` (constants included: ``T.bool(True) and c`` is an
  ``And`` node, as the printer expects); ``and``/``or`` of a bool vector build
  ``T.bitwise_and``/``T.bitwise_or`` calls, the scalar operand broadcast, as TVM does.
* :func:`is_ir_object`: the values the capture policy takes without ``capture=[...]``.
* :class:`KernelRange`: ``range`` inside a kernel.  Like TVM, ``for i in range(n)`` is a
  serial loop (``T.serial``) even over Python ints; elsewhere (a comprehension) the
  object iterates like Python's ``range`` when its bounds are Python ints.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterator
from typing import Any

from irbuilder.frames import ForFrame
from irbuilder.ir import (
    And,
    Buffer,
    BufferRegion,
    DataType,
    Div,
    FloorDiv,
    FloorMod,
    IntImm,
    IRModule,
    IterVar,
    Mod,
    Not,
    Or,
    PrimExpr,
    PrimFunc,
    Range,
    convert,
)
from irbuilder.tir import MetaVar, Select, bitwise_and, bitwise_or, serial
from irbuilder.tir._common import vector_load
from tvmscript.parser.core import EvalHooks

from .macro import TIRMacro

__all__ = [
    "TIR_HOOKS",
    "KernelRange",
    "check_result",
    "is_ir_object",
    "is_parse_time_condition",
]


def _symbolic(value: Any) -> bool:
    return isinstance(value, PrimExpr)


def _bool_expr(value: Any, what: str) -> PrimExpr:
    expr = convert(value)
    if not expr.dtype.is_bool:
        raise TypeError(f"operand of '{what}' must be a bool expression, got {expr.dtype}")
    return expr


def _logical_and(a: Any, b: Any) -> PrimExpr:
    x, y = _bool_expr(a, "and"), _bool_expr(b, "and")
    if x.dtype.is_scalar and y.dtype.is_scalar:
        return And(x, y)
    # As TVM's parser: bool vectors combine with bitwise_and, a scalar broadcast to the
    # lanes (`(A[0:4] < 0) and True`), so its programs compare structurally equal.
    return bitwise_and(x, y)


def _logical_or(a: Any, b: Any) -> PrimExpr:
    x, y = _bool_expr(a, "or"), _bool_expr(b, "or")
    if x.dtype.is_scalar and y.dtype.is_scalar:
        return Or(x, y)
    return bitwise_or(x, y)


def _logical_not(a: Any) -> PrimExpr:
    return Not(_bool_expr(a, "not"))


def _select(cond: Any, true_value: Any, false_value: Any) -> PrimExpr:
    return Select(cond, true_value, false_value)


_INT64_MAX = 2**63 - 1


def _check_division(value: PrimExpr) -> None:
    if not isinstance(value, (Div, Mod, FloorDiv, FloorMod)):
        return
    divisor = value.b
    if value.dtype.element_of().is_float or not isinstance(divisor, IntImm):
        return
    if divisor.value == 0 and not divisor.dtype.is_bool:
        what = "modulo" if isinstance(value, (Mod, FloorMod)) else "division"
        raise ZeroDivisionError(f"integer {what} by zero: the divisor is the constant 0")


def _check_buffer(buffer: Buffer) -> None:
    count = 1
    for dim in buffer.shape:
        if not isinstance(dim, IntImm):
            return
        count *= dim.value
    dims = ", ".join(str(d.value) for d in buffer.shape if isinstance(d, IntImm))
    if count > _INT64_MAX:
        raise OverflowError(
            f"buffer shape ({dims}) has {count} elements, more than int64 can count"
        )
    size = count * max(1, buffer.dtype.bits * buffer.dtype.lanes // 8)
    if size > _INT64_MAX:
        raise OverflowError(
            f"buffer shape ({dims}) of {buffer.dtype} spans {size} bytes, more than int64 "
            "can address"
        )


def check_result(value: Any) -> None:
    """Refuse what no kernel can run: an integer division or modulo by the constant 0, a
    buffer whose element count (or byte size) does not fit in int64."""
    if isinstance(value, PrimExpr):
        _check_division(value)
        return
    buffer = value if isinstance(value, Buffer) else getattr(value, "buffer", None)
    if isinstance(buffer, Buffer):
        _check_buffer(buffer)


def _vector_load(value: Any) -> Any:
    """A buffer sliced as an operand is a vector load, as TVM's parser reads it."""
    if isinstance(value, BufferRegion):
        return vector_load(value, "operand")
    return value


TIR_HOOKS = EvalHooks(
    is_static=lambda value: not _symbolic(value),
    logical_and=_logical_and,
    logical_or=_logical_or,
    logical_not=_logical_not,
    select=_select,
    check_result=check_result,
    sliced_operand=_vector_load,
)
"""The TIR dialect's :class:`EvalHooks`."""


def is_parse_time_condition(value: Any) -> bool:
    """Whether an ``if``/``while`` condition is decided while parsing.

    Python values are, and so are constant ``IntImm``s (``if T.bool(True):``); any
    other expression becomes IR control flow.
    """
    return not isinstance(value, PrimExpr) or isinstance(value, IntImm)


_IR_TYPES = (
    PrimExpr,
    Buffer,
    BufferRegion,
    IterVar,
    Range,
    PrimFunc,
    IRModule,
    DataType,
    TIRMacro,
    MetaVar,
)


def is_ir_object(value: Any) -> bool:
    """Whether the capture policy takes ``value`` automatically as an IR object."""
    return isinstance(value, _IR_TYPES)


class KernelRange:
    """``range`` inside a kernel: a serial loop in a ``for``, Python's range elsewhere."""

    def __init__(self, *args: Any, annotations: dict[str, Any] | None = None) -> None:
        # TVM maps `range` to T.serial, which takes annotations=.
        self.annotations = annotations
        if not 1 <= len(args) <= 3:
            raise TypeError(f"range expected 1 to 3 arguments, got {len(args)}")
        if len(args) == 3 and not (isinstance(args[2], int) and args[2] == 1):
            if not all(isinstance(a, int) and not isinstance(a, bool) for a in args):
                raise TypeError("a loop over range(start, stop, step) needs step 1 in a kernel")
        self.args = args

    def loop(self, annotations: dict[str, Any] | None = None) -> ForFrame:
        """The ``T.serial`` frame of this range (loops over ``[start, stop)``)."""
        if len(self.args) == 3 and self.args[2] != 1:
            raise TypeError("a kernel loop over range() needs step 1; use T.serial and an index")
        if self.annotations:
            annotations = {**self.annotations, **(annotations or {})}
        return serial(*self.args[:2], annotations=annotations)

    def __iter__(self) -> Iterator[int]:
        return iter(builtins.range(*self.args))

    def __len__(self) -> int:
        return len(builtins.range(*self.args))

    def __repr__(self) -> str:
        return f"range({', '.join(map(repr, self.args))})"


# ``2 <= j`` is ``LE(2, j)`` in TVM's parser (each comparison builds its own node, the
# constant taking the other side's dtype), where Python's reflection would give
# ``GE(j, 2)``; TVM's expected programs are written this way, so the node kinds must match.
def _register_reflected_comparisons() -> None:
    import operator

    from irbuilder.ir import EQ, GE, GT, LE, LT, NE, FloatImm
    from tvmscript.parser.core.dispatch import register_op

    table = {
        "Lt": (LT, operator.lt),
        "LtE": (LE, operator.le),
        "Gt": (GT, operator.gt),
        "GtE": (GE, operator.ge),
        "Eq": (EQ, operator.eq),
        "NotEq": (NE, operator.ne),
    }

    def make(node_cls: Any, python_op: Any) -> Any:
        def handler(lhs: Any, rhs: Any) -> Any:
            if isinstance(lhs, (int, float)) and not isinstance(lhs, bool):
                dtype = rhs.dtype
                if dtype.lanes == 1 and isinstance(lhs, int) and dtype.is_int:
                    if dtype.min_value <= lhs <= dtype.max_value:
                        return node_cls(IntImm(dtype, lhs), rhs)
                elif dtype.lanes == 1 and dtype.is_float:
                    return node_cls(FloatImm(dtype, float(lhs)), rhs)
            return python_op(lhs, rhs)

        return handler

    for name, (node_cls, python_op) in table.items():
        register_op(PrimExpr, name, 1)(make(node_cls, python_op))


_register_reflected_comparisons()
