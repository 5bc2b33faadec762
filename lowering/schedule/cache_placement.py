"""Where a cache stage goes in the scope block: the statement lists holding the blocks,
inserting the stage there and allocating its buffer in the scope block."""

from __future__ import annotations

from irbuilder.ir import (
    Allocate,
    Block,
    BlockRealize,
    Buffer,
    DeclBuffer,
    SeqStmt,
    Stmt,
    rebuild,
    seq,
)

from .state import ScheduleState

__all__ = [
    "allocate_buffer",
    "find_stage",
    "insert_at",
    "insert_stage",
    "place_stage",
    "resolve_block",
    "scope_items",
    "scope_seq",
    "split_point",
    "top_level_position",
]


def scope_seq(scope: Block) -> Stmt:
    """The scope block's statement list, below buffer declarations and allocations."""
    body = scope.body
    while isinstance(body, (Allocate, DeclBuffer)):
        body = body.body
    return body


def scope_items(scope: Block) -> list[Stmt]:
    body = scope_seq(scope)
    return list(body.seq) if isinstance(body, SeqStmt) else [body]


def top_level_position(state: ScheduleState, scope: Block, node: Stmt) -> int:
    """The position, in the scope block's statement list, of the statement holding ``node``."""
    items = scope_items(scope)
    for k, item in enumerate(items):
        if item is node or state.index.is_ancestor(item, node):
            return k
    raise ValueError("statement not found in its scope")


def split_point(state: ScheduleState, before: Block, after: Block) -> tuple[Stmt, int, int]:
    """The innermost SeqStmt holding both blocks, and the positions of the items holding
    each (callers check their order)."""
    index = state.index
    lower = index.realize_of(after)
    upper = index.realize_of(before)
    child: Stmt = lower
    for node in index.ancestors(lower):
        if node is upper or index.is_ancestor(node, upper):
            if not isinstance(node, SeqStmt):
                raise ValueError("no statement list holds both blocks")
            items = list(node.seq)
            up = next(
                k for k, it in enumerate(items) if it is upper or index.is_ancestor(it, upper)
            )
            low = next(k for k, it in enumerate(items) if it is child)
            return node, up, low
        child = node
    raise ValueError("blocks are not in one scope")


def insert_at(state: ScheduleState, holder: Stmt, position: int, stage: Stmt) -> None:
    """Insert ``stage`` as item ``position`` of ``holder`` (a SeqStmt or a single statement)."""
    items = list(holder.seq) if isinstance(holder, SeqStmt) else [holder]
    items.insert(position, stage)
    state.replace(holder, seq(items))


def insert_stage(
    state: ScheduleState, scope: Block, position: int, stage: Stmt, alloc: Buffer
) -> Block:
    """Insert ``stage`` as top-level statement ``position`` of ``scope``, which allocates
    ``alloc``; returns the new scope block."""
    insert_at(state, scope_seq(scope), position, stage)
    new_scope = resolve_block(state, scope)
    allocate_buffer(state, new_scope, alloc)
    return resolve_block(state, new_scope)


def place_stage(
    state: ScheduleState, holder: Stmt, position: int, stage: Stmt, scope: Block, cache: Buffer
) -> Block:
    """Insert ``stage`` as item ``position`` of ``holder`` (as edits since it was found left
    it), allocate ``cache`` in the ``scope`` block; returns the stage's block."""
    holder_now = state.resolve(holder)
    if holder_now is None and isinstance(holder, BlockRealize):
        # the holder is the one block realized in its scope (no loop around it), which the
        # redirection of its accesses rebuilt: its new realize stands where it stood
        holder_now = state.index.realize_of(resolve_block(state, holder.block))
    assert holder_now is not None
    insert_at(state, holder_now, position, stage)
    allocate_buffer(state, resolve_block(state, scope), cache)
    return find_stage(state, cache.name)


def allocate_buffer(state: ScheduleState, scope: Block, buffer: Buffer) -> None:
    new_scope = rebuild(scope, {"alloc_buffers": (*scope.alloc_buffers, buffer)})
    realize = state.index.realize_of(scope)
    state.replace(realize, rebuild(realize, {"block": new_scope}), {scope: new_scope})


def find_stage(state: ScheduleState, name: str) -> Block:
    found = [n for n in state.index.nodes.values() if isinstance(n, Block) and n.name_hint == name]
    assert len(found) == 1, "cache stage names are unique"
    return found[0]


def resolve_block(state: ScheduleState, node: Block) -> Block:
    found = state.resolve(node)
    assert isinstance(found, Block)
    return found
