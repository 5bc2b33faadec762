"""The IR and the imperative IRBuilder that constructs it.

``from irbuilder import IRBuilder, def_, def_many, tir as T, ir_module as I``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from . import ir, ir_module, tir
from .builder import Frame, IRBuilder, IRBuilderError, current_span, with_span
from .ir import Buffer, Var

_T = TypeVar("_T")


def def_(name: str, value: _T) -> _T:
    """Give a Var or Buffer the name hint ``name``; return ``value`` (others unchanged)."""
    if isinstance(value, (Var, Buffer)):
        value.set_name_hint(name)
    return value


def def_many(names: Sequence[str], values: Sequence[Any]) -> list[Any]:
    """:func:`def_` pairwise; the two sequences must have the same length."""
    values = list(values)
    if len(names) != len(values):
        raise ValueError(f"def_many: {len(names)} names for {len(values)} values")
    return [def_(n, v) for n, v in zip(names, values)]


__all__ = [
    "Frame",
    "IRBuilder",
    "IRBuilderError",
    "current_span",
    "def_",
    "def_many",
    "ir",
    "ir_module",
    "tir",
    "with_span",
]
