"""More of TVM v0.16's schedule primitives (a mixin over :class:`ScheduleBase`):
``reorder_block_iter_var`` and the ones added after it (see docs/schedule.md).

Their instruction kinds are registered in ``inst_kinds_extra.py``; the method -> kind
names are added to ``record.KIND_OF`` here, so recording works as soon as the schedule
class exists.
"""

from __future__ import annotations

from collections.abc import Sequence

from .instruction import plain
from .record import KIND_OF
from .rv import BlockRV
from .schedule_base import ScheduleBase

__all__ = ["ExtraPrimitives"]

KIND_OF.update(
    {
        "reorder_block_iter_var": "ReorderBlockIterVar",
    }
)


class ExtraPrimitives(ScheduleBase):
    """Block-iterator, dtype, loop-merging, staging and padding primitives."""

    def reorder_block_iter_var(self, block: BlockRV | str, new_order: Sequence[int]) -> None:
        """Reorder the block's iter vars (and their bindings): ``new_order[k]`` is the old
        position of the k-th iter var; it must be a permutation of ``0..n-1``."""
        from .block_iter_order import reorder_block_iter_var

        block = self._as_rv(block)
        node = self._block(block, "reorder_block_iter_var")
        order = [int(k) for k in plain(list(new_order))]
        self._apply(
            "reorder_block_iter_var",
            [block, order],
            [],
            lambda st: reorder_block_iter_var(st, node, order),
        )
