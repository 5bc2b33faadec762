"""More of TVM v0.16's schedule primitives (a mixin over :class:`ScheduleBase`):
``reorder_block_iter_var`` and the ones added after it (see docs/schedule.md).

Their instruction kinds are registered in ``inst_kinds_extra.py``; the method -> kind
names are added to ``record.KIND_OF`` here, so recording works as soon as the schedule
class exists.
"""

from __future__ import annotations

from collections.abc import Sequence

from irbuilder.ir import Buffer, PrimFunc

from .error import ScheduleError
from .instruction import plain
from .record import KIND_OF, region_position
from .rv import BlockRV, ExprRV, LoopRV
from .schedule_base import ScheduleBase, new_problems
from .state import ScheduleState

__all__ = ["ExtraPrimitives"]

KIND_OF.update(
    {
        "reorder_block_iter_var": "ReorderBlockIterVar",
        "unsafe_set_dtype": "UnsafeSetDType",
        "merge": "Merge",
        "read_at": "ReadAt",
        "write_at": "WriteAt",
        "decompose_padding": "DecomposePadding",
        "loop_partition": "LoopPartition",
        "cache_index": "CacheIndex",
        "rolling_buffer": "RollingBuffer",
        "unsafe_hide_buffer_access": "UnsafeHideBufferAccess",
    }
)

_CHANGES_VALUES = frozenset({"unsafe_set_dtype"})
"""Primitives whose result may compute other values than their input (TVM's ``unsafe_``
ones): ``debug_mask`` checks that they leave a well-formed function, and later primitives
are compared with the function they left rather than with the original."""

_DEPENDENCES_UNCHECKED = frozenset({"merge", "read_at", "write_at"})
"""Primitives that, like TVM's, reorder statement instances or stage data without checking
the data dependences: a result ``debug_mask`` finds changed is reported as the user's
request, not as a bug of the library."""


