"""Valid Python names for the variables and buffers of one printed function, unique
among the names visible at each point of the text."""

from __future__ import annotations

import keyword
import re
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["RESERVED_NAMES", "NameTable", "sanitize"]

RESERVED_NAMES = frozenset({"T", "I", "range", "Module"})
"""Names a printed variable must never take: the dialect modules, the loop builtin and the
name of a printed module (`Module.f(...)` calls its functions)."""

_INVALID_CHARS = re.compile(r"[^0-9A-Za-z_]")


def sanitize(hint: str) -> str:
    """``hint`` turned into a Python identifier (invalid characters become ``_``)."""
    name = _INVALID_CHARS.sub("_", hint)
    if not name:
        return "v"
    if name[0].isdigit():
        # A leading digit cannot start an identifier; keep the digits readable.
        name = "v_" + name
    return name


class NameTable:
    """Assigns each object (by identity) one name, unique among the names in scope.

    Clashes get suffixes ``_1``, ``_2``...; keywords and reserved names are
    never handed out, so ``lambda`` becomes ``lambda_1`` and ``T`` ``T_1``.
    A name given with ``local=True`` inside :meth:`scope` (a loop or block variable
    defined there) is free again once that scope's text ends, so sibling loops both
    print ``i`` as TVM prints them; any other name stays taken for the whole function.
    """

    def __init__(self) -> None:
        self._names: dict[int, str] = {}
        self._taken: set[str] = set()
        # Keep the named objects alive so their ids stay unique while printing.
        self._keepalive: list[object] = []
        self._scopes: list[list[str]] = []

    @contextmanager
    def scope(self) -> Iterator[None]:
        """The text of one indented body: its local names are released at the end."""
        self._scopes.append([])
        try:
            yield
        finally:
            self._taken.difference_update(self._scopes.pop())

    def _is_free(self, name: str) -> bool:
        return (
            name not in self._taken and name not in RESERVED_NAMES and not keyword.iskeyword(name)
        )

    def get(self, obj: object) -> str | None:
        """The name given to ``obj``, or None when it has none yet."""
        return self._names.get(id(obj))

    def name(self, obj: object, hint: str, *, local: bool = False) -> str:
        """The name of ``obj``; the first call derives it from ``hint``. ``local``: the
        object is defined here and used only inside the innermost open scope."""
        existing = self._names.get(id(obj))
        if existing is not None:
            return existing
        base = sanitize(hint)
        candidate = base
        counter = 0
        while not self._is_free(candidate):
            counter += 1
            candidate = f"{base}_{counter}"
        self._names[id(obj)] = candidate
        self._taken.add(candidate)
        if local and self._scopes:
            self._scopes[-1].append(candidate)
        self._keepalive.append(obj)
        return candidate
