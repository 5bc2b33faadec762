"""compute_at, reverse_compute_at, compute_inline, reverse_compute_inline."""

from __future__ import annotations

import pytest
from sched_checks import assert_same_results, assert_schedule

from tvmscript import tir as T


@T.prim_func
def two_stage(A: T.Buffer((32, 16), "float32"), C: T.Buffer((32, 16), "float32")):
    B = T.alloc_buffer((32, 16))
    for i, j in T.grid(32, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * 2.0
    for i, j in T.grid(32, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + 1.0


@T.prim_func
def stencil(A: T.Buffer((18,), "int32"), C: T.Buffer((16,), "int32")):
    B = T.alloc_buffer((18,), "int32")
    for i in range(18):
        with T.block("B"):
            vi = T.axis.spatial(18, i)
            B[vi] = A[vi] * 3
    for i in range(16):
        with T.block("C"):
            vi = T.axis.spatial(16, i)
            C[vi] = B[vi] + B[vi + 1] + B[vi + 2]


def _sch(func):
    return T.Schedule(func, debug_mask="all")


def test_compute_at_split_loop():
    @T.prim_func
    def expected(A: T.Buffer((32, 16), "float32"), C: T.Buffer((32, 16), "float32")):
        B = T.alloc_buffer((32, 16))
        for i_0 in range(4):
            for ax0, ax1 in T.grid(8, 16):
                with T.block("B"):
                    vi = T.axis.spatial(32, i_0 * 8 + ax0)
                    vj = T.axis.spatial(16, ax1)
                    B[vi, vj] = A[vi, vj] * 2.0
            for i_1, j in T.grid(8, 16):
                with T.block("C"):
                    vi = T.axis.spatial(32, i_0 * 8 + i_1)
                    vj = T.axis.spatial(16, j)
                    C[vi, vj] = B[vi, vj] + 1.0

    sch = _sch(two_stage)
    i, _ = sch.get_loops(sch.get_block("C"))
    outer, _ = sch.split(i, [None, 8])
    sch.compute_at(sch.get_block("B"), outer)
    assert_schedule(two_stage, sch, expected)


def test_compute_at_preserve_unit_loops():
    @T.prim_func
    def expected(A: T.Buffer((32, 16), "float32"), C: T.Buffer((32, 16), "float32")):
        B = T.alloc_buffer((32, 16))
        for i, j in T.grid(32, 16):
            for ax0, ax1 in T.grid(1, 1):
                with T.block("B"):
                    vi = T.axis.spatial(32, i + ax0)
                    vj = T.axis.spatial(16, j + ax1)
                    B[vi, vj] = A[vi, vj] * 2.0
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vi, vj] + 1.0

    sch = _sch(two_stage)
    _, j = sch.get_loops(sch.get_block("C"))
    sch.compute_at(sch.get_block("B"), j, preserve_unit_loops=True)
    assert_schedule(two_stage, sch, expected)


def test_compute_at_stencil_widens_region():
    @T.prim_func
    def expected(A: T.Buffer((18,), "int32"), C: T.Buffer((16,), "int32")):
        B = T.alloc_buffer((18,), "int32")
        for i_0 in range(4):
            for ax0 in range(6):
                with T.block("B"):
                    vi = T.axis.spatial(18, i_0 * 4 + ax0)
                    B[vi] = A[vi] * 3
            for i_1 in range(4):
                with T.block("C"):
                    vi = T.axis.spatial(16, i_0 * 4 + i_1)
                    C[vi] = B[vi] + B[vi + 1] + B[vi + 2]

    sch = _sch(stencil)
    (i,) = sch.get_loops(sch.get_block("C"))
    outer, _ = sch.split(i, [None, 4])
    sch.compute_at(sch.get_block("B"), outer)
    assert_schedule(stencil, sch, expected)


def test_reverse_compute_at():
    @T.prim_func
    def expected(A: T.Buffer((32, 16), "float32"), C: T.Buffer((32, 16), "float32")):
        B = T.alloc_buffer((32, 16))
        for i_0, i_1 in T.grid(4, 8):
            for j in range(16):
                with T.block("B"):
                    vi = T.axis.spatial(32, i_0 * 8 + i_1)
                    vj = T.axis.spatial(16, j)
                    B[vi, vj] = A[vi, vj] * 2.0
            for ax0 in range(16):
                with T.block("C"):
                    vi = T.axis.spatial(32, i_0 * 8 + i_1)
                    vj = T.axis.spatial(16, ax0)
                    C[vi, vj] = B[vi, vj] + 1.0

    sch = _sch(two_stage)
    i, _ = sch.get_loops(sch.get_block("B"))
    _, inner = sch.split(i, [None, 8])
    sch.reverse_compute_at(sch.get_block("C"), inner)
    assert_schedule(two_stage, sch, expected)


def test_compute_at_refuses_output_block():
    sch = _sch(two_stage)
    (i, _) = sch.get_loops(sch.get_block("B"))
    with pytest.raises(T.ScheduleError, match="a parameter of the function"):
        sch.compute_at(sch.get_block("C"), i)


def test_compute_at_refuses_consumer_outside_loop():
    @T.prim_func
    def fan_out(
        A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32"), D: T.Buffer((8,), "float32")
    ):
        B = T.alloc_buffer((8,))
        for i in range(8):
            with T.block("B"):
                vi = T.axis.spatial(8, i)
                B[vi] = A[vi] + 1.0
        for i in range(8):
            with T.block("C"):
                vi = T.axis.spatial(8, i)
                C[vi] = B[vi] * 2.0
        for i in range(8):
            with T.block("D"):
                vi = T.axis.spatial(8, i)
                D[vi] = B[vi] * 3.0

    sch = _sch(fan_out)
    (i,) = sch.get_loops(sch.get_block("C"))
    with pytest.raises(
        T.ScheduleError, match="requires all the consumers of block 'B' to be under the target loop, but block 'D'"
    ):
        sch.compute_at(sch.get_block("B"), i)
    assert_same_results(fan_out, sch)


def test_compute_at_refuses_clobbered_input():
    @T.prim_func
    def clobber(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
        B = T.alloc_buffer((8,))
        for i in range(8):
            with T.block("B"):
                vi = T.axis.spatial(8, i)
                B[vi] = A[vi] + 1.0
        for i in range(8):
            with T.block("A"):
                vi = T.axis.spatial(8, i)
                A[vi] = 0.0
        for i in range(8):
            with T.block("C"):
                vi = T.axis.spatial(8, i)
                C[vi] = B[vi] * 2.0

    sch = _sch(clobber)
    (i,) = sch.get_loops(sch.get_block("C"))
    with pytest.raises(T.ScheduleError, match="block 'A' runs between"):
        sch.compute_at(sch.get_block("B"), i)


def test_compute_inline():
    @T.prim_func
    def expected(A: T.Buffer((32, 16), "float32"), C: T.Buffer((32, 16), "float32")):
        for i, j in T.grid(32, 16):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = A[vi, vj] * 2.0 + 1.0

    sch = _sch(two_stage)
    sch.compute_inline(sch.get_block("B"))
    assert_schedule(two_stage, sch, expected)


def test_compute_inline_into_stencil():
    @T.prim_func
    def expected(A: T.Buffer((18,), "int32"), C: T.Buffer((16,), "int32")):
        for i in range(16):
            with T.block("C"):
                vi = T.axis.spatial(16, i)
                C[vi] = A[vi] * 3 + A[vi + 1] * 3 + A[vi + 2] * 3

    sch = _sch(stencil)
    sch.compute_inline(sch.get_block("B"))
    assert_schedule(stencil, sch, expected)


def test_reverse_compute_inline():
    @T.prim_func
    def expected(A: T.Buffer((32, 16), "float32"), C: T.Buffer((32, 16), "float32")):
        for i, j in T.grid(32, 16):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = A[vi, vj] * 2.0 + 1.0

    sch = _sch(two_stage)
    sch.reverse_compute_inline(sch.get_block("C"))
    assert_schedule(two_stage, sch, expected)


def test_compute_inline_refuses_reduction_and_output():
    @T.prim_func
    def reduce_then_scale(A: T.Buffer((8, 8), "float32"), C: T.Buffer((8,), "float32")):
        B = T.alloc_buffer((8,))
        for i, k in T.grid(8, 8):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = 0.0
                B[vi] = B[vi] + A[vi, vk]
        for i in range(8):
            with T.block("C"):
                vi = T.axis.spatial(8, i)
                C[vi] = B[vi] * 2.0

    sch = _sch(reduce_then_scale)
    with pytest.raises(T.ScheduleError, match="is a reduction"):
        sch.compute_inline(sch.get_block("B"))
    with pytest.raises(T.ScheduleError, match="buffer of the function's signature"):
        sch.compute_inline(sch.get_block("C"))


def test_reverse_compute_inline_refuses_stencil():
    sch = _sch(stencil)
    with pytest.raises(T.ScheduleError, match="reads 'B' at several indices"):
        sch.reverse_compute_inline(sch.get_block("C"))


def test_compute_inline_refuses_reader_before_writer():
    @T.prim_func
    def early(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
        B = T.alloc_buffer((8,))
        for i in range(8):
            with T.block("C"):
                vi = T.axis.spatial(8, i)
                C[vi] = B[vi]
        for i in range(8):
            with T.block("B"):
                vi = T.axis.spatial(8, i)
                B[vi] = A[vi]

    sch = _sch(early)
    with pytest.raises(T.ScheduleError, match="reads 'B' before 'B' writes it"):
        sch.compute_inline(sch.get_block("B"))


def test_block_using_a_loop_var_directly_is_not_moved():
    @T.prim_func
    def direct(A: T.Buffer((8,), "int32"), C: T.Buffer((8,), "int32")):
        B = T.alloc_buffer((8,), "int32")
        for i in range(8):
            with T.block("B"):
                vi = T.axis.spatial(8, i)
                B[vi] = A[vi] + i
        for i in range(8):
            with T.block("C"):
                vi = T.axis.spatial(8, i)
                C[vi] = B[vi] * 2

    sch = _sch(direct)
    with pytest.raises(T.ScheduleError, match="uses 'i' of an enclosing loop"):
        sch.compute_inline(sch.get_block("B"))
    (i,) = sch.get_loops(sch.get_block("C"))
    with pytest.raises(T.ScheduleError, match="uses 'i' of an enclosing loop"):
        sch.compute_at(sch.get_block("B"), i)
    assert_same_results(direct, sch)


def test_compute_at_index_places_the_block():
    @T.prim_func
    def side(
        A: T.Buffer((8, 4), "int32"), C: T.Buffer((8, 4), "int32"), D: T.Buffer((8, 4), "int32")
    ):
        B = T.alloc_buffer((8, 4), "int32")
        for i, j in T.grid(8, 4):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] + 1
        for i in range(8):
            for j in range(4):
                with T.block("D"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    D[vi, vj] = A[vi, vj] * 3
            for j in range(4):
                with T.block("C"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    C[vi, vj] = B[vi, vj] * 2

    def order(sch):
        (i,) = sch.get_loops(sch.get_block("C"))[:1]
        return [b.name_hint for b in (sch.get(x) for x in sch.get_child_blocks(i))]

    for index, expected in [(-1, ["D", "B", "C"]), (-2, ["B", "D", "C"]), (1, ["D", "B", "C"])]:
        sch = _sch(side)
        (i,) = sch.get_loops(sch.get_block("C"))[:1]
        sch.compute_at(sch.get_block("B"), i, index=index)
        assert order(sch) == expected
        assert_same_results(side, sch)
    sch = _sch(side)
    (i,) = sch.get_loops(sch.get_block("C"))[:1]
    with pytest.raises(T.ScheduleError, match=r"index 3 is outside the legal positions 0..1"):
        sch.compute_at(sch.get_block("B"), i, index=3)
