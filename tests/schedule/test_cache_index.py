"""cache_index: index computations precomputed into buffers before the block (TVM's
resize programs at a smaller size), checked by structure and by running; the threshold
counts repetitions as TVM's common-subexpression tools count them."""

from __future__ import annotations

import pytest
from sched_checks import assert_schedule
from test_trace_kinds import _replays

from tvmscript import tir as T


@T.prim_func
def resize(A: T.Buffer((1, 3, 8, 8), "float32"), B: T.Buffer((1, 3, 16, 16), "float32")):
    for i0, i1, i2, i3 in T.grid(1, 3, 16, 16):
        with T.block("A"):
            n, c, vi, vj = T.axis.remap("SSSS", [i0, i1, i2, i3])
            B[n, c, vi, vj] = A[n, c, vi // 4 + vj // 4, vj // 2]


@T.prim_func
def resize_cached(A: T.Buffer((1, 3, 8, 8), "float32"), B: T.Buffer((1, 3, 16, 16), "float32")):
    index_var_0 = T.alloc_buffer([16, 16], dtype="int32")
    index_var_1 = T.alloc_buffer([16], dtype="int32", strides=[1])
    for ax0, ax1 in T.grid(16, 16):
        with T.block("index_0"):
            v0, v1 = T.axis.remap("SS", [ax0, ax1])
            T.reads()
            T.writes(index_var_0[v0, v1])
            index_var_0[v0, v1] = v0 // 4 + v1 // 4
    for ax0 in T.serial(16):
        with T.block("index_1"):
            v0 = T.axis.spatial(16, ax0)
            T.reads()
            T.writes(index_var_1[v0])
            index_var_1[v0] = v0 // 2
    for i0, i1, i2, i3 in T.grid(1, 3, 16, 16):
        with T.block("A"):
            n, c, vi, vj = T.axis.remap("SSSS", [i0, i1, i2, i3])
            T.reads(A[n, c, vi // 4 + vj // 4, vj // 2])
            T.writes(B[n, c, vi, vj])
            B[n, c, vi, vj] = A[n, c, index_var_0[vi, vj], index_var_1[vj]]


def test_resize():
    sch = T.Schedule(resize, debug_mask="all")
    stages = sch.cache_index(sch.get_block("A"), "global")
    assert [sch.get(b).name_hint for b in stages] == ["index_0", "index_1"]
    assert_schedule(resize, sch, resize_cached)
    assert str(sch.trace).splitlines()[-1] == (
        '  b1, b2 = sch.cache_index(block=b0, storage_scope="global", cse_thresh=0)'
    )
    _replays(resize, sch)


def _w(i):  # the bilinear source coordinate of output index ``i``
    return (T.Cast("float32", i) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5)


@T.prim_func
def bilinear(x: T.Buffer((1, 3, 4, 4), "float16"), resize: T.Buffer((1, 3, 8, 8), "float16")):
    for i0, i1, i2, i3 in T.grid(1, 3, 8, 8):
        with T.block("resize"):
            i0_1, i1_1, i2_1, i3_1 = T.axis.remap("SSSS", [i0, i1, i2, i3])
            T.reads(x[i0_1, i1_1, 0:4, 0:4])
            T.writes(resize[i0_1, i1_1, i2_1, i3_1])
            resize[i0_1, i1_1, i2_1, i3_1] = T.Cast("float16", (
                T.Cast("float32", x[i0_1, i1_1,
                  T.max(T.min(T.Cast("int32", T.floor((T.Cast("float32", i2_1) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5), dtype="float32")), 3), 0),  # noqa: E501
                  T.max(T.min(T.Cast("int32", T.floor((T.Cast("float32", i3_1) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5), dtype="float32")), 3), 0)])  # noqa: E501
                * (T.float32(1) - ((T.Cast("float32", i3_1) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5) - T.Cast("float32", T.Cast("int32", T.floor((T.Cast("float32", i3_1) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5), dtype="float32")))))  # noqa: E501
                + T.Cast("float32", x[i0_1, i1_1,
                  T.max(T.min(T.Cast("int32", T.floor((T.Cast("float32", i2_1) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5), dtype="float32")), 3), 0),  # noqa: E501
                  T.max(T.min(T.Cast("int32", T.floor((T.Cast("float32", i3_1) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5), dtype="float32")) + 1, 3), 0)])  # noqa: E501
                * ((T.Cast("float32", i3_1) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5) - T.Cast("float32", T.Cast("int32", T.floor((T.Cast("float32", i3_1) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5), dtype="float32"))))  # noqa: E501
            ) * (T.float32(1) - ((T.Cast("float32", i2_1) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5) - T.Cast("float32", T.Cast("int32", T.floor((T.Cast("float32", i2_1) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5), dtype="float32")))))  # noqa: E501
            + (
                T.Cast("float32", x[i0_1, i1_1,
                  T.max(T.min(T.Cast("int32", T.floor((T.Cast("float32", i2_1) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5), dtype="float32")) + 1, 3), 0),  # noqa: E501
                  T.max(T.min(T.Cast("int32", T.floor((T.Cast("float32", i3_1) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5), dtype="float32")), 3), 0)])  # noqa: E501
                * (T.float32(1) - ((T.Cast("float32", i3_1) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5) - T.Cast("float32", T.Cast("int32", T.floor((T.Cast("float32", i3_1) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5), dtype="float32")))))  # noqa: E501
                + T.Cast("float32", x[i0_1, i1_1,
                  T.max(T.min(T.Cast("int32", T.floor((T.Cast("float32", i2_1) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5), dtype="float32")) + 1, 3), 0),  # noqa: E501
                  T.max(T.min(T.Cast("int32", T.floor((T.Cast("float32", i3_1) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5), dtype="float32")) + 1, 3), 0)])  # noqa: E501
                * ((T.Cast("float32", i3_1) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5) - T.Cast("float32", T.Cast("int32", T.floor((T.Cast("float32", i3_1) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5), dtype="float32"))))  # noqa: E501
            ) * ((T.Cast("float32", i2_1) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5) - T.Cast("float32", T.Cast("int32", T.floor((T.Cast("float32", i2_1) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5), dtype="float32")))))  # noqa: E501


@T.prim_func
def bilinear_cached(x: T.Buffer((1, 3, 4, 4), "float16"),
                    resize: T.Buffer((1, 3, 8, 8), "float16")):
    index_var_0 = T.alloc_buffer([8], dtype="float32", strides=[1])
    index_var_1 = T.alloc_buffer([8], dtype="int32", strides=[1])
    index_var_2 = T.alloc_buffer([8], dtype="int32", strides=[1])
    for ax0 in T.serial(8):
        with T.block("index_0"):
            v0 = T.axis.spatial(8, ax0)
            T.reads()
            T.writes(index_var_0[v0])
            index_var_0[v0] = (T.Cast("float32", v0) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5) - T.Cast("float32", T.Cast("int32", T.floor((T.Cast("float32", v0) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5), dtype="float32")))  # noqa: E501
    for ax0 in T.serial(8):
        with T.block("index_1"):
            v0 = T.axis.spatial(8, ax0)
            T.reads()
            T.writes(index_var_1[v0])
            index_var_1[v0] = T.Cast("int32", T.floor((T.Cast("float32", v0) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5), dtype="float32"))  # noqa: E501
    for ax0 in T.serial(8):
        with T.block("index_2"):
            v0 = T.axis.spatial(8, ax0)
            T.reads()
            T.writes(index_var_2[v0])
            index_var_2[v0] = T.Cast("int32", T.floor((T.Cast("float32", v0) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5), dtype="float32"))  # noqa: E501
    for i0, i1, i2, i3 in T.grid(1, 3, 8, 8):
        with T.block("resize"):
            i0_1, i1_1, i2_1, i3_1 = T.axis.remap("SSSS", [i0, i1, i2, i3])
            T.reads(x[i0_1, i1_1, 0:4, 0:4])
            T.writes(resize[i0_1, i1_1, i2_1, i3_1])
            resize[i0_1, i1_1, i2_1, i3_1] = T.Cast("float16", (
                T.Cast("float32", x[i0_1, i1_1, T.max(T.min(index_var_1[i2_1], 3), 0), T.max(T.min(index_var_2[i3_1], 3), 0)]) * (T.float32(1) - index_var_0[i3_1])  # noqa: E501
                + T.Cast("float32", x[i0_1, i1_1, T.max(T.min(index_var_1[i2_1], 3), 0), T.max(T.min(index_var_2[i3_1] + 1, 3), 0)]) * index_var_0[i3_1]  # noqa: E501
            ) * (T.float32(1) - ((T.Cast("float32", i2_1) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5) - T.Cast("float32", index_var_1[i2_1])))  # noqa: E501
            + (
                T.Cast("float32", x[i0_1, i1_1, T.max(T.min(index_var_1[i2_1] + 1, 3), 0), T.max(T.min(index_var_2[i3_1], 3), 0)]) * (T.float32(1) - index_var_0[i3_1])  # noqa: E501
                + T.Cast("float32", x[i0_1, i1_1, T.max(T.min(index_var_1[i2_1] + 1, 3), 0), T.max(T.min(index_var_2[i3_1] + 1, 3), 0)]) * index_var_0[i3_1]  # noqa: E501
            ) * ((T.Cast("float32", i2_1) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5) - T.Cast("float32", index_var_1[i2_1])))  # noqa: E501


def test_bilinear_resize_with_threshold():
    sch = T.Schedule(bilinear, debug_mask="all")
    sch.cache_index(sch.get_block("resize"), "global", 4)
    assert_schedule(bilinear, sch, bilinear_cached)
    _replays(bilinear, sch)


def test_a_threshold_above_every_count_caches_nothing():
    sch = T.Schedule(resize, debug_mask="all")
    assert sch.cache_index(sch.get_block("A"), "global", 5) == []
    assert_schedule(resize, sch, resize)


def test_bad_scope_and_threshold_are_refused():
    sch = T.Schedule(resize, debug_mask="all")
    with pytest.raises(T.ScheduleError, match="is not a storage scope"):
        sch.cache_index(sch.get_block("A"), "elsewhere")
    with pytest.raises(T.ScheduleError, match="cse_thresh must not be negative"):
        sch.cache_index(sch.get_block("A"), "global", -1)
