"""Conversion between Python's :mod:`ast` and the :mod:`doc` mirror.

:func:`from_ast` is the only place that knows about ``ast`` version differences; the
evaluator uses :func:`to_ast` to compile user expressions (and assignment targets) back
into code, with their real file positions so that tracebacks and position look-ups in
compiled code point into the user's file.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Generator, Sequence
from typing import Any

from . import doc

__all__ = ["ByteCol", "UnknownNodeError", "from_ast", "to_ast"]

ByteCol = Callable[[int, int], int]
"""Maps an absolute ``(line, 1-based char col)`` to the 0-based UTF-8 byte offset."""

Position = tuple[int, int, int, int]

_SKIPPED = frozenset(" \t\r\n\f()\\")
# Fields ast requires that the mirror drops; they come back empty when compiling.
_LIST_DEFAULTS = frozenset({"type_ignores", "type_params", "cases"})
_CONTEXT_NODES = frozenset({"Name", "Attribute", "Subscript", "Starred", "List", "Tuple"})
# Fields holding assignment (or deletion) targets; every other child is loaded.
_TARGET_FIELDS: dict[tuple[str, str], type[ast.expr_context]] = {
    ("comprehension", "target"): ast.Store,
    ("NamedExpr", "target"): ast.Store,
    ("TypeAlias", "name"): ast.Store,
    ("For", "target"): ast.Store,
    ("AsyncFor", "target"): ast.Store,
    ("Assign", "targets"): ast.Store,
    ("AugAssign", "target"): ast.Store,
    ("AnnAssign", "target"): ast.Store,
    ("withitem", "optional_vars"): ast.Store,
    ("Delete", "targets"): ast.Del,
}
_ABSENT = object()
"""Marks a field the ``ast`` node does not have (a field only some Python versions define)."""
# A bare ``*i`` target is valid to ``ast.parse`` but not to ``compile`` (see from_ast).
_LOOP_TARGET_OWNERS = (ast.For, ast.AsyncFor, ast.comprehension)


class UnknownNodeError(ValueError):
    """``ast`` produced a node class the mirror does not know (a newer Python's syntax)."""

    def __init__(self, kind: str, position: Position) -> None:
        super().__init__(f"unsupported syntax: {kind}")
        self.kind = kind
        self.position = position


def from_ast(
    tree: ast.AST,
    lines: Sequence[str],
    first_line: int,
    lineno_shift: int = 0,
    *,
    names: set[str] | None = None,
) -> doc.AST:
    """Convert ``tree`` into doc nodes with absolute character positions.

    ``tree`` was parsed from text whose line ``lineno_shift + 1`` is ``lines[0]``, and
    ``lines[0]`` is line ``first_line`` of the file (``lineno_shift`` skips lines the
    caller prepended before parsing).  Columns are converted from UTF-8 bytes to
    characters using ``lines``.  ``names``, when given, receives the identifier of every
    ``Name`` node (what :func:`doc.referenced_names` would find, without a second walk).

    One normalisation happens here: a bare starred loop target (``for *i in T.grid(...)``,
    also in comprehensions), which ``ast.parse`` accepts but ``compile`` rejects, becomes a
    one-element :class:`doc.Tuple` with exactly the span of ``*i`` -- the tree the user
    would get from ``for *i, in ...``.  No text is rewritten, so no position moves.
    """
    return _FromAst(lines, first_line, lineno_shift, names).convert(tree, None)


class _FromAst:
    def __init__(
        self, lines: Sequence[str], first_line: int, lineno_shift: int, names: set[str] | None
    ) -> None:
        self.lines = lines
        self.first_line = first_line
        self.lineno_shift = lineno_shift
        # ``ast`` line numbers to file lines; in ASCII text a byte column is a character's.
        self.line_delta = first_line - lineno_shift - 1
        self.ascii = all(line.isascii() for line in lines)
        self.names = names if names is not None else set()

    def text(self, line: int) -> str:
        index = line - self.first_line
        return self.lines[index] if 0 <= index < len(self.lines) else ""

    def point(self, lineno: int, byte_col: int) -> tuple[int, int]:
        line = lineno - self.lineno_shift - 1 + self.first_line
        text = self.text(line)
        if text.isascii():
            return line, byte_col + 1
        return line, len(text.encode("utf-8")[:byte_col].decode("utf-8", "ignore")) + 1

    def position(self, node: ast.AST) -> Position | None:
        lineno = getattr(node, "lineno", None)
        end_lineno = getattr(node, "end_lineno", None)
        if lineno is None or end_lineno is None:
            return None
        if self.ascii:
            delta = self.line_delta
            return (
                lineno + delta,
                getattr(node, "col_offset", 0) + 1,
                end_lineno + delta,
                getattr(node, "end_col_offset", 0) + 1,
            )
        line, col = self.point(lineno, getattr(node, "col_offset", 0))
        end_line, end_col = self.point(end_lineno, getattr(node, "end_col_offset", 0))
        return line, col, end_line, end_col

    def convert(self, node: ast.AST, anchor: Position | None) -> doc.AST:
        # Iterative (a stack of per-node generators) rather than recursive: a 10,000-term
        # ``a + b + ...`` chain is a tree that deep, far beyond Python's recursion limit.
        stack = [self.convert_node(node, anchor)]
        result: doc.AST | None = None
        while True:
            try:
                child, child_anchor = stack[-1].send(result)
            except StopIteration as done:
                stack.pop()
                result = done.value
                if not stack:
                    assert result is not None
                    return result
                continue
            stack.append(self.convert_node(child, child_anchor))
            result = None

    def convert_node(
        self, node: ast.AST, anchor: Position | None
    ) -> Generator[tuple[ast.AST, Position | None], doc.AST | None, doc.AST]:
        """Convert one node; yields each child to convert and receives its conversion."""
        kind = type(node).__name__
        own = self.position(node)
        cls = doc.NODE_CLASSES.get(kind)
        if cls is None:
            raise UnknownNodeError(kind, own or anchor or (0, 0, 0, 0))
        if kind == "Name":
            self.names.add(node.id)  # type: ignore[attr-defined]
        elif isinstance(node, _LOOP_TARGET_OWNERS) and isinstance(node.target, ast.Starred):
            node = _with_tuple_target(node)
        here = own or anchor
        fields: dict[str, Any] = {}
        for name in doc.node_fields(cls):
            raw = getattr(node, name, _ABSENT)
            if raw is _ABSENT:
                continue
            if isinstance(raw, ast.AST):
                fields[name] = yield raw, here
            elif isinstance(raw, list):
                items: list[Any] = []
                for item in raw:
                    items.append((yield item, here) if isinstance(item, ast.AST) else item)
                fields[name] = tuple(items)
            else:
                fields[name] = raw
        pos = own or _cover(fields.values()) or _empty_at(anchor)
        self.place_operators(fields, pos)
        line, col, end_line, end_col = pos
        return cls(line=line, col=col, end_line=end_line, end_col=end_col, **fields)

    def place_operators(self, fields: dict[str, Any], pos: Position) -> None:
        """Give operator nodes the position of their token, found between the operands."""
        if "op" in fields:
            if "left" in fields:  # BinOp
                before, after = fields["left"], fields["right"]
            elif "operand" in fields:  # UnaryOp: the token precedes the operand
                before, after = None, fields["operand"]
            elif "values" in fields:  # BoolOp: the first ``and``/``or``
                before, after = fields["values"][0], fields["values"][1]
            else:  # AugAssign
                before, after = fields["target"], fields["value"]
            fields["op"] = self.locate_operator(fields["op"], before, after, pos)
        if "ops" in fields:  # Compare
            operands = (fields["left"], *fields["comparators"])
            fields["ops"] = tuple(
                self.locate_operator(op, operands[i], operands[i + 1], pos)
                for i, op in enumerate(fields["ops"])
            )

    def locate_operator(
        self, op: doc.AST, before: doc.AST | None, after: doc.AST, pos: Position
    ) -> doc.AST:
        start = (pos[0], pos[1]) if before is None else (before.end_line, before.end_col)
        found = self.scan_token(start, (after.line, after.col)) or pos
        line, col, end_line, end_col = found
        return type(op)(line=line, col=col, end_line=end_line, end_col=end_col)

    def scan_token(self, start: tuple[int, int], stop: tuple[int, int]) -> Position | None:
        """Span of the significant text in ``[start, stop)``: no blanks, parens, comments."""
        first: tuple[int, int] | None = None
        last = (0, 0)
        for line in range(start[0], stop[0] + 1):
            text = self.text(line)
            lo = start[1] - 1 if line == start[0] else 0
            hi = stop[1] - 1 if line == stop[0] else len(text)
            for index in range(max(lo, 0), min(hi, len(text))):
                char = text[index]
                if char == "#":
                    break
                if char in _SKIPPED:
                    continue
                first = first or (line, index + 1)
                last = (line, index + 2)
        if first is None:
            return None
        return first[0], first[1], last[0], last[1]


def _with_tuple_target(node: ast.For | ast.AsyncFor | ast.comprehension) -> ast.AST:
    starred = node.target
    wrapper = ast.Tuple(elts=[starred], ctx=ast.Store())
    ast.copy_location(wrapper, starred)
    fields = {name: getattr(node, name) for name in node._fields}
    fields["target"] = wrapper
    clone = type(node)(**fields)
    return ast.copy_location(clone, node)


def _cover(values: Any) -> Position | None:
    """The smallest position covering every located node among ``values``."""
    located: list[doc.AST] = []
    for value in values:
        items = value if isinstance(value, tuple) else (value,)
        located.extend(v for v in items if isinstance(v, doc.AST) and v.line > 0)
    if not located:
        return None
    start = min((n.line, n.col) for n in located)
    end = max((n.end_line, n.end_col) for n in located)
    return start[0], start[1], end[0], end[1]


def _empty_at(anchor: Position | None) -> Position:
    if anchor is None:
        return 0, 0, 0, 0
    return anchor[0], anchor[1], anchor[0], anchor[1]


def to_ast(node: doc.AST, *, store: bool = False, byte_col: ByteCol | None = None) -> Any:
    """Convert ``node`` back to an :mod:`ast` node that ``compile`` accepts.

    ``store=True`` builds an assignment target: ``Name``/``Tuple``/``List``/``Starred``
    nodes (and the outermost ``Attribute``/``Subscript``) get ``Store`` context, exactly as
    Python's parser assigns it; everything else is ``Load``.  Positions are written back
    as the file's line numbers and ``byte_col`` offsets (0-based characters when omitted).
    Statements whose parts the mirror drops (``match`` cases) cannot be converted back.
    """
    converter = _ToAst(byte_col or (lambda _line, col: col - 1))
    return converter.convert(node, ast.Store() if store else ast.Load())


class _ToAst:
    def __init__(self, byte_col: ByteCol) -> None:
        self.byte_col = byte_col

    def convert(self, node: doc.AST, ctx: ast.expr_context) -> ast.AST:
        kind = type(node).__name__
        ast_cls: type[ast.AST] = getattr(ast, kind)
        # Only the elements of a target tuple/list (and a starred target) are targets.
        child_ctx = ctx if kind in ("Tuple", "List", "Starred") else ast.Load()
        kwargs: dict[str, Any] = {}
        for name in ast_cls._fields:
            if isinstance(node, doc.Constant) and name == "value":
                kwargs[name] = node.value  # a constant's value is data, never a subtree
            elif (kind, name) in _TARGET_FIELDS:
                kwargs[name] = self.value(getattr(node, name), _TARGET_FIELDS[kind, name]())
            elif hasattr(node, name):
                kwargs[name] = self.value(getattr(node, name), child_ctx)
            elif name == "ctx":
                kwargs[name] = ctx if kind in _CONTEXT_NODES else ast.Load()
            elif name in _LIST_DEFAULTS:
                kwargs[name] = []
            else:
                kwargs[name] = None
        result = ast_cls(**kwargs)
        if node.line > 0 and ast_cls._attributes:
            result.lineno = node.line  # type: ignore[attr-defined]
            result.col_offset = self.byte_col(node.line, node.col)  # type: ignore[attr-defined]
            result.end_lineno = node.end_line  # type: ignore[attr-defined]
            result.end_col_offset = self.byte_col(  # type: ignore[attr-defined]
                node.end_line, node.end_col
            )
        return result

    def value(self, raw: object, ctx: ast.expr_context) -> Any:
        if isinstance(raw, doc.AST):
            return self.convert(raw, ctx)
        if isinstance(raw, tuple):
            return [self.value(item, ctx) for item in raw]
        return raw
