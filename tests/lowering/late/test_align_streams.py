"""``align_streams`` alone: a vector loop writing a stream is shifted at run time so its full
vector stores start on a cache line: a head and a tail written lane by lane, under a test
that the shift is nonzero and the arrays do not overlap."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from late_kit import (
    assert_same_numbers,
    before_late,
    loops,
    one_storage,
    output_at,
    run_pass,
    runs_avx2,
    stmts,
)

from irbuilder.ir import DeclBuffer, For, IfThenElse, LetStmt
from lowering.late.align_streams import SHIFT_NAME
from tvmscript import tir as T


@T.prim_func
def stencil(A: T.Buffer((8, 80), "float32"), B: T.Buffer((8, 80), "float32")):
    for i in range(1, 7):
        for j in T.vectorized(64):
            B[i, j + 1] = A[i - 1, j + 1] + A[i + 1, j + 1]


@pytest.fixture(autouse=True)
def _small_streams(small_streams: None) -> Iterator[None]:
    yield


def test_each_row_is_shifted_onto_a_cache_line() -> None:
    before = before_late(stencil)
    assert [int(f.extent) for f in loops(before)] == [6, 4]
    after = run_pass("align_streams", before)
    (shift,) = [s for s in stmts(after) if isinstance(s, LetStmt) and s.var.name == SHIFT_NAME]
    assert isinstance(shift.body, IfThenElse)
    aligned, original = shift.body.then_case, shift.body.else_case
    assert isinstance(original, For) and int(original.extent) == 4
    names = {s.var.name for s in stmts(after) if isinstance(s, LetStmt)}
    assert {"stream_vectors", "stream_rest"} <= names
    staged = {s.buffer.name for s in stmts(after) if isinstance(s, DeclBuffer)}
    assert {"stream_head", "stream_tail"} <= staged
    outer = loops(after)[0]
    assert int(outer.extent) == 6 and outer.body is shift  # one shift per row
    assert aligned is not None


def test_a_loop_not_writing_a_stream_is_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    import lowering.late.align_streams as align

    monkeypatch.setattr(align, "STREAMING_MIN_BYTES", 1 << 20)
    before = before_late(stencil)
    assert run_pass("align_streams", before) is before


@runs_avx2
@pytest.mark.parametrize("offset", [0, 1, 3, 15])
def test_same_numbers_for_every_alignment_of_the_output(offset: int) -> None:
    before = before_late(stencil)
    after = run_pass("align_streams", before)
    assert_same_numbers(stencil, before, after, lambda rng: output_at(stencil, offset, rng))


@runs_avx2
def test_same_numbers_when_the_arrays_overlap() -> None:
    before = before_late(stencil)
    after = run_pass("align_streams", before)
    assert_same_numbers(stencil, before, after, lambda rng: one_storage(stencil, [0, 3], rng))
