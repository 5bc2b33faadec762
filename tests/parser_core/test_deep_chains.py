"""Long operator chains parse the same in pieces as ast.parse parses them whole (and past
the fixed C recursion limit of Python 3.12+)."""

from __future__ import annotations

import ast
import sys

import pytest

from tvmscript.parser.core.deep_chains import CHUNK, parse_long_chains

TEXTS = [
    "x = 1\nB[i] = A[i]" + " + A[i] * 2 - c" * (2 * CHUNK + 7) + " + nope\n",
    "if a | b" + " | q(1, k=2)" * (3 * CHUNK) + " | (lambda t: t)(1):\n    pass\n",
    "y = f(" + " * ".join(["(u - v)"] * (CHUNK + 1)) + ", k)\n",
    "z = -a" + " + -b" * (CHUNK * 2) + "  # trailing comment\n",
]


@pytest.mark.parametrize("text", TEXTS, ids=["mixed", "bitor", "inside_call", "unary"])
def test_pieces_give_the_same_tree_with_the_same_positions(text: str) -> None:
    mine = parse_long_chains(text, "f.py", 36_000)
    assert mine is not None
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 100_000))
    try:  # ast.dump recurses too
        whole = ast.parse(text, "f.py")
        assert ast.dump(mine, include_attributes=True) == ast.dump(
            whole, include_attributes=True
        )
    finally:
        sys.setrecursionlimit(old)


def test_chains_past_the_parser_limit_parse() -> None:
    terms = 20_000
    tree = parse_long_chains("B[i] = A[i]" + " + A[i]" * terms + " + nope\n", "f.py", 36_000)
    assert tree is not None
    node = tree.body[0].value  # type: ignore[attr-defined]
    depth = 0
    while isinstance(node, ast.BinOp):
        depth, node = depth + 1, node.left
    assert depth == terms + 1
    # The last operand keeps its column: the error about it points at the right place.
    last = tree.body[0].value.right  # type: ignore[attr-defined]
    assert last.id == "nope" and last.col_offset == len("B[i] = A[i]" + " + A[i]" * terms + " + ")


def test_texts_without_long_chains_are_left_alone() -> None:
    assert parse_long_chains("x = a + b\n", "f.py", 36_000) is None
    assert parse_long_chains("s = 'é' + " + " + ".join(["a"] * 1000) + "\n", "f.py", 36_000) is None


def test_chains_longer_than_the_bound_are_refused() -> None:
    text = "x = " + " + ".join(["a"] * 2000) + "\n"
    assert parse_long_chains(text, "f.py", 1999) is None
    assert parse_long_chains(text, "f.py", 2000) is not None
