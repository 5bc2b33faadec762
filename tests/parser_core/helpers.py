"""Shared helpers: parse small snippets and evaluate them against given bindings."""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

from tvmscript.parser.core import CapturedEnv, DispatchTable, EvalHooks, Parser, Source, doc

_counter = itertools.count()


def unique_filename(stem: str = "snippet") -> str:
    """A fresh pseudo file name, so linecache entries of different tests never collide."""
    return f"<{stem}-{next(_counter)}>"


def parser_for(
    text: str,
    *,
    filename: str | None = None,
    captured: CapturedEnv | None = None,
    hooks: EvalHooks | None = None,
    extra_names: Mapping[str, Any] | None = None,
    table: DispatchTable | None = None,
) -> Parser:
    """A parser over ``text`` registered under a unique (or the given) file name."""
    source = Source.from_text(text, filename or unique_filename())
    return Parser(
        source, captured=captured, hooks=hooks, extra_names=extra_names, table=table
    )


def first_expr(parser: Parser) -> doc.expr:
    """The expression of the first statement (``Expr`` value or ``Assign`` value)."""
    stmt = parser.source.tree.body[0]
    assert isinstance(stmt, (doc.Expr, doc.Assign))
    return stmt.value


def evaluate(
    text: str,
    env: Mapping[str, Any] | None = None,
    *,
    hooks: EvalHooks | None = None,
    captured: CapturedEnv | None = None,
    table: DispatchTable | None = None,
) -> Any:
    """Evaluate the one-line expression ``text`` with ``env`` bound in the var table."""
    parser = parser_for(text + "\n", hooks=hooks, captured=captured, table=table)
    with parser.var_table.frame():
        for name, value in (env or {}).items():
            parser.var_table.add(name, value)
        return parser.eval_expr(first_expr(parser))


class Sym:
    """A stand-in for a symbolic IR expression: it refuses ``bool()`` like a PrimExpr."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __bool__(self) -> bool:
        raise TypeError(f"cannot decide the truth of symbolic {self.text} at parse time")

    def __repr__(self) -> str:
        return self.text

    def _binary(self, op: str, other: object, reflected: bool = False) -> Sym:
        lhs, rhs = (other, self) if reflected else (self, other)
        return Sym(f"({lhs!r} {op} {rhs!r})")

    def __lt__(self, other: object) -> Sym:
        return self._binary("<", other)

    def __gt__(self, other: object) -> Sym:
        return self._binary(">", other)

    def __le__(self, other: object) -> Sym:
        return self._binary("<=", other)

    def __add__(self, other: object) -> Sym:
        return self._binary("+", other)

    def __radd__(self, other: object) -> Sym:
        return self._binary("+", other, reflected=True)


SYM_HOOKS = EvalHooks(
    is_static=lambda value: not isinstance(value, Sym),
    logical_and=lambda a, b: Sym(f"And({a!r}, {b!r})"),
    logical_or=lambda a, b: Sym(f"Or({a!r}, {b!r})"),
    logical_not=lambda a: Sym(f"Not({a!r})"),
    select=lambda c, t, f: Sym(f"Select({c!r}, {t!r}, {f!r})"),
)
"""Hooks that build readable symbolic results, as the TIR dialect builds And/Or/Select."""
