"""Source text of a TVMScript program and the mapping of its nodes to file positions.

A :class:`Source` is built either from a live function or class
(:meth:`Source.from_object`, through :func:`inspect.getsourcelines`) or from text
(:meth:`Source.from_text`, registered with :mod:`linecache` so that diagnostics and
tracebacks can show it).  Its :attr:`~Source.tree` is the parsed :mod:`doc` tree, whose
positions are absolute in the file.

How indented definitions keep exact columns
-------------------------------------------
A method or a function nested in another function comes out of ``inspect`` indented,
and ``ast.parse`` rejects leading indentation.  Instead of dedenting (which changes
every column and breaks on docstrings indented less than the code), the text is parsed
as the body of a one-line ``if 1:`` prepended to it.  Columns are then the file's own
columns and line numbers are off by exactly one, which the conversion subtracts.

How ``for *i in T.grid(...)`` is accepted
-----------------------------------------
The metaprogramming RFC writes rank-polymorphic loops as ``for *i in T.grid(*A.shape)``.
Python refuses to *compile* that (``starred assignment target must be in a list or
tuple``), but ``ast.parse`` accepts it on every supported version (3.10-3.13): the check
lives in the compiler, not the parser.  So no text is rewritten: the converter
(:func:`~tvmscript.parser.core.doc_ast.from_ast`) wraps the bare ``Starred`` loop target
in a one-element ``Tuple`` whose span is exactly that of ``*i``, which is the tree of
``for *i, in ...``.  Because the text is untouched, no column moves, before or after
the target, and the target compiles as an assignment target (``(*i,) = value``).
The same applies to comprehension targets.
"""

from __future__ import annotations

import ast
import inspect
import linecache
import re
import sys
import types
from typing import Any

from irbuilder.ir.span import Span
from tvmscript.diagnostics import DiagnosticError

from . import doc
from .attributes import text_may_refuse
from .doc_ast import UnknownNodeError, from_ast

__all__ = ["Source"]

_INDENT_PREFIX = "if 1:\n"

# CPython builds the ``ast`` objects recursively and stops at 3x the recursion limit
# (3.11+), so a 5,000-term ``a + b + ...`` chain fails at the default limit of 1000.  Each
# level costs ~80 bytes of C stack; 12,000 allows 36,000 levels (about 3 MB), which is
# safe on an 8 MB stack.  Deeper expressions get a located diagnostic instead.
_PARSE_RECURSION_LIMIT = 12_000


