"""unsafe_set_dtype: an allocated buffer stored in another dtype, stores cast to it and
loads cast back (views of it too); parameters and bad indices are refused."""

from __future__ import annotations

import numpy as np
import pytest
from sched_checks import assert_schedule, assert_structure, scheduled
from test_trace_kinds import _replays

import tvmscript
from tvmscript import tir as T


@T.prim_func
def element_wise(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16), dtype="float32")
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * 2.0
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + 1.0


@T.prim_func
def element_wise_f16(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16), "float16")
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[vi, vj])
            T.writes(B[vi, vj])
            B[vi, vj] = T.cast(A[vi, vj] * 2.0, "float16")
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(B[vi, vj])
            T.writes(C[vi, vj])
            C[vi, vj] = T.cast(B[vi, vj], "float32") + 1.0


@T.prim_func
def views(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16), dtype="float32")
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B0 = T.match_buffer(B[vi, vj], [], offset_factor=1)
            B0[()] = A[vi, vj] * 2.0
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            B1 = T.match_buffer(B[vi, vj], [], offset_factor=1)
            C[vi, vj] = B1[()] + 1.0


@T.prim_func
def views_f16(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16), "float16")
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[vi, vj])
            T.writes(B[vi, vj])
            B0 = T.match_buffer(B[vi, vj], (), "float16", offset_factor=1)
            B0[()] = T.cast(A[vi, vj] * 2.0, "float16")
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(B[vi, vj])
            T.writes(C[vi, vj])
            B1 = T.match_buffer(B[vi, vj], (), "float16", offset_factor=1)
            C[vi, vj] = T.cast(B1[()], "float32") + 1.0


def _run(func, a):
    c = np.zeros((16, 16), "float32")
    tvmscript.build(func, target="interp")(a, c)
    return c


@pytest.mark.parametrize("by_name", [False, True])
def test_float16_storage(by_name):
    sch = T.Schedule(element_wise, debug_mask="none")
    sch.unsafe_set_dtype("B" if by_name else sch.get_block("B"), 0, "float16")
    assert_structure(sch, element_wise_f16)
    assert str(sch.trace).splitlines()[-1] == (
        '  sch.unsafe_set_dtype(block=b0, buffer_index=0, dtype="float16")'
    )
    _replays(element_wise, sch)
    # the values pass through float16 storage: rounded as numpy rounds them
    a = np.random.default_rng(0).uniform(-100, 100, (16, 16)).astype("float32")
    want = (a * 2).astype("float16").astype("float32") + 1
    np.testing.assert_array_equal(_run(scheduled(sch), a), want)


def test_views_take_the_dtype_too():
    sch = T.Schedule(views)
    sch.unsafe_set_dtype(sch.get_block("B"), 0, "float16")
    assert_structure(sch, views_f16)
    a = np.random.default_rng(1).uniform(-8, 8, (16, 16)).astype("float32")
    want = (a * 2).astype("float16").astype("float32") + 1
    np.testing.assert_array_equal(_run(scheduled(sch), a), want)


def test_same_dtype_changes_nothing():
    sch = T.Schedule(element_wise, debug_mask="all")
    sch.unsafe_set_dtype(sch.get_block("B"), "B", "float32")
    assert_schedule(element_wise, sch, element_wise)


def test_wider_storage_keeps_the_results():
    sch = T.Schedule(element_wise, debug_mask="all")  # checked against the original by running
    sch.unsafe_set_dtype(sch.get_block("B"), 0, "float64")
    assert str(sch.get(sch.get_block("B")).writes[0].buffer.dtype) == "float64"


def test_a_parameter_is_refused():
    sch = T.Schedule(element_wise, debug_mask="all")
    with pytest.raises(T.ScheduleError, match="'C' is not allocated by a block"):
        sch.unsafe_set_dtype(sch.get_block("C"), 0, "float16")
    assert_schedule(element_wise, sch, element_wise)


@pytest.mark.parametrize("index", [1, -1])
def test_an_index_out_of_range_is_refused(index):
    sch = T.Schedule(element_wise, debug_mask="all")
    with pytest.raises(T.ScheduleError):
        sch.unsafe_set_dtype(sch.get_block("B"), index, "float64")


def test_not_a_dtype_is_refused():
    sch = T.Schedule(element_wise, debug_mask="all")
    with pytest.raises(T.ScheduleError, match="is not a data type"):
        sch.unsafe_set_dtype(sch.get_block("B"), 0, "float17")


def test_later_primitives_are_checked_against_the_narrowed_function():
    # debug_mask="all" compares each primitive's result with a reference by running both:
    # after the unsafe primitive the reference is the function it left, not the original
    sch = T.Schedule(element_wise, debug_mask="all")
    sch.unsafe_set_dtype(sch.get_block("B"), 0, "float16")
    i, _ = sch.get_loops(sch.get_block("C"))
    sch.split(i, [4, 4])
    sch.compute_inline(sch.get_block("B"))
    a = np.random.default_rng(2).uniform(-100, 100, (16, 16)).astype("float32")
    want = (a * 2).astype("float16").astype("float32") + 1
    np.testing.assert_array_equal(_run(scheduled(sch), a), want)
    # a copy keeps its own reference
    other = sch.copy()
    other.reorder(*other.get_loops(other.get_block("C"))[::-1])
