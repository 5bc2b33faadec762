"""Schedule primitives on loops, compute locations and reductions (TVM v0.16's names and
signatures): ``split``, ``fuse``, ``reorder``, ``add_unit_loop``, ``parallel``,
``vectorize``, ``unroll``, ``bind``, ``compute_at``, ``reverse_compute_at``,
``compute_inline``, ``reverse_compute_inline``, ``decompose_reduction``, ``rfactor``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from irbuilder.ir import Block, ForKind

from . import (
    compute_at,
    inline,
    reduction,
    split_fuse,
)
from . import loops as loop_prims
from .instruction import plain
from .rv import BlockRV, ExprRV, LoopRV
from .schedule_base import ScheduleBase
from .state import ScheduleState

__all__ = ["LoopPrimitives"]


class LoopPrimitives(ScheduleBase):
    """The loop, compute-location and reduction primitives of a schedule."""

    # -- loops ---------------------------------------------------------------------------
    def split(
        self,
        loop: LoopRV,
        factors: Sequence[int | ExprRV | None],
        preserve_unit_iters: bool = True,
        disable_predication: bool = False,
    ) -> list[LoopRV]:
        """Split ``loop`` into ``len(factors)`` nested loops (one factor may be None).

        ``disable_predication=True`` is TVM's promise that the factors divide the extent;
        here it is accepted where that holds and refused where a guard would be needed."""
        node = self._loop(loop, "split")
        values: list[int | None] = []
        factors = [plain(f) for f in factors]
        for f in factors:
            if isinstance(f, ExprRV):
                values.append(int(self._table[f]))
            elif f is None:
                values.append(None)
            else:
                values.append(int(getattr(f, "value", f)))
        return self._apply(  # type: ignore[no-any-return]
            "split",
            [loop, *factors],
            [bool(preserve_unit_iters), bool(disable_predication)],
            lambda st: split_fuse.split(
                st, node, values, preserve_unit_iters, bool(disable_predication)
            ),
        )

    def fuse(self, *loops: LoopRV, preserve_unit_iters: bool = True) -> LoopRV:
        """Fuse perfectly nested consecutive loops into one."""
        nodes = [self._loop(lp, "fuse") for lp in loops]
        return self._apply(  # type: ignore[no-any-return]
            "fuse",
            list(loops),
            [bool(preserve_unit_iters)],
            lambda st: split_fuse.fuse(st, nodes, preserve_unit_iters),
        )

    def reorder(self, *ordered_loops: LoopRV) -> None:
        """Put the loops in the given order (they must form one chain)."""
        nodes = [self._loop(lp, "reorder") for lp in ordered_loops]
        self._apply(
            "reorder",
            list(ordered_loops),
            [],
            lambda st: loop_prims.reorder(st, nodes) and None,
        )

    def add_unit_loop(self, block_or_loop: BlockRV | LoopRV) -> LoopRV:
        """Wrap ``block_or_loop`` in a new loop of extent 1."""
        block_or_loop = self._as_rv(block_or_loop)
        node = self._block_or_loop(block_or_loop, "add_unit_loop")
        return self._apply(  # type: ignore[no-any-return]
            "add_unit_loop",
            [block_or_loop],
            [],
            lambda st: loop_prims.add_unit_loop(st, node),
        )

    def _kind(self, name: str, loop: LoopRV, kind: ForKind, thread_axis: str | None = None) -> None:
        node = self._loop(loop, name)
        self._apply(
            name,
            [loop],
            [] if thread_axis is None else [thread_axis],
            lambda st: loop_prims.set_loop_kind(st, node, kind, name, thread_axis) and None,
        )

    def parallel(self, loop: LoopRV) -> None:
        """Run the loop's iterations on several threads."""
        self._kind("parallel", loop, ForKind.PARALLEL)

    def vectorize(self, loop: LoopRV) -> None:
        """Run the loop's iterations as vector lanes."""
        self._kind("vectorize", loop, ForKind.VECTORIZED)

    def unroll(self, loop: LoopRV) -> None:
        """Unroll the loop."""
        self._kind("unroll", loop, ForKind.UNROLLED)

    def bind(self, loop: LoopRV, thread_axis: str) -> None:
        """Bind the loop to a GPU thread axis (IR only: CPU builds refuse such loops)."""
        self._kind("bind", loop, ForKind.THREAD_BINDING, thread_axis)

    # -- compute location ----------------------------------------------------------------
    def compute_at(
        self,
        block: BlockRV,
        loop: LoopRV,
        preserve_unit_loops: bool = False,
        index: int = -1,
    ) -> None:
        """Move the producer block under ``loop``, computing what each iteration needs."""
        block = self._as_rv(block)
        inputs, attrs = [block, loop], [bool(preserve_unit_loops), int(index)]
        b = self._block(block, "compute_at")
        if self._marked(loop, "compute_at", b, inputs, attrs, inline.compute_inline):
            return
        lp = self._loop(loop, "compute_at")
        self._apply(
            "compute_at",
            inputs,
            attrs,
            lambda st: compute_at.compute_at(st, b, lp, preserve_unit_loops, index),
        )

    def reverse_compute_at(
        self,
        block: BlockRV,
        loop: LoopRV,
        preserve_unit_loops: bool = False,
        index: int = -1,
    ) -> None:
        """Move the consumer block under ``loop``, consuming what each iteration produced."""
        block = self._as_rv(block)
        inputs, attrs = [block, loop], [bool(preserve_unit_loops), int(index)]
        b = self._block(block, "reverse_compute_at")
        if self._marked(loop, "reverse_compute_at", b, inputs, attrs,
                        inline.reverse_compute_inline):
            return
        lp = self._loop(loop, "reverse_compute_at")
        self._apply(
            "reverse_compute_at",
            inputs,
            attrs,
            lambda st: compute_at.reverse_compute_at(st, b, lp, preserve_unit_loops, index),
        )

    def _marked(
        self,
        loop: LoopRV,
        kind: str,
        block: Block,
        inputs: list[Any],
        attrs: list[Any],
        inline_action: Callable[[ScheduleState, Block], None],
    ) -> bool:
        """compute_at at a location ``sample_compute_location`` chose that is not a loop, as
        TVM: the root mark leaves the block where it is, the inline mark inlines it."""
        from .compute_location import INLINE, ROOT

        mark = self._table.get(loop) if isinstance(loop, LoopRV) else None
        if mark is ROOT:
            self._apply(kind, inputs, attrs, lambda st: None)
            return True
        if mark is INLINE:
            self._apply(kind, inputs, attrs, lambda st: inline_action(st, block))
            return True
        return False

    def compute_inline(self, block: BlockRV) -> None:
        """Inline the block's value into its consumers and remove it."""
        block = self._as_rv(block)
        node = self._block(block, "compute_inline")
        self._apply("compute_inline", [block], [], lambda st: inline.compute_inline(st, node))

    def reverse_compute_inline(self, block: BlockRV) -> None:
        """Fold the consumer block into its producer and remove it."""
        block = self._as_rv(block)
        node = self._block(block, "reverse_compute_inline")
        self._apply(
            "reverse_compute_inline",
            [block],
            [],
            lambda st: inline.reverse_compute_inline(st, node),
        )

    # -- reductions ----------------------------------------------------------------------
    def decompose_reduction(self, block: BlockRV, loop: LoopRV) -> BlockRV:
        """Move the block's init into a block of its own right before ``loop``."""
        block = self._as_rv(block)
        b, lp = self._block(block, "decompose_reduction"), self._loop(loop, "decompose_reduction")
        return self._apply(  # type: ignore[no-any-return]
            "decompose_reduction",
            [block, loop],
            [],
            lambda st: reduction.decompose_reduction(st, b, lp),
        )

    def rfactor(self, loop: LoopRV, factor_axis: int) -> BlockRV:
        """Factor the reduction over ``loop`` into an intermediate ``*_rf`` buffer."""
        lp = self._loop(loop, "rfactor")
        return self._apply(  # type: ignore[no-any-return]
            "rfactor",
            [loop],
            [int(factor_axis)],
            lambda st: reduction.rfactor(st, lp, factor_axis),
        )
