"""Located, compiler-grade error reports for TVMScript programs.

Every user-facing frontend error is a :class:`DiagnosticError`: a message plus a
:class:`~irbuilder.ir.span.Span` (1-based lines and columns, ``end_col`` exclusive).
``str(err)`` renders it the way rustc and TVM do::

    error: name 'foo' is not defined
     --> kernel.py:3:13
      |
    3 |     x = a + foo
      |             ^^^

Source lines come from :mod:`linecache`, so both real files and text registered by
:meth:`tvmscript.parser.core.Source.from_text` can be shown.  The lines an error needs are
copied when the error (or a note) is created, so re-registering a file name later does
not change an error that already exists.

Internal tracebacks and ``TVMSCRIPT_DEBUG_FRONTEND``
----------------------------------------------------
The parser wraps every exception raised while handling a node into a ``DiagnosticError``
at that node (the innermost node wins).  The wrapped exception stays available as
``err.original`` and as ``__cause__``.  Entry points call :meth:`DiagnosticError.detach`
before re-raising, so users see only the rendered error, not the parser's frames.

Setting the environment variable ``TVMSCRIPT_DEBUG_FRONTEND=1`` turns the wrapping off:
the original exception propagates unchanged, with its full traceback, which is what a
compiler developer needs when a handler itself is broken.  The variable is read on every
use (see :func:`debug_frontend`), so it can be toggled at run time.
"""

from __future__ import annotations

import linecache
import os
import sys
from collections.abc import Callable
from typing import Literal

from irbuilder.ir.span import Span

__all__ = [
    "DEBUG_ENV_VAR",
    "DiagnosticError",
    "Severity",
    "debug_frontend",
    "describe_exception",
    "format_span",
]

DEBUG_ENV_VAR = "TVMSCRIPT_DEBUG_FRONTEND"
"""Name of the environment variable that disables error wrapping when set to ``1``."""

Severity = Literal["error", "warning", "note", "help"]
"""The label printed before a message."""

GetLine = Callable[[str, int], str]

# Spans covering more lines than this show only their first and last lines, joined by
# an ellipsis, so that an error on a whole function does not print the function.
_MAX_SPAN_LINES = 6
_KEEP_HEAD = 2
_KEEP_TAIL = 2
_TAB = "    "


def debug_frontend() -> bool:
    """Whether ``TVMSCRIPT_DEBUG_FRONTEND=1`` asks for raw exceptions instead of diagnostics."""
    return os.environ.get(DEBUG_ENV_VAR, "") == "1"


def describe_exception(err: BaseException) -> str:
    """A one-line message for a wrapped exception.

    The exception's own text is used when it is self-explanatory; the type name is added
    when the text alone would be cryptic (``KeyError('x')`` prints as ``'x'``) or empty.
    """
    text = str(err)
    if not text or isinstance(err, KeyError):
        return f"{type(err).__name__}: {text}" if text else type(err).__name__
    return text


def format_span(
    span: Span | None,
    message: str,
    severity: Severity = "error",
    *,
    getline: GetLine = linecache.getline,
) -> str:
    """Render ``message`` with a location arrow and the source under ``span`` underlined.

    Without a span, or when the source lines are unavailable, only the header (and the
    arrow, if there is a span) is produced.  ``getline(file, lineno)`` supplies the lines.
    """
    header = f"{severity}: {message}"
    if span is None:
        return header
    width = len(str(span.end_line))
    pad = " " * width
    out = [header, f"{pad}--> {_location(span)}"]
    snippet = _snippet(span, width, getline)
    if snippet:
        out.append(f"{pad} |")
        out.extend(snippet)
    return "\n".join(out)


def _location(span: Span) -> str:
    """``file:line:col``; an IPython cell is named as IPython does (``Cell In[3]:4:16``)."""
    if "IPython" in sys.modules:
        from .notebook import cell_label

        label = cell_label(span.file)
        if label is not None:
            return f"{label}:{span.line}:{span.col}"
    return str(span)


