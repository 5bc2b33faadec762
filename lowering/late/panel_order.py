"""Panel-major order for column lanes under a parallel loop (used by
``vectorize_parallel_columns``).

A TVM user's dense layer written as a plain nest, ``for i in T.parallel(64): for j in
range(1000): acc = 0; for k in range(2048): acc += X[i, k] * W[j, k]``, runs its ``j`` in
column lanes over a transposed copy of ``W`` (``W_packed[k, j]``), rows jammed four at a
time::

    for i_jam in T.parallel(16):
        for j_lanes in range(62):         # 16 columns: a 2048 x 16 panel of W_packed
            <4 x 16 accumulators over k>
        <the leftover columns>

Each iteration of the parallel loop streams all of ``W_packed`` (8 MB) once: the weight
goes through memory sixteen times, and its panels are never reused from a cache. Since the
iterations of the parallel loop are independent (the race check's promise) and so are the
column groups (the column lanes were made under the same proof), every (row block, column
group) pair is, and any order computes the same numbers: run the groups in parallel, the row
blocks inside them, so that a panel (128 KB) stays in the L2 cache for all row blocks::

    for j_lanes in T.parallel(62):
        for i_jam in range(16):
            <4 x 16 accumulators over k>
    for i_jam in T.parallel(16):
        <the leftover columns>

Applied when what one parallel iteration reads independently of its variable, over all the
groups, exceeds :data:`PANEL_REREAD_BYTES` (it would not stay in a cache between
iterations), with at least :data:`MIN_PANEL_GROUPS` groups to share among the threads and
half as many as the parallel loop had. On
the Zen 2 host, two threads: set 13's ``dense_fc1000_b64`` (64 x 2048 -> 1000) 7.6 -> see
the measurements in docs/performance.md.
"""

from __future__ import annotations

from irbuilder.ir import (
    Allocate,
    BufferLoad,
    For,
    ForKind,
    IntImm,
    SeqStmt,
    Stmt,
    Var,
    post_order_visit,
    rebuild,
    seq,
)

from ..analysis.vars import depends_on
from ..transforms.unroll import copy_with_fresh_vars

__all__ = ["MIN_PANEL_GROUPS", "PANEL_REREAD_BYTES", "panel_major"]

PANEL_REREAD_BYTES = 4 << 20
"""Bytes a parallel iteration re-reads (the same for every iteration) above which they are
taken not to stay in a cache from one iteration to the next (a core's L2 is 0.5-2 MB, its
share of the L3 a few MB). Below it, re-reading from the L3 costs less than the row blocks'
re-reads panel-major order adds: a TVM user's 512^3 matmul (1 MB re-read) ran 5-10%
slower panel-major on the Zen 2 host, AVX2 code."""

MIN_PANEL_GROUPS = 8
"""Fewest column groups the threads then share (and at least half as many as the parallel
loop had iterations): AVX-512 code of the dense layer has 15 groups of 64 columns."""


def _shared_bytes(group_loop: For, var: Var) -> int:
    """Bytes the groups of ``group_loop`` read through loads that do not depend on ``var``
    (the parallel loop's variable) from memory they do not allocate: per load, its lanes
    times the constant extents of the loops around it inside a group, times the groups; the
    widest load of each buffer."""
    per_buffer: dict[int, int] = {}
    local: set[int] = set()  # a group's own scratch (its accumulators) is not re-read memory
    post_order_visit(group_loop.body,
                     lambda n: local.add(id(n.buffer_var)) if isinstance(n, Allocate) else None)

    def walk(stmt: Stmt, trips: int) -> None:
        if isinstance(stmt, For):
            extent = stmt.extent
            inner = trips * extent.value if isinstance(extent, IntImm) else trips
            walk(stmt.body, inner)
            return
        loads: list[BufferLoad] = []

        def visit(node: object) -> None:
            if isinstance(node, BufferLoad):
                loads.append(node)
            elif isinstance(node, For):
                raise _Nested(node)

        children = _children(stmt)
        if children is not None:
            for child in children:
                walk(child, trips)
            return
        post_order_visit(stmt, visit)
        for load in loads:
            if id(load.buffer.data) in local or any(depends_on(i, var) for i in load.indices):
                continue
            lanes = max(index.dtype.lanes for index in load.indices) if load.indices else 1
            size = trips * lanes * load.buffer.dtype.itemsize
            key = id(load.buffer.data)
            per_buffer[key] = max(per_buffer.get(key, 0), size)

    try:
        walk(group_loop.body, 1)
    except _Nested:
        return 0
    extent = group_loop.extent
    groups = extent.value if isinstance(extent, IntImm) else 1
    return sum(per_buffer.values()) * groups


class _Nested(Exception):
    """A loop inside a leaf statement (not reached through the statement walk)."""


def _children(stmt: Stmt) -> tuple[Stmt, ...] | None:
    """The statements directly inside ``stmt`` when it is a container, else None."""
    if isinstance(stmt, SeqStmt):
        return tuple(stmt.seq)
    body = getattr(stmt, "body", None)
    if isinstance(body, Stmt) and not isinstance(stmt, For):
        return (body,)
    return None


def panel_major(loop: For) -> Stmt | None:
    """``for i in T.parallel(m): for g in range(G): <tile>; <rest>`` as ``for g in
    T.parallel(G): for i in range(m): <tile>`` then ``for i in T.parallel(m): <rest>``
    (module doc), or None when it does not apply. The caller guarantees that the
    iterations of ``g`` are independent of each other, as the parallel loop's are."""
    if loop.kind is not ForKind.PARALLEL or loop.annotations or loop.thread_binding is not None:
        return None
    if not (isinstance(loop.extent, IntImm) and loop.extent.value >= 2):
        return None
    items = list(loop.body.seq) if isinstance(loop.body, SeqStmt) else [loop.body]
    groups = items[0]
    if not (
        isinstance(groups, For)
        and groups.kind is ForKind.SERIAL
        and not groups.annotations
        and isinstance(groups.extent, IntImm)
        and groups.extent.value >= max(MIN_PANEL_GROUPS, loop.extent.value // 2)
        and not depends_on(groups.min, loop.loop_var)
    ):
        return None
    if _shared_bytes(groups, loop.loop_var) <= PANEL_REREAD_BYTES:
        return None
    rows = For(loop.loop_var, loop.min, loop.extent, ForKind.SERIAL, groups.body,
               span=loop.span)
    panels: Stmt = For(groups.loop_var, groups.min, groups.extent, ForKind.PARALLEL, rows,
                       span=groups.span)
    if len(items) == 1:
        return panels
    rest = copy_with_fresh_vars(rebuild(loop, {"body": seq(items[1:])}))
    return SeqStmt((panels, rest), span=loop.span)
