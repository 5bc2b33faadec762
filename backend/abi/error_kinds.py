"""Codes of the Python exceptions a kernel raises: the first argument of ``__tvms_raise``
(code generator) and of the C entry's error code (exported libraries)."""

from __future__ import annotations

__all__ = ["ErrorKind"]


class ErrorKind:
    """Codes of the Python exceptions a kernel can raise (argument of ``__tvms_raise``)."""

    ASSERTION = 1
    TYPE = 2
    VALUE = 3
    INDEX = 4
    ZERO_DIVISION = 5
    MEMORY = 6
    RUNTIME = 7
    OVERFLOW = 8

    #: Python exception raised for each code (a ``@tvms_exc_<name>`` slot of the runtime).
    PY_NAMES = {
        1: "AssertionError",
        2: "TypeError",
        3: "ValueError",
        4: "IndexError",
        5: "ZeroDivisionError",
        6: "MemoryError",
        7: "RuntimeError",
        8: "OverflowError",
    }
    #: AssertStmt message prefixes that select an exception type (ARCHITECTURE.md).
    PREFIXES = {"TypeError: ": 2, "ValueError: ": 3, "IndexError: ": 4}
