"""Loop-primitive forms found by running TVM v0.16's schedule tests through a shim:
reorder reads the enclosing loops as symbols and refuses a predicate bounding a sum that
no binding is made of; bind of a reduction loop to threadIdx (a cross-thread reduction);
compute_at under a loop that runs once binds its iter var to the constant."""

from __future__ import annotations

import pytest
from sched_checks import assert_same_results, assert_schedule

from tvmscript import tir as T
from tvmscript.ir import assert_structural_equal


@T.prim_func
def square_offset(A: T.Buffer((40, 4), "float32"), B: T.Buffer((40, 4), "float32")):
    for p, q, r in T.grid(6, 4, 4):
        with T.block("sq"):
            i = T.axis.spatial(40, p * p + q)
            j = T.axis.spatial(4, r)
            B[i, j] = A[i, j] + 1.0


@T.prim_func
def square_offset_swapped(A: T.Buffer((40, 4), "float32"), B: T.Buffer((40, 4), "float32")):
    for p, r, q in T.grid(6, 4, 4):
        with T.block("sq"):
            i = T.axis.spatial(40, p * p + q)
            j = T.axis.spatial(4, r)
            B[i, j] = A[i, j] + 1.0


def test_reorder_below_a_non_affine_outer_term() -> None:
    sch = T.Schedule(square_offset, debug_mask="all")
    p, q, r = sch.get_loops(sch.get_block("sq"))
    with pytest.raises(T.ScheduleError, match="does not have affine bindings"):
        sch.reorder(p, r, q)  # p * p is not affine in p
    sch.reorder(r, q)  # p is fixed around q and r: p * p is a constant offset there
    assert_schedule(square_offset, sch, square_offset_swapped)


@T.prim_func
def first_cells(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32")):
    for i, j in T.grid(8, 8):
        with T.block("B"):
            T.where(i * 8 + j < 20)
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * 2.0


def test_reorder_refuses_a_predicate_over_a_foreign_sum() -> None:
    sch = T.Schedule(first_cells)
    i, j = sch.get_loops(sch.get_block("B"))
    with pytest.raises(T.ScheduleError, match="predicate of block 'B' bounds loops"):
        sch.reorder(j, i)
    assert_structural_equal(sch.mod["main"], first_cells)


@T.prim_func
def ragged(A: T.Buffer((8, 10), "float32"), B: T.Buffer((8, 10), "float32")):
    for i in range(8):
        for j_0, j_1 in T.grid(4, 3):
            with T.block("B"):
                vi = T.axis.spatial(8, i)
                vj = T.axis.spatial(10, j_0 * 3 + j_1)
                T.where(j_0 * 3 + j_1 < 10)
                B[vi, vj] = A[vi, vj] * 2.0


def test_reorder_keeps_accepting_a_split_guard() -> None:
    sch = T.Schedule(ragged, debug_mask="all")
    i, j_0, j_1 = sch.get_loops(sch.get_block("B"))
    sch.reorder(j_1, i, j_0)
    assert [sch.get(lp).loop_var.name for lp in sch.get_loops(sch.get_block("B"))] == [
        "j_1",
        "i",
        "j_0",
    ]
    assert_same_results(ragged, sch)


@T.prim_func
def row_sum(A: T.Buffer((8, 16), "float32"), B: T.Buffer((8,), "float32")):
    for i, k in T.grid(8, 16):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]


def test_bind_reduction_loop_to_thread_x_is_a_cross_thread_reduction() -> None:
    sch = T.Schedule(row_sum, debug_mask="all")
    _, k = sch.get_loops(sch.get_block("B"))
    sch.bind(k, "threadIdx.x")
    loop = sch.get(sch.get_loops(sch.get_block("B"))[1])
    assert loop.thread_binding is not None and loop.thread_binding.thread_tag == "threadIdx.x"
    assert_same_results(row_sum, sch)


def test_bind_reduction_loop_to_block_idx_is_refused() -> None:
    sch = T.Schedule(row_sum)
    _, k = sch.get_loops(sch.get_block("B"))
    with pytest.raises(T.ScheduleError, match="reduction iter var 'vk'"):
        sch.bind(k, "blockIdx.x")
    with pytest.raises(T.ScheduleError, match="reduction iter var 'vk'"):
        sch.parallel(k)


@T.prim_func
def unit_batch(A: T.Buffer((1, 16), "float32"), C: T.Buffer((1, 16), "float32")):
    B = T.alloc_buffer((1, 16))
    for n, i in T.grid(1, 16):
        with T.block("B"):
            vn, vi = T.axis.remap("SS", [n, i])
            B[vn, vi] = A[vn, vi] * 2.0
    for n, i in T.grid(1, 16):
        with T.block("C"):
            vn, vi = T.axis.remap("SS", [n, i])
            C[vn, vi] = B[vn, vi] + 1.0


@T.prim_func
def unit_batch_at(A: T.Buffer((1, 16), "float32"), C: T.Buffer((1, 16), "float32")):
    B = T.alloc_buffer((1, 16))
    for n, i in T.grid(1, 16):
        with T.block("B"):
            vn = T.axis.spatial(1, 0)
            vi = T.axis.spatial(16, i)
            B[vn, vi] = A[vn, vi] * 2.0
        with T.block("C"):
            vn, vi = T.axis.remap("SS", [n, i])
            C[vn, vi] = B[vn, vi] + 1.0


def test_compute_at_under_a_unit_loop_binds_the_constant() -> None:
    sch = T.Schedule(unit_batch, debug_mask="all")
    _, i = sch.get_loops(sch.get_block("C"))
    sch.compute_at(sch.get_block("B"), i)
    assert_schedule(unit_batch, sch, unit_batch_at)


@T.prim_func
def reads_past_the_end(A: T.Buffer((4, 2), "float32"), B: T.Buffer((4, 2), "float32")):
    for p, q, r in T.grid(2, 2, 2):
        with T.block("B"):
            vi = T.axis.spatial(4, p * p * 3 + q)
            vj = T.axis.spatial(2, r)
            B[vi % 4, vj] = A[vi, vj]


def test_debug_check_skips_an_original_that_reads_out_of_bounds() -> None:
    sch = T.Schedule(reads_past_the_end, debug_mask="all")
    _, q, r = sch.get_loops(sch.get_block("B"))
    sch.reorder(r, q)  # accepted: the interpreter cannot run the original to compare
    names = [sch.get(lp).loop_var.name for lp in sch.get_loops(sch.get_block("B"))]
    assert names == ["p", "r", "q"]
