"""Arithmetic builders: ``T.min``/``T.max``, the integer divisions (``T.floordiv``,
``T.floormod``, ``T.truncdiv``, ``T.truncmod``, ``T.ceildiv``) and the typed limits
(``T.min_value``, ``T.max_value``, ``T.infinity``)."""

from __future__ import annotations

from ..ir import Div, ExprLike, Max, Min, Mod, PrimExpr, binary, const, promote
from ._common import DTypeArg, to_dtype

__all__ = [
    "ceildiv",
    "floordiv",
    "floormod",
    "infinity",
    "max",
    "max_value",
    "min",
    "min_value",
    "truncdiv",
    "truncmod",
]


def _pair(a: ExprLike, b: ExprLike, what: str) -> tuple[PrimExpr, PrimExpr]:
    for value in (a, b):
        if not isinstance(value, (PrimExpr, bool, int, float)):
            raise TypeError(f"{what}: expected expressions or numbers, got {type(value).__name__}")
    return promote(a, b)



def min(a: ExprLike, b: ExprLike) -> PrimExpr:
    """The smaller of two values.

    Parameters
    ----------
    a, b : int or PrimExpr
        The operands (promoted to a common type).

    Returns
    -------
    PrimExpr
        Folded to a constant when both operands are constants.

    Examples
    --------
    >>> print(T.min(T.int32(4), 9), T.min(T.float32(), 0).dtype)
    IntImm(int32, 4) float32
    """
    x, y = _pair(a, b, "T.min")
    return binary(Min, x, y)



def max(a: ExprLike, b: ExprLike) -> PrimExpr:
    """The larger of two values.

    Parameters
    ----------
    a, b : int or PrimExpr
        The operands (promoted to a common type).

    Returns
    -------
    PrimExpr
        Folded to a constant when both operands are constants.

    Examples
    --------
    >>> print(T.max(T.int32(4), 9), T.max(T.int64(), 0).dtype)
    IntImm(int32, 9) int64
    """
    x, y = _pair(a, b, "T.max")
    return binary(Max, x, y)



def floordiv(a: ExprLike, b: ExprLike) -> PrimExpr:
    """Integer division rounding toward minus infinity (Python's ``//``; ``a // b`` in a kernel).

    Parameters
    ----------
    a, b : int or PrimExpr
        The operands (promoted to a common type).

    Returns
    -------
    PrimExpr
        Folded to a constant when both operands are constants.

    Examples
    --------
    >>> print(T.floordiv(-7, 2), T.floordiv(7, 2))
    IntImm(int32, -4) IntImm(int32, 3)
    """
    x, y = _pair(a, b, "T.floordiv")
    return x // y



def floormod(a: ExprLike, b: ExprLike) -> PrimExpr:
    """Remainder of :func:`floordiv`, with the divisor's sign (Python's ``%``).

    Parameters
    ----------
    a, b : int or PrimExpr
        The operands (promoted to a common type).

    Returns
    -------
    PrimExpr
        Folded to a constant when both operands are constants.

    Examples
    --------
    >>> print(T.floormod(-7, 2), T.floormod(7, -2))
    IntImm(int32, 1) IntImm(int32, -1)
    """
    x, y = _pair(a, b, "T.floormod")
    return x % y



def _integers(x: PrimExpr, y: PrimExpr, what: str) -> None:
    if not x.dtype.element_of().is_integer:
        raise TypeError(f"{what} needs integer operands, got {x.dtype}")



def truncdiv(a: ExprLike, b: ExprLike) -> PrimExpr:
    """Integer division rounding toward zero (C's ``/``; TVM's ``Div``).

    Parameters
    ----------
    a, b : int or PrimExpr
        The operands (promoted to a common type).

    Returns
    -------
    PrimExpr
        Folded to a constant when both operands are constants.

    Examples
    --------
    >>> print(T.truncdiv(-7, 2), T.truncdiv(7, 2))
    IntImm(int32, -3) IntImm(int32, 3)
    """
    x, y = _pair(a, b, "T.truncdiv")
    _integers(x, y, "T.truncdiv")
    return binary(Div, x, y)



def truncmod(a: ExprLike, b: ExprLike) -> PrimExpr:
    """Remainder of :func:`truncdiv`, with the dividend's sign (C's ``%``; on floats, C's
    ``fmod``, as TVM's ``truncmod`` and TOPI's ``mod``).

    Parameters
    ----------
    a, b : int, float or PrimExpr
        The operands (promoted to a common type).

    Returns
    -------
    PrimExpr
        Folded to a constant when both operands are constants.

    Examples
    --------
    >>> print(T.truncmod(-7, 2), T.truncmod(7, -2))
    IntImm(int32, -1) IntImm(int32, 1)
    """
    x, y = _pair(a, b, "T.truncmod")
    # TVM's truncmod (unlike truncdiv) takes float operands too: C's fmod (TOPI's float mod)
    if x.dtype.element_of().is_bool:
        raise TypeError(f"T.truncmod needs integer or float operands, got {x.dtype}")
    return binary(Mod, x, y)



def ceildiv(a: ExprLike, b: ExprLike) -> PrimExpr:
    """Integer division rounding toward plus infinity: ``floordiv(a + b - 1, b)``, as TVM
    builds it.

    Parameters
    ----------
    a, b : int or PrimExpr
        The operands (promoted to a common type).

    Returns
    -------
    PrimExpr
        Folded to a constant when both operands are constants.

    Examples
    --------
    >>> print(T.ceildiv(7, 2), T.ceildiv(8, 2))
    IntImm(int32, 4) IntImm(int32, 4)
    """
    x, y = _pair(a, b, "T.ceildiv")
    _integers(x, y, "T.ceildiv")
    return (x + y - 1) // y



def infinity(dtype: DTypeArg) -> PrimExpr:
    """Positive infinity of the float type ``dtype``.

    Parameters
    ----------
    dtype : str or type object
        A float type.

    Returns
    -------
    PrimExpr
        A constant.

    Examples
    --------
    >>> print(T.infinity("float32"), -T.infinity("float64"))
    FloatImm(float32, inf) FloatImm(float64, -inf)
    """
    target = to_dtype(dtype)
    if not target.is_float:
        raise TypeError(f"T.infinity needs a float dtype, got {target}")
    return const(float("inf"), target)



def max_value(dtype: DTypeArg) -> PrimExpr:
    """The largest finite value of ``dtype``.

    Parameters
    ----------
    dtype : str or type object
        A numeric type.

    Returns
    -------
    PrimExpr
        A constant of that type.

    Examples
    --------
    >>> print(T.max_value("uint8"), T.max_value("int16"))
    IntImm(uint8, 255) IntImm(int16, 32767)
    """
    target = to_dtype(dtype)
    return const(target.max_value, target)



def min_value(dtype: DTypeArg) -> PrimExpr:
    """The lowest finite value of ``dtype``.

    Parameters
    ----------
    dtype : str or type object
        A numeric type.

    Returns
    -------
    PrimExpr
        A constant of that type.

    Examples
    --------
    >>> print(T.min_value("int8"), T.min_value("float16"))
    IntImm(int8, -128) FloatImm(float16, -65504.0)
    """
    target = to_dtype(dtype)
    return const(target.min_value, target)
