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
    seq,
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
    """IRBuilder form of ``if``: ``with T.If(c):`` holding ``with T.Then():`` and
    optionally ``with T.Else():``.

    Parameters
    ----------
    condition : PrimExpr
        A bool expression (an integer is compared with zero; a float is an error).

    Returns
    -------
    IfFrame
        Used with ``with``; builds an ``IfThenElse`` statement.

    Examples
    --------
    >>> with I.IRBuilder() as ib:
    ...     with T.prim_func():
    ...         T.func_name("clip")
    ...         A = T.arg("A", T.Buffer((3,), "int32"))
    ...         with T.serial(3) as i:
    ...             with T.If(A[i] > 5):
    ...                 with T.Then():
    ...                     T.buffer_store(A, 5, [i])
    ...                 with T.Else():
    ...                     T.buffer_store(A, A[i] + 1, [i])
    >>> a = np.array([1, 9, 5], dtype="int32"); tvmscript.build(ib.get())(a); print(a)
    [2 5 6]
    """
    builder("T.If")
    return IfFrame(_condition(condition, "T.If"))


def Then() -> ThenFrame:
    """The true branch of the enclosing ``T.If`` (``with T.Then():``); see :func:`If`.

    Returns
    -------
    ThenFrame
    """
    return ThenFrame()


def Else() -> ElseFrame:
    """The false branch of the enclosing ``T.If`` (``with T.Else():``); see :func:`If`.

    Returns
    -------
    ElseFrame
    """
    return ElseFrame()


def While(condition: ExprLike) -> WhileFrame:
    """IRBuilder form of ``while``: ``with T.While(cond):`` repeats its body while ``cond``.

    Parameters
    ----------
    condition : PrimExpr
        A bool expression (an integer is compared with zero), evaluated before each
        iteration; it usually reads a buffer the body writes.

    Returns
    -------
    WhileFrame

    Examples
    --------
    >>> @T.prim_func
    ... def halve(A: T.Buffer((1,), "int32")):
    ...     while A[0] > 1:
    ...         A[0] = A[0] // 2
    >>> a = np.array([100], dtype="int32"); tvmscript.build(halve)(a); print(a)
    [1]
    """
    builder("T.While")
    return WhileFrame(_condition(condition, "T.While"))


class AssertFrame(Frame):
    """What ``T.Assert`` returns: TVM's frame form ``with T.Assert(c, msg): body``.

    Our ``AssertStmt`` has no body: the assertion is appended when ``T.Assert`` is called
    and the statements of the ``with`` body follow it in the enclosing frame. In a
    fragment (no frame open) the assertion is the builder's result so far, and the frame
    makes it ``SeqStmt([assertion, body])``, our spelling of TVM's ``AssertStmt`` with a
    body.
    """

    kind = "T.Assert"

    def __init__(self, assertion: AssertStmt) -> None:
        super().__init__()
        self.assertion = assertion

    def finalize(self, builder: IRBuilder) -> None:
        if builder.top() is None:
            builder.replace_fragment(self.assertion, seq([self.assertion, *self.stmts]))
            return
        for stmt in self.stmts:
            builder.add_stmt(stmt, self.kind)


def Assert(condition: ExprLike, message: str | PrimExpr) -> AssertFrame:
    """Append an ``AssertStmt``: fail with ``message`` when ``condition`` is false.

    ``assert cond, "message"`` in a kernel means the same. A message starting with
    ``"TypeError: "``/``"ValueError: "``/``"IndexError: "`` raises that exception from
    compiled code, any other ``AssertionError``. The result may open a ``with`` scope
    (TVM's frame form); unlike TVM's, our assertion has no body: the body follows it.

    Parameters
    ----------
    condition : PrimExpr
        A bool expression (an integer is compared with zero).
    message : str or PrimExpr
        The message, or ``T.format_message(template, *values)`` for run-time values.

    Returns
    -------
    AssertFrame

    Examples
    --------
    >>> @T.prim_func
    ... def checked(A: T.Buffer((1,), "int32")):
    ...     T.Assert(A[0] >= 0, "ValueError: A[0] must not be negative")
    >>> tvmscript.build(checked)(np.array([-1], dtype="int32"))
    Traceback (most recent call last):
    ...
    ValueError: A[0] must not be negative
    """
    builder("T.Assert")
    cond = _condition(condition, "T.Assert")
    msg = StringImm(message) if isinstance(message, str) else message
    if not isinstance(msg, PrimExpr):
        raise TypeError(f"T.Assert: message must be a string, got {type(message).__name__}")
    assertion = AssertStmt(cond, msg, span=span())
    add_stmt(assertion, "T.Assert")
    return AssertFrame(assertion)


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
    """Bind a variable to ``value`` for a body: ``with T.LetStmt(value) as x:``.

    ``x = value`` / ``x: T.int32 = value`` in a kernel makes the same ``LetStmt`` for the
    rest of the scope.

    Parameters
    ----------
    value : PrimExpr
        The bound value.
    type_annotation : str, type object or T.Ptr, optional
        The variable's type; must match ``value``'s.
    var : Var, optional
        Bind this existing variable instead of a new one.

    Returns
    -------
    LetFrame
        Yields the variable.

    Examples
    --------
    >>> @T.prim_func
    ... def f(A: T.Buffer((2,), "int32")):
    ...     with T.LetStmt(A[0] * 3) as x:
    ...         A[1] = x + 1
    >>> a = np.array([2, 0], dtype="int32"); tvmscript.build(f)(a); print(a)
    [2 7]
    """
    builder("T.LetStmt")
    expr = as_expr(value, "T.LetStmt")
    return LetFrame(_annotated_var(expr, type_annotation, var), expr)


