"""Parsing very long operator chains (``a + b + ... + z``, thousands of terms) on Python 3.12+.

From Python 3.12 on, ``ast.parse`` builds its tree under a fixed C recursion limit (not
``sys.setrecursionlimit``): a left-associative chain of ~10,000 binary operators, one nesting
level each, raises ``RecursionError``. Earlier versions parse it with a raised limit.

:func:`parse_long_chains` parses such a text in pieces and produces exactly the tree
``ast.parse`` would. For every long chain of one precedence class on one line (found with
:mod:`tokenize`, which does not recurse), the first terms are parsed on their own, then
replaced in the text by a placeholder name of the same width, so every position after them
is unchanged; the next terms are parsed with that placeholder in front, and so on. The chunk
trees are then joined through their placeholders (left-most leaves), which rebuilds the
left-associative chain node for node, with the same line and column numbers.

Only chains on one physical line of ASCII text are split (placeholders must keep byte
columns); anything else is left to ``ast.parse`` and its ``RecursionError``.
"""

from __future__ import annotations

import ast
import io
import itertools
import keyword
import tokenize
from dataclasses import dataclass

__all__ = ["longest_chain", "parse_long_chains"]

CHUNK = 256
"""Terms parsed at once (well under every Python's limit)."""

_BINARY = {
    "|": 1, "^": 2, "&": 3, "<<": 4, ">>": 4, "+": 5, "-": 5,
    "*": 6, "/": 6, "//": 6, "%": 6, "@": 6,
}
_OPEN, _CLOSE = "([{", ")]}"
_PLACEHOLDER = "_tvms_chain_"


@dataclass
class _Chain:
    line: int  # 1-based
    operand_ends: list[int]  # end column (exclusive) of each operand
    start: int  # column of the first operand


def _ends_operand(tok: tokenize.TokenInfo) -> bool:
    if tok.type == tokenize.NAME:
        return not keyword.iskeyword(tok.string) or tok.string in ("None", "True", "False")
    return tok.type in (tokenize.NUMBER, tokenize.STRING) or tok.string in _CLOSE


def _chains(text: str) -> list[_Chain]:
    """Long same-class binary chains, one line each."""
    found: list[_Chain] = []
    # Per bracket depth: the current segment's tokens (significant ones only).
    stack: list[list[tokenize.TokenInfo]] = [[]]

    def close_segment(segment: list[tokenize.TokenInfo]) -> None:
        if len(segment) < 2 * CHUNK:
            return
        # Binary operators of the segment (an operator after an operand's end).
        ops: list[tuple[int, tokenize.TokenInfo]] = []
        for i, tok in enumerate(segment):
            if tok.type == tokenize.OP and tok.string in _BINARY and i > 0 and _ends_operand(
                segment[i - 1]
            ):
                ops.append((i, tok))
        if len(ops) < CHUNK:
            return
        lowest = min(_BINARY[t.string] for _, t in ops)
        splits = [(i, t) for i, t in ops if _BINARY[t.string] == lowest]
        first, last = segment[0], segment[-1]
        if len(splits) < CHUNK or first.start[0] != last.end[0]:
            return
        ends = [segment[i - 1].end[1] for i, _ in splits] + [last.end[1]]
        found.append(_Chain(first.start[0], ends, first.start[1]))

    tokens = tokenize.generate_tokens(io.StringIO(text).readline)
    for tok in tokens:
        if tok.type in (tokenize.COMMENT, tokenize.NL, tokenize.INDENT, tokenize.DEDENT,
                        tokenize.ENCODING, tokenize.ENDMARKER):
            continue
        if tok.type == tokenize.NEWLINE:
            for segment in stack:
                close_segment(segment)
            stack = [[]]
            continue
        if tok.type == tokenize.OP and tok.string in _OPEN:
            stack[-1].append(tok)
            stack.append([])
            continue
        if tok.type == tokenize.OP and tok.string in _CLOSE:
            if len(stack) > 1:
                close_segment(stack.pop())
            stack[-1].append(tok)
            continue
        delimiter = (tok.type == tokenize.OP and tok.string not in _BINARY and tok.string not in
                     (".", "~", "**")) or (tok.type == tokenize.NAME and keyword.iskeyword(
                         tok.string) and tok.string not in ("None", "True", "False"))
        if delimiter:
            close_segment(stack[-1])
            stack[-1] = []
            continue
        stack[-1].append(tok)
    for segment in stack:
        close_segment(segment)
    return found


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


def _replace_name(tree: ast.AST, name: str, value: ast.expr) -> bool:
    """Replace the ``Name(name)`` node anywhere in ``tree`` (iteratively) by ``value``."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        for field, child in ast.iter_fields(node):
            if isinstance(child, ast.Name) and child.id == name:
                setattr(node, field, value)
                return True
            if isinstance(child, ast.AST):
                stack.append(child)
            elif isinstance(child, list):
                for k, item in enumerate(child):
                    if isinstance(item, ast.Name) and item.id == name:
                        child[k] = value
                        return True
                    if isinstance(item, ast.AST):
                        stack.append(item)
    return False


def longest_chain(text: str) -> int:
    """Terms in the longest one-line chain of ``text`` (0 when none is long)."""
    try:
        return max((len(c.operand_ends) for c in _chains(text)), default=0)
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return 0


def parse_long_chains(text: str, filename: str, max_terms: int) -> ast.Module | None:
    """``ast.parse(text)`` for texts whose only depth problem is long chains; None when the
    text has no splittable chain, or one longer than ``max_terms`` (the caller reports the
    original RecursionError: the bound keeps every Python version to the same limit)."""
    try:
        chains = _chains(text)
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None
    if not chains or any(len(c.operand_ends) > max_terms for c in chains):
        return None
    lines = text.split("\n")
    grafts: list[tuple[str, ast.expr]] = []
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
            piece = ast.parse(row[chain.start:end], filename=filename, mode="eval").body
            _shift(piece, chain.line, chain.start)
            if tree is not None:
                piece = _graft(piece, placeholder, tree)
            tree = piece
            width = end - chain.start
            placeholder = f"{_PLACEHOLDER}{next(counter)}"
            if len(placeholder) > width:
                return None
            placeholder = placeholder.ljust(width, "_")
            row = row[:chain.start] + placeholder + row[end:]
        if tree is None:
            continue
        lines[chain.line - 1] = row
        grafts.append((placeholder, tree))
    module = ast.parse("\n".join(lines), filename=filename, mode="exec")
    for name, subtree in grafts:
        if not _replace_name(module, name, subtree):
            return None
    return module
