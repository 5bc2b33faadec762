"""``vectorize_streams`` alone: a serial loop filling a large write-only array becomes a vector
loop of one cache line per store, under a run-time test that the arrays do not overlap."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from late_kit import (
    assert_same_numbers,
    before_late,
    loops,
    one_storage,
    run_pass,
    runs_avx2,
    stmts,
)

from irbuilder.ir import BufferStore, For, IfThenElse, LetStmt, Ramp
from lowering.late.stream_vectorize import VERSION_NAME
from tvmscript import tir as T

N = 1024


@T.prim_func
def double(A: T.Buffer((N,), "float32"), B: T.Buffer((N,), "float32")):
    for i in range(N):
        B[i] = A[i] * T.float32(2)


@pytest.fixture(autouse=True)
def _small_streams(small_streams: None) -> Iterator[None]:
    yield


def test_the_loop_is_versioned_on_a_no_overlap_test() -> None:
    before = before_late(double)
    assert [(int(f.extent), f.kind.name) for f in loops(before)] == [(N, "SERIAL")]
    after = run_pass("vectorize_streams", before)
    lets = [s for s in stmts(after) if isinstance(s, LetStmt) and s.var.name == VERSION_NAME]
    assert len(lets) == 1
    (branch,) = [s for s in stmts(after) if isinstance(s, IfThenElse)]
    assert branch.condition is lets[0].var
    fast, slow = branch.then_case, branch.else_case
    assert isinstance(fast, For) and isinstance(slow, For)
    assert int(fast.extent) == N // 16  # one 64-byte line of float32 per store
    (store,) = [s for s in stmts(after) if isinstance(s, BufferStore) and
                isinstance(s.indices[0], Ramp)]
    assert store.indices[0].lanes == 16
    assert int(slow.extent) == N  # the original loop, for overlapping arrays


def test_a_small_output_is_not_a_stream(monkeypatch: pytest.MonkeyPatch) -> None:
    import lowering.late.align_streams as align

    monkeypatch.setattr(align, "STREAMING_MIN_BYTES", 4 * N + 4)
    before = before_late(double)
    assert run_pass("vectorize_streams", before) is before


@runs_avx2
def test_same_numbers_before_and_after() -> None:
    before = before_late(double)
    after = run_pass("vectorize_streams", before)
    assert_same_numbers(double, before, after)
    # B one element after A: the arrays overlap, so the original (sequential) loop runs
    assert_same_numbers(double, before, after, lambda rng: one_storage(double, [0, 1], rng))
