"""Random variables: the handles a schedule hands out for blocks, loops and sampled values."""

from __future__ import annotations

import itertools

__all__ = ["BlockRV", "ExprRV", "LoopRV", "RV"]

_COUNTER = itertools.count()


class RV:
    """A handle; what it stands for lives in the schedule (``sch.get(rv)``)."""

    __slots__ = ("_uid",)
    prefix = "rv"

    def __init__(self) -> None:
        self._uid = next(_COUNTER)

    def __repr__(self) -> str:
        return f"{type(self).__name__}#{self._uid}"


class BlockRV(RV):
    """A block of the scheduled function."""

    __slots__ = ()
    prefix = "b"


class LoopRV(RV):
    """A loop of the scheduled function."""

    __slots__ = ()
    prefix = "l"


class ExprRV(RV):
    """An integer decided by a sampling instruction (``sch.get(v)`` gives its value)."""

    __slots__ = ()
    prefix = "v"
