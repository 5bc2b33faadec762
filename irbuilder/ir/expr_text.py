"""Short TVMScript-like text of an expression, for error messages and comments.

The one renderer every message uses (argument checks, bounds and race checks, the C
header's comments, the interpreter's argument errors), so an expression reads the same
in all of them. It follows the printer's spelling of the common forms (``n // 2``,
``i % 4``, ``T.truncdiv``, ``T.min``, ``T.Cast``) but is not the printer: it never
fails, cuts deep or long expressions short with ``...`` and names an unknown node
``<Kind>``.
"""

from __future__ import annotations

from .expr import (
    BinaryOp,
    BufferLoad,
    Call,
    Cast,
    Div,
    FloatImm,
    IntImm,
    Max,
    Min,
    Mod,
    Not,
    PrimExpr,
    Ramp,
    StringImm,
    Var,
)

__all__ = ["MAX_TEXT", "expr_text", "strip_parens"]

MAX_TEXT = 120
"""The longest text :func:`expr_text` returns (longer text ends in ``...``)."""

_MAX_DEPTH = 12


def expr_text(
    expr: PrimExpr,
    names: dict[Var, str] | None = None,
    *,
    casts: bool = True,
    limit: int | None = MAX_TEXT,
) -> str:
    """A short rendering of ``expr``: binary operations in parentheses, calls as ``T.op(...)``.

    ``names`` renames loads by data var (e.g. a flat alias shown as its logical buffer).
    ``casts=False`` shows a cast as its operand (shape texts, where an ``int64`` cast of an
    ``int32`` size is noise). ``limit=None`` never shortens.
    """
    text = _Renderer(names or {}, casts).text(expr, 0)
    if limit is None or len(text) <= limit:
        return text
    return text[: limit - 3] + "..."


def strip_parens(text: str) -> str:
    """``text`` without the redundant outer parentheses of a rendered binary operation."""
    if text.startswith("(") and text.endswith(")"):
        depth = 0
        for pos, ch in enumerate(text):
            depth += ch == "("
            depth -= ch == ")"
            if depth == 0 and pos != len(text) - 1:
                return text
        return text[1:-1]
    return text


class _Renderer:
    def __init__(self, names: dict[Var, str], casts: bool) -> None:
        self.names = names
        self.casts = casts

    def text(self, e: PrimExpr, depth: int) -> str:
        if depth > _MAX_DEPTH:
            return "..."
        inner = depth + 1
        if isinstance(e, Var):
            return e.name
        if isinstance(e, (IntImm, FloatImm)):
            return str(e.value)
        if isinstance(e, StringImm):
            return repr(e.value)
        if isinstance(e, (Min, Max)):
            name = "min" if isinstance(e, Min) else "max"
            return f"T.{name}({self.text(e.a, inner)}, {self.text(e.b, inner)})"
        if isinstance(e, (Div, Mod)) and not e.dtype.is_float:
            # Integer Div/Mod truncate: spelt as the printer does, unlike ``//`` and ``%``.
            name = "truncdiv" if isinstance(e, Div) else "truncmod"
            return f"T.{name}({self.text(e.a, inner)}, {self.text(e.b, inner)})"
        if isinstance(e, BinaryOp):
            symbol = "%" if isinstance(e, Mod) else e.symbol
            return f"({self.text(e.a, inner)} {symbol} {self.text(e.b, inner)})"
        if isinstance(e, Not):
            return f"(not {self.text(e.a, inner)})"
        if isinstance(e, Cast):
            if not self.casts:
                return self.text(e.value, depth)
            return f"T.Cast({str(e.dtype)!r}, {self.text(e.value, inner)})"
        if isinstance(e, BufferLoad):
            name = self.names.get(e.buffer.data, e.buffer.name)
            return f"{name}[{', '.join(self.text(i, inner) for i in e.indices)}]"
        if isinstance(e, Ramp):
            base = strip_parens(self.text(e.base, inner))
            return f"T.Ramp({base}, {self.text(e.stride, inner)}, {e.lanes})"
        if isinstance(e, Call):
            return f"T.{e.op}({', '.join(self.text(a, inner) for a in e.args)})"
        return f"<{type(e).__name__}>"
