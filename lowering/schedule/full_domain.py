"""The precondition compute_at and reverse_compute_at put on the moved block: its loops run
each instance of its whole iteration domain exactly once (affine bindings covering every
iter var's domain), over constant extents or, through :mod:`affine_symbolic`, symbolic ones
(``fused // n``, ``fused % n`` over ``n * 32``)."""

from __future__ import annotations

from irbuilder.ir import Block, IntImm

from .affine import bindings_affine
from .affine_symbolic import covers_once, loop_sums
from .analysis import constant_extents
from .error import fail
from .state import ScheduleState

__all__ = ["check_full_domain"]


def check_full_domain(state: ScheduleState, block: Block, name: str) -> None:
    """The block's loops run each instance of its whole iteration domain exactly once."""
    index = state.index
    realize = index.realize_of(block)
    if not (isinstance(realize.predicate, IntImm) and realize.predicate.value == 1):
        raise fail(state, name, f"block {block.name_hint!r} has a predicate (T.where)", block)
    loops = index.loops_above(block)
    extents = constant_extents(loops)
    if extents is None:
        # symbolic extents (``fused // n``): the mixed-radix proof over monomials
        symbolic = loop_sums(loops, realize.iter_values)
        for iv, part in zip(block.iter_vars, symbolic or []):
            if not covers_once(part, iv.dom):
                raise fail(
                    state,
                    name,
                    f"the loops of block {block.name_hint!r} do not cover the domain of its "
                    f"iter var {iv.var.name!r} exactly once",
                    block,
                )
        if symbolic is not None:
            return
    sums = None if extents is None else bindings_affine(realize.iter_values, extents)
    if sums is None:
        raise fail(
            state,
            name,
            f"block {block.name_hint!r} does not have affine bindings of its loops",
            block,
        )
    for iv, found in zip(block.iter_vars, sums):
        dom = iv.dom
        if not (isinstance(dom.min, IntImm) and isinstance(dom.extent, IntImm)):
            raise fail(state, name, f"iter var {iv.var.name!r} has a symbolic domain", block)
        if found.base != dom.min.value or found.extent != dom.extent.value:
            raise fail(
                state,
                name,
                f"the loops of block {block.name_hint!r} do not cover the domain of its "
                f"iter var {iv.var.name!r} exactly once",
                block,
            )
