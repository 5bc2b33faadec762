"""transform_layout (index maps as lambdas, TVM's IndexMap) and storage_align."""

from __future__ import annotations

import json

import numpy as np

import pytest
from sched_checks import assert_schedule, scheduled

import tvmscript
from irbuilder.ir import structural_equal
from tvmscript import tir as T


@T.prim_func
def two_stage(A: T.Buffer((16, 8), "float32"), C: T.Buffer((16, 8), "float32")):
    B = T.alloc_buffer((16, 8))
    for i, j in T.grid(16, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * 2.0
    for i, j in T.grid(16, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + 1.0


@T.prim_func
def tiled(A: T.Buffer((16, 8), "float32"), C: T.Buffer((16, 8), "float32")):
    B = T.alloc_buffer((2, 16, 4))
    for i, j in T.grid(16, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vj // 4, vi, vj % 4] = A[vi, vj] * 2.0
    for i, j in T.grid(16, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vj // 4, vi, vj % 4] + 1.0


def _sch(func):
    return T.Schedule(func, debug_mask="all")


@pytest.mark.parametrize(
    "index_map",
    [
        lambda i, j: (j // 4, i, j % 4),
        T.IndexMap.from_func(lambda i, j: (j // 4, i, j % 4)),
    ],
)
def test_transform_layout(index_map):
    sch = _sch(two_stage)
    sch.transform_layout(sch.get_block("B"), ("write", 0), index_map)
    assert_schedule(two_stage, sch, tiled)


def test_transform_layout_by_name_and_read_side():
    sch = _sch(two_stage)
    sch.transform_layout(sch.get_block("C"), "B", lambda i, j: (j // 4, i, j % 4))
    assert_schedule(two_stage, sch, tiled)


def test_transform_layout_refusals():
    sch = _sch(two_stage)
    block = sch.get_block("B")
    with pytest.raises(T.ScheduleError, match="not an injective layout"):
        sch.transform_layout(block, ("write", 0), lambda i, j: (i, j // 2))
    with pytest.raises(T.ScheduleError, match="not an injective layout"):
        sch.transform_layout(block, ("write", 0), lambda i, j: (i + j, j))
    with pytest.raises(T.ScheduleError, match="takes 3 indices"):
        sch.transform_layout(block, ("write", 0), lambda i, j, k: (i, j, k))
    assert structural_equal(scheduled(sch), two_stage)


def test_transform_layout_trace_round_trip():
    sch = _sch(two_stage)
    sch.transform_layout(sch.get_block("B"), ("write", 0), lambda i, j: (j // 4, i, j % 4))
    namespace = {"T": T}
    exec(str(sch.trace), namespace)
    replayed = T.Schedule(two_stage)
    namespace["apply_trace"](replayed)
    assert structural_equal(scheduled(replayed), scheduled(sch))
    again = T.Schedule(two_stage)
    T.Trace.apply_json_to_schedule(json.dumps(sch.trace.as_json()), again)
    assert structural_equal(scheduled(again), scheduled(sch))


def test_storage_align_annotation():
    @T.prim_func
    def expected(A: T.Buffer((16, 8), "float32"), C: T.Buffer((16, 8), "float32")):
        B = T.alloc_buffer((16, 8))
        for i, j in T.grid(16, 8):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.block_attr({"buffer_dim_align": [[0, 0, 16, 4]]})
                B[vi, vj] = A[vi, vj] * 2.0
        for i, j in T.grid(16, 8):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vi, vj] + 1.0

    sch = _sch(two_stage)
    sch.storage_align(sch.get_block("B"), 0, 0, 16, 4)
    assert_schedule(two_stage, sch, expected)
    with pytest.raises(T.ScheduleError, match="0 <= offset < factor"):
        sch.storage_align(sch.get_block("B"), 0, 0, 16, 16)
    with pytest.raises(T.ScheduleError, match="parameter of the function"):
        sch.storage_align(sch.get_block("C"), 0, 0, 16, 4)


def test_index_map_shape_and_inverse():
    index_map = T.IndexMap.from_func(lambda i, j: (j // 4, i, j % 4))
    assert index_map.map_shape((16, 8)) == [2, 16, 4]
    inverse = index_map.inverse((16, 8))
    for i, j in [(0, 0), (5, 7), (15, 3)]:
        forward = [x for x in index_map.map_indices([T.int32(i), T.int32(j)])]
        back = inverse.map_indices(forward)
        from lowering.arith import simplify_expr

        assert [simplify_expr(b).value for b in back] == [i, j]
    with pytest.raises(ValueError, match="not a bijection"):
        T.IndexMap.from_func(lambda i, j: (i + j,)).map_shape((4, 4))


@T.prim_func
def scalar_total(A: T.Buffer((16, 16), "float32"), C: T.Buffer((), "float32")):
    for i, k in T.grid(16, 16):
        with T.block("C"):
            vi, vk = T.axis.remap("RR", [i, k])
            with T.init():
                C[()] = T.float32(0)
            C[()] = C[()] + A[vi, vk]


def test_identity_layout_of_a_0d_parameter_is_checked_by_running_it() -> None:
    # debug_mask="all" runs the function in the parameter's new layout: a 0-d array
    sch = T.Schedule(scalar_total, debug_mask="all")
    sch.transform_layout("C", ("write", 0), lambda: ())
    a = np.random.default_rng(0).random((16, 16)).astype("float32")
    got, want = np.zeros((), "float32"), np.zeros((), "float32")
    tvmscript.build(sch.mod["main"], target="interp")(a, got)
    tvmscript.build(scalar_total, target="interp")(a, want)
    assert got == want
