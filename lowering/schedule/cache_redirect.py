"""Making blocks use the cache instead of the buffer: substituted whole, or, for a cache
compacted to the copied region (:func:`compactable`), with the region's start subtracted
from every index."""

from __future__ import annotations

from collections.abc import Sequence

from irbuilder.ir import (
    Block,
    Buffer,
    BufferLoad,
    BufferRegion,
    BufferStore,
    For,
    IntImm,
    PrimExpr,
    Stmt,
    StmtExprMutator,
    rebuild,
    structural_equal,
)
from lowering.analysis.substitute import Substituter
from lowering.arith import simplify_expr

from .analysis import mentions_any, uses_opaquely
from .cache_stage import is_zero
from .edit import refresh_regions
from .state import ScheduleState

__all__ = ["compactable", "redirect_accesses"]


def compactable(
    state: ScheduleState,
    scope_block: Block,
    holder: Stmt,
    region: BufferRegion,
    buffer: Buffer,
    users: Sequence[Block],
) -> bool:
    """TVM allocates a cache under a non-root block with the copied region's shape. Done
    when the region is the same in every iteration of the scope's loops around the copy
    (constant extents, a start free of those loops) and the blocks using the cache access
    the buffer only by loads and stores (indices can then be shifted)."""
    if scope_block is state.root:
        return False
    if not all(isinstance(r.extent, IntImm) for r in region.region):
        return False
    loops: dict[int, For] = {}
    for node in state.index.ancestors(holder):
        if node is scope_block:
            break
        if isinstance(node, For):
            loops[id(node.loop_var)] = node
    if any(mentions_any(r.min, loops) for r in region.region):
        return False
    return not any(uses_opaquely(user, buffer) for user in users)


class _Shift(StmtExprMutator):
    """Loads and stores of ``old`` read/write ``new`` at the indices minus ``mins``."""

    def __init__(self, old: Buffer, new: Buffer, mins: Sequence[PrimExpr]) -> None:
        self.old, self.new, self.mins = old, new, list(mins)

    def _shift(self, indices: Sequence[PrimExpr]) -> tuple[PrimExpr, ...]:
        return tuple(
            simplify_expr(self.visit_expr(i) - m) if not is_zero(m) else self.visit_expr(i)
            for i, m in zip(indices, self.mins)
        )

    def visit_buffer_load_(self, load: BufferLoad) -> PrimExpr:
        if load.buffer is self.old:
            return BufferLoad(self.new, self._shift(load.indices))
        return self.generic_mutate(load)

    def visit_buffer_store_(self, store: BufferStore) -> Stmt:
        if store.buffer is self.old:
            value = self.visit_expr(store.value)
            return BufferStore(self.new, value, self._shift(store.indices), span=store.span)
        return self.generic_mutate(store)


def redirect_accesses(
    state: ScheduleState,
    blocks: Sequence[Block],
    buffer: Buffer,
    cache: Buffer,
    region: BufferRegion | None,
) -> None:
    """Make ``blocks`` use ``cache`` for ``buffer`` (shifted by ``region``'s start when the
    cache is compacted)."""
    # A use of the data pointer (``T.tvm_access_ptr(..., A.data, offset, ...)``) follows
    # to the cache when both lay elements out alike (same shape, no strides or offset),
    # so that its flat offsets mean the same elements; otherwise it keeps the buffer.
    same_layout = (
        region is None
        and not buffer.strides
        and is_zero(buffer.elem_offset)
        and not cache.strides
        and is_zero(cache.elem_offset)
        and len(buffer.shape) == len(cache.shape)
        and all(structural_equal(a, b) for a, b in zip(buffer.shape, cache.shape))
    )
    vmap = {buffer.data: cache.data} if same_layout else {}
    for target in blocks:
        if region is None:
            new = Substituter(vmap=vmap, bmap={buffer: cache}).visit_stmt(target)
        else:
            new = _Shift(buffer, cache, [r.min for r in region.region]).visit_stmt(target)
        assert isinstance(new, Block)
        if not (vmap and uses_opaquely(target, buffer)):
            new = refresh_regions(new)
        # else: an opaque use is inferred as the whole buffer; the block keeps its declared
        # T.reads/T.writes, renamed to the cache, as TVM does (legality never reads them)
        realize = state.index.realize_of(target)
        state.replace(realize, rebuild(realize, {"block": new}), {target: new})