def let(
    v: Var | ExprLike,
    value: ExprLike | DTypeArg | None = None,
    body: ExprLike | None = None,
) -> Any:
    """TVM's ``T.let``: a let frame, or with ``body`` the ``Let`` expression.

    Parameters
    ----------
    v : Var or PrimExpr
        The variable to bind; ``T.let(value)`` alone is ``T.LetStmt(value)``.
    value : PrimExpr, optional
        Its value.
    body : PrimExpr, optional
        When given, the result is the expression ``body`` evaluated with ``v = value``.

    Returns
    -------
    LetFrame or PrimExpr

    Examples
    --------
    >>> v = T.int32()
    >>> print(T.let(v, 4, v * v).dtype)
    int32
    """
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
    """IRBuilder form of ``x = value``: bind a new variable for the rest of the scope.

    Parameters
    ----------
    value : PrimExpr
        The bound value.
    type_annotation : str, type object or T.Ptr, optional
        The variable's type; must match ``value``'s.

    Returns
    -------
    Var
        The new variable.

    Examples
    --------
    >>> with I.IRBuilder() as ib:
    ...     with T.prim_func():
    ...         T.func_name("f")
    ...         A = T.arg("A", T.Buffer((2,), "int32"))
    ...         x = T.bind(A[0] + 1)
    ...         T.buffer_store(A, x * 2, [1])
    >>> a = np.array([4, 0], dtype="int32"); tvmscript.build(ib.get())(a); print(a)
    [ 4 10]
    """
    frame = LetStmt(value, type_annotation)
    var: Var = frame.enter_implicit()
    frame.kind = "T.bind"
    return var


def attr(node: Any, attr_key: str, value: ExprLike | str) -> AttrFrame:
    """Attach ``attr_key = value`` about ``node`` to a body: ``with T.attr(node, key, v):``.

    Parameters
    ----------
    node : Any
        What the attribute is about (a variable, an ``IterVar``, a ``T.comm_reducer``, a
        constant).
    attr_key : str
        The key (``"pragma_*"``, ``"thread_extent"``, ``"reduce_scope"``, ...).
    value : PrimExpr or str
        The value.

    Returns
    -------
    AttrFrame
        Builds an ``AttrStmt`` around the body.

    Examples
    --------
    >>> @T.prim_func
    ... def f(A: T.Buffer((1,), "int32")):
    ...     with T.attr(0, "pragma_note", 1):
    ...         A[0] = 7
    >>> 'T.attr(0, "pragma_note", 1)' in f.script()
    True
    """
    builder("T.attr")
    expr = StringImm(value) if isinstance(value, str) else as_expr(value, "T.attr")
    return AttrFrame(node, attr_key, expr)


REALIZE_ATTR = "buffer_realize"
"""Attribute key of ``T.realize``: node ``(region, condition)``, value the storage scope."""


def realize(buffer_slice: Any, storage_scope: str, condition: ExprLike = True) -> AttrFrame:
    """``with T.realize(A[0:128], "")``: TVM's pre-schedule ``BufferRealize`` of a region.

    Built as an ``AttrStmt`` (node ``(region, condition)``, key ``"buffer_realize"``, value the
    scope) over the body; it parses and prints back, and the CPU build refuses it.

    Parameters
    ----------
    buffer_slice : BufferRegion
        The realized region, ``A[0:128]``.
    storage_scope : str
        Its storage scope (``""`` for the default).
    condition : PrimExpr
        Realize only where it holds.

    Returns
    -------
    AttrFrame

    Examples
    --------
    >>> @T.prim_func
    ... def f(A: T.Buffer((8,), "float32")):
    ...     with T.realize(A[0:8], ""):
    ...         A[0] = T.float32(1)
    >>> 'T.realize(A[0:8], "")' in f.script()
    True
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
    """Append a statement evaluating ``value`` for its effect (an ``Evaluate``).

    Parameters
    ----------
    value : PrimExpr
        Usually a call: an extern function, ``T.assume``, a builtin.

    Returns
    -------
    None

    Examples
    --------
    >>> @T.prim_func
    ... def f(A: T.Buffer((2,), "int32")):
    ...     T.evaluate(T.assume(A[0] >= 0))
    ...     A[1] = A[0]
    >>> "T.evaluate(T.assume(A[0] >= 0))" in f.script()
    True
    """
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
    """IRBuilder form of ``buffer[indices] = value`` (a ``BufferStore``).

    A scalar value of another type with the same lanes is cast to the buffer's type, as
    TVM's builder does; a lanes mismatch is an error.

    Parameters
    ----------
    buffer : Buffer
        The stored buffer.
    value : PrimExpr or number
        The stored value.
    indices : list of PrimExpr
        One index per dimension (a ``Ramp`` index stores a vector).

    Returns
    -------
    None

    Examples
    --------
    >>> with I.IRBuilder() as ib:
    ...     with T.prim_func():
    ...         T.func_name("f")
    ...         A = T.arg("A", T.Buffer((2,), "float32"))
    ...         T.buffer_store(A, 3, [1])
    >>> a = np.zeros(2, dtype="float32"); tvmscript.build(ib.get())(a); print(a)
    [0. 3.]
    """
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
