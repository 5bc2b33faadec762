"""Parsing very deep operator nests that Python's own parser refuses on some versions.

Two shapes grow deep without brackets: chains of binary operators (``a + b + ... + z``,
unrolled or generated sums, one nesting level per operator) and runs of prefix operators
(``- - - x``, ``not not x``). How deep ``ast.parse`` goes (measured, with the parse
recursion limit of source.py):

=========  ==============================  ===============================
Python     binary chain                    prefix run
3.10       unbounded (source.py bounds it)  ~5,970 (parser stack; MemoryError)
3.11       ~36,000 (3x the recursion limit) ~5,970
3.12       ~3,000 (a fixed C limit)         ~3,000
3.13       ~10,000 (a fixed C limit)        ~5,970
=========  ==============================  ===============================

So that a program means the same on every version, what 3.11 parses is parsed everywhere:
:func:`parse_long_chains` is called when ``ast.parse`` raised ``RecursionError`` and
produces exactly the tree ``ast.parse`` would (same nodes, same line and column numbers).

*Binary chains.* For every long chain of one precedence class on one line, the first terms
are parsed on their own, then replaced in the text by a placeholder name of the same width,
so every position after them is unchanged; the next terms are parsed with that placeholder
in front, and so on. The chunk trees are joined through their placeholders (left-most
leaves), which rebuilds the left-associative chain node for node. Only chains on one
physical line of ASCII text are split (placeholders must keep byte columns).

*Prefix runs.* All operators of a long run but the first and the last are replaced by
spaces (no column moves); the text then parses with the first operator's ``UnaryOp``
around the last one's, and the removed operators' ``UnaryOp`` nodes are built between
them with their own columns and the last one's end. The first operator stays, so every
node around the run starts where it did and a syntax error at the run is reported where
it was; a run is a whole sequence of prefix operators of one kind (arithmetic or ``not``),
so the text with spaces is valid exactly when the original is.

Tokens come from a small scanner (one regular expression), not :mod:`tokenize`: on Python
3.12.0-3.12.3, tokenize rebuilds the current line's text for every token (CPython
gh-119118), quadratic in the line's length: 30 s for a 100,000-character line, minutes past
it. The scanner knows what delimits expressions: brackets, strings, comments, names,
numbers, operators. F-strings are scanned as plain strings (a 3.12 replacement field that
reuses the string's own quote can mislead it: its pieces then fail to parse and the program
gets the "nested too deeply" diagnostic, as on a version without this module). A text it
cannot scan is invalid and is left to ``ast.parse``'s own error.
"""

from __future__ import annotations

import ast
import itertools
import keyword
import re
from collections.abc import Iterator
from dataclasses import dataclass

__all__ = ["longest_chain", "parse_long_chains"]

CHUNK = 256
"""Terms parsed at once, and the shortest run or chain split (well under every limit)."""

MAX_PREFIX_RUN = 5_900
"""Longest prefix-operator run parsed: about where 3.10, 3.11 and 3.13 stop (their parser's
stack of 6,000 rules), so a longer run is "nested too deeply" on every version."""

_BINARY = {
    "|": 1,
    "^": 2,
    "&": 3,
    "<<": 4,
    ">>": 4,
    "+": 5,
    "-": 5,
    "*": 6,
    "/": 6,
    "//": 6,
    "%": 6,
    "@": 6,
}
_PREFIX: dict[str, type[ast.unaryop]] = {
    "-": ast.USub,
    "+": ast.UAdd,
    "~": ast.Invert,
    "not": ast.Not,
}
_OPEN, _CLOSE = "([{", ")]}"
_PLACEHOLDER = "_tvms_chain_"
_KEYWORDS = frozenset(keyword.kwlist) - {"None", "True", "False"}