class Source:
    """The text of one TVMScript program, its file name and first line, and its tree.

    ``lines`` holds the program's lines without line endings; ``lines[0]`` is line
    ``first_line`` of ``filename``.  ``tree`` is a :class:`doc.Module`; for a source
    built from a function or class its body is that single definition.
    """

    filename: str
    first_line: int
    lines: tuple[str, ...]
    tree: doc.Module
    may_refuse_attributes: bool
    """False when no attribute in the text can be refused (``attributes.text_may_refuse``)."""
    names: frozenset[str]
    """Every identifier the program uses as a name (``doc.referenced_names`` of ``tree``)."""

    def __init__(self, text: str, filename: str, first_line: int = 1) -> None:
        """Parse ``text``, which starts at line ``first_line`` of ``filename``.

        Raises :class:`DiagnosticError` for a syntax error.  Prefer the ``from_*``
        constructors, which also make the text visible to :mod:`linecache`.
        """
        self.filename = filename
        self.first_line = first_line
        self.lines = tuple(_split_lines(text))
        joined = "\n".join(self.lines)
        self.tree, self.names = self._parse(joined)
        self.may_refuse_attributes = text_may_refuse(joined)

    @classmethod
    def from_object(cls, obj: Any) -> Source:
        """The source of a function, method or class, with exact file positions.

        Decorators are included (``inspect`` starts at the first decorator line, even for
        decorator calls spanning several lines).  Lambdas are rejected: their source is
        the whole line they appear on, not a definition.
        """
        target = getattr(obj, "__func__", obj)  # bound and class methods
        if not (inspect.isfunction(target) or inspect.isclass(target)):
            raise TypeError(f"expected a function or a class, got {type(obj).__name__}")
        if target.__name__ == "<lambda>":
            raise TypeError("a lambda cannot be parsed as TVMScript; use a def")
        try:
            filename = inspect.getsourcefile(target) or inspect.getfile(target)
            quick = _definition_lines(target, filename) if inspect.isfunction(target) else None
            if quick is not None:
                try:
                    return cls("".join(quick[0]), filename, quick[1])
                except DiagnosticError:
                    pass  # not the whole definition after all: let inspect find the block
            lines, first_line = inspect.getsourcelines(target)
        except (OSError, TypeError) as err:
            found = _class_lines(target) if inspect.isclass(target) else None
            if found is not None:  # a class of a doctest, a REPL or a notebook cell
                return cls("".join(found[1]), found[0], found[2])
            raise OSError(
                f"cannot read the source of {target.__qualname__}: {err}; TVMScript "
                "needs the source text (define it in a file, or use Source.from_text)"
            ) from err
        return cls("".join(lines), filename, max(first_line, 1))

    @classmethod
    def from_text(cls, text: str, filename: str = "<tvmscript>") -> Source:
        """Parse ``text`` as a whole file named ``filename`` and register it in linecache.

        Registering replaces any text cached earlier under the same name; diagnostics
        that already exist keep the lines they were created with.
        """
        lines = _split_lines(text)
        # mtime None marks the entry as not backed by a file: checkcache() keeps it.
        linecache.cache[filename] = (len(text), None, [ln + "\n" for ln in lines], filename)
        return cls(text, filename, 1)

    # ------------------------------------------------------------------ positions

    def span(self, node: doc.AST) -> Span:
        """The file span of ``node`` (the program's start if the node is unlocated)."""
        if node.line <= 0:
            return Span(self.filename, self.first_line, 1, self.first_line, 1)
        return Span(self.filename, node.line, node.col, node.end_line, node.end_col)

    def line_text(self, line: int) -> str:
        """Text of absolute line ``line`` (empty outside the program)."""
        index = line - self.first_line
        return self.lines[index] if 0 <= index < len(self.lines) else ""

    def segment(self, node: doc.AST) -> str:
        """The exact source text of ``node``."""
        if node.line <= 0:
            return ""
        if node.line == node.end_line:
            return self.line_text(node.line)[node.col - 1 : node.end_col - 1]
        parts = [self.line_text(node.line)[node.col - 1 :]]
        parts.extend(self.line_text(n) for n in range(node.line + 1, node.end_line))
        parts.append(self.line_text(node.end_line)[: node.end_col - 1])
        return "\n".join(parts)

    def byte_col(self, line: int, col: int) -> int:
        """0-based UTF-8 byte offset of 1-based character column ``col`` (as ``ast`` counts)."""
        text = self.line_text(line)
        if text.isascii():
            return col - 1
        return len(text[: col - 1].encode("utf-8")) + max(0, col - 1 - len(text))

    def char_col(self, line: int, byte_offset: int) -> int:
        """1-based character column of 0-based UTF-8 byte offset ``byte_offset``."""
        text = self.line_text(line)
        if text.isascii():
            return byte_offset + 1
        return len(text.encode("utf-8")[:byte_offset].decode("utf-8", "ignore")) + 1

    # -------------------------------------------------------------------- parsing

    def _parse(self, text: str) -> tuple[doc.Module, frozenset[str]]:
        """The doc tree of ``text`` and every identifier it uses as a name."""
        shift = 0
        if _starts_indented(self.lines):
            text = _INDENT_PREFIX + text
            shift = 1
        try:
            tree = _parse_deep(text, self.filename)
        except SyntaxError as err:
            raise self._syntax_error(err, shift) from err
        except ValueError as err:  # Python 3.10: "source code string cannot contain null bytes"
            raise DiagnosticError(str(err), self._null_byte(), original=err) from err
        except (RecursionError, MemoryError) as err:
            raise DiagnosticError(
                "this expression is nested too deeply to parse; split it into smaller "
                "pieces (e.g. partial sums bound to names)",
                self._deepest_line(),
                original=err,
            ) from err
        body: list[ast.stmt] = tree.body
        if shift:
            prefix = tree.body[0]
            assert isinstance(prefix, ast.If)
            body = prefix.body
        module = ast.Module(body=body, type_ignores=[])
        names: set[str] = set()
        try:
            result = from_ast(module, self.lines, self.first_line, shift, names=names)
        except UnknownNodeError as err:
            line, col, end_line, end_col = err.position
            span = Span(self.filename, line, col, end_line, end_col) if line else None
            raise DiagnosticError(str(err), span) from err
        assert isinstance(result, doc.Module)
        return result, frozenset(names)

    def _deepest_line(self) -> Span:
        """The line most likely to hold a too-deep expression: the one with most operators."""
        best, best_count = 0, -1
        for index, text in enumerate(self.lines):
            count = sum(text.count(ch) for ch in "+-*/%&|^~([")
            if count > best_count:
                best, best_count = index, count
        line = self.first_line + best
        text = self.lines[best] if self.lines else ""
        indent = len(text) - len(text.lstrip())
        return Span(self.filename, line, indent + 1, line, max(len(text), indent) + 1)

    def _null_byte(self) -> Span | None:
        for index, text in enumerate(self.lines):
            col = text.find("\x00")
            if col >= 0:
                line = self.first_line + index
                return Span(self.filename, line, col + 1, line, col + 2)
        return None

    def _syntax_error(self, err: SyntaxError, shift: int) -> DiagnosticError:
        message = err.msg or "invalid syntax"
        if err.lineno is None:
            # CPython reports a null byte without a position; it is easy to find.
            span = self._null_byte() if "null byte" in message else None
            return DiagnosticError(message, span, original=err)
        # SyntaxError offsets are 1-based characters, so only the line needs shifting.
        line = err.lineno - shift - 1 + self.first_line
        col = err.offset or 1
        end_line = (err.end_lineno or err.lineno) - shift - 1 + self.first_line
        end_col = err.end_offset or col
        if (end_line, end_col) <= (line, col):
            end_line, end_col = line, col + 1
        span = Span(self.filename, line, col, end_line, end_col)
        return DiagnosticError(message, span, original=err)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _class_lines(cls: type) -> tuple[str, list[str], int] | None:
    """The file, the lines and the first line number of ``cls``'s definition, or None.

    ``inspect`` finds a class through its module's file, which a class defined in a doctest,
    a REPL or a notebook cell does not have (its module is ``__main__`` or the doctest's).
    The class's functions still know their file (``co_filename``, in :mod:`linecache`) and
    line: the definition is the ``class <name>`` line above one of them, indented less,
    with its decorators, down to the next line indented no deeper than it.
    """
    header = re.compile(rf"\s*class\s+{re.escape(cls.__name__)}\b")
    for value in vars(cls).values():
        code = getattr(getattr(value, "__func__", value), "__code__", None)
        if not isinstance(code, types.CodeType):
            continue
        lines = linecache.getlines(code.co_filename)
        start = code.co_firstlineno - 1
        if not 0 <= start < len(lines):
            continue
        for index in range(start - 1, -1, -1):
            line = lines[index]
            if header.match(line) and _indent(line) < _indent(lines[start]):
                begin = index
                while begin > 0 and lines[begin - 1].lstrip().startswith("@"):
                    begin -= 1
                end = index + 1
                while end < len(lines) and (
                    not lines[end].strip() or _indent(lines[end]) > _indent(line)
                ):
                    end += 1
                while lines[end - 1].strip() == "":
                    end -= 1
                return code.co_filename, lines[begin:end], begin + 1
    return None


