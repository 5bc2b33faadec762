"""compute_at / reverse_compute_at: the needed region relaxed by interval arithmetic, the
block's instances solved from it, the bound kept as a predicate where it cuts the range
(TVM's rules), and the reduction consumers reverse_compute_at may move."""

from __future__ import annotations

import pytest
from sched_checks import assert_same_results, assert_schedule

from tvmscript import tir as T


def _sch(func):
    return T.Schedule(func, debug_mask="all")


@T.prim_func
def padded_window(A: T.Buffer((16,), "int32"), C: T.Buffer((16,), "int32")):
    B = T.alloc_buffer((16,), "int32")
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            B[vi] = A[vi] * 3
    for i_0, i_1, k in T.grid(4, 4, 3):
        with T.block("C"):
            vi = T.axis.spatial(16, i_0 * 4 + i_1)
            vk = T.axis.reduce(3, k)
            with T.init():
                C[vi] = 0
            C[vi] = C[vi] + T.if_then_else(
                1 <= vi + vk and vi + vk < 17, B[vi + vk - 1], 0, dtype="int32"
            )


def test_window_past_the_edges_gets_a_predicate():
    """Each tile reads B[4 i_0 - 1 : 4 i_0 + 5]: the ends fall outside B at the first and last
    tile, so the producer runs 6 instances guarded by the bound of its domain."""

    @T.prim_func
    def expected(A: T.Buffer((16,), "int32"), C: T.Buffer((16,), "int32")):
        B = T.alloc_buffer((16,), "int32")
        for i_0 in range(4):
            for ax0 in range(6):
                with T.block("B"):
                    vi = T.axis.spatial(16, i_0 * 4 - 1 + ax0)
                    T.where(1 <= i_0 * 4 + ax0 and i_0 * 4 + ax0 < 17)
                    B[vi] = A[vi] * 3
            for i_1, k in T.grid(4, 3):
                with T.block("C"):
                    vi = T.axis.spatial(16, i_0 * 4 + i_1)
                    vk = T.axis.reduce(3, k)
                    with T.init():
                        C[vi] = 0
                    C[vi] = C[vi] + T.if_then_else(
                        1 <= vi + vk and vi + vk < 17, B[vi + vk - 1], 0, dtype="int32"
                    )

    sch = _sch(padded_window)
    sch.compute_at(sch.get_block("B"), sch.get_loops(sch.get_block("C"))[0])
    assert_schedule(padded_window, sch, expected)


