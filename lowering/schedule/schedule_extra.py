"""More of TVM v0.16's schedule primitives (a mixin over :class:`ScheduleBase`):
``reorder_block_iter_var`` and the ones added after it (see docs/schedule.md).

Their instruction kinds are registered in ``inst_kinds_extra.py``; the method -> kind
names are added to ``record.KIND_OF`` here, so recording works as soon as the schedule
class exists.
"""

from __future__ import annotations

from collections.abc import Sequence

from irbuilder.ir import Buffer, PrimFunc
from lowering.checks.verifier import well_formed_problems

from .error import ScheduleError
from .instruction import plain
from .record import KIND_OF, region_position
from .rv import BlockRV, LoopRV
from .schedule_base import ScheduleBase
from .state import ScheduleState

__all__ = ["ExtraPrimitives"]

KIND_OF.update(
    {
        "reorder_block_iter_var": "ReorderBlockIterVar",
        "unsafe_set_dtype": "UnsafeSetDType",
        "merge": "Merge",
    }
)

_CHANGES_VALUES = frozenset({"unsafe_set_dtype"})
"""Primitives whose result may compute other values than their input (TVM's ``unsafe_``
ones): ``debug_mask`` checks that they leave a well-formed function, and later primitives
are compared with the function they left rather than with the original."""

_DEPENDENCES_UNCHECKED = frozenset({"merge"})
"""Primitives that, like TVM's, reorder statement instances without checking the data
dependences: a result ``debug_mask`` finds changed is reported as the user's order."""


class ExtraPrimitives(ScheduleBase):
    """Block-iterator, dtype, loop-merging, staging and padding primitives."""

    def _debug_check(self, kind: str, state: ScheduleState, before: PrimFunc) -> None:
        name = self._func_name
        assert name is not None
        # replaced, never mutated: a copy() of the schedule shares the attribute
        references: dict[str, PrimFunc] = getattr(self, "_unsafe_references", {})
        if kind in _CHANGES_VALUES:
            problems = well_formed_problems(state.output())
            if problems:
                state.set_func(before)
                self._refresh_after_rollback(state)
                raise ScheduleError(
                    kind,
                    "internal check failed, the primitive was not applied (the result is not "
                    "well formed: " + "; ".join(p.message for p in problems) + "); this is a "
                    "bug in the schedule library, please report it",
                )
            self._unsafe_references = {**references, name: state.output()}
            return
        originals = self._originals
        reference = references.get(name)
        if reference is not None:
            self._originals = {**originals, name: reference}
        try:
            super()._debug_check(kind, state, before)
        except ScheduleError as err:
            if kind not in _DEPENDENCES_UNCHECKED:
                raise
            # not a bug of the library: the user asked for an order the data forbid
            raise ScheduleError(
                kind,
                "the new execution order changes the results (the primitive does not check "
                f"data dependences, as in TVM; it was not applied): {err.reason}",
            ) from None
        finally:
            self._originals = originals

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

    def unsafe_set_dtype(
        self, block: BlockRV | str, buffer_index: int | str | Buffer, dtype: str
    ) -> None:
        """Store the allocated buffer the block writes (``buffer_index`` among its writes)
        in ``dtype``: stores cast to it, loads cast back. Unsafe: values may lose precision
        or wrap."""
        from .set_dtype import unsafe_set_dtype

        block = self._as_rv(block)
        node = self._block(block, "unsafe_set_dtype")
        index = plain(buffer_index)
        self._apply(
            "unsafe_set_dtype",
            [block],
            [region_position(node.writes, index), str(dtype)],
            lambda st: unsafe_set_dtype(st, node, index, str(dtype)),
        )

    def merge(self, *loops: LoopRV | list[LoopRV]) -> LoopRV:
        """Merge loop nests of the same shape under one scope (each from a given loop up to
        the loops' common ancestor) into one nest running their bodies in turn; returns
        the new loop at the given loops' level. Data dependences between the nests are
        not checked (as in TVM)."""
        from .merge import merge

        # TVM's Python takes the loops as arguments or as one list
        handles = [lp for item in loops for lp in (item if isinstance(item, list) else [item])]
        nodes = [self._loop(lp, "merge") for lp in handles]
        return self._apply(  # type: ignore[no-any-return]
            "merge", handles, [], lambda st: merge(st, nodes)
        )