def _definition_lines(func: types.FunctionType, filename: str) -> tuple[list[str], int] | None:
    """The lines of ``func``'s definition and its first line number, or None when unsure.

    ``inspect.getsourcelines`` finds the end of the block by tokenizing, and compiling the
    tokenizer's regular expressions alone costs milliseconds in every fresh process. Here
    the end is the last line any instruction of the function (or of code nested in it)
    comes from. That is exact unless the compiler dropped trailing statements (dead code
    after a ``return``, a bare constant, ``pass``): those are indented deeper than the
    ``def``, so the next significant line must not be, else None. The caller also falls
    back when the text does not parse (the last statement ended inside a bracket or string
    was dropped).
    """
    if hasattr(func, "__wrapped__"):  # inspect would unwrap it
        return None
    code = func.__code__
    if not hasattr(code, "co_positions"):  # Python 3.10: no end lines
        return None
    linecache.checkcache(filename)
    module = sys.modules.get(func.__module__)
    lines = linecache.getlines(filename, module.__dict__ if module is not None else None)
    start = code.co_firstlineno - 1
    if not 0 <= start < len(lines):
        return None
    head = lines[start].lstrip()
    if not (head.startswith("@") or (head.split(None, 1) or [""])[0] in ("def", "async")):
        return None  # inspect searches backwards for the definition: let it
    end = start + 1
    pending = [code]
    while pending:
        current = pending.pop()
        for _, end_line, _, _ in current.co_positions():
            if end_line is not None and end_line > end:
                end = end_line
        pending.extend(c for c in current.co_consts if isinstance(c, types.CodeType))
    if end > len(lines):
        return None
    indent = len(lines[start]) - len(head)
    for line in lines[end:]:
        stripped = line.lstrip()
        if stripped and not stripped.startswith("#"):
            if len(line) - len(stripped) > indent:
                return None  # the body goes on
            break
    return lines[start:end], start + 1