def _snippet(span: Span, width: int, getline: GetLine) -> list[str]:
    """The gutter-numbered source lines of ``span`` with caret lines under them."""
    numbers = list(range(span.line, span.end_line + 1))
    if not numbers:
        numbers = [span.line]
    texts = {n: getline(span.file, n).rstrip("\r\n") for n in numbers}
    if not any(texts.values()):
        return []
    shown: list[int | None] = list(numbers)
    if len(numbers) > _MAX_SPAN_LINES:
        shown = [*numbers[:_KEEP_HEAD], None, *numbers[-_KEEP_TAIL:]]
    blank_gutter = " " * (width + 1) + "|"
    out: list[str] = []
    for n in shown:
        if n is None:
            out.append("...")
            continue
        text = texts[n]
        out.append(f"{n:>{width}} | {text.replace(chr(9), _TAB)}".rstrip())
        start, stop = _caret_range(span, n, text)
        if stop > start:
            lead = text[:start].replace("\t", _TAB)
            marks = text[start:stop].replace("\t", _TAB)
            out.append(f"{blank_gutter} {' ' * len(lead)}{'^' * len(marks)}")
    return out


def _caret_range(span: Span, lineno: int, text: str) -> tuple[int, int]:
    """0-based ``[start, stop)`` character range to underline on one line of ``span``."""
    content_end = len(text.rstrip())
    indent = len(text) - len(text.lstrip())
    start = span.col - 1 if lineno == span.line else indent
    stop = span.end_col - 1 if lineno == span.end_line else content_end
    start = max(0, min(start, len(text)))
    stop = min(stop, len(text))
    if lineno != span.end_line and stop <= start:
        # A span starting at the very end of a line still marks where it starts.
        return (start, start + 1) if lineno == span.line else (0, 0)
    if stop <= start:
        # Zero-width spans (and spans past the end of the line) get one caret.
        return start, start + 1
    return start, stop


class DiagnosticError(Exception):
    """A user error in a TVMScript program, located at a source span.

    ``message`` is the one-line description, ``span`` where it happened (``None`` when
    unknown), ``notes`` extra ``(message, span)`` pairs added by :meth:`add_note`, and
    ``original`` the exception this error wraps, if any.
    """

    def __init__(
        self,
        message: str,
        span: Span | None = None,
        *,
        original: BaseException | None = None,
    ) -> None:
        super().__init__(message, span)
        self.message = message
        self.span = span
        self.original = original
        self.notes: list[tuple[str, Span | None]] = []
        self._lines: dict[tuple[str, int], str] = {}
        self._remember(span)

    def add_note(self, note: str, span: Span | None = None) -> None:
        """Attach a note, optionally pointing at its own span; rendered after the error.

        This replaces :meth:`BaseException.add_note` (Python 3.11+) with a compatible
        signature: the note becomes part of ``str(err)`` instead of ``__notes__``, so it
        is printed exactly once.
        """
        self.notes.append((note, span))
        self._remember(span)

    def detach(self) -> DiagnosticError:
        """Drop the internal traceback and exception chain before showing this to a user.

        Entry points use ``raise err.detach() from None``; the wrapped exception is still
        reachable as :attr:`original`.
        """
        self.__cause__ = None
        self.__context__ = None
        self.__suppress_context__ = True
        return self.with_traceback(None)

    def render(self) -> str:
        """The full report: the error, its location and snippet, then every note."""
        parts = [format_span(self.span, self.message, "error", getline=self._getline)]
        # rustc layout: plain notes hang off the gutter, located notes get their own block.
        plain = [note for note, span in self.notes if span is None]
        if plain:
            pad = " " * len(str(self.span.end_line)) if self.span is not None else ""
            if self.span is not None:
                parts.append(f"{pad} |")
            parts.extend(f"{pad} = note: {note}" for note in plain)
        for note, span in self.notes:
            if span is not None:
                parts.append(format_span(span, note, "note", getline=self._getline))
        return "\n".join(parts)

    def __str__(self) -> str:
        return self.render()

    def __reduce__(self) -> tuple[object, ...]:
        # Pickling must survive multiprocessing; positional args alone lose the notes.
        state = {"notes": self.notes, "_lines": self._lines, "original": None}
        return (type(self), (self.message, self.span), state)

    def _remember(self, span: Span | None) -> None:
        if span is None:
            return
        for n in range(span.line, span.end_line + 1):
            self._lines.setdefault((span.file, n), linecache.getline(span.file, n))

    def _getline(self, file: str, lineno: int) -> str:
        cached = self._lines.get((file, lineno))
        return cached if cached is not None else linecache.getline(file, lineno)