@T.prim_func
def repeat(A: T.Buffer((4,), "float32"), C: T.Buffer((64,), "float32")):
    B = T.alloc_buffer((4,))
    for i in range(4):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            B[vi] = A[vi] + 1.0
    for i_0, i_1 in T.grid(8, 8):
        with T.block("C"):
            vi = T.axis.spatial(64, i_0 * 8 + i_1)
            C[vi] = B[vi // 16]


def test_floordiv_read_needs_one_instance():
    """(8 i_0 + i_1) // 16 over i_1 < 8 is the single point i_0 // 2."""

    @T.prim_func
    def expected(A: T.Buffer((4,), "float32"), C: T.Buffer((64,), "float32")):
        B = T.alloc_buffer((4,))
        for i_0 in range(8):
            with T.block("B"):
                vi = T.axis.spatial(4, i_0 // 2)
                B[vi] = A[vi] + 1.0
            for i_1 in range(8):
                with T.block("C"):
                    vi = T.axis.spatial(64, i_0 * 8 + i_1)
                    C[vi] = B[vi // 16]

    sch = _sch(repeat)
    sch.compute_at(sch.get_block("B"), sch.get_loops(sch.get_block("C"))[0])
    assert_schedule(repeat, sch, expected)


@T.prim_func
def groups(A: T.Buffer((90,), "float32"), C: T.Buffer((90,), "float32")):
    B = T.alloc_buffer((9,))
    for i in range(9):
        with T.block("B"):
            vi = T.axis.spatial(9, i)
            B[vi] = A[vi] * 2.0
    for c_o, c_i in T.grid(2, 45):
        with T.block("C"):
            vc = T.axis.spatial(90, c_o * 45 + c_i)
            C[vc] = A[vc] + B[vc // 10]


def test_groups_straddling_tiles():
    """Tile c_o covers channels 45 c_o .. 45 c_o + 44, groups (45 c_o) // 10 .. (45 c_o + 44)
    // 10: 5 groups from 4 c_o (the simplifier resolves both ends for c_o in {0, 1})."""

    @T.prim_func
    def expected(A: T.Buffer((90,), "float32"), C: T.Buffer((90,), "float32")):
        B = T.alloc_buffer((9,))
        for c_o in range(2):
            for ax0 in range(5):
                with T.block("B"):
                    vi = T.axis.spatial(9, c_o * 4 + ax0)
                    B[vi] = A[vi] * 2.0
            for c_i in range(45):
                with T.block("C"):
                    vc = T.axis.spatial(90, c_o * 45 + c_i)
                    C[vc] = A[vc] + B[vc // 10]

    sch = _sch(groups)
    sch.compute_at(sch.get_block("B"), sch.get_loops(sch.get_block("C"))[0])
    assert_schedule(groups, sch, expected)


@T.prim_func
def narrow(A: T.Buffer((8, 1), "float32"), C: T.Buffer((8, 1), "float32")):
    B = T.alloc_buffer((8, 1))
    for i, j in T.grid(8, 1):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * 2.0
    for i, j in T.grid(8, 8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            vj = T.axis.spatial(1, j)
            T.where(j < 1)
            C[vi, vj] = B[vi, vj] + 1.0


def test_constant_intersection_replaces_the_range():
    """C's loop j reads B[i, 0:8] as far as intervals tell, but B has one column: the
    intersection is the constant [0, 0], so one instance runs and no predicate is needed."""

    @T.prim_func
    def expected(A: T.Buffer((8, 1), "float32"), C: T.Buffer((8, 1), "float32")):
        B = T.alloc_buffer((8, 1))
        for i in range(8):
            for ax0, ax1 in T.grid(1, 1):
                with T.block("B"):
                    vi = T.axis.spatial(8, i + ax0)
                    vj = T.axis.spatial(1, ax1)
                    B[vi, vj] = A[vi, vj] * 2.0
            for j in range(8):
                with T.block("C"):
                    vi = T.axis.spatial(8, i)
                    vj = T.axis.spatial(1, j)
                    T.where(j < 1)
                    C[vi, vj] = B[vi, vj] + 1.0

    sch = _sch(narrow)
    sch.compute_at(sch.get_block("B"), sch.get_loops(sch.get_block("C"))[0], True)
    assert_schedule(narrow, sch, expected)


@T.prim_func
def tiles(A: T.Buffer((32,), "float32"), C: T.Buffer((32,), "float32")):
    B = T.alloc_buffer((32,))
    for i_o in range(4):
        with T.block("B_outer"):
            vo = T.axis.spatial(4, i_o)
            for i_i in range(8):
                with T.block("B"):
                    vi = T.axis.spatial(32, vo * 8 + i_i)
                    B[vi] = A[vi] * 2.0
    for i_o, i_i in T.grid(2, 16):
        with T.block("C"):
            vi = T.axis.spatial(32, i_o * 16 + i_i)
            C[vi] = B[vi] + 1.0


def test_blockized_producer_runs_the_tiles_met():
    @T.prim_func
    def expected(A: T.Buffer((32,), "float32"), C: T.Buffer((32,), "float32")):
        B = T.alloc_buffer((32,))
        for i_o in range(2):
            for ax0 in range(2):
                with T.block("B_outer"):
                    vo = T.axis.spatial(4, i_o * 2 + ax0)
                    for i_i in range(8):
                        with T.block("B"):
                            vi = T.axis.spatial(32, vo * 8 + i_i)
                            B[vi] = A[vi] * 2.0
            for i_i in range(16):
                with T.block("C"):
                    vi = T.axis.spatial(32, i_o * 16 + i_i)
                    C[vi] = B[vi] + 1.0

    sch = _sch(tiles)
    sch.compute_at(sch.get_block("B_outer"), sch.get_loops(sch.get_block("C"))[0])
    assert_schedule(tiles, sch, expected)


def test_overlapping_tiles_are_refused():
    """Instance vo writes B[4 vo : 4 vo + 8]: tiles overlap, so which instance wrote a point
    last depends on the order; a subset of them cannot be shown to give the same values."""

    @T.prim_func
    def overlap(A: T.Buffer((36,), "float32"), C: T.Buffer((36,), "float32")):
        B = T.alloc_buffer((36,))
        for i_o in range(8):
            with T.block("B_outer"):
                vo = T.axis.spatial(8, i_o)
                for i_i in range(8):
                    with T.block("B"):
                        vi = T.axis.spatial(36, vo * 4 + i_i)
                        B[vi] = A[vi] * 2.0 + T.Cast("float32", vo)
        for i_o, i_i in T.grid(2, 18):
            with T.block("C"):
                vi = T.axis.spatial(36, i_o * 18 + i_i)
                C[vi] = B[vi] + 1.0

    sch = _sch(overlap)
    with pytest.raises(T.ScheduleError, match="does not store 'B' at iter vars"):
        sch.compute_at(sch.get_block("B_outer"), sch.get_loops(sch.get_block("C"))[0])
    assert_same_results(overlap, sch)


@T.prim_func
def reversed_store(A: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
    B = T.alloc_buffer((8, 8))
    for i, j in T.grid(8, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[7 - vi, 7 - vj] = A[vi, vj] + 1.0
    for i, j in T.grid(8, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vj, vi] * 2.0


def test_reversed_store_is_inverted():
    """Row i of C reads column i of B, stored by the instances vj = 7 - i."""

    @T.prim_func
    def expected(A: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
        B = T.alloc_buffer((8, 8))
        for i in range(8):
            for ax0 in range(8):
                with T.block("B"):
                    vi = T.axis.spatial(8, ax0)
                    vj = T.axis.spatial(8, 7 - i)
                    B[7 - vi, 7 - vj] = A[vi, vj] + 1.0
            for j in range(8):
                with T.block("C"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    C[vi, vj] = B[vj, vi] * 2.0

    sch = _sch(reversed_store)
    sch.compute_at(sch.get_block("B"), sch.get_loops(sch.get_block("C"))[0])
    assert_schedule(reversed_store, sch, expected)


@T.prim_func
def shared_tile(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    A_shared = T.alloc_buffer((16,), scope="shared")
    for i in range(16):
        with T.block("A_shared"):
            vi = T.axis.spatial(16, i)
            A_shared[vi] = A[vi]
    for bx in T.thread_binding(2, thread="blockIdx.x"):
        for tx in T.thread_binding(4, thread="threadIdx.x"):
            for k in range(2):
                with T.block("C"):
                    vi = T.axis.spatial(16, bx * 8 + tx * 2 + k)
                    C[vi] = A_shared[vi] * 2.0


def test_shared_buffer_is_filled_for_every_thread():
    """A shared copy serves all the threads of a block: the region is relaxed over
    threadIdx.x (8 elements per thread block), not kept at the one thread's 2."""

    @T.prim_func
    def expected(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
        A_shared = T.alloc_buffer((16,), scope="shared")
        for bx in T.thread_binding(2, thread="blockIdx.x"):
            for tx in T.thread_binding(4, thread="threadIdx.x"):
                for ax0 in range(8):
                    with T.block("A_shared"):
                        vi = T.axis.spatial(16, bx * 8 + ax0)
                        A_shared[vi] = A[vi]
                for k in range(2):
                    with T.block("C"):
                        vi = T.axis.spatial(16, bx * 8 + tx * 2 + k)
                        C[vi] = A_shared[vi] * 2.0

    sch = _sch(shared_tile)
    sch.compute_at(sch.get_block("A_shared"), sch.get_loops(sch.get_block("C"))[1])
    assert_schedule(shared_tile, sch, expected)


@T.prim_func
def partial_sums(A: T.Buffer((8, 16), "float32"), B: T.Buffer((8,), "float32")):
    B_rf = T.alloc_buffer((4, 8))
    for i in range(8):
        for r_o, r_i in T.grid(4, 4):
            with T.block("B_rf"):
                vr, vi, vk = T.axis.remap("SSR", [r_o, i, r_i])
                with T.init():
                    B_rf[vr, vi] = 0.0
                B_rf[vr, vi] = B_rf[vr, vi] + A[vi, vr * 4 + vk]
    for i, r in T.grid(8, 4):
        with T.block("B"):
            vi, vr = T.axis.remap("SR", [i, r])
            with T.init():
                B[vi] = 0.0
            B[vi] = B[vi] + B_rf[vr, vi]


def test_reverse_compute_at_of_a_reduction():
    """The final sum of row i runs right after its partial sums, each instance once."""

    @T.prim_func
    def expected(A: T.Buffer((8, 16), "float32"), B: T.Buffer((8,), "float32")):
        B_rf = T.alloc_buffer((4, 8))
        for i in range(8):
            for r_o, r_i in T.grid(4, 4):
                with T.block("B_rf"):
                    vr, vi, vk = T.axis.remap("SSR", [r_o, i, r_i])
                    with T.init():
                        B_rf[vr, vi] = 0.0
                    B_rf[vr, vi] = B_rf[vr, vi] + A[vi, vr * 4 + vk]
            for ax0 in range(4):
                with T.block("B"):
                    vi = T.axis.spatial(8, i)
                    vr = T.axis.reduce(4, ax0)
                    with T.init():
                        B[vi] = 0.0
                    B[vi] = B[vi] + B_rf[vr, vi]

    sch = _sch(partial_sums)
    sch.reverse_compute_at(sch.get_block("B"), sch.get_loops(sch.get_block("B_rf"))[0])
    assert_schedule(partial_sums, sch, expected)


def test_reverse_compute_at_of_a_reduction_per_partial_sum():
    """Under r_o each iteration completes one partial sum B_rf[r_o, i]: the final sum adds it
    right away, instance (i, r_o) once, the init with r_o == 0 first."""
    sch = _sch(partial_sums)
    _, r_o, _ = sch.get_loops(sch.get_block("B_rf"))
    sch.reverse_compute_at(sch.get_block("B"), r_o)
    assert_same_results(partial_sums, sch)
    assert "vi, vr = T.axis.remap(\"SR\", [i, r_o])" in sch.mod["main"].script()


def test_reverse_compute_at_of_a_reduction_refuses_running_twice():
    """Under r_i the block's instances do not depend on r_i: each would add its partial sum
    four times (and before that sum is complete)."""
    sch = _sch(partial_sums)
    _, _, r_i = sch.get_loops(sch.get_block("B_rf"))
    with pytest.raises(
        T.ScheduleError,
        match="reduction block 'B' cannot be moved under the loop: a loop around its new "
        "place would run its instances again",
    ):
        sch.reverse_compute_at(sch.get_block("B"), r_i)
    assert_same_results(partial_sums, sch)


@T.prim_func
def layout_rows(A: T.Buffer((2, 16), "float32"), C: T.Buffer((4, 8), "float32")):
    B = T.alloc_buffer((2, 16))
    for i, j in T.grid(2, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] + 1.0
    for a, b in T.grid(4, 8):
        with T.block("C"):
            va, vb = T.axis.remap("SS", [a, b])
            C[va, vb] = B[(va * 8 + vb) // 16, (va * 8 + vb) % 16]


def test_reverse_compute_at_through_a_fused_load():
    """Row i of B holds the fused values 16 i .. 16 i + 15 of va * 8 + vb: rows 2 i and
    2 i + 1 of C, all their columns."""

    @T.prim_func
    def expected(A: T.Buffer((2, 16), "float32"), C: T.Buffer((4, 8), "float32")):
        B = T.alloc_buffer((2, 16))
        for i in range(2):
            for j in range(16):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B[vi, vj] = A[vi, vj] + 1.0
            for ax0, ax1 in T.grid(2, 8):
                with T.block("C"):
                    va = T.axis.spatial(4, i * 2 + ax0)
                    vb = T.axis.spatial(8, ax1)
                    C[va, vb] = B[(va * 8 + vb) // 16, (va * 8 + vb) % 16]

    sch = _sch(layout_rows)
    sch.reverse_compute_at(sch.get_block("C"), sch.get_loops(sch.get_block("B"))[0])
    assert_schedule(layout_rows, sch, expected)


@T.prim_func
def fused_store(A: T.Buffer((4, 8), "float32"), C: T.Buffer((2, 8), "float32")):
    B = T.alloc_buffer((2, 16))
    for a, b in T.grid(4, 8):
        with T.block("B"):
            va, vb = T.axis.remap("SS", [a, b])
            B[(va * 8 + vb) // 16, (va * 8 + vb) % 16] = A[va, vb] * 2.0
    for i, j in T.grid(2, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj + 4]


def test_compute_at_of_a_fused_store_needs_a_box():
    """Row i needs B[i, 4:12], the fused values 16 i + 4 .. 16 i + 11: the end of row 2 i of
    A and the start of row 2 i + 1, not a box of (va, vb): refused rather than widened."""
    sch = _sch(fused_store)
    with pytest.raises(T.ScheduleError, match="does not store 'B' at iter vars"):
        sch.compute_at(sch.get_block("B"), sch.get_loops(sch.get_block("C"))[0])
    assert_same_results(fused_store, sch)


def test_compute_at_of_a_fused_store_by_rows():
    """Under C's rows split by 1 the needed region B[i, 4:12] is still refused; a consumer
    reading whole rows gets the two rows of A each needs."""

    @T.prim_func
    def whole_rows(A: T.Buffer((4, 8), "float32"), C: T.Buffer((2, 16), "float32")):
        B = T.alloc_buffer((2, 16))
        for a, b in T.grid(4, 8):
            with T.block("B"):
                va, vb = T.axis.remap("SS", [a, b])
                B[(va * 8 + vb) // 16, (va * 8 + vb) % 16] = A[va, vb] * 2.0
        for i, j in T.grid(2, 16):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vi, vj] + 1.0

    sch = _sch(whole_rows)
    sch.compute_at(sch.get_block("B"), sch.get_loops(sch.get_block("C"))[0])
    assert_same_results(whole_rows, sch)
    text = sch.mod["main"].script()
    assert "va = T.axis.spatial(4, i * 2 + ax0)" in text
    assert "for ax0, ax1 in T.grid(2, 8):" in text


def test_compute_at_refuses_outputs_stored_at_different_vars():
    """B1[vi, vj] and B2[vi]: a row of B1 needs the instances of one (vi, vj), but B2[vi] is
    written by every vj, the last one deciding its value; a subset of vj would change it."""

    @T.prim_func
    def two_outputs(A: T.Buffer((4, 4), "float32"), C: T.Buffer((4, 4), "float32")):
        B1 = T.alloc_buffer((4, 4))
        B2 = T.alloc_buffer((4,))
        for i, j in T.grid(4, 4):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B1[vi, vj] = A[vi, vj] * 2.0
                B2[vi] = A[vi, vj]
        for i, j in T.grid(4, 4):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B1[vi, vj] + B2[vi]

    sch = _sch(two_outputs)
    _, j = sch.get_loops(sch.get_block("C"))
    with pytest.raises(T.ScheduleError, match="stores its buffers at different iter vars"):
        sch.compute_at(sch.get_block("B"), j)
    assert_same_results(two_outputs, sch)
