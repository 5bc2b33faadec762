"""Per-thread state of the TIR dialect: the parsers at work and where they are.

A ``@T.macro`` runs when a kernel's expression calling it is *evaluated*, deep inside
Python's ``eval``; it finds the parser that is expanding it here.  The state also
records the span of the statement being handled (for "in expansion of macro" notes)
and the macro nesting depth (for the recursion limit).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

from irbuilder.ir.span import Span
from tvmscript.parser.core import Parser

__all__ = [
    "TRANSPARENT_MARKER",
    "ParseState",
    "active",
    "caller_frame",
    "current_state",
    "user_frame",
]

_INTERNAL_PREFIXES = ("irbuilder.", "tvmscript.")

TRANSPARENT_MARKER = "_TVMSCRIPT_FRAME_TRANSPARENT"
"""A module global that, set to True, makes :func:`user_frame` skip that module's frames
(for code that wraps the decorator hooks, e.g. test recorders)."""


@dataclass
class ParseState:
    """One active parser, the spans of the statements it is in, and its macro depth.

    ``private`` asks for private functions (``@T.prim_func(private=True)``).
    """

    parser: Parser
    is_ir_object: Callable[[Any], bool]
    macro_depth: int = 0
    stmt_spans: list[Span] = field(default_factory=list)
    in_macro: bool = False
    private: bool = False
    text_helpers: dict[str, Any] = field(default_factory=dict)
    """Undecorated functions of a ``from_source`` text (host Python helpers), by name."""


_local = threading.local()


def _stack() -> list[ParseState]:
    stack: list[ParseState] | None = getattr(_local, "states", None)
    if stack is None:
        stack = []
        _local.states = stack
    return stack


def current_state() -> ParseState | None:
    """The innermost active parse of this thread, or None outside any kernel."""
    stack = _stack()
    return stack[-1] if stack else None


@contextmanager
def active(state: ParseState) -> Iterator[ParseState]:
    """Make ``state`` the current parse for the ``with`` body."""
    stack = _stack()
    stack.append(state)
    try:
        yield state
    finally:
        stack.pop()


def user_frame(start: FrameType | None) -> FrameType | None:
    """The first frame from ``start`` outwards that is not in irbuilder or tvmscript
    (nor in a module marked with :data:`TRANSPARENT_MARKER`).

    That is the frame which applied a decorator (``@T.prim_func``, ``@T.macro``), whose
    locals the capture policy may need.
    """
    frame = start
    while frame is not None:
        module = str(frame.f_globals.get("__name__", ""))
        internal = module.startswith(_INTERNAL_PREFIXES) or module in ("irbuilder", "tvmscript")
        if not internal and not frame.f_globals.get(TRANSPARENT_MARKER, False):
            return frame
        frame = frame.f_back
    return None


def caller_frame(depth: int = 1) -> FrameType | None:
    """The user frame above the caller of the function calling this (see :func:`user_frame`)."""
    return user_frame(sys._getframe(depth + 1))
