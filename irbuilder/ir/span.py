"""Source spans carried by IR nodes so that later errors can point at user code."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Span"]


@dataclass(frozen=True, slots=True)
class Span:
    """A half-open region of a source file; lines and columns are 1-based.

    ``end_col`` is exclusive, matching Python's ``ast`` end offsets plus one.
    """

    file: str
    line: int
    col: int
    end_line: int
    end_col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"

    def merge(self, other: Span | None) -> Span:
        """The smallest span covering both (``other`` must be in the same file)."""
        if other is None or other.file != self.file:
            return self
        start = min((self.line, self.col), (other.line, other.col))
        end = max((self.end_line, self.end_col), (other.end_line, other.end_col))
        return Span(self.file, start[0], start[1], end[0], end[1])
