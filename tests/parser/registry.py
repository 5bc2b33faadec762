"""Every PrimFunc/IRModule that the parser tests build, for the round-trip walk.

``conftest.py`` wraps the ``@T.prim_func``/``@I.ir_module`` hooks so that each result
parsed while the tests run is recorded here; :func:`roundtrip` also marks module-level
kernels explicitly so that the round-trip test can walk them without running the others.
"""

from __future__ import annotations

from typing import Any, TypeVar

from irbuilder.ir import IRModule, PrimFunc

RECORDED: list[tuple[str, PrimFunc | IRModule]] = []
"""Results parsed during the session, with a label (``module.qualname``)."""

MARKED: dict[str, PrimFunc | IRModule] = {}
"""Kernels marked with :func:`roundtrip`, by name."""

_T = TypeVar("_T", PrimFunc, IRModule)


def record(label: str, result: Any) -> None:
    """Remember ``result`` if it is a PrimFunc or IRModule."""
    if isinstance(result, (PrimFunc, IRModule)):
        RECORDED.append((label, result))


def roundtrip(result: _T) -> _T:
    """Mark a module-level kernel for the round-trip test; returns it unchanged."""
    name = result.name if isinstance(result, PrimFunc) else f"module_{len(MARKED)}"
    key = name
    counter = 1
    while key in MARKED:
        key = f"{name}_{counter}"
        counter += 1
    MARKED[key] = result
    return result