_TOKEN = re.compile(
    r"""
    (?P<skip>[ \t\f]+|\\\n|\#[^\n]*)
    |(?P<newline>\n)
    |(?P<string>(?:[rRbBuUfF]|[rR][bBfF]|[bBfF][rR])?
        (?:'''(?:\\.|[^\\])*?'''|\"\"\"(?:\\.|[^\\])*?\"\"\"
          |'(?:\\.|[^\\'\n])*'|"(?:\\.|[^\\"\n])*"))
    |(?P<number>0[xXoObB][0-9a-fA-F_]+
        |(?:\d[\d_]*(?:\.[\d_]*)?|\.\d[\d_]*)(?:[eE][+-]?\d[\d_]*)?[jJ]?)
    |(?P<name>\w+)
    |(?P<op>\.\.\.|\*\*=?|//=?|>>=?|<<=?|->|:=|[-+*/%@&|^<>=!]=|[-+*/%@&|^~<>=.,:;!()\[\]{}])
    """,
    re.VERBOSE | re.DOTALL,
)


@dataclass(frozen=True)
class _Token:
    kind: str  # "string", "number", "name" or "op"
    text: str
    line: int  # 1-based
    col: int  # 0-based character column
    end_line: int
    end_col: int


@dataclass
class _Chain:
    line: int  # 1-based
    operand_ends: list[int]  # end column (exclusive) of each operand
    start: int  # column of the first operand


@dataclass
class _Run:
    ops: list[_Token]  # the prefix operators, in order


class _ScanError(Exception):
    pass


def _scan(text: str) -> Iterator[_Token | None]:
    """The significant tokens of ``text`` (``\\n``-separated), ``None`` at each logical line
    end; ``_ScanError`` where the text is not Python."""
    line, line_start, depth, pos = 1, 0, 0, 0
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if match is None:
            raise _ScanError(f"cannot scan line {line}")
        kind = match.lastgroup
        assert kind is not None
        start_line, col = line, pos - line_start
        pos = match.end()
        newlines = match.group().count("\n")
        if newlines:
            line += newlines
            line_start = text.rindex("\n", 0, pos) + 1
        if kind == "skip":
            continue
        if kind == "newline":
            if depth == 0:
                yield None
            continue
        value = match.group()
        if kind == "op":
            if value in _OPEN:
                depth += 1
            elif value in _CLOSE:
                depth = max(0, depth - 1)
        yield _Token(kind, value, start_line, col, line, pos - line_start)
    yield None


def _ends_operand(tok: _Token | None) -> bool:
    if tok is None:
        return False
    if tok.kind == "name":
        return tok.text not in _KEYWORDS
    return tok.kind in ("number", "string") or tok.text in _CLOSE or tok.text == "..."


def _is_delimiter(tok: _Token) -> bool:
    """Ends a chain's segment: any operator but binary, ``.``, ``~``, ``**``; keywords."""
    if tok.kind == "op":
        return tok.text not in _BINARY and tok.text not in (".", "~", "**", "...")
    return tok.kind == "name" and tok.text in _KEYWORDS


def _chain_of(segment: list[_Token]) -> _Chain | None:
    """The chain a segment (one bracket depth between delimiters) forms, if long."""
    if len(segment) < 2 * CHUNK:
        return None
    # Binary operators: those after an operand's end.
    ops = [
        (i, tok)
        for i, tok in enumerate(segment)
        if i > 0 and tok.kind == "op" and tok.text in _BINARY and _ends_operand(segment[i - 1])
    ]
    if len(ops) < CHUNK:
        return None
    lowest = min(_BINARY[tok.text] for _, tok in ops)
    ends = [segment[i - 1].end_col for i, tok in ops if _BINARY[tok.text] == lowest]
    first, last = segment[0], segment[-1]
    if len(ends) < CHUNK or first.line != last.end_line:
        return None
    return _Chain(first.line, [*ends, last.end_col], first.col)