def _longest_chain(text: str) -> int:
    from .deep_chains import longest_chain

    return longest_chain(text)


def _parse_deep(text: str, filename: str) -> ast.Module:
    """``ast.parse`` with room for long operator chains (see _PARSE_RECURSION_LIMIT; chains
    and prefix-operator runs past the fixed C limits of Python 3.12 and 3.13 are parsed in
    pieces by deep_chains)."""
    # deep_chains compiles its scanner's regular expression on import: only for the rare
    # texts that need it.
    deepest = 3 * _PARSE_RECURSION_LIMIT
    if sys.version_info < (3, 11) and len(text) > 2 * deepest and _longest_chain(text) > deepest:
        # Python 3.10 would build the tree (its AST construction has no depth bound): keep
        # the limit of later versions, so a program means the same everywhere.
        raise RecursionError("operator chain deeper than the parser's limit")
    old = sys.getrecursionlimit()
    if old < _PARSE_RECURSION_LIMIT:
        sys.setrecursionlimit(_PARSE_RECURSION_LIMIT)
    try:
        try:
            return ast.parse(text, filename=filename, mode="exec")
        except RecursionError:
            from .deep_chains import parse_long_chains

            # As deep as Python 3.11 goes (3x the recursion limit), no deeper.
            tree = parse_long_chains(text, filename, deepest)
            if tree is None:
                raise
            return tree
    finally:
        sys.setrecursionlimit(old)


def _split_lines(text: str) -> list[str]:
    # Split exactly as Python's tokenizer and linecache do (\r\n, \r, \n); str.splitlines
    # would also split on form feeds and other characters Python does not end lines on.
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _starts_indented(lines: tuple[str, ...]) -> bool:
    for line in lines:
        stripped = line.lstrip()
        if stripped and not stripped.startswith("#"):
            return stripped != line
    return False
