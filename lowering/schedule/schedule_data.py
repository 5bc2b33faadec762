"""Schedule primitives on buffers, blocks, annotations and sampling (TVM v0.16's names and
signatures): the caches, ``reindex``, ``set_scope``, ``transform_layout``,
``set_axis_separator``, ``transform_block_layout``, ``storage_align``, ``blockize``,
``annotate``/``unannotate``, the ``sample_*`` primitives and ``enter_postproc``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from irbuilder.ir import Block, Buffer, For, rebuild

from . import (
    blockize,
    cache,
    cache_write,
    layout,
    layout_transform,
    reindex,
    reindex_cache,
)
from .error import ScheduleError, render_error
from .instruction import plain
from .record import buffer_slot, region_position
from .rv import BlockRV, ExprRV, LoopRV
from .rv_maps import resolve_rvs
from .schedule_base import ScheduleBase
from .state import ScheduleState
from .storage_scope import set_scope as set_storage_scope

__all__ = ["DataPrimitives"]


class DataPrimitives(ScheduleBase):
    """The buffer, block, annotation and sampling primitives of a schedule."""

    # -- caching and layout --------------------------------------------------------------
    def cache_read(
        self,
        block: BlockRV,
        read_buffer_index: int | str | Buffer,
        storage_scope: str,
        consumer_blocks: Sequence[BlockRV] | None = None,
    ) -> BlockRV:
        """Copy a buffer the block reads into ``storage_scope`` before its consumers."""
        return self._cache(
            cache.cache_read,
            "cache_read",
            block,
            read_buffer_index,
            storage_scope,
            consumer_blocks,
        )

    def cache_write(
        self,
        block: BlockRV,
        write_buffer_index: int | str | Buffer,
        storage_scope: str,
        consumer_blocks: Sequence[BlockRV] | None = None,
    ) -> BlockRV:
        """Make the block write a ``storage_scope`` cache, copied back right after it."""
        return self._cache(
            cache_write.cache_write,
            "cache_write",
            block,
            write_buffer_index,
            storage_scope,
            consumer_blocks,
        )

    def cache_inplace(
        self, block: BlockRV | str, read_buffer_index: int | str | Buffer, storage_scope: str
    ) -> list[BlockRV]:
        """A block reading and writing a buffer works on a ``storage_scope`` cache, copied
        in right before it and back right after it; returns the two copy blocks."""
        from .cache_inplace import cache_inplace

        block = self._as_rv(block)
        node = self._block(block, "cache_inplace")
        index = plain(read_buffer_index)
        return self._apply(  # type: ignore[no-any-return]
            "cache_inplace",
            [block],
            [region_position(node.reads, index), storage_scope],
            lambda st: cache_inplace(st, node, index, storage_scope),
        )

    def _cache(
        self,
        primitive: Any,
        name: str,
        block: BlockRV,
        index: int | str | Buffer,
        storage_scope: str,
        consumer_blocks: Sequence[BlockRV] | None,
    ) -> BlockRV:
        """cache_read/cache_write: the consumers are recorded as handles, passed as blocks."""

        def consumers(_: Block) -> tuple[list[BlockRV], list[Block] | None]:
            handles = None if consumer_blocks is None else [self._as_rv(b) for b in consumer_blocks]
            nodes = None if handles is None else [self._block(b, name) for b in handles]
            return handles or [], nodes

        return self._apply_cache(primitive, name, block, index, storage_scope, consumers)

    def reindex_cache_read(
        self,
        block: BlockRV,
        read_buffer_index: int | str | Buffer,
        storage_scope: str,
        index_map: Any,
    ) -> BlockRV:
        """Copy what the block reads of a buffer into a cache laid out by ``index_map`` of
        its iter vars, before it."""
        return self._reindex_cache(
            reindex_cache.reindex_cache_read,
            "reindex_cache_read",
            block,
            read_buffer_index,
            storage_scope,
            index_map,
        )

    def reindex_cache_write(
        self,
        block: BlockRV,
        write_buffer_index: int | str | Buffer,
        storage_scope: str,
        index_map: Any,
    ) -> BlockRV:
        """Make the block write a cache laid out by ``index_map`` of its iter vars, copied
        back after it."""
        return self._reindex_cache(
            reindex_cache.reindex_cache_write,
            "reindex_cache_write",
            block,
            write_buffer_index,
            storage_scope,
            index_map,
        )

    def _reindex_cache(
        self,
        primitive: Any,
        name: str,
        block: BlockRV,
        index: int | str | Buffer,
        storage_scope: str,
        index_map: Any,
    ) -> BlockRV:
        """reindex_cache_read/reindex_cache_write: the index map (of the block's iter vars)
        is recorded and passed."""

        def mapping(node: Block) -> tuple[Any, Any]:
            ndim = len(node.iter_vars) if layout.takes_varargs(index_map) else 0
            as_map = layout.as_index_map(index_map, ndim)
            return as_map, as_map

        return self._apply_cache(primitive, name, block, index, storage_scope, mapping)

    def _apply_cache(
        self,
        primitive: Any,
        name: str,
        block: BlockRV,
        index: int | str | Buffer,
        storage_scope: str,
        last_input: Callable[[Block], tuple[Any, Any]],
    ) -> BlockRV:
        """The four cache primitives: the same handles, trace record and application.
        ``last_input(block)`` gives the primitive's last input as recorded in the trace and
        as passed to ``primitive``."""
        block = self._as_rv(block)
        node = self._block(block, name)
        recorded, passed = last_input(node)
        index = plain(index)
        regions = node.reads if name.endswith("_read") else node.writes
        return self._apply(  # type: ignore[no-any-return]
            name,
            [block, recorded],
            [region_position(regions, index), storage_scope],
            lambda st: primitive(st, node, index, storage_scope, passed),
        )

    def set_scope(
        self, block: BlockRV | str, buffer_index: int | str | Buffer, storage_scope: str
    ) -> None:
        """Change the storage scope of an allocated buffer the block writes."""
        block = self._as_rv(block)
        node = self._block(block, "set_scope")
        buffer_index = plain(buffer_index)
        self._apply(
            "set_scope",
            [block],
            [region_position(node.writes, buffer_index), storage_scope],
            lambda st: set_storage_scope(st, node, buffer_index, storage_scope),
        )

    def transform_layout(
        self,
        block: BlockRV,
        buffer: Any,
        index_map: Any,
        pad_value: Any = None,
        *,
        assume_injective_transform: bool = False,
    ) -> None:
        """Store the buffer in the layout ``index_map`` gives (injective on its indices).

        A map that pads needs ``pad_value`` (a value, a function of the new indices or an
        ``IndexMap``) unless ``assume_injective_transform`` leaves the padding unwritten;
        ``IndexMap.AXIS_SEPARATOR`` among the outputs sets the new buffer's separators."""
        block = self._as_rv(block)
        node = self._block(block, "transform_layout")
        target = layout.resolve_buffer(self._state, node, buffer, "transform_layout")
        ndim = len(target.shape)
        dtype = str(target.shape[0].dtype) if target.shape else "int32"
        separators: list[int] = []
        if isinstance(index_map, layout.IndexMap):
            mapping = index_map.legalized(dtype)  # a replayed map has int32 indices
        elif callable(index_map):
            mapping, separators = layout.IndexMap.from_func_with_separators(
                index_map, ndim if layout.takes_varargs(index_map) else None, dtype
            )
        else:
            raise TypeError("transform_layout: index_map must be an IndexMap or a function")
        recorded_pad = (  # a function is recorded as its IndexMap (printable)
            layout.IndexMap.from_func(
                pad_value,
                len(mapping.final_indices) if layout.takes_varargs(pad_value) else None,
                index_dtype=dtype,
            )
            if callable(pad_value) and not isinstance(pad_value, layout.IndexMap)
            else pad_value
        )
        slot = buffer_slot(node, buffer)
        state = self._state
        # sampled values in the maps stand for what was sampled; the trace keeps the RVs
        applied_map = resolve_rvs(mapping, self.get)
        applied_pad = resolve_rvs(pad_value, self.get)

        def act(st: ScheduleState) -> None:
            moved = layout_transform.transform_layout(
                st, node, buffer, applied_map, applied_pad, assume_injective_transform
            )
            if moved is not None:
                state.param_layouts.append(moved)

        self._apply(
            "transform_layout",
            [block],
            [*slot, mapping, recorded_pad, bool(assume_injective_transform)],
            act,
        )
        if separators:  # a second instruction, as in TVM's trace
            side = "read" if slot[1] == 0 else "write"
            self.set_axis_separator(block, (side, slot[0]), separators)

    def set_axis_separator(self, block: BlockRV, buffer: Any, axis_separators: Any) -> None:
        """Set where the buffer's axes split when flattened (TVM's ``axis_separators``)."""
        block = self._as_rv(block)
        node = self._block(block, "set_axis_separator")
        separators = [int(s) for s in axis_separators]
        self._apply(
            "set_axis_separator",
            [block],
            [*buffer_slot(node, buffer), separators],
            lambda st: layout_transform.set_axis_separator(st, node, buffer, separators),
        )

    def reindex(self, block: BlockRV, buffer: Any) -> BlockRV:
        """Give the block a copy of the buffer indexed by its iter vars."""
        block = self._as_rv(block)
        node = self._block(block, "reindex")
        return self._apply(  # type: ignore[no-any-return]
            "reindex",
            [block],
            list(buffer_slot(node, buffer)),
            lambda st: reindex.reindex(st, node, buffer),
        )

    def transform_block_layout(self, block: BlockRV, index_map: Any) -> None:
        """Re-index the block's iteration space with ``index_map`` (a bijection)."""
        block = self._as_rv(block)
        node = self._block(block, "transform_block_layout")
        # the map's indices take the iter vars' dtype (int64 domains get int64 indices)
        dtype = str(node.iter_vars[0].var.dtype) if node.iter_vars else "int32"
        mapping = layout.as_index_map(index_map, 0, dtype)
        applied = resolve_rvs(mapping, self.get)
        self._apply(
            "transform_block_layout",
            [block],
            [mapping],
            lambda st: reindex.transform_block_layout(st, node, applied),
        )

    def storage_align(
        self, block: BlockRV, buffer_index: int, axis: int, factor: int, offset: int
    ) -> None:
        """Record TVM's ``buffer_dim_align`` annotation (not yet used by the lowering)."""
        block = self._as_rv(block)
        node = self._block(block, "storage_align")
        self._apply(
            "storage_align",
            [block],
            [int(plain(v)) for v in (buffer_index, axis, factor, offset)],
            lambda st: layout.storage_align(st, node, buffer_index, axis, factor, offset),
        )

    # -- blocks ------------------------------------------------------------------------
    def blockize(
        self, target: LoopRV | Sequence[BlockRV], preserve_unit_iters: bool = True
    ) -> BlockRV:
        """Wrap the loop's subtree in an outer block ``<name>_o``, or consecutive sibling
        blocks (a list) in one block ``outer_<names>_``."""
        if isinstance(target, (list, tuple)):
            from .blockize_blocks import blockize_blocks

            blocks = [self._as_rv(b) for b in target]
            nodes = [self._block(b, "blockize") for b in blocks]
            return self._apply(  # type: ignore[no-any-return]
                "blockize",
                [blocks],
                [bool(preserve_unit_iters)],
                lambda st: blockize_blocks(st, nodes, preserve_unit_iters),
            )
        loop = self._loop(target, "blockize")
        return self._apply(  # type: ignore[no-any-return]
            "blockize",
            [target],
            [bool(preserve_unit_iters)],
            lambda st: blockize.blockize(st, loop, preserve_unit_iters),
        )

    # -- annotations ---------------------------------------------------------------------
    def annotate(self, block_or_loop: BlockRV | LoopRV, ann_key: str, ann_val: Any) -> None:
        """Set annotation ``ann_key`` of a block or loop."""
        block_or_loop = self._as_rv(block_or_loop)
        node = self._block_or_loop(block_or_loop, "annotate")
        if not isinstance(ann_key, str):
            raise TypeError(f"annotate: ann_key must be a str, got {type(ann_key).__name__}")
        recorded = ann_val  # the trace keeps a sampled value's handle, so replay re-reads it
        if isinstance(ann_val, ExprRV):
            ann_val = self._table[ann_val]

        def action(st: ScheduleState) -> None:
            merged = dict(node.annotations)
            merged[ann_key] = ann_val
            self._replace_same(st, node, rebuild(node, {"annotations": merged}))

        self._apply(
            "annotate",
            [block_or_loop, recorded],
            [ann_key],
            action,
        )

    def unannotate(self, block_or_loop: BlockRV | LoopRV, ann_key: str) -> None:
        """Remove annotation ``ann_key`` of a block or loop."""
        block_or_loop = self._as_rv(block_or_loop)
        node = self._block_or_loop(block_or_loop, "unannotate")

        def action(st: ScheduleState) -> None:
            if ann_key not in node.annotations:
                raise ScheduleError(
                    "unannotate",
                    f"there is no annotation {ann_key!r}",
                    render_error(st.output(), [node]),
                )
            merged = {k: v for k, v in node.annotations.items() if k != ann_key}
            self._replace_same(st, node, rebuild(node, {"annotations": merged}))

        self._apply("unannotate", [block_or_loop], [ann_key], action)

    @staticmethod
    def _replace_same(st: ScheduleState, old: Block | For, new: Block | For) -> None:
        if isinstance(old, Block):
            realize = st.index.realize_of(old)
            assert isinstance(new, Block)
            st.replace(realize, rebuild(realize, {"block": new}), {old: new})
        else:
            st.replace(old, new, {old: new})

    # -- sampling ------------------------------------------------------------------------
    def sample_perfect_tile(
        self,
        loop: LoopRV,
        n: int,
        max_innermost_factor: int = 16,
        decision: Sequence[int] | None = None,
    ) -> list[ExprRV]:
        """``n`` factors whose product is the loop's extent, chosen at random (or given)."""
        from .sampling import perfect_tile

        node = self._loop(loop, "sample_perfect_tile")
        chosen = perfect_tile(node, n, max_innermost_factor, decision, self._rand)
        rvs = [ExprRV() for _ in chosen]
        for rv, value in zip(rvs, chosen):
            self._table[rv] = value
        self._record(
            "sample_perfect_tile",
            [loop],
            [int(n), int(max_innermost_factor)],
            list(rvs),
            list(chosen),
        )
        return rvs

    def sample_compute_location(self, block: BlockRV | str, decision: int | None = None) -> LoopRV:
        """A place to ``compute_at`` the block, drawn uniformly from TVM's candidates: a loop
        of its first consumer, or the root mark (decision -1, stay) or the inline mark (-2)."""
        from .compute_location import sample_location

        block = self._as_rv(block)
        node = self._block(block, "sample_compute_location")
        chosen, location = sample_location(self._state, node, decision, self._rand)
        rv = LoopRV()
        self._table[rv] = location
        if self._func_name is not None:
            self._owner[rv] = self._func_name
        self._record("sample_compute_location", [block], [], [rv], chosen)
        return rv

    def sample_categorical(
        self,
        candidates: Sequence[int],
        probs: Sequence[float],
        decision: int | None = None,
    ) -> ExprRV:
        """One of ``candidates`` drawn with ``probs`` (or the index ``decision``)."""
        from .sampling import categorical

        index = categorical(candidates, probs, decision, self._rand)
        rv = ExprRV()
        self._table[rv] = int(candidates[index])
        self._record(
            "sample_categorical",
            [],
            [[int(c) for c in plain(list(candidates))], [float(p) for p in plain(list(probs))]],
            [rv],
            index,
        )
        return rv

    def enter_postproc(self) -> None:
        """Mark the start of postprocessing in the trace (TVM's ``EnterPostproc``: what
        follows is dropped by ``remove_postproc=True``); the function is unchanged."""
        self._record("enter_postproc", [], [], [])
