"""Long operator chains and prefix-operator runs parse the same in pieces as ast.parse parses
them whole (and past the fixed C recursion limits of Python 3.12 and 3.13)."""

from __future__ import annotations

import ast
import io
import sys
import tokenize

import pytest

from tvmscript.parser.core.deep_chains import (
    CHUNK,
    MAX_PREFIX_RUN,
    _scan,
    parse_long_chains,
)

TEXTS = [
    "x = 1\nB[i] = A[i]" + " + A[i] * 2 - c" * (2 * CHUNK + 7) + " + nope\n",
    "if a | b" + " | q(1, k=2)" * (3 * CHUNK) + " | (lambda t: t)(1):\n    pass\n",
    "y = f(" + " * ".join(["(u - v)"] * (CHUNK + 1)) + ", k)\n",
    "z = -a" + " + -b" * (CHUNK * 2) + "  # trailing comment\n",
    "w = a * " + "-" * (2 * CHUNK + 5) + "x ** -y - 1\n",
    "if " + "not " * (CHUNK + 3) + "a < b or c:\n    pass\n",
    "v = (" + "~ -\n +" * CHUNK + " x)\n",
    "s = 'é' + " + "- " * CHUNK + "x\n",
    "u = a" + " + " + "-" * CHUNK + "b" + " + c" * (2 * CHUNK) + "\n",
    "t = a" + " | f(" + " + ".join(["b"] * (2 * CHUNK)) + ")" + " | c" * (2 * CHUNK) + "\n",
    "p = " + "-" * CHUNK + "a" + " + b" * (2 * CHUNK) + "\n",
    "r = [" + "-" * (2 * CHUNK) + "f'{x}' for x in y]\r\nq = " + "+" * CHUNK + "1.5e-3j\n",
]


IDS = ["mixed", "bitor", "inside_call", "unary", "prefix_run", "not_run", "run_over_lines",
       "run_non_ascii", "run_in_chain", "chain_in_chain", "chain_from_run", "runs_crlf"]


@pytest.mark.parametrize("text", TEXTS, ids=IDS)
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


def test_prefix_runs_past_the_parser_limit_parse() -> None:
    terms = 5_000
    text = "B[i] = " + "-" * terms + "nope\n"
    tree = parse_long_chains(text, "f.py", 36_000)
    assert tree is not None
    node = tree.body[0].value  # type: ignore[attr-defined]
    depth = 0
    while isinstance(node, ast.UnaryOp):
        assert isinstance(node.op, ast.USub)
        assert node.col_offset == len("B[i] = ") + depth and node.end_col_offset == len(text) - 1
        depth, node = depth + 1, node.operand
    assert depth == terms and node.id == "nope" and node.col_offset == len("B[i] = ") + terms


def test_prefix_runs_longer_than_the_bound_are_refused() -> None:
    assert parse_long_chains("x = " + "-" * (MAX_PREFIX_RUN + 1) + "a\n", "f.py", 36_000) is None
    assert parse_long_chains("x = " + "-" * MAX_PREFIX_RUN + "a\n", "f.py", 36_000) is not None


def test_a_syntax_error_behind_a_run_is_the_same_error() -> None:
    # `is not` is one operator: its `not` is not part of the run after it.
    text = "x = a is not " + "not " * CHUNK + "b\n"
    with pytest.raises(SyntaxError) as whole:
        ast.parse(text)
    with pytest.raises(SyntaxError) as mine:
        parse_long_chains(text, "f.py", 36_000)
    assert (mine.value.lineno, mine.value.offset) == (whole.value.lineno, whole.value.offset)


SCANNED = r'''@T.prim_func  # comment with 'quote' and + - * ops
def f(A: T.Buffer((16,), "float32"), s: str = 'a\'b' + r"c\\" + b"""x
y""" + RB'z' + f"{s}") -> None:
    x = 0x1F + 1_000 + 1.5e-3 + .5j + 2. - ... ; y = a ** -b // c @ d
    z = [i for i in \
         range(3)] if not x is not y else {k: v for k, v in q}
    w @= x >>= 1 != 2 <= 3 -> 4 := 5
'''


def test_the_scanner_finds_tokenize_s_tokens() -> None:
    significant = (tokenize.NAME, tokenize.NUMBER, tokenize.STRING, tokenize.OP)
    # Python 3.12's tokenize splits f-strings into parts; the scanner keeps them whole.
    text = SCANNED if sys.version_info < (3, 12) else SCANNED.replace(' + f"{s}"', "")
    expected = [(t.string, t.start, t.end)
                for t in tokenize.generate_tokens(io.StringIO(text).readline)
                if t.type in significant]
    mine = [(t.text, (t.line, t.col), (t.end_line, t.end_col)) for t in _scan(text) if t]
    assert mine == expected
