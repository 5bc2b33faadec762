"""``reorder_block_iter_var``: permute a block's iter vars (and its realize's bindings).

Only the order in which the block declares its iteration space changes; every access,
the init and the bindings' values stay as they were, so the block computes the same thing
(TVM v0.16's ReorderBlockIterVar).
"""

from __future__ import annotations

from collections.abc import Sequence

from irbuilder.ir import Block, rebuild

from .error import fail
from .state import ScheduleState

__all__ = ["reorder_block_iter_var"]


def reorder_block_iter_var(state: ScheduleState, block: Block, new_order: Sequence[int]) -> None:
    count = len(block.iter_vars)
    order = [int(k) for k in new_order]
    # a permutation of 0..n-1: as many entries as iter vars, each in range, none twice
    if len(order) != count or len(set(order)) != count or any(not 0 <= k < count for k in order):
        raise fail(
            state,
            "reorder_block_iter_var",
            f"the block iter var order {order} is not a permutation of [0, 1, ..., {count - 1}] "
            f"(block {block.name_hint!r} has {count} iter vars)",
            block,
        )
    realize = state.index.realize_of(block)
    new_block = rebuild(block, {"iter_vars": tuple(block.iter_vars[k] for k in order)})
    new_realize = rebuild(
        realize,
        {"block": new_block, "iter_values": tuple(realize.iter_values[k] for k in order)},
    )
    state.replace(realize, new_realize, {block: new_block})
