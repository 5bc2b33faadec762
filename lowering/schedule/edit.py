"""Tree edits shared by primitives: removing a leaf block, dropping an allocation,
re-deriving a block's read/write regions."""

from __future__ import annotations

from irbuilder.ir import (
    Block,
    BlockRealize,
    Buffer,
    BufferLoad,
    BufferStore,
    For,
    PrimFunc,
    SeqStmt,
    Stmt,
    post_order_visit,
    rebuild,
    seq,
)
from irbuilder.regions import infer_regions

from .error import ScheduleError, render_error
from .state import ScheduleState, TreeIndex, visible_buffers

__all__ = ["leaf_root", "refresh_regions", "remove_leaf", "uses_buffer", "without_alloc"]


def refresh_regions(block: Block) -> Block:
    """``block`` with ``T.reads``/``T.writes`` re-inferred from its body."""
    # the function's buffers let a use of a data pointer name its buffer (as the parser's
    # inference does with the buffers in scope)
    reads, writes = infer_regions(
        block.body, block.init, block.alloc_buffers, block.match_buffers, visible_buffers()
    )
    return rebuild(block, {"reads": reads, "writes": writes})  # type: ignore[no-any-return]


def leaf_root(index: TreeIndex, block: Block) -> Stmt:
    """The outermost statement holding only ``block``: its realize and loops around it alone."""
    node: Stmt = index.realize_of(block)
    for parent in index.ancestors(node):
        if isinstance(parent, For) and parent.body is node:
            node = parent
            continue
        break
    return node


def remove_leaf(state: ScheduleState, block: Block, primitive: str) -> None:
    """Delete ``block`` with the loops that hold only it."""
    index = state.index
    node = leaf_root(index, block)
    parent = index.parent.get(id(node))
    if not isinstance(parent, SeqStmt):
        raise ScheduleError(
            primitive,
            f"block {block.name_hint!r} is the only statement of its scope and cannot be removed",
            render_error(state.output(), [block]),
        )
    rest = [s for s in parent.seq if s is not node]
    state.replace(parent, seq(rest))


def uses_buffer(stmt: Stmt, buffer: Buffer) -> bool:
    found = False

    def visit(node: object) -> None:
        nonlocal found
        if isinstance(node, (BufferLoad, BufferStore)) and node.buffer is buffer:
            found = True
        elif isinstance(node, Block) and (
            any(r.buffer is buffer for r in node.reads + node.writes)
        ):
            found = True

    post_order_visit(stmt, visit)
    return found


def without_alloc(state: ScheduleState, buffer: Buffer) -> None:
    """Drop ``buffer`` from the alloc_buffers that declare it (when nothing uses it)."""
    for node in list(state.index.nodes.values()):
        if isinstance(node, Block) and any(b is buffer for b in node.alloc_buffers):
            if uses_buffer(node.body, buffer):
                return
            new = rebuild(
                node, {"alloc_buffers": tuple(b for b in node.alloc_buffers if b is not buffer)}
            )
            realize = state.index.realize_of(node)
            state.replace(realize, rebuild(realize, {"block": new}), {node: new})
            return


def is_allocated(func: PrimFunc, index: TreeIndex, buffer: Buffer) -> bool:
    """Whether ``buffer`` is allocated by a block (not a parameter of the function)."""
    if any(b is buffer for b in func.buffer_map.values()):
        return False
    return any(
        isinstance(n, Block) and any(b is buffer for b in n.alloc_buffers)
        for n in index.nodes.values()
    )


def replace_block(state: ScheduleState, old: Block, new: Block) -> None:
    realize: BlockRealize = state.index.realize_of(old)
    state.replace(realize, rebuild(realize, {"block": new}), {old: new})
