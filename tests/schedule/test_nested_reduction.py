"""A reduction block holding blocks (a blockized reduction): decompose_reduction and bind
read it as a reduction when each instance reads only the region it writes."""

from __future__ import annotations

import pytest
from sched_checks import assert_schedule

from tvmscript import tir as T


@T.prim_func
def rowsum_blocks(A: T.Buffer((8, 4, 16), "float32"), B: T.Buffer((8, 4), "float32")):
    for i0, k0 in T.grid(8, 4):
        with T.block("outer"):
            io, ko = T.axis.remap("SR", [i0, k0])
            with T.init():
                for i1 in range(4):
                    with T.block("B_init"):
                        ii = T.axis.spatial(4, i1)
                        B[io, ii] = T.float32(0)
            for i1, k1 in T.grid(4, 4):
                with T.block("B"):
                    ii = T.axis.spatial(4, i1)
                    k = T.axis.reduce(16, ko * 4 + k1)
                    B[io, ii] = B[io, ii] + A[io, ii, k]


@T.prim_func
def rowsum_blocks_decomposed(
    A: T.Buffer((8, 4, 16), "float32"), B: T.Buffer((8, 4), "float32")
):
    for i0 in range(8):
        with T.block("outer_init"):
            io = T.axis.spatial(8, i0)
            for i1 in range(4):
                with T.block("B_init"):
                    ii = T.axis.spatial(4, i1)
                    B[io, ii] = T.float32(0)
    for i0, k0 in T.grid(8, 4):
        with T.block("outer_update"):
            io, ko = T.axis.remap("SR", [i0, k0])
            for i1, k1 in T.grid(4, 4):
                with T.block("B"):
                    ii = T.axis.spatial(4, i1)
                    k = T.axis.reduce(16, ko * 4 + k1)
                    B[io, ii] = B[io, ii] + A[io, ii, k]


@T.prim_func
def shifted_read(A: T.Buffer((8, 4, 16), "float32"), B: T.Buffer((8, 5), "float32")):
    for i0, k0 in T.grid(8, 4):
        with T.block("outer"):
            io, ko = T.axis.remap("SR", [i0, k0])
            with T.init():
                for i1 in range(4):
                    with T.block("B_init"):
                        ii = T.axis.spatial(4, i1)
                        B[io, ii] = T.float32(0)
            for i1, k1 in T.grid(4, 4):
                with T.block("B"):
                    ii = T.axis.spatial(4, i1)
                    k = T.axis.reduce(16, ko * 4 + k1)
                    B[io, ii] = B[io, ii + 1] + A[io, ii, k]


def test_decompose_a_blockized_reduction():
    sch = T.Schedule(rowsum_blocks, debug_mask="all")
    outer = sch.get_block("outer")
    i0, _ = sch.get_loops(outer)
    init = sch.decompose_reduction(outer, i0)
    assert sch.get(init).name_hint == "outer_init"
    assert_schedule(rowsum_blocks, sch, rowsum_blocks_decomposed)


def test_bind_over_a_blockized_reduction():
    sch = T.Schedule(rowsum_blocks, debug_mask="all")
    i0, _ = sch.get_loops(sch.get_block("outer"))
    sch.parallel(i0)
    assert str(sch.mod["main"].script()).count("T.parallel(8)") == 1


def test_an_instance_reading_outside_what_it_writes_is_no_reduction():
    # the nested update reads B[io, ii + 1]: one instance reads an element it does not
    # write, so the outer block is not a reduction and its init may not move
    sch = T.Schedule(shifted_read, debug_mask="all")
    outer = sch.get_block("outer")
    i0, _ = sch.get_loops(outer)
    with pytest.raises(T.ScheduleError, match="block 'outer' is not a reduction block"):
        sch.decompose_reduction(outer, i0)
