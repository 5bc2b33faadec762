"""Loop primitives that keep each loop's indexing: reorder, add_unit_loop and the loop
kinds (parallel, vectorize, unroll, bind); split and fuse are :mod:`.split_fuse`.

Reorder, parallel, vectorize and bind change the order or run iterations at once; the blocks
below must tolerate it (:mod:`.loop_legality`). Unroll and add_unit_loop change nothing of
what runs.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from irbuilder.ir import (
    Block,
    For,
    ForKind,
    IntImm,
    IterKind,
    IterVar,
    Range,
    Stmt,
    Var,
    as_dtype,
    const,
    rebuild,
)
from lowering.analysis.vars import depends_on

from .error import fail
from .loop_legality import check_blocks_below
from .state import ScheduleState

__all__ = ["add_unit_loop", "reorder", "set_loop_kind"]


def reorder(state: ScheduleState, loops: Sequence[For]) -> list[For]:
    name = "reorder"
    if len({id(lp) for lp in loops}) != len(loops):
        raise fail(state, name, "a loop is listed twice", *loops)
    path = _chain(state, loops, name)
    path_vars = [lp.loop_var for lp in path]
    for loop in path:
        if any(depends_on(loop.min, v) or depends_on(loop.extent, v) for v in path_vars):
            raise fail(
                state,
                name,
                f"the range of loop {loop.loop_var.name!r} depends on another loop of the nest",
                loop,
            )
    check_blocks_below(state, path[0], name, moving=path_vars, parallel=False)
    listed = {id(lp) for lp in loops}
    queue = list(loops)
    order = [queue.pop(0) if id(lp) in listed else lp for lp in path]
    stmt = path[-1].body
    reuse: dict[Stmt, Stmt] = {}
    for source in reversed(order):
        stmt = rebuild(source, {"body": stmt})
        reuse[source] = stmt
    state.replace(path[0], stmt, reuse)
    return [reuse[lp] for lp in loops]  # type: ignore[misc]


def _chain(state: ScheduleState, loops: Sequence[For], name: str) -> list[For]:
    """The loops from the outermost to the innermost of ``loops``, each the next's parent."""
    index = state.index
    ordered = sorted(loops, key=lambda lp: index.order[id(lp)])
    top, bottom = ordered[0], ordered[-1]
    for loop in ordered[1:]:
        if not index.is_ancestor(top, loop):
            raise fail(state, name, "the loops are not nested in one another", *loops)
    path: list[For] = [bottom]
    for node in index.ancestors(bottom):
        if node is top:
            path.append(top)
            break
        if not isinstance(node, For):
            raise fail(
                state,
                name,
                "the loops are not in one chain of nested loops (a block or statement lies "
                "between them)",
                *loops,
            )
        path.append(node)
    else:
        raise fail(state, name, "the loops are not nested in one another", *loops)
    path.reverse()
    for outer, inner in itertools.pairwise(path):
        if outer.body is not inner:
            raise fail(
                state,
                name,
                f"loop {outer.loop_var.name!r} holds more than loop "
                f"{inner.loop_var.name!r}; reordering would change what runs around it",
                outer,
            )
    return path


def add_unit_loop(state: ScheduleState, target: Block | For) -> For:
    var = Var("u", as_dtype("int32"))
    node: Stmt = state.index.realize_of(target) if isinstance(target, Block) else target
    new = For(var, const(0), const(1), ForKind.SERIAL, node)
    state.replace(node, new)
    return new


_THREAD_TAGS = ("blockIdx.", "threadIdx.", "vthread")


def set_loop_kind(
    state: ScheduleState,
    loop: For,
    kind: ForKind,
    name: str,
    thread_axis: str | None = None,
) -> For:
    if kind in (ForKind.PARALLEL, ForKind.VECTORIZED, ForKind.THREAD_BINDING):
        if kind == ForKind.VECTORIZED and not isinstance(loop.extent, IntImm):
            raise fail(state, name, "a vectorized loop needs a constant extent", loop)
        check_blocks_below(
            state,
            loop,
            name,
            moving=[loop.loop_var],
            parallel=True,
            cross_thread=thread_axis is not None and thread_axis.startswith("threadIdx."),
        )
    binding = None
    if kind == ForKind.THREAD_BINDING:
        assert thread_axis is not None
        if not thread_axis.startswith(_THREAD_TAGS):
            raise fail(state, name, f"unknown thread axis {thread_axis!r}", loop)
        binding = IterVar(
            Var(thread_axis, loop.loop_var.dtype),
            Range(loop.min, loop.extent),
            IterKind.THREAD,
            thread_axis,
        )
    new = rebuild(loop, {"kind": kind, "thread_binding": binding})
    state.replace(loop, new, {loop: new})
    return new  # type: ignore[no-any-return]
