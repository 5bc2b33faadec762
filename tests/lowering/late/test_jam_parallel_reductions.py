"""``jam_parallel_reductions`` alone: a parallel loop whose iterations each run one scalar
reduction chain runs four iterations per thread task, their chains interleaved in one inner
loop (four independent dependency chains instead of one)."""

from __future__ import annotations

from late_kit import assert_same_numbers, before_late, loops, run_pass, runs_avx2

from irbuilder.ir import ForKind, SeqStmt
from tvmscript import tir as T


@T.prim_func
def row_sums(A: T.Buffer((16, 64), "float32"), S: T.Buffer((16,), "float32")):
    for i in T.parallel(16):
        acc = T.decl_buffer((1,), "float32")
        acc[0] = T.float32(0)
        for k in range(64):
            acc[0] = acc[0] + A[i, k]
        S[i] = acc[0]


def test_four_rows_per_parallel_iteration_in_one_inner_loop() -> None:
    before = before_late(row_sums)
    assert [(int(f.extent), f.kind) for f in loops(before)] == [
        (16, ForKind.PARALLEL), (64, ForKind.SERIAL)]
    after = run_pass("jam_parallel_reductions", before)
    outer, inner = loops(after)
    assert (int(outer.extent), outer.kind) == (4, ForKind.PARALLEL)
    assert (int(inner.extent), inner.kind) == (64, ForKind.SERIAL)
    assert isinstance(inner.body, SeqStmt) and len(inner.body.seq) == 4  # four chains


def test_a_serial_outer_loop_is_left_alone() -> None:
    @T.prim_func
    def serial_rows(A: T.Buffer((16, 64), "float32"), S: T.Buffer((16,), "float32")):
        for i in range(16):
            acc = T.decl_buffer((1,), "float32")
            acc[0] = T.float32(0)
            for k in range(64):
                acc[0] = acc[0] + A[i, k]
            S[i] = acc[0]

    before = before_late(serial_rows)
    assert run_pass("jam_parallel_reductions", before) is before


@runs_avx2
def test_same_numbers_before_and_after() -> None:
    before = before_late(row_sums)
    assert_same_numbers(row_sums, before, run_pass("jam_parallel_reductions", before))


@T.prim_func
def sorted_triples(A: T.Buffer((16, 66), "float32"), O: T.Buffer((16, 64), "float32")):
    for i in T.parallel(16):
        for j in range(64):  # a per-pixel scratch: set first in each iteration, then sorted
            s = T.alloc_buffer((3,), "float32")
            s[0] = A[i, j]
            s[1] = A[i, j + 1]
            s[2] = A[i, j + 2]
            s[0] = T.min(s[0], s[1])
            s[1] = T.max(A[i, j], s[1])
            s[1] = T.min(s[1], s[2])
            O[i, j] = s[1]


@T.prim_func
def guarded_maxima(A: T.Buffer((16, 64), "float32"), S: T.Buffer((16,), "float32")):
    for i in T.parallel(16):
        m = T.alloc_buffer((1,), "float32")
        m[0] = T.float32(-1e30)
        for k in range(64):
            if A[i, k] > m[0]:  # the store reads nothing of m, its guard does
                m[0] = A[i, k]
        S[i] = m[0]


def test_a_scratch_set_first_in_each_iteration_is_no_chain() -> None:
    before = before_late(sorted_triples)
    assert run_pass("jam_parallel_reductions", before) is before


def test_a_guarded_store_carries_its_value_and_is_jammed() -> None:
    before = before_late(guarded_maxima)
    after = run_pass("jam_parallel_reductions", before)
    outer = loops(after)[0]
    assert (int(outer.extent), outer.kind) == (4, ForKind.PARALLEL)


@runs_avx2
def test_guarded_maxima_same_numbers_jammed() -> None:
    before = before_late(guarded_maxima)
    assert_same_numbers(guarded_maxima, before, run_pass("jam_parallel_reductions", before))
