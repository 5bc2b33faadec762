"""Scoped name bindings of the program being parsed.

The table is a stack of frames (function, loop, block, ``with`` scope, macro) over a
per-name stack of values.  The rules:

* A name defined in a nested frame **shadows** the outer binding, which comes back when
  the frame exits (``with table.frame(FrameKind.LOOP): ...``).
* Defining a name **again in the same frame** is an error (:class:`VarTableError`),
  unless the call passes ``allow_shadowing=True`` or the frame was opened with
  ``allow_shadowing=True``; the new value then replaces the old one in that frame.  A
  dialect passes ``allow_shadowing=False`` for bindings that must stay unique (IR loop
  variables, buffers) and ``True`` for ordinary Python values.
* An ``isolated`` frame hides every binding made outside it (hygienic macros see only
  what they bind themselves plus the evaluation environment's captured values).

:meth:`VarTable.get` is what the evaluator sees: a fresh ``dict`` of the innermost
visible binding of every name.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

__all__ = ["FrameKind", "VarTable", "VarTableError"]


class FrameKind(enum.Enum):
    """What opened a frame; recorded for error messages and dialect decisions."""

    FUNCTION = "function"
    LOOP = "loop"
    BLOCK = "block"
    WITH = "with"
    MACRO = "macro"


class VarTableError(ValueError):
    """A name was defined twice in one frame, or used with no frame open."""


@dataclass
class _Frame:
    kind: FrameKind
    allow_shadowing: bool
    isolated: bool
    names: set[str] = field(default_factory=set)


class VarTable:
    """Name -> value bindings, scoped by a stack of frames."""

    def __init__(self) -> None:
        self._frames: list[_Frame] = []
        # Per name: (index of the defining frame, value), innermost last.
        self._stacks: dict[str, list[tuple[int, Any]]] = {}

    @contextmanager
    def frame(
        self,
        kind: FrameKind = FrameKind.BLOCK,
        *,
        allow_shadowing: bool = False,
        isolated: bool = False,
    ) -> Iterator[None]:
        """Open a frame for the ``with`` body; everything it defines is removed on exit.

        The frame is popped even when the body raises, so an error in one scope cannot
        leak bindings into the rest of the parse.
        """
        self._frames.append(_Frame(kind, allow_shadowing, isolated))
        try:
            yield
        finally:
            closed = self._frames.pop()
            for name in closed.names:
                stack = self._stacks[name]
                stack.pop()
                if not stack:
                    del self._stacks[name]

    def add(self, name: str, value: Any, *, allow_shadowing: bool = False) -> None:
        """Bind ``name`` to ``value`` in the innermost frame (see the module rules)."""
        if not self._frames:
            raise VarTableError(f"cannot define '{name}': no scope is open")
        index = len(self._frames) - 1
        current = self._frames[index]
        if name in current.names:
            if not (allow_shadowing or current.allow_shadowing):
                raise VarTableError(
                    f"'{name}' is already defined in this {current.kind.value} scope"
                )
            self._stacks[name][-1] = (index, value)
            return
        current.names.add(name)
        self._stacks.setdefault(name, []).append((index, value))

    def get(self) -> dict[str, Any]:
        """A new dict of every visible name and its innermost value."""
        barrier = self._barrier()
        return {
            name: stack[-1][1] for name, stack in self._stacks.items() if stack[-1][0] >= barrier
        }

    def lookup(self, name: str) -> Any:
        """The visible value of ``name``; raises ``KeyError`` if it has none."""
        stack = self._stacks.get(name)
        if not stack or stack[-1][0] < self._barrier():
            raise KeyError(name)
        return stack[-1][1]

    def __contains__(self, name: object) -> bool:
        try:
            self.lookup(str(name))
        except KeyError:
            return False
        return True

    def defined_in_current_frame(self, name: str) -> bool:
        """Whether the innermost frame itself binds ``name``."""
        return bool(self._frames) and name in self._frames[-1].names

    def exist(self, value: Any) -> bool:
        """Whether ``value`` (by identity) is bound to some visible name."""
        return any(v is value for v in self.get().values())

    @property
    def depth(self) -> int:
        """Number of open frames."""
        return len(self._frames)

    @property
    def current_kind(self) -> FrameKind | None:
        """Kind of the innermost frame (``None`` when no frame is open)."""
        return self._frames[-1].kind if self._frames else None

    def _barrier(self) -> int:
        for index in range(len(self._frames) - 1, -1, -1):
            if self._frames[index].isolated:
                return index
        return 0
