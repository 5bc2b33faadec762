"""TVM v0.16 calling conventions and legality found by running TVM's schedule tests
through a compatibility shim: blocks and buffers named by string, storage scopes
validated, overlapping (surjective) bindings reordered, big functions not interpreted."""

from __future__ import annotations

import pytest
from sched_checks import assert_same_results, assert_schedule

from tvmscript import tir as T
from tvmscript.schedule import MAX_CHECKED_INSTANCES, statement_instances


@T.prim_func
def scale_then_shift(A: T.Buffer((12, 6), "float32"), C: T.Buffer((12, 6), "float32")):
    tmp = T.alloc_buffer((12, 6))
    for i, j in T.grid(12, 6):
        with T.block("scale"):
            vi, vj = T.axis.remap("SS", [i, j])
            tmp[vi, vj] = A[vi, vj] * 3.0
    for i, j in T.grid(12, 6):
        with T.block("shift"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = tmp[vi, vj] - 1.0


@T.prim_func
def scale_then_shift_local(A: T.Buffer((12, 6), "float32"), C: T.Buffer((12, 6), "float32")):
    tmp = T.alloc_buffer((12, 6), scope="local")
    for i, j in T.grid(12, 6):
        with T.block("scale"):
            vi, vj = T.axis.remap("SS", [i, j])
            tmp[vi, vj] = A[vi, vj] * 3.0
    for i, j in T.grid(12, 6):
        with T.block("shift"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = tmp[vi, vj] - 1.0


@pytest.mark.parametrize("block", ["scale", None])
@pytest.mark.parametrize("buffer", ["tmp", 0])
def test_set_scope_by_names(block: str | None, buffer: str | int) -> None:
    sch = T.Schedule(scale_then_shift, debug_mask="all")
    sch.set_scope(block if block is not None else sch.get_block("scale"), buffer, "local")
    assert_schedule(scale_then_shift, sch, scale_then_shift_local)


def test_unknown_buffer_name_is_refused() -> None:
    sch = T.Schedule(scale_then_shift)
    with pytest.raises(T.ScheduleError, match="no buffer 'nope'"):
        sch.set_scope("scale", "nope", "local")


@pytest.mark.parametrize("scope", ["texture_thing", "globalx", "sharedmem"])
def test_unknown_scope_is_refused(scope: str) -> None:
    sch = T.Schedule(scale_then_shift)
    with pytest.raises(T.ScheduleError, match="is not a storage scope"):
        sch.set_scope("scale", 0, scope)
    with pytest.raises(T.ScheduleError, match="is not a storage scope"):
        sch.cache_read("shift", 0, scope)


def test_cache_read_by_buffer_name() -> None:
    sch = T.Schedule(scale_then_shift, debug_mask="all")
    by_index = T.Schedule(scale_then_shift)
    sch.cache_read("shift", "tmp", "shared.dyn")
    by_index.cache_read(by_index.get_block("shift"), 0, "shared.dyn")
    assert_schedule(scale_then_shift, sch, by_index.mod["main"])


@T.prim_func
def views(A: T.Buffer((8, 4), "float32"), C: T.Buffer((8, 4), "float32")):
    tmp = T.alloc_buffer((8, 4))
    for i, j in T.grid(8, 4):
        with T.block("put"):
            vi, vj = T.axis.remap("SS", [i, j])
            cell = T.match_buffer(tmp[vi, vj], [], offset_factor=1)
            cell[()] = A[vi, vj] + 2.0
    for i, j in T.grid(8, 4):
        with T.block("get"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = tmp[vi, vj] * 0.5


def test_set_scope_moves_match_buffer_views() -> None:
    sch = T.Schedule(views, debug_mask="all")
    sch.set_scope("put", 0, "local")
    func = sch.mod["main"]
    put = sch.get(sch.get_block("put"))
    assert put.match_buffers[0].buffer.scope == "local"
    assert put.match_buffers[0].source.buffer.scope == "local"
    assert "local" in func.script()
    assert_same_results(views, sch)


@T.prim_func
def rows_twice(A: T.Buffer((10, 3), "float32"), B: T.Buffer((10, 3), "float32")):
    # rows 2*a + b, a < 4 and b < 4: every row is written, some twice (the same value)
    for a, b, c in T.grid(4, 4, 3):
        with T.block("copy"):
            vi = T.axis.spatial(10, a * 2 + b)
            vj = T.axis.spatial(3, c)
            B[vi, vj] = A[vi, vj] - 4.0


@T.prim_func
def rows_twice_reordered(A: T.Buffer((10, 3), "float32"), B: T.Buffer((10, 3), "float32")):
    for a, c, b in T.grid(4, 3, 4):
        with T.block("copy"):
            vi = T.axis.spatial(10, a * 2 + b)
            vj = T.axis.spatial(3, c)
            B[vi, vj] = A[vi, vj] - 4.0


@T.prim_func
def every_fourth(A: T.Buffer((32, 3), "float32"), B: T.Buffer((32, 3), "float32")):
    for a, c in T.grid(8, 3):
        with T.block("copy"):
            vi = T.axis.spatial(32, a * 4)
            vj = T.axis.spatial(3, c)
            B[vi, vj] = A[vi, vj] - 4.0


def test_reorder_overlapping_cover() -> None:
    sch = T.Schedule(rows_twice, debug_mask="all")
    a, b, c = sch.get_loops(sch.get_block("copy"))
    sch.reorder(a, c, b)
    assert_schedule(rows_twice, sch, rows_twice_reordered)


def test_reorder_binding_with_gaps_is_refused() -> None:
    sch = T.Schedule(every_fourth)
    a, c = sch.get_loops(sch.get_block("copy"))
    with pytest.raises(T.ScheduleError, match="affine bindings"):
        sch.reorder(c, a)


def test_parallel_overlapping_cover_is_refused() -> None:
    sch = T.Schedule(rows_twice)
    b = sch.get_loops(sch.get_block("copy"))[1]
    with pytest.raises(T.ScheduleError):
        sch.parallel(b)


@T.prim_func
def big(A: T.Buffer((64, 64, 64), "float32"), B: T.Buffer((64, 64, 64), "float32")):
    for i, j, k in T.grid(64, 64, 64):
        with T.block("B"):
            vi, vj, vk = T.axis.remap("SSS", [i, j, k])
            B[vi, vj, vk] = A[vi, vj, vk] + 1.0


def test_big_functions_are_not_interpreted() -> None:
    assert statement_instances(scale_then_shift.body) < MAX_CHECKED_INSTANCES
    assert statement_instances(big.body) > MAX_CHECKED_INSTANCES
    sch = T.Schedule(big, debug_mask="all")
    i, _, k = sch.get_loops(sch.get_block("B"))
    sch.reorder(k, i)  # would take minutes in the interpreter
    assert [sch.get(lp).loop_var.name for lp in sch.get_loops(sch.get_block("B"))] == [
        "k",
        "j",
        "i",
    ]
