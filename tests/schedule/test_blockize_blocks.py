"""blockize of a list of blocks: consecutive sibling nests wrapped in one outer block."""

from __future__ import annotations

import pytest
from sched_checks import assert_schedule, scheduled

from irbuilder.ir import structural_equal
from tvmscript import tir as T


@T.prim_func
def three_stages(A: T.Buffer((8, 4), "float32"), D: T.Buffer((8, 4), "float32")):
    B = T.alloc_buffer((8, 4))
    C = T.alloc_buffer((8, 4))
    for m in range(2):
        for i, j in T.grid(8, 4):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * 2.0
        for i, u in T.grid(8, 1):
            with T.block("C"):
                vi, vu = T.axis.remap("SS", [i, u])
                C[vi, vu] = B[vi, vu] + 1.0
        for i, j in T.grid(8, 4):
            with T.block("D"):
                vi, vj = T.axis.remap("SS", [i, j])
                D[vi, vj] = B[vi, vj] + C[vi, 0] + T.Cast("float32", m)


@T.prim_func
def three_stages_blockized(A: T.Buffer((8, 4), "float32"), D: T.Buffer((8, 4), "float32")):
    B = T.alloc_buffer((8, 4))
    C = T.alloc_buffer((8, 4))
    for m in range(2):
        with T.block("outer_B_C_"):
            vi_o = T.axis.spatial(1, 0)  # noqa: F841
            vj_o = T.axis.spatial(1, 0)  # noqa: F841
            for i, j in T.grid(8, 4):
                with T.block("B"):
                    vi_i, vj_i = T.axis.remap("SS", [i, j])
                    B[vi_i, vj_i] = A[vi_i, vj_i] * 2.0
            for i, _u in T.grid(8, 1):
                with T.block("C"):
                    vi_i = T.axis.spatial(8, i)
                    C[vi_i, 0] = B[vi_i, 0] + 1.0
        for i, j in T.grid(8, 4):
            with T.block("D"):
                vi, vj = T.axis.remap("SS", [i, j])
                D[vi, vj] = B[vi, vj] + C[vi, 0] + T.Cast("float32", m)


def test_two_consecutive_nests_become_one_block():
    sch = T.Schedule(three_stages, debug_mask="all")
    outer = sch.blockize([sch.get_block("B"), sch.get_block("C")], preserve_unit_iters=False)
    assert sch.get(outer).name_hint == "outer_B_C_"
    assert_schedule(three_stages, sch, three_stages_blockized)
    again = T.Schedule(three_stages)
    sch.trace.apply_to_schedule(again)
    assert structural_equal(scheduled(again), scheduled(sch))


def test_blocks_that_are_not_consecutive_are_refused():
    sch = T.Schedule(three_stages, debug_mask="all")
    with pytest.raises(T.ScheduleError, match="must be consecutive statements"):
        sch.blockize([sch.get_block("B"), sch.get_block("D")])


def test_a_binding_using_an_outer_loop_is_refused():
    @T.prim_func
    def outer_bound(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        for m in range(2):
            for i in range(4):
                with T.block("X"):
                    vi = T.axis.spatial(8, m * 4 + i)
                    B[vi] = A[vi]
            for i in range(4):
                with T.block("Y"):
                    vi = T.axis.spatial(8, m * 4 + i)
                    B[vi] = B[vi] + 1.0

    sch = T.Schedule(outer_bound, debug_mask="all")
    with pytest.raises(T.ScheduleError, match="loops outside them are not supported"):
        sch.blockize([sch.get_block("X"), sch.get_block("Y")])
