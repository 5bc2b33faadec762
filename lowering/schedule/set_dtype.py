"""``unsafe_set_dtype``: store an allocated buffer in another dtype (TVM v0.16's
UnsafeSetDType).

Every store into the buffer casts its value to the new dtype and every load casts back to
the old one, so the surrounding arithmetic keeps its types; values are only rounded (or
wrapped) by the narrower storage, which is why TVM calls the primitive unsafe. Views of the
buffer (match_buffers of its regions) take the new dtype too, with the same casts.
"""

from __future__ import annotations

from irbuilder.ir import (
    Block,
    Buffer,
    BufferLoad,
    BufferStore,
    Cast,
    DataType,
    For,
    PrimExpr,
    Stmt,
    StmtExprMutator,
    as_dtype,
    make_data_var,
    rebuild,
)

from .cache_checks import buffer_at
from .edit import is_allocated
from .error import fail
from .state import ScheduleState

__all__ = ["unsafe_set_dtype"]


def unsafe_set_dtype(state: ScheduleState, block: Block, buffer_index: int, dtype: str) -> None:
    name = "unsafe_set_dtype"
    buffer = buffer_at(state, name, block.writes, buffer_index, "writes", block)
    try:
        target = as_dtype(dtype)
    except (ValueError, TypeError, KeyError) as err:
        raise fail(state, name, f"{dtype!r} is not a data type ({err})", block) from None
    if buffer.dtype == target:  # TVM: nothing to do
        return
    if not is_allocated(state.func, state.index, buffer):
        raise fail(
            state,
            name,
            f"{buffer.name!r} is not allocated by a block (a parameter's dtype is the caller's)",
            block,
        )
    bmap = {buffer: _with_dtype(buffer, target)}
    # views of the buffer (and views of views) in the order the tree defines them
    for node in state.index.nodes.values():
        if isinstance(node, Block):
            for match in node.match_buffers:
                if match.source.buffer in bmap:
                    bmap[match.buffer] = _with_dtype(match.buffer, target)
    mutator = _DTypeRewriter(bmap, buffer.dtype, target)
    old_nodes = state.index.nodes
    new_body = mutator.visit_stmt(state.func.body)
    # the tree keeps its shape, so blocks and loops correspond in pre-order
    olds = [n for n in old_nodes.values() if _is_block_or_loop(n)]
    state.set_func(state.func.with_body(new_body))
    news = [n for n in state.index.nodes.values() if _is_block_or_loop(n)]
    for old, new in zip(olds, news):
        if old is not new:
            state.reuse[id(old)] = new
            state.keep.append(old)


def _is_block_or_loop(node: Stmt) -> bool:
    return isinstance(node, (Block, For))


def _with_dtype(buffer: Buffer, dtype: DataType) -> Buffer:
    return Buffer(
        buffer.name,
        make_data_var(buffer.name, dtype, buffer.scope),  # the pointer's element type changes
        buffer.shape,
        dtype,
        buffer.strides,
        buffer.elem_offset,
        buffer.scope,
        buffer.data_alignment,
        buffer.offset_factor,
        buffer.axis_separators,
    )


class _DTypeRewriter(StmtExprMutator):
    def __init__(self, bmap: dict[Buffer, Buffer], old: DataType, new: DataType) -> None:
        self.bmap = bmap
        self.old = old
        self.new = new

    def visit_buffer(self, buffer: Buffer) -> Buffer:
        return self.bmap.get(buffer, buffer)

    def visit_buffer_store_(self, store: BufferStore) -> Stmt:
        changed = self.generic_mutate(store)
        if store.buffer not in self.bmap:
            return changed
        return rebuild(changed, {"value": Cast(self.new, changed.value)})  # type: ignore[no-any-return]

    def visit_buffer_load_(self, load: BufferLoad) -> PrimExpr:
        changed = self.generic_mutate(load)
        if load.buffer not in self.bmap:
            return changed
        return Cast(self.old, changed)
