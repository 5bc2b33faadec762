"""reverse_compute_inline of consumers reading the producer's buffer through an injective
affine map of their iter vars, or over fewer points than the producer writes."""

from __future__ import annotations

import pytest
from sched_checks import assert_same_results, assert_schedule

from tvmscript import tir as T


def _sch(func):
    return T.Schedule(func, debug_mask="all")


@T.prim_func
def reshape_read(A: T.Buffer((16, 24), "float32"), C: T.Buffer((4, 6, 16), "float32")):
    B = T.alloc_buffer((16, 24))
    for i, j in T.grid(16, 24):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] + 1.0
    for i, j, k in T.grid(4, 6, 16):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSS", [i, j, k])
            C[vi, vj, vk] = B[((vi * 6 + vj) * 16 + vk) // 24, ((vi * 6 + vj) * 16 + vk) % 24]


def test_fused_read_is_inverted_through_the_fused_index():
    @T.prim_func
    def expected(A: T.Buffer((16, 24), "float32"), C: T.Buffer((4, 6, 16), "float32")):
        for i, j in T.grid(16, 24):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[(vj + vi * 24) // 96, (vj + vi * 24) // 16 % 6, (vj + vi * 24) % 16] = (
                    A[vi, vj] + 1.0
                )

    sch = _sch(reshape_read)
    sch.reverse_compute_inline(sch.get_block("C"))
    assert_schedule(reshape_read, sch, expected)


@T.prim_func
def smaller_consumer(A: T.Buffer((10, 12), "float32"), C: T.Buffer((9, 12), "float32")):
    B = T.alloc_buffer((10, 12))
    for i, j in T.grid(10, 12):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * 3.0
    for i, j in T.grid(9, 12):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] - 1.0


def test_consumer_over_fewer_points_gets_a_guard():
    @T.prim_func
    def expected(A: T.Buffer((10, 12), "float32"), C: T.Buffer((9, 12), "float32")):
        for i, j in T.grid(10, 12):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                if vi < 9:
                    C[vi, vj] = A[vi, vj] * 3.0 - 1.0

    sch = _sch(smaller_consumer)
    sch.reverse_compute_inline(sch.get_block("C"))
    assert_schedule(smaller_consumer, sch, expected)


@T.prim_func
def tiled_read(A: T.Buffer((64,), "float32"), C: T.Buffer((61,), "float32")):
    B = T.alloc_buffer((8, 8))
    for i, j in T.grid(8, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi * 8 + vj] * 2.0
    for i in range(61):
        with T.block("C"):
            vi = T.axis.spatial(61, i)
            C[vi] = B[vi // 8, vi % 8] + 1.0


def test_var_split_over_two_indices_is_recombined():
    @T.prim_func
    def expected(A: T.Buffer((64,), "float32"), C: T.Buffer((61,), "float32")):
        for i, j in T.grid(8, 8):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                if vi * 8 + vj < 61:
                    C[vj + vi * 8] = A[vi * 8 + vj] * 2.0 + 1.0

    sch = _sch(tiled_read)
    sch.reverse_compute_inline(sch.get_block("C"))
    assert_schedule(tiled_read, sch, expected)


def test_chain_of_reverse_inlines_in_either_order():
    @T.prim_func
    def chain(A: T.Buffer((32, 8), "float32"), D: T.Buffer((1, 4, 8, 8), "float32")):
        B = T.alloc_buffer((32, 8))
        C = T.alloc_buffer((4, 8, 8))
        for i, j in T.grid(32, 8):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * 2.0
        for i, j, k in T.grid(4, 8, 8):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSS", [i, j, k])
                C[vi, vj, vk] = B[vi * 8 + vj, vk] + 1.0
        for i, j, k, m in T.grid(1, 4, 8, 8):
            with T.block("D"):
                vi, vj, vk, vl = T.axis.remap("SSSS", [i, j, k, m])
                D[vi, vj, vk, vl] = C[vj, vk, vl]

    for order in (("C", "D"), ("D", "C")):
        sch = _sch(chain)
        for name in order:
            sch.reverse_compute_inline(sch.get_block(name))
        assert_same_results(chain, sch)
        assert "D[0, vi // 8, vi % 8, vj]" in sch.mod["main"].script()


def test_refuses_non_injective_read():
    @T.prim_func
    def diagonal(A: T.Buffer((16, 16), "float32"), C: T.Buffer((4, 4), "float32")):
        B = T.alloc_buffer((16, 16))
        for i, j in T.grid(16, 16):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj]
        for i, j in T.grid(4, 4):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vi * 4 + vj, vi * 4 + vj]

    sch = _sch(diagonal)
    with pytest.raises(T.ScheduleError, match="not an injective affine map"):
        sch.reverse_compute_inline(sch.get_block("C"))