class ExtraPrimitives(ScheduleBase):
    """reorder_block_iter_var, unsafe_set_dtype, merge, read_at/write_at,
    decompose_padding, loop_partition, cache_index, rolling_buffer and
    unsafe_hide_buffer_access."""

    def _debug_check(self, kind: str, state: ScheduleState, before: PrimFunc) -> None:
        name = self._func_name
        assert name is not None
        # replaced, never mutated: a copy() of the schedule shares the attribute
        references: dict[str, PrimFunc] = getattr(self, "_unsafe_references", {})
        if kind in _CHANGES_VALUES:
            problems = new_problems(state.output(), before)
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
            # not a bug of the library: the user asked for an order the data forbid; keep
            # what differs (the base check's text around it calls it a library bug)
            detail = err.reason
            head, tail = "internal check failed, the primitive was not applied (", "); this is"
            if detail.startswith(head) and tail in detail:
                detail = detail[len(head) : detail.rindex(tail)]
            raise ScheduleError(
                kind,
                "the result changes: the primitive does not check the data dependences (as "
                f"in TVM) and was not applied: {detail}",
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

    def read_at(
        self,
        loop: LoopRV,
        block: BlockRV | str,
        read_buffer_index: int | str | Buffer,
        storage_scope: str,
    ) -> BlockRV:
        """In each iteration of ``loop``, copy the region of the buffer the block reads
        (``read_buffer_index`` among its reads) that the statements below the loop read
        into ``<buffer>_<scope>`` before the first of them, which then read the copy;
        returns the copy block (annotated ``auto_copy``)."""
        return self._read_write_at("read_at", loop, block, read_buffer_index, storage_scope)

    def write_at(
        self,
        loop: LoopRV,
        block: BlockRV | str,
        write_buffer_index: int | str | Buffer,
        storage_scope: str,
    ) -> BlockRV:
        """In each iteration of ``loop``, the statements below it up to the last one
        writing the buffer (``write_buffer_index`` among the block's writes) write a
        ``<buffer>_<scope>`` copy, copied back after them; returns the copy block."""
        return self._read_write_at("write_at", loop, block, write_buffer_index, storage_scope)

    def _read_write_at(
        self,
        name: str,
        loop: LoopRV,
        block: BlockRV | str,
        buffer_index: int | str | Buffer,
        storage_scope: str,
    ) -> BlockRV:
        from . import read_write_at

        block = self._as_rv(block)
        loop_node = self._loop(loop, name)
        node = self._block(block, name)
        index = plain(buffer_index)
        regions = node.reads if name == "read_at" else node.writes
        primitive = getattr(read_write_at, name)
        return self._apply(  # type: ignore[no-any-return]
            name,
            [loop, block],
            [region_position(regions, index), storage_scope],
            lambda st: primitive(st, loop_node, node, index, storage_scope),
        )

    def decompose_padding(self, block: BlockRV | str, loop: LoopRV) -> BlockRV:
        """Split a padding block (``A[...] = T.if_then_else(in bounds, value, constant)``)
        into a block filling the constant, placed right before ``loop``, and the block
        writing the in-bound values on the in-bound iterations only; returns the
        constant-filling block (``<name>_pad_const``)."""
        from .decompose_padding import decompose_padding

        block = self._as_rv(block)
        node = self._block(block, "decompose_padding")
        loop_node = self._loop(loop, "decompose_padding")
        return self._apply(  # type: ignore[no-any-return]
            "decompose_padding",
            [block, loop],
            [],
            lambda st: decompose_padding(st, node, loop_node),
        )

    def can_decompose_padding(self, block: BlockRV | str, loop: LoopRV) -> bool:
        """Whether ``decompose_padding(block, loop)`` applies (not recorded in the trace,
        as in TVM, where it is a plain function)."""
        from .decompose_padding import decompose_padding

        node = self._block(self._as_rv(block), "can_decompose_padding")
        loop_node = self._loop(loop, "can_decompose_padding")
        try:
            decompose_padding(self._state, node, loop_node, check_only=True)
        except ScheduleError:
            return False
        return True

    def loop_partition(
        self,
        loop: LoopRV,
        factors: Sequence[int | ExprRV | None],
        preserve_unit_iters: bool = True,
    ) -> list[LoopRV]:
        """Cut ``loop`` into consecutive loops over parts of its range of the lengths
        ``factors`` (one may be None: the rest; they must sum to less than the extent, the
        rest being one more part), each in its own block; returns the new loops.
        ``preserve_unit_iters`` is accepted and, as in TVM, changes nothing."""
        from .loop_partition import loop_partition

        node = self._loop(loop, "loop_partition")
        factors = [plain(f) for f in factors]
        values: list[int | None] = []
        for f in factors:
            if isinstance(f, ExprRV):
                values.append(int(self._table[f]))
            elif f is None:
                values.append(None)
            else:
                values.append(int(getattr(f, "value", f)))
        return self._apply(  # type: ignore[no-any-return]
            "loop_partition",
            [loop, *factors],
            [bool(preserve_unit_iters)],
            lambda st: loop_partition(st, node, values),
        )

    def cache_index(
        self, block: BlockRV | str, storage_scope: str, cse_thresh: int = 0
    ) -> list[BlockRV]:
        """Precompute the block's index computations (those occurring at least
        ``cse_thresh`` times, TVM's counting) into ``index_var_<k>`` buffers by blocks
        ``index_<k>`` placed before it; returns those blocks."""
        from .cache_index import cache_index

        block = self._as_rv(block)
        node = self._block(block, "cache_index")
        thresh = int(plain(cse_thresh))
        return self._apply(  # type: ignore[no-any-return]
            "cache_index",
            [block],
            [storage_scope, thresh],
            lambda st: cache_index(st, node, storage_scope, thresh),
        )

    def rolling_buffer(self, block: BlockRV | str, write_buffer_index: int | str | Buffer) -> None:
        """Shrink the buffer the block writes (``write_buffer_index`` among its writes),
        computed tile by tile at a consumer's loop, to one tile along the outermost
        dimension where tiles overlap, addressed modulo the tile; later tiles skip the
        overlap the previous one computed."""
        from .rolling_buffer import rolling_buffer

        block = self._as_rv(block)
        node = self._block(block, "rolling_buffer")
        index = plain(write_buffer_index)
        self._apply(
            "rolling_buffer",
            [block],
            [region_position(node.writes, index)],
            lambda st: rolling_buffer(st, node, index),
        )

    def unsafe_hide_buffer_access(
        self, block: BlockRV | str, buf_type: str, buf_index_array: Sequence[int]
    ) -> None:
        """Drop the block's declared ``buf_type`` ("read" or "write") regions at the
        positions ``buf_index_array``; the accesses stay, later primitives no longer see
        them (the user's promise that they do not matter)."""
        from .hide_buffer_access import unsafe_hide_buffer_access

        block = self._as_rv(block)
        node = self._block(block, "unsafe_hide_buffer_access")
        positions = [int(k) for k in plain(list(buf_index_array))]
        self._apply(
            "unsafe_hide_buffer_access",
            [block, buf_type, positions],
            [],
            lambda st: unsafe_hide_buffer_access(st, node, buf_type, positions),
        )
