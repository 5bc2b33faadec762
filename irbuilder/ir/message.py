"""Assertion messages that carry runtime values: ``format_message``.

An :class:`~irbuilder.ir.stmt.AssertStmt` message is either a ``StringImm`` or a
``Call(handle, "format_message", (StringImm(template), *values), BUILTIN)``. Each
``{}`` in the template is replaced, when the assertion fails, by the next value:

* an integer or bool value is written in decimal (its signedness respected);
* a handle value must be ``array_descr(h)`` (the dtype object of the array argument
  ``h``) and is written as ``str(dtype)``, e.g. ``float64``.

``{{`` and ``}}`` stand for literal braces. At most :data:`MAX_MESSAGE_VALUES` values:
the native runtime formats with a fixed-arity helper.
"""

from __future__ import annotations

from .dtype import as_dtype
from .expr import Call, CallKind, PrimExpr, StringImm
from .span import Span

__all__ = [
    "FORMAT_MESSAGE",
    "MAX_MESSAGE_VALUES",
    "MessageFormatError",
    "format_message",
    "message_parts",
    "render_message",
]

FORMAT_MESSAGE = "format_message"
"""The builtin op of a formatted assertion message."""

MAX_MESSAGE_VALUES = 4
"""How many runtime values one message may carry."""


class MessageFormatError(ValueError):
    """A malformed ``format_message``: bad template, wrong value count or value type."""


def split_template(template: str) -> list[str]:
    """The literal pieces around the ``{}`` placeholders (one more piece than holes)."""
    pieces: list[str] = []
    current: list[str] = []
    i = 0
    while i < len(template):
        ch = template[i]
        pair = template[i : i + 2]
        if pair in ("{{", "}}"):
            current.append(ch)
            i += 2
        elif pair == "{}":
            pieces.append("".join(current))
            current = []
            i += 2
        elif ch in "{}":
            raise MessageFormatError(
                f"format_message: stray {ch!r} at offset {i} of {template!r} "
                "(use {} for a value, {{ or }} for a literal brace)"
            )
        else:
            current.append(ch)
            i += 1
    pieces.append("".join(current))
    return pieces


def _check_value(value: PrimExpr, position: int) -> None:
    dtype = value.dtype
    if dtype.is_handle:
        # Formatted as a Python object: only handles known to be one are allowed.
        if isinstance(value, Call) and value.kind is CallKind.BUILTIN and value.op == "array_descr":
            return
        raise MessageFormatError(
            f"format_message: value {position} is a handle; only array_descr(h) (an array's "
            "dtype) can be formatted"
        )
    if dtype.lanes != 1 or not (dtype.is_int or dtype.is_uint or dtype.is_bool):
        raise MessageFormatError(
            f"format_message: value {position} must be a scalar integer or bool, got {dtype}"
        )


def format_message(template: str, *values: PrimExpr, span: Span | None = None) -> Call:
    """The message ``template`` with each ``{}`` filled by the next of ``values`` at run time."""
    holes = len(split_template(template)) - 1
    if holes != len(values):
        raise MessageFormatError(
            f"format_message: {template!r} has {holes} placeholder(s) but "
            f"{len(values)} value(s) were given"
        )
    if len(values) > MAX_MESSAGE_VALUES:
        raise MessageFormatError(
            f"format_message: at most {MAX_MESSAGE_VALUES} values, got {len(values)}"
        )
    for position, value in enumerate(values):
        _check_value(value, position)
    args = (StringImm(template, span=span), *values)
    return Call(as_dtype("handle"), FORMAT_MESSAGE, args, CallKind.BUILTIN, span=span)


def message_parts(message: PrimExpr) -> tuple[list[str], tuple[PrimExpr, ...]]:
    """``(literal pieces, values)`` of an assertion message (a StringImm has no values).

    Raises :class:`MessageFormatError` for anything that is not a valid message.
    """
    if isinstance(message, StringImm):
        return [message.value], ()
    if not (
        isinstance(message, Call)
        and message.kind is CallKind.BUILTIN
        and message.op == FORMAT_MESSAGE
        and message.args
        and isinstance(message.args[0], StringImm)
    ):
        raise MessageFormatError(
            "an assertion message must be a string or format_message(template, values...)"
        )
    template = message.args[0].value
    values = message.args[1:]
    pieces = split_template(template)
    if len(pieces) - 1 != len(values):
        raise MessageFormatError(
            f"format_message: {template!r} has {len(pieces) - 1} placeholder(s) but "
            f"{len(values)} value(s)"
        )
    if len(values) > MAX_MESSAGE_VALUES:
        raise MessageFormatError(
            f"format_message: at most {MAX_MESSAGE_VALUES} values, got {len(values)}"
        )
    for position, value in enumerate(values):
        _check_value(value, position)
    return pieces, values


def render_message(pieces: list[str], texts: list[str]) -> str:
    """The message with the placeholders replaced by ``texts`` (one per hole)."""
    out = [pieces[0]]
    for text, piece in zip(texts, pieces[1:], strict=True):
        out.append(text)
        out.append(piece)
    return "".join(out)
