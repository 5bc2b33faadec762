"""Storage scopes: the names TVM accepts (``check_scope``) and ``set_scope``, which moves an
allocated buffer (and its views) to another scope."""

from __future__ import annotations

from irbuilder.ir import (
    Block,
    Buffer,
    For,
    PrimExpr,
    Stmt,
    Var,
    make_data_var,
)
from lowering.analysis.substitute import Substituter

from .cache_checks import buffer_at
from .edit import is_allocated
from .error import fail
from .state import ScheduleState

__all__ = ["check_scope", "set_scope"]


# TVM's StorageScope ranks: a scope is one of these, or one of the first three followed by a
# ".tag" (e.g. "global.vtcm", "shared.dyn", "local.fragment").
_SCOPE_RANKS = ("global", "shared", "local")


_SCOPE_EXACT = (
    "",
    "warp",
    "wmma.matrix_a",
    "wmma.matrix_b",
    "wmma.accumulator",
    "metal.simdgroup",
)


def check_scope(state: ScheduleState, prim: str, scope: str, block: Block) -> None:
    if scope in _SCOPE_EXACT or scope in _SCOPE_RANKS:
        return
    if any(scope.startswith(rank + ".") for rank in _SCOPE_RANKS):
        return
    raise fail(state, prim, f"{scope!r} is not a storage scope", block)


def set_scope(
    state: ScheduleState, block: Block, buffer_index: int | str | Buffer, scope: str
) -> None:
    name = "set_scope"
    check_scope(state, name, scope, block)
    buffer = buffer_at(state, name, block.writes, buffer_index, "writes", block)
    if not is_allocated(state.func, state.index, buffer):
        raise fail(
            state,
            name,
            f"{buffer.name!r} is a parameter of the function; its scope is the caller's",
            block,
        )
    if buffer.scope == scope:
        return
    bmap = {buffer: _with_scope(buffer, scope)}
    # a view of the buffer (a block's match_buffer of it) lives in the same scope
    for node in state.index.nodes.values():
        if isinstance(node, Block):
            for match in node.match_buffers:
                if match.source.buffer is buffer:
                    bmap[match.buffer] = _with_scope(match.buffer, scope)
    # an opaque use of the data pointer (``A.access_ptr``, ``A.data``) follows the buffer
    vmap: dict[Var, PrimExpr] = {old.data: new.data for old, new in bmap.items()}
    sub = Substituter(vmap=vmap, bmap=bmap)
    root = state.func.body
    new_root = sub.visit_stmt(root)
    reuse: dict[Stmt, Stmt] = {}
    old_nodes = [n for n in state.index.nodes.values() if isinstance(n, (Block, For))]
    state.set_func(state.func.with_body(new_root))
    new_nodes = [n for n in state.index.nodes.values() if isinstance(n, (Block, For))]
    for old, new_node in zip(old_nodes, new_nodes):
        if old is not new_node:
            reuse[old] = new_node
    state.reuse.update({id(k): v for k, v in reuse.items()})
    state.keep.extend(reuse)


def _with_scope(buffer: Buffer, scope: str) -> Buffer:
    return Buffer(
        buffer.name,
        make_data_var(buffer.name, buffer.dtype, scope),
        buffer.shape,
        buffer.dtype,
        buffer.strides,
        buffer.elem_offset,
        scope,
        buffer.data_alignment,
        buffer.offset_factor,
        buffer.axis_separators,
    )
