"""cache_inplace: an in-place block works on a cache copied in before and back after each
instance; cache_read of a buffer read before its only writer runs (in loops running once)."""

from __future__ import annotations

import pytest
from sched_checks import assert_same_results, assert_schedule

from tvmscript import tir as T


@T.prim_func
def scale_rows(A: T.Buffer((4, 8), "float32")):
    for i in range(4):
        with T.block("scale"):
            vi = T.axis.spatial(4, i)
            for j in range(8):
                A[vi, j] = A[vi, j] * 2.0 + A[vi, 0]


@T.prim_func
def scale_rows_cached(A: T.Buffer((4, 8), "float32")):
    A_local = T.alloc_buffer((4, 8), scope="local")
    for i in range(4):
        for ax0, ax1 in T.grid(1, 8):
            with T.block("A_local"):
                v0 = T.axis.spatial(4, i + ax0)
                v1 = T.axis.spatial(8, ax1)
                A_local[v0, v1] = A[v0, v1]
        with T.block("scale"):
            vi = T.axis.spatial(4, i)
            for j in range(8):
                A_local[vi, j] = A_local[vi, j] * 2.0 + A_local[vi, 0]
        for ax0, ax1 in T.grid(1, 8):
            with T.block("A_local_1"):
                v0 = T.axis.spatial(4, i + ax0)
                v1 = T.axis.spatial(8, ax1)
                A[v0, v1] = A_local[v0, v1]


def test_copies_around_each_instance():
    sch = T.Schedule(scale_rows, debug_mask="all")
    copy_in, copy_out = sch.cache_inplace(sch.get_block("scale"), 0, "local")
    assert sch.get(copy_in).name_hint == "A_local"
    assert sch.get(copy_out).name_hint == "A_local_1"
    assert_schedule(scale_rows, sch, scale_rows_cached)


def test_a_block_that_only_reads_is_refused():
    @T.prim_func
    def reads_only(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        for i in range(8):
            with T.block("B"):
                vi = T.axis.spatial(8, i)
                B[vi] = A[vi]

    sch = T.Schedule(reads_only)
    with pytest.raises(T.ScheduleError, match="reads 'A' but does not write it"):
        sch.cache_inplace(sch.get_block("B"), 0, "local")


def test_a_pointer_into_a_strided_buffer_is_refused():
    @T.prim_func
    def strided(A: T.Buffer((4, 4), "int32", strides=(8, 1))):
        for _i in range(1):
            with T.block("ext"):
                T.reads(A[0:4, 0:4])
                T.writes(A[0:4, 0:4])
                T.evaluate(T.call_extern("int32", "work", A.data))

    sch = T.Schedule(strided)
    with pytest.raises(T.ScheduleError, match="has strides or an offset"):
        sch.cache_inplace(sch.get_block("ext"), 0, "local")


def _read_then_update(times: int):
    @T.prim_func
    def read_then_update(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        for t in range(times):  # noqa: B007  (its name is checked below)
            for i in range(8):
                with T.block("read"):
                    vi = T.axis.spatial(8, i)
                    B[vi] = B[vi] + A[vi]
            for i in range(8):
                with T.block("update"):
                    vi = T.axis.spatial(8, i)
                    A[vi] = A[vi] + 1.0

    return read_then_update


def test_cache_read_before_the_writer_needs_loops_running_once():
    # with t running twice, "read" sees A as "update" left it in the first iteration: a copy
    # of A at the start of the function would be stale
    sch = T.Schedule(_read_then_update(2), debug_mask="all")
    with pytest.raises(T.ScheduleError, match="does not run after 'update'"):
        sch.cache_read(sch.get_block("read"), 1, "global", [sch.get_block("read")])
    once = _read_then_update(1)
    sch = T.Schedule(once, debug_mask="all")
    sch.cache_read(sch.get_block("read"), 1, "global", [sch.get_block("read")])
    assert_same_results(once, sch)
    text = sch.mod["main"].script()
    # the copy is at the start, before the loop holding the writer
    assert text.index('T.block("A_global")') < text.index("for t in range(1)")
