"""Helpers of the reliability tests: kernels built with the IRBuilder, builds with extra passes."""

from __future__ import annotations

from collections.abc import Callable

import lowering
from irbuilder import IRBuilder
from irbuilder import tir as T
from irbuilder.ir import PrimFunc
from lowering.checks.bounds_check import insert_bounds_checks
from lowering.pass_infra import Sequential

__all__ = ["kernel", "lower_bounds_checked"]


def kernel(name: str, body: Callable[[], None]) -> PrimFunc:
    """A prim_func named ``name`` built by ``body()`` inside ``T.prim_func()``."""
    with IRBuilder() as b:
        with T.prim_func():
            T.func_name(name)
            body()
    func = b.get()
    assert isinstance(func, PrimFunc)
    return func


def bounds_checked_passes(opt_level: int = 3) -> list[lowering.Pass]:
    """The pipeline up to ``insert_entry_checks`` (the late stage's versioned copies are not what
    these tests count) with ``insert_bounds_checks`` right before ``insert_entry_checks``."""
    passes = lowering.pipeline.lowering_passes(
        opt_level, extra=[(insert_bounds_checks, "before:insert_entry_checks")]
    )
    return passes[: passes.index(lowering.insert_entry_checks) + 1]


def lower_bounds_checked(func: PrimFunc, opt_level: int = 3) -> PrimFunc:
    """:func:`bounds_checked_passes` run on ``func``."""
    with lowering.PassContext(opt_level=opt_level):
        return Sequential(bounds_checked_passes(opt_level))(func)