def test_refuses_read_outside_what_the_producer_writes():
    @T.prim_func
    def shifted(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
        B = T.alloc_buffer((16,))
        for i in range(8):
            with T.block("B"):
                vi = T.axis.spatial(8, i)
                B[vi] = A[vi]
        for i in range(8):
            with T.block("C"):
                vi = T.axis.spatial(8, i)
                C[vi] = B[vi + 4]

    sch = _sch(shifted)
    with pytest.raises(T.ScheduleError, match="not an injective affine map"):
        sch.reverse_compute_inline(sch.get_block("C"))


def test_refuses_split_digit_the_producer_overfills():
    """B[vi, vj] with vj up to 12, read as B[c // 8, c % 8]: the producer's (0, 9) and
    (1, 1) would both claim consumer point 9."""

    @T.prim_func
    def overfull(A: T.Buffer((2, 12), "float32"), C: T.Buffer((16,), "float32")):
        B = T.alloc_buffer((2, 12))
        for i, j in T.grid(2, 12):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj]
        for i in range(16):
            with T.block("C"):
                vi = T.axis.spatial(16, i)
                C[vi] = B[vi // 8, vi % 8]

    sch = _sch(overfull)
    with pytest.raises(T.ScheduleError, match="not an injective affine map"):
        sch.reverse_compute_inline(sch.get_block("C"))


@T.prim_func
def digit_read(A: T.Buffer((8, 16), "float32"), Y: T.Buffer((128,), "float32")):
    tmp = T.alloc_buffer((8, 16))
    for i, j in T.grid(8, 16):
        with T.block("A"):
            vi, vj = T.axis.remap("SS", [i, j])
            tmp[vi, vj] = A[vi, vj] + 1.0
    for i in range(128):
        with T.block("B"):
            vi = T.axis.spatial(128, i)
            Y[vi] = tmp[vi // 16, vi % 16] * 2.0


def test_reverse_compute_at_through_digit_indices():
    @T.prim_func
    def expected(A: T.Buffer((8, 16), "float32"), Y: T.Buffer((128,), "float32")):
        tmp = T.alloc_buffer((8, 16))
        for i in range(8):
            for j in range(16):
                with T.block("A"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    tmp[vi, vj] = A[vi, vj] + 1.0
            for ax0 in range(16):
                with T.block("B"):
                    vi = T.axis.spatial(128, i * 16 + ax0)
                    Y[vi] = tmp[vi // 16, vi % 16] * 2.0

    sch = _sch(digit_read)
    sch.reverse_compute_at(sch.get_block("B"), sch.get_loops(sch.get_block("A"))[0])
    assert_schedule(digit_read, sch, expected)


def test_reverse_compute_at_under_the_inner_loop_reads_one_point():
    """One iteration of the inner loop writes tmp[i, j]: the one instance reading it is
    vi = i * 16 + j."""
    sch = _sch(digit_read)
    inner = sch.get_loops(sch.get_block("A"))[1]
    sch.reverse_compute_at(sch.get_block("B"), inner)
    assert_same_results(digit_read, sch)
    assert "vi = T.axis.spatial(128, i * 16 + j)" in sch.mod["main"].script()


def test_compute_at_through_digit_store():
    @T.prim_func
    def digit_store(A: T.Buffer((64,), "float32"), C: T.Buffer((4, 16), "float32")):
        B = T.alloc_buffer((4, 16))
        for i in range(64):
            with T.block("B"):
                v = T.axis.spatial(64, i)
                B[v // 16, v % 16] = A[v] * 2.0
        for i, j in T.grid(4, 16):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vi, vj] + 1.0

    sch = _sch(digit_store)
    sch.compute_at(sch.get_block("B"), sch.get_loops(sch.get_block("C"))[0])
    assert_same_results(digit_store, sch)
    assert "v = T.axis.spatial(64, i * 16 + ax0)" in sch.mod["main"].script()


def test_compute_at_needing_part_of_the_low_digit():
    """Each iteration needs B[i, 0:8]: exactly the instances v = i * 16 + 0..7."""

    @T.prim_func
    def half(A: T.Buffer((64,), "float32"), C: T.Buffer((4, 8), "float32")):
        B = T.alloc_buffer((4, 16))
        for i in range(64):
            with T.block("B"):
                v = T.axis.spatial(64, i)
                B[v // 16, v % 16] = A[v] * 2.0
        for i, j in T.grid(4, 8):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vi, vj] + 1.0

    sch = _sch(half)
    sch.compute_at(sch.get_block("B"), sch.get_loops(sch.get_block("C"))[0])
    assert_same_results(half, sch)
    assert "for ax0 in range(8)" in sch.mod["main"].script()


def test_compute_at_refuses_rows_of_part_of_the_low_digit():
    """Each iteration needs B[2a:2a+2, 0:8]: not one interval of v (refused)."""

    @T.prim_func
    def rows(A: T.Buffer((64,), "float32"), C: T.Buffer((2, 2, 8), "float32")):
        B = T.alloc_buffer((4, 16))
        for i in range(64):
            with T.block("B"):
                v = T.axis.spatial(64, i)
                B[v // 16, v % 16] = A[v] * 2.0
        for a, b, c in T.grid(2, 2, 8):
            with T.block("C"):
                va, vb, vc = T.axis.remap("SSS", [a, b, c])
                C[va, vb, vc] = B[va * 2 + vb, vc] + 1.0

    sch = _sch(rows)
    with pytest.raises(T.ScheduleError, match=r"does not store 'B' at iter vars \(or digits"):
        sch.compute_at(sch.get_block("B"), sch.get_loops(sch.get_block("C"))[0])