def _find(text: str) -> tuple[list[_Chain], list[_Run]]:
    """Long same-class binary chains (one line each) and long prefix-operator runs."""
    chains: list[_Chain] = []
    runs: list[_Run] = []
    # Per bracket depth: the current segment's tokens.
    stack: list[list[_Token]] = [[]]
    run: list[_Token] = []
    previous: _Token | None = None

    def close(segment: list[_Token]) -> None:
        chain = _chain_of(segment)
        if chain is not None:
            chains.append(chain)

    def end_run() -> None:
        if len(run) >= CHUNK:
            runs.append(_Run(list(run)))
        run.clear()

    for tok in _scan(text):
        # A prefix operator: one that does not follow an operand (``not`` after ``is`` is
        # the ``is not`` operator). ``not`` and the arithmetic ones never mix in a run.
        prefix = (
            tok is not None
            and tok.text in _PREFIX
            and tok.kind in ("op", "name")
            and not _ends_operand(previous)
            and not (tok.text == "not" and previous is not None and previous.text == "is")
        )
        if tok is not None and prefix and run and (tok.text == "not") == (run[0].text == "not"):
            run.append(tok)
        else:
            end_run()
            if tok is not None and prefix:
                run.append(tok)
        previous = tok
        if tok is None:
            for segment in stack:
                close(segment)
            stack = [[]]
        elif tok.kind == "op" and tok.text in _OPEN:
            stack[-1].append(tok)
            stack.append([])
        elif tok.kind == "op" and tok.text in _CLOSE:
            if len(stack) > 1:
                close(stack.pop())
            stack[-1].append(tok)
        elif _is_delimiter(tok):
            close(stack[-1])
            stack[-1] = []
        else:
            stack[-1].append(tok)
    end_run()
    return chains, runs


def _shift(tree: ast.AST, line: int, col: int) -> None:
    for node in ast.walk(tree):
        if isinstance(node, (ast.expr, ast.stmt, ast.keyword, ast.arg)):
            node.lineno += line - 1
            node.end_lineno = (node.end_lineno or 1) + line - 1
            node.col_offset += col
            if node.end_col_offset is not None:
                node.end_col_offset += col


def _graft(tree: ast.expr, name: str, value: ast.expr) -> ast.expr:
    """Put ``value`` in place of the left-most leaf ``Name(name)`` of ``tree``."""
    node = tree
    while isinstance(node, ast.BinOp):
        left = node.left
        if isinstance(left, ast.Name) and left.id == name:
            node.left = value
            return tree
        node = left
    raise ValueError(f"placeholder {name} is not the left-most leaf")


def _children(node: ast.AST) -> Iterator[tuple[ast.AST, str, int | None, ast.AST]]:
    """``(parent, field, index or None, child)`` for each direct child node of ``node``."""
    for field, child in ast.iter_fields(node):
        if isinstance(child, ast.AST):
            yield node, field, None, child
        elif isinstance(child, list):
            for k, item in enumerate(child):
                if isinstance(item, ast.AST):
                    yield node, field, k, item


def _replace_all(tree: ast.AST, replace: dict[ast.AST, ast.AST]) -> int:
    """Put ``replace[child]`` in place of each such child in ``tree`` (iteratively); returns
    how many were replaced. Replacements are not searched."""
    count = 0
    stack: list[ast.AST] = [tree]
    while stack:
        for parent, field, index, child in list(_children(stack.pop())):
            new = replace.get(child)
            if new is None:
                stack.append(child)
                continue
            if index is None:
                setattr(parent, field, new)
            else:
                getattr(parent, field)[index] = new
            count += 1
    return count


def _placeholders(tree: ast.AST, names: dict[str, ast.expr]) -> dict[ast.AST, ast.AST]:
    found: dict[ast.AST, ast.AST] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in names:
            found[node] = names[node.id]
    return found


def _byte_col(row: str, col: int) -> int:
    return col if row.isascii() else len(row[:col].encode("utf-8"))


