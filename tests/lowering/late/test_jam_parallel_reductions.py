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
