"""A small document tree for printed TVMScript: lines with nested, indented bodies."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["INDENT", "Doc", "py_str", "render"]

INDENT = "    "


@dataclass
class Doc:
    """One line of text; ``body`` holds the lines nested (indented) under it."""

    text: str
    body: list[Doc] = field(default_factory=list)
    blank_before: bool = False


def render(docs: list[Doc], level: int = 0) -> list[str]:
    """The text lines of ``docs``, indented ``level`` steps."""
    lines: list[str] = []
    for doc in docs:
        if doc.blank_before and lines:
            lines.append("")
        lines.append(INDENT * level + doc.text)
        lines.extend(render(doc.body, level + 1))
    return lines


def py_str(value: str) -> str:
    """A Python string literal for ``value``, double-quoted when that needs no escaping."""
    text = repr(value)
    if text.startswith("'") and '"' not in value and "'" not in value:
        # repr escaped nothing quote-related, so only the delimiters change.
        return '"' + text[1:-1] + '"'
    return text
