"""Opaque accesses TVM's parser refuses in a block without ``T.reads``/``T.writes``: a
buffer's data pointer used itself (``A.data`` passed to a call) or
``T.tvm_access_ptr(..., A.data, ..., 3)``. Their regions cannot be inferred (TVM's
``ScriptComplete``: "Can not auto detect buffer access region ..."); the block frame reports
the statement using the pointer."""

from __future__ import annotations

from collections.abc import Sequence

from .ir import Block, Buffer, MatchBufferRegion, PrimExpr, Stmt, Var, post_order_visit
from .regions import _Detector

__all__ = ["opaque_use"]


def opaque_use(
    body: Stmt,
    init: Stmt | None,
    alloc_buffers: Sequence[Buffer],
    match_buffers: Sequence[MatchBufferRegion],
    visible: Sequence[Buffer] = (),
) -> tuple[Buffer, Stmt | None] | None:
    """A buffer the block body uses *opaquely* in TVM's sense, and the innermost statement
    using it: its data pointer itself (``A.data`` passed to a call) or
    ``T.tvm_access_ptr(..., A.data, ..., 3)`` (read and written). TVM cannot infer the
    regions of such a block and refuses it without ``T.reads``/``T.writes``; a pointer with
    mask 1 or 2 is a read or a write of the whole buffer and needs no annotation."""
    detector = _Detector(alloc_buffers, match_buffers, visible)
    parts = [p for p in (init, body) if p is not None]
    for part in parts:
        detector.visit_stmt(part)
    for key, var in [*detector.opaque_data.items(), *detector.rw_pointers.items()]:
        buffer = detector.by_data.get(key)
        if buffer is not None:
            return buffer, next((s for p in parts if (s := _user(p, var)) is not None), None)
    return None


def _user(stmt: Stmt, var: Var) -> Stmt | None:
    """The innermost statement (with a span) whose own expressions use ``var``."""
    for field_name in ("body", "then_case", "else_case", "seq"):
        value = getattr(stmt, field_name, None)
        children = value if isinstance(value, tuple) else (value,)
        for child in children:
            if isinstance(child, Stmt) and not isinstance(child, Block):
                found = _user(child, var)
                if found is not None:
                    return found
    hit = False

    def visit(node: object) -> None:
        nonlocal hit
        if node is var:
            hit = True

    for field_name in ("value", "condition", "indices", "extent", "min"):
        value = getattr(stmt, field_name, None)
        for expr in value if isinstance(value, tuple) else (value,):
            if isinstance(expr, PrimExpr):
                post_order_visit(expr, visit)
    return stmt if hit and stmt.span is not None else None
