"""Control flow and plain statements: ``T.If``/``T.Then``/``T.Else``, ``T.While``,
``T.Assert``, ``T.LetStmt``/``T.let``/``T.bind``, ``T.attr``, ``T.evaluate`` and
``T.buffer_store``."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..builder import Frame, IRBuilder
from ..frames import AttrFrame, ElseFrame, IfFrame, LetFrame, ThenFrame, WhileFrame
from ..ir import (
    AssertStmt,
    Buffer,
    BufferLoad,
    BufferRegion,
    BufferStore,
    Cast,
    Evaluate,
    ExprLike,
    FloatImm,
    IntImm,
    Let,
    PointerType,
    PrimExpr,
    Ramp,
    StringImm,
    Var,
    as_dtype,
    const,
)
from ._common import DTypeArg, add_stmt, as_condition, as_expr, builder, span, to_dtype

__all__ = [
    "Assert",
    "Else",
    "If",
    "LetStmt",
    "Then",
    "While",
    "attr",
    "bind",
    "buffer_store",
    "evaluate",
    "let",
]


def _condition(cond: ExprLike, what: str) -> PrimExpr:
    expr = as_condition(cond, what)
    if not expr.dtype.is_bool:
        raise TypeError(f"{what}: condition must be a scalar bool, got {expr.dtype}")
    return expr


def If(condition: ExprLike) -> IfFrame:
    """``with T.If(c): with T.Then(): ...; with T.Else(): ...``."""
    builder("T.If")
    return IfFrame(_condition(condition, "T.If"))


def Then() -> ThenFrame:
    """The true branch of the enclosing ``T.If``."""
    return ThenFrame()


def Else() -> ElseFrame:
    """The false branch of the enclosing ``T.If``."""
    return ElseFrame()


def While(condition: ExprLike) -> WhileFrame:
    """A while loop frame."""
    builder("T.While")
    return WhileFrame(_condition(condition, "T.While"))


class AssertFrame(Frame):
    """What ``T.Assert`` returns: TVM's frame form ``with T.Assert(c, msg): body``.

    Our ``AssertStmt`` has no body: the assertion is appended when ``T.Assert`` is called
    and the statements of the ``with`` body follow it in the enclosing frame.
    """

    kind = "T.Assert"

    def finalize(self, builder: IRBuilder) -> None:
        for stmt in self.stmts:
            builder.add_stmt(stmt, self.kind)


def Assert(condition: ExprLike, message: str | PrimExpr) -> AssertFrame:
    """Append an ``AssertStmt`` (no body): fail with ``message`` when ``condition`` is false.

    A message starting with ``"TypeError: "``/``"ValueError: "``/``"IndexError: "``
    raises that exception from compiled code, any other ``AssertionError``. The result
    may open a ``with`` scope (TVM's frame form); its body follows the assertion.
    """
    builder("T.Assert")
    cond = _condition(condition, "T.Assert")
    msg = StringImm(message) if isinstance(message, str) else message
    if not isinstance(msg, PrimExpr):
        raise TypeError(f"T.Assert: message must be a string, got {type(message).__name__}")
    add_stmt(AssertStmt(cond, msg, span=span()), "T.Assert")
    return AssertFrame()


def _annotated_var(value: PrimExpr, type_annotation: Any, var: Var | None) -> Var:
    if var is not None:
        if var.dtype != value.dtype:
            raise TypeError(f"T.LetStmt: var {var.name!r} is {var.dtype}, value is {value.dtype}")
        return var
    if type_annotation is None:
        return Var("v", value.dtype)
    if isinstance(type_annotation, PointerType):
        return Var("v", as_dtype("handle"), type_annotation)
    dtype = to_dtype(type_annotation)
    if dtype != value.dtype:
        raise TypeError(f"T.LetStmt: value of type {value.dtype} does not match annotation {dtype}")
    return Var("v", dtype)


def LetStmt(
    value: ExprLike,
    type_annotation: DTypeArg | PointerType | None = None,
    *,
    var: Var | None = None,
) -> LetFrame:
    """A let frame binding a new var (or ``var``) to ``value``; ``with ... as x`` gives it."""
    builder("T.LetStmt")
    expr = as_expr(value, "T.LetStmt")
    return LetFrame(_annotated_var(expr, type_annotation, var), expr)


def let(
    v: Var | ExprLike,
    value: ExprLike | DTypeArg | None = None,
    body: ExprLike | None = None,
) -> Any:
    """TVM's ``T.let``: ``T.let(v, value)`` is a let frame binding ``v``; with ``body``,
    the ``Let`` expression; ``T.let(value)`` alone is ``T.LetStmt(value)``."""
    if body is not None:
        if not isinstance(v, Var):
            raise TypeError("T.let(v, value, body): v must be a Var")
        return Let(v, as_expr(value, "T.let"), as_expr(body, "T.let"))
    if isinstance(value, (PrimExpr, int, float, bool)):
        if not isinstance(v, Var):
            raise TypeError("T.let(v, value): v must be a Var")
        return LetStmt(value, var=v)
    return LetStmt(v, value)


def bind(value: ExprLike, type_annotation: DTypeArg | PointerType | None = None) -> Var:
    """Bind ``value`` to a new var for the rest of the enclosing scope; returns the var."""
    frame = LetStmt(value, type_annotation)
    var: Var = frame.enter_implicit()
    frame.kind = "T.bind"
    return var


def attr(node: Any, attr_key: str, value: ExprLike | str) -> AttrFrame:
    """An ``AttrStmt`` frame attaching ``attr_key = value`` to ``node``."""
    builder("T.attr")
    expr = StringImm(value) if isinstance(value, str) else as_expr(value, "T.attr")
    return AttrFrame(node, attr_key, expr)


REALIZE_ATTR = "buffer_realize"
"""Attribute key of ``T.realize``: node ``(region, condition)``, value the storage scope."""


def realize(buffer_slice: Any, storage_scope: str, condition: ExprLike = True) -> AttrFrame:
    """``with T.realize(A[0:128], "")``: TVM's pre-schedule ``BufferRealize`` of a region.

    Built as an ``AttrStmt`` (node ``(region, condition)``, key ``"buffer_realize"``, value the
    scope) over the body; it parses and prints back, and the CPU build refuses it.
    """
    builder("T.realize")
    if not isinstance(buffer_slice, BufferRegion):
        raise TypeError(
            f"T.realize: expected a buffer region such as A[0:8], got {type(buffer_slice).__name__}"
        )
    if not isinstance(storage_scope, str):
        raise TypeError(f"T.realize: the storage scope must be a string, got {storage_scope!r}")
    cond = _condition(condition, "T.realize")
    return AttrFrame((buffer_slice, cond), REALIZE_ATTR, StringImm(storage_scope))


def evaluate(value: ExprLike) -> None:
    """Append ``Evaluate(value)`` (a call evaluated for its side effects)."""
    builder("T.evaluate")
    add_stmt(Evaluate(as_expr(value, "T.evaluate"), span=span()), "T.evaluate")


def _store_value(buffer: Buffer, value: ExprLike, expected: Any) -> PrimExpr:
    # TVM v0.16's BufferStore builder casts a value of another type with the same lanes to
    # the buffer's type (int into float and float into int alike: the latter truncates
    # toward zero, as numpy's assignment does); constants fold.
    expected_dtype = expected.dtype
    element = expected_dtype.element_of()
    if isinstance(value, float) and not element.is_float and not element.is_bool:
        return const(math.trunc(value), expected_dtype)
    if isinstance(value, (bool, int, float)):
        return const(value, expected_dtype)
    if not isinstance(value, PrimExpr):
        raise TypeError(f"buffer {buffer.name!r}: cannot store a {type(value).__name__} value")
    if value.dtype == expected_dtype:
        return value
    if isinstance(value, IntImm) and (element.is_integer or element.is_float):
        return const(value.value, expected_dtype)
    if isinstance(value, FloatImm) and element.is_float:
        return const(value.value, expected_dtype)
    if isinstance(value, FloatImm) and element.is_integer and math.isfinite(value.value):
        return const(math.trunc(value.value), expected_dtype)
    if value.dtype.lanes == expected_dtype.lanes and not (
        value.dtype.is_handle or expected_dtype.is_handle
    ):
        return Cast(expected_dtype, value)
    raise TypeError(
        f"cannot store a {value.dtype} value into buffer {buffer.name!r} of type "
        f"{expected_dtype} (use T.cast)"
    )


def buffer_store(buffer: Buffer, value: ExprLike, indices: Sequence[ExprLike]) -> None:
    """Append ``buffer[indices] = value``; the value's type must match the buffer's."""
    builder("T.buffer_store")
    if not isinstance(buffer, Buffer):
        raise TypeError(f"T.buffer_store: expected a Buffer, got {type(buffer).__name__}")
    if isinstance(indices, (PrimExpr, int)):
        indices = [indices]
    exprs = tuple(as_expr(i, f"index of buffer {buffer.name!r}") for i in indices)
    if len(exprs) != buffer.ndim:
        raise IndexError(
            f"buffer {buffer.name!r} has {buffer.ndim} dimensions, stored with {len(exprs)} indices"
        )
    for index in exprs:
        if not index.dtype.element_of().is_integer:
            raise TypeError(f"buffer {buffer.name!r}: index of type {index.dtype} is not integer")
        if index.dtype.is_vector and not isinstance(index, Ramp) and index is not exprs[-1]:
            raise TypeError(f"buffer {buffer.name!r}: only the last index may be a vector")
    expected = BufferLoad(buffer, exprs)
    stored = _store_value(buffer, value, expected)
    add_stmt(BufferStore(buffer, stored, exprs, span=span()), "T.buffer_store")
