"""transform_layout and set_axis_separator of an allocated buffer that blocks view through
T.match_buffer: the allocation is rewritten in place, the views' source regions follow the
index map, and the views take the buffer's axis separators (TVM's set_axis_separator)."""

from __future__ import annotations

import numpy as np
import pytest
from sched_checks import assert_same_results, assert_schedule, scheduled

import tvmscript
from irbuilder.ir import PrimFunc, assert_structural_equal
from lowering.schedule import BufferArgumentError
from tvmscript import tir as T
from tvmscript.tir import ScheduleError


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
def row_views(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16), dtype="float32")
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            B0 = T.match_buffer(B[vi, 0:16], [16], offset_factor=1)
            for j in range(16):
                B0[j] = A[vi, j] * 2.0
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + 1.0


def _sch(func: PrimFunc) -> T.Schedule:
    return T.Schedule(func, debug_mask="all")


def _runs_on_llvm(original: PrimFunc, sch: T.Schedule) -> None:
    rng = np.random.default_rng(1)
    a = rng.standard_normal((16, 16)).astype("float32")
    want = np.zeros((16, 16), "float32")
    tvmscript.build(original, target="interp")(a, want)
    got = np.zeros((16, 16), "float32")
    tvmscript.build(scheduled(sch), target="llvm -mcpu=znver3")(a, got)
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_transpose_maps_the_views_sources():
    @T.prim_func
    def expected(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
        B = T.alloc_buffer((16, 16), dtype="float32")
        for i, j in T.grid(16, 16):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj])
                T.writes(B[vj, vi])
                B0 = T.match_buffer(B[vj, vi], [], offset_factor=1)
                B0[()] = A[vi, vj] * 2.0
        for i, j in T.grid(16, 16):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(B[vj, vi])
                T.writes(C[vi, vj])
                B1 = T.match_buffer(B[vj, vi], [], offset_factor=1)
                C[vi, vj] = B1[()] + 1.0

    sch = _sch(views)
    sch.transform_layout("B", ("write", 0), lambda i, j: (j, i))
    assert_schedule(views, sch, expected)
    # the allocation itself is the new buffer (no second, unallocated one)
    got = scheduled(sch)
    root = got.body.block
    view = root.body.seq[0].body.body.block.match_buffers[0]
    assert view.source.buffer is root.alloc_buffers[0]
    _runs_on_llvm(views, sch)


def test_split_map_maps_the_views_sources():
    @T.prim_func
    def expected(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
        B = T.alloc_buffer((16, 4, 4), dtype="float32")
        for i, j in T.grid(16, 16):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj])
                T.writes(B[vi, vj // 4, vj % 4])
                B0 = T.match_buffer(B[vi, vj // 4, vj % 4], [], offset_factor=1)
                B0[()] = A[vi, vj] * 2.0
        for i, j in T.grid(16, 16):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(B[vi, vj // 4, vj % 4])
                T.writes(C[vi, vj])
                B1 = T.match_buffer(B[vi, vj // 4, vj % 4], [], offset_factor=1)
                C[vi, vj] = B1[()] + 1.0

    sch = _sch(views)
    sch.transform_layout("C", ("read", 0), lambda i, j: (i, j // 4, j % 4))
    assert_schedule(views, sch, expected)
    _runs_on_llvm(views, sch)


def test_a_view_of_a_row_is_refused_under_a_moving_map():
    sch = _sch(row_views)
    before = scheduled(sch)
    with pytest.raises(ScheduleError, match="over a region of more than one element"):
        sch.transform_layout("C", ("read", 0), lambda i, j: (j, i))
    assert scheduled(sch) is before


@T.prim_func
def subregion_separated(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer([16, 16], dtype="float32", axis_separators=[1])
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B0 = T.match_buffer(B[vi, vj], [], offset_factor=1, axis_separators=[1])
            B0[()] = A[vi, vj] * 2.0
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            B1 = T.match_buffer(B[vi, vj], [], offset_factor=1, axis_separators=[1])
            C[vi, vj] = B1[()] + 1.0


def test_set_axis_separator_gives_the_views_the_separators():
    sch = _sch(views)
    sch.set_axis_separator(sch.get_block("B"), ("write", 0), [1])
    # the CPU backend refuses axis separators, so only the interpreter's results compare
    assert_schedule(views, sch, subregion_separated)


def test_transform_layout_with_a_separator_keeps_the_views_regions():
    sch = _sch(views)
    sch.transform_layout("B", "B", lambda i, j: [i, T.IndexMap.AXIS_SEPARATOR, j])
    assert_structural_equal(
        scheduled(sch), subregion_separated.with_attr("global_symbol", scheduled(sch).name)
    )
    assert_same_results(views, sch)


def test_a_row_view_keeps_its_region_under_a_separator_map():
    sch = _sch(row_views)
    sch.transform_layout("C", ("read", 0), lambda i, j: [i, T.IndexMap.AXIS_SEPARATOR, j])
    got = scheduled(sch)
    view = got.body.block.body.seq[0].body.block.match_buffers[0]
    assert view.source.buffer is got.body.block.alloc_buffers[0]
    assert view.buffer.axis_separators == (1,)
    assert_same_results(row_views, sch)


@pytest.mark.parametrize(
    "buffer",
    [("write", 1), ("read", -1), ("read", 5), ("both", 0), "D", views.buffer_map[views.params[1]]],
)
def test_set_axis_separator_bad_buffer_argument(buffer):
    # TVM checks this argument with an assert in its Python wrapper: AssertionError there,
    # a ScheduleError (the IR unchanged) here; the error is both
    sch = _sch(views)
    before = scheduled(sch)
    with pytest.raises(AssertionError) as caught:
        sch.set_axis_separator(sch.get_block("B"), buffer, [1])
    assert isinstance(caught.value, ScheduleError)
    assert str(caught.value).startswith("ScheduleError: set_axis_separator: ")
    assert scheduled(sch) is before


def test_bad_buffer_argument_keeps_its_class_at_every_render_level():
    for level in ("none", "fast", "detail"):
        sch = T.Schedule(views, error_render_level=level)
        with pytest.raises(BufferArgumentError, match=r"has no buffer at \('write', 1\)|not rend"):
            sch.transform_layout("B", ("write", 1), lambda i, j: (j, i))


def test_an_integer_index_of_set_scope_stays_a_plain_schedule_error():
    # TVM checks set_scope's integer index in C++: a ScheduleError, as here
    sch = _sch(views)
    with pytest.raises(ScheduleError) as caught:
        sch.set_scope(sch.get_block("B"), 1, "shared")
    assert not isinstance(caught.value, AssertionError)
