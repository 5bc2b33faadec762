"""Integer semantics of TIR's binary operators, shared by every constant folder and the interpreter.

One definition of what compiled code computes on integers, so that folding at IR
construction (:mod:`irbuilder.ir.expr`), the simplifier's folding
(:mod:`lowering.arith.fold`) and the reference interpreter cannot drift apart:

* results wrap to the dtype's width (two's complement for signed types);
* ``div``/``mod`` truncate toward zero (C, ``T.truncdiv``/``T.truncmod``);
  ``floordiv``/``floormod`` round toward minus infinity (Python's ``//``/``%``);
* a shift by an amount outside ``[0, bits)`` (LLVM poison) is defined as 0, or the sign
  fill (0 or -1) for ``shift_right`` of a negative signed value;
* a division or remainder by zero and the one overflowing quotient (``INT_MIN // -1``)
  have no value here: :func:`int_binary` returns ``None`` and the caller leaves the
  operation to run time, where the kernel raises (see :func:`quotient_overflows`);
* on ``bool`` (one bit) the arithmetic operators wrap like LLVM's ``i1``.
"""

from __future__ import annotations

from collections.abc import Callable

from .dtype import DataType

__all__ = ["INT_BINARY_OPS", "int_binary", "quotient_overflows", "trunc_div", "wrap_int"]


def wrap_int(value: int, dtype: DataType) -> int:
    """``value`` reduced to the range of the integer (or bool) ``dtype`` by wrap-around."""
    if dtype.is_bool:
        return 1 if value else 0
    return _truncate(value, dtype.bits, dtype.is_int)


def _truncate(value: int, bits: int, signed: bool) -> int:
    value &= (1 << bits) - 1
    if signed and value >= 1 << (bits - 1):
        value -= 1 << bits
    return value


def quotient_overflows(x: int, y: int, dtype: DataType) -> bool:
    """Whether ``x / y`` (truncating or floor) leaves the range of the integer ``dtype``: only
    the minimum of a signed type divided by -1. Kernels raise ``OverflowError`` for it, so
    constant folders must leave it alone."""
    return y == -1 and dtype.is_int and x == -(1 << (dtype.bits - 1))


def trunc_div(x: int, y: int) -> int:
    """``x / y`` rounded toward zero (``y`` must not be 0)."""
    quotient = abs(x) // abs(y)
    return quotient if (x >= 0) == (y >= 0) else -quotient


def _shift(op: str, x: int, y: int, dtype: DataType) -> int:
    if not 0 <= y < dtype.bits:
        return -1 if op == "shift_right" and dtype.is_int and x < 0 else 0
    # Python's >> is arithmetic on signed values, logical on non-negative (unsigned) ones.
    return x << y if op == "shift_left" else x >> y


_OPS: dict[str, Callable[[int, int], int]] = {
    "add": lambda x, y: x + y,
    "sub": lambda x, y: x - y,
    "mul": lambda x, y: x * y,
    "div": trunc_div,
    "mod": lambda x, y: x - trunc_div(x, y) * y,
    "floordiv": lambda x, y: x // y,
    "floormod": lambda x, y: x % y,
    "min": min,
    "max": max,
    "bitwise_and": lambda x, y: x & y,
    "bitwise_or": lambda x, y: x | y,
    "bitwise_xor": lambda x, y: x ^ y,
    "and": lambda x, y: int(bool(x) and bool(y)),
    "or": lambda x, y: int(bool(x) or bool(y)),
}

_DIVISIONS = frozenset({"div", "mod", "floordiv", "floormod"})

INT_BINARY_OPS = frozenset(_OPS) | {"shift_left", "shift_right"}
"""The operator names :func:`int_binary` knows."""


def int_binary(op: str, x: int, y: int, dtype: DataType) -> int | None:
    """``x op y`` on the integer or bool ``dtype`` (operands already in its range), or
    ``None`` when the result belongs to run time (division by zero, ``INT_MIN / -1``).

    Raises ``KeyError`` for an operator not in :data:`INT_BINARY_OPS`.
    """
    if op in _DIVISIONS:
        if y == 0:
            return None
        if op in ("div", "floordiv") and quotient_overflows(x, y, dtype):
            return None
    if op in ("shift_left", "shift_right"):
        result = _shift(op, x, y, dtype)
    else:
        result = _OPS[op](x, y)
    return _truncate(result, dtype.bits, dtype.is_int)