def _wrap_runs(module: ast.Module, runs: list[_Run], lines: list[str]) -> bool:
    """Build each run's removed ``UnaryOp`` nodes around the node of its last operator."""
    at: dict[tuple[int, int], _Run] = {}
    for run in runs:
        last = run.ops[-1]
        at[(last.line, _byte_col(lines[last.line - 1], last.col))] = run
    replace: dict[ast.AST, ast.AST] = {}
    for node in ast.walk(module):
        if isinstance(node, ast.UnaryOp) and (node.lineno, node.col_offset) in at:
            run = at[(node.lineno, node.col_offset)]
            wrapped: ast.expr = node
            for tok in reversed(run.ops[1:-1]):
                wrapped = ast.UnaryOp(
                    op=_PREFIX[tok.text](),
                    operand=wrapped,
                    lineno=tok.line,
                    col_offset=_byte_col(lines[tok.line - 1], tok.col),
                    end_lineno=node.end_lineno,
                    end_col_offset=node.end_col_offset,
                )
            replace[node] = wrapped
    return len(replace) == len(runs) and _replace_all(module, replace) == len(runs)


def longest_chain(text: str) -> int:
    """Terms in the longest one-line chain of ``text`` (0 when none is long)."""
    try:
        chains, _ = _find(text.replace("\r\n", "\n").replace("\r", "\n"))
    except _ScanError:
        return 0
    return max((len(c.operand_ends) for c in chains), default=0)


def parse_long_chains(text: str, filename: str, max_terms: int) -> ast.Module | None:
    """``ast.parse(text)`` for texts whose depth problem is long chains or prefix runs; None
    when the text has none to split, or one longer than ``max_terms`` (chains) or
    :data:`MAX_PREFIX_RUN` (runs): the caller reports the original RecursionError, and the
    bounds keep every Python version to the same limits. Raises what ``ast.parse`` raises
    on the split text (a syntax error the depth had hidden, or a nest of another shape)."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    try:
        chains, runs = _find(text)
    except _ScanError:
        return None
    if not chains and not runs:
        return None
    if any(len(c.operand_ends) > max_terms for c in chains):
        return None
    if any(len(r.ops) > MAX_PREFIX_RUN for r in runs):
        return None
    lines = text.split("\n")
    for run in runs:
        for tok in run.ops[1:-1]:
            row = lines[tok.line - 1]
            lines[tok.line - 1] = (
                row[: tok.col] + " " * (tok.end_col - tok.col) + row[tok.end_col :]
            )
    grafts: dict[str, ast.expr] = {}
    counter = itertools.count()
    for chain in chains:
        row = lines[chain.line - 1]
        if not row.isascii():
            return None
        tree: ast.expr | None = None
        placeholder = ""
        # All terms but the last chunk become one placeholder in the final text.
        cut = len(chain.operand_ends) - 1 - (len(chain.operand_ends) - 1) % CHUNK
        for stop in range(CHUNK, cut + 1, CHUNK):
            end = chain.operand_ends[stop - 1]
            try:
                piece = ast.parse(row[chain.start : end], filename=filename, mode="eval").body
                _shift(piece, chain.line, chain.start)
                if tree is not None:
                    piece = _graft(piece, placeholder, tree)
            except (SyntaxError, RecursionError, ValueError):
                return None  # the scanner was misled (see the module docstring)
            tree = piece
            width = end - chain.start
            placeholder = f"{_PLACEHOLDER}{next(counter)}"
            if len(placeholder) > width:
                return None
            placeholder = placeholder.ljust(width, "_")
            row = row[: chain.start] + placeholder + row[end:]
        if tree is not None:
            lines[chain.line - 1] = row
            grafts[placeholder] = tree
    module = ast.parse("\n".join(lines), filename=filename, mode="exec")
    # A chain inside another's brackets is a placeholder inside the outer chain's tree.
    replaced = sum(
        _replace_all(root, _placeholders(root, grafts)) for root in [module, *grafts.values()]
    )
    if replaced != len(grafts):
        return None
    if runs and not _wrap_runs(module, runs, text.split("\n")):
        return None
    return module
