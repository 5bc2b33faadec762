"""merge: loop nests of equal shape under one scope become one nest running their bodies
in turn at the given loops' level; nests of other depths, extents, scopes, or with loops
not starting at 0 or not perfectly nested are refused."""

from __future__ import annotations

import pytest
from sched_checks import assert_schedule, assert_structure
from test_trace_kinds import _replays

from tvmscript import tir as T


@T.prim_func
def elementwise(A: T.Buffer((32, 32), "float32"), C: T.Buffer((32, 32), "float32"),
                D: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((32, 32))
    for i, j in T.grid(32, 32):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i_0, j_0, i_1, j_1 in T.grid(4, 4, 8, 8):
        with T.block("C"):
            vi = T.axis.spatial(32, i_0 * 8 + i_1)
            vj = T.axis.spatial(32, j_0 * 8 + j_1)
            C[vi, vj] = B[vi, vj] + T.float32(1)
    for i_0, j_0, i_1, j_1 in T.grid(4, 4, 4, 4):
        with T.block("D"):
            vi = T.axis.spatial(16, i_0 * 4 + i_1)
            vj = T.axis.spatial(16, j_0 * 4 + j_1)
            D[vi, vj] = B[vi, vj] + T.float32(2)


@T.prim_func
def merged_outer(A: T.Buffer((32, 32), "float32"), C: T.Buffer((32, 32), "float32"),
                 D: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((32, 32))
    for i, j in T.grid(32, 32):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i_0_m in range(4):
        for j_0, i_1, j_1 in T.grid(4, 8, 8):
            with T.block("C"):
                vi = T.axis.spatial(32, i_0_m * 8 + i_1)
                vj = T.axis.spatial(32, j_0 * 8 + j_1)
                C[vi, vj] = B[vi, vj] + T.float32(1)
        for j_0, i_1, j_1 in T.grid(4, 4, 4):
            with T.block("D"):
                vi = T.axis.spatial(16, i_0_m * 4 + i_1)
                vj = T.axis.spatial(16, j_0 * 4 + j_1)
                D[vi, vj] = B[vi, vj] + T.float32(2)


@T.prim_func
def merged_two_levels(A: T.Buffer((32, 32), "float32"), C: T.Buffer((32, 32), "float32"),
                      D: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((32, 32))
    for i, j in T.grid(32, 32):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i_0_m, j_0_m in T.grid(4, 4):
        for i_1, j_1 in T.grid(8, 8):
            with T.block("C"):
                vi = T.axis.spatial(32, i_0_m * 8 + i_1)
                vj = T.axis.spatial(32, j_0_m * 8 + j_1)
                C[vi, vj] = B[vi, vj] + T.float32(1)
        for i_1, j_1 in T.grid(4, 4):
            with T.block("D"):
                vi = T.axis.spatial(16, i_0_m * 4 + i_1)
                vj = T.axis.spatial(16, j_0_m * 4 + j_1)
                D[vi, vj] = B[vi, vj] + T.float32(2)


def test_merge_outer_loops():
    sch = T.Schedule(elementwise, debug_mask="all")
    c, d = sch.get_block("C"), sch.get_block("D")
    loop = sch.merge(sch.get_loops(c)[0], sch.get_loops(d)[0])
    assert_schedule(elementwise, sch, merged_outer)
    assert sch.get(loop).loop_var.name == "i_0_m"
    # the blocks' handles follow them into the merged nest
    assert [lp.loop_var.name for lp in map(sch.get, sch.get_loops(d))] == [
        "i_0_m", "j_0", "i_1", "j_1"
    ]
    assert str(sch.trace).splitlines()[-2] == "  l10 = sch.merge(l2, l6)"
    _replays(elementwise, sch)


def test_merge_second_level():
    sch = T.Schedule(elementwise, debug_mask="all")
    c, d = sch.get_block("C"), sch.get_block("D")
    loop = sch.merge(sch.get_loops(c)[1], sch.get_loops(d)[1])
    assert_schedule(elementwise, sch, merged_two_levels)
    assert sch.get(loop).loop_var.name == "j_0_m"
    _replays(elementwise, sch)


def test_a_list_of_loops_is_accepted():
    sch = T.Schedule(elementwise, debug_mask="all")
    sch.merge([sch.get_loops("C")[0], sch.get_loops("D")[0]])
    assert_structure(sch, merged_outer)


def _refused(func, pick, match):
    sch = T.Schedule(func, debug_mask="all")
    with pytest.raises(T.ScheduleError, match=match):
        sch.merge(*pick(sch))
    assert_schedule(func, sch, func)


def test_not_the_only_child_is_refused():
    @T.prim_func
    def with_seq(A: T.Buffer((8, 8, 8), "float32"), C: T.Buffer((8, 8, 8), "float32")):
        B = T.alloc_buffer((8, 8, 8))
        D = T.alloc_buffer((8, 8, 8))
        for i, j in T.grid(8, 8):
            for k in range(8):
                with T.block("D"):
                    vi, vj, vk = T.axis.remap("SSS", [i, j, k])
                    D[vi, vj, vk] = A[vi, vj, vk] * 2.0
            for k in range(8):
                with T.block("B"):
                    vi, vj, vk = T.axis.remap("SSS", [i, j, k])
                    B[vi, vj, vk] = A[vi, vj, vk] * 2.0
        for i, j, k in T.grid(8, 8, 8):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSS", [i, j, k])
                C[vi, vj, vk] = B[vi, vj, vk] * 2.0

    _refused(with_seq, lambda s: (s.get_loops("B")[2], s.get_loops("C")[2]),
             "is not the only statement directly inside loop 'j'")


def _two_nests(b_min: int, b_extent: int):
    @T.prim_func
    def two(A: T.Buffer((16, 8, 8), "float32"), C: T.Buffer((16, 8, 8), "float32")):
        B = T.alloc_buffer((16, 8, 8))
        for i, j in T.grid(b_extent, 8):
            for k in range(b_min, 8):
                with T.block("B"):
                    vi, vj, vk = T.axis.remap("SSS", [i, j, k])
                    B[vi, vj, vk] = A[vi, vj, vk] * 2.0
        for i, j, k in T.grid(16, 8, 8):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSS", [i, j, k])
                C[vi, vj, vk] = A[vi, vj, vk] * 2.0

    return two


def test_a_loop_not_starting_at_zero_is_refused():
    _refused(_two_nests(1, 16), lambda s: (s.get_loops("B")[2], s.get_loops("C")[2]),
             "loop 'k' does not start at 0")


def test_different_extents_are_refused():
    _refused(_two_nests(0, 8), lambda s: (s.get_loops("B")[2], s.get_loops("C")[2]),
             "do not have the same extent")


def test_different_levels_are_refused():
    _refused(_two_nests(0, 16), lambda s: (s.get_loops("B")[1], s.get_loops("C")[2]),
             "must have the same depth")


def test_different_scopes_are_refused():
    @T.prim_func
    def scoped(A: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
        B = T.alloc_buffer((8, 8))
        with T.block("outer"):
            for i, j in T.grid(8, 8):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B[vi, vj] = A[vi, vj] * 2.0
        for i, j in T.grid(8, 8):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = A[vi, vj] * 2.0

    _refused(scoped, lambda s: (s.get_loops("B")[1], s.get_loops("C")[1]),
             "not under the same block scope")


def test_nested_or_repeated_loops_are_refused():
    _refused(elementwise, lambda s: (s.get_loops("C")[0], s.get_loops("C")[1]),
             "holds another of the merged loops")
    _refused(elementwise, lambda s: (s.get_loops("C")[0],), "at least two distinct loops")


def test_a_dependence_broken_by_the_merge_is_reported_under_debug():
    @T.prim_func
    def pad16(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
        B = T.alloc_buffer((17,))
        for i in range(16):
            with T.block("B"):
                vi = T.axis.spatial(16, i)
                B[vi] = A[vi] + 1.0
        for i in range(16):
            with T.block("C"):
                vi = T.axis.spatial(16, i)
                C[vi] = B[T.min(vi + 1, 15)] * 2.0

    sch = T.Schedule(pad16, debug_mask="all")
    with pytest.raises(T.ScheduleError, match="the result changes: the primitive does not check the data dependences"):
        sch.merge(sch.get_loops("B")[0], sch.get_loops("C")[0])
    assert_schedule(pad16, sch, pad16)
    # without the check the schedule does what it is told, as TVM's does
    unchecked = T.Schedule(pad16)
    unchecked.merge(unchecked.get_loops("B")[0], unchecked.get_loops("C")[0])
