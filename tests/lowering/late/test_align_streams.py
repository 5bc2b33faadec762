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


@T.prim_func
def symbolic_stencil(a: T.handle, b: T.handle):
    m, w = T.int32(), T.int32()
    A = T.match_buffer(a, (m, w), "float32")
    B = T.match_buffer(b, (m, w), "float32")
    for i in range(m - 2):
        for jo in range((w - 2) // 16):
            for ji in T.vectorized(16):
                B[i + 1, jo * 16 + ji + 1] = A[i, jo * 16 + ji + 1] + A[i + 2, jo * 16 + ji + 1]


def test_a_symbolic_trip_count_is_versioned_on_its_size_at_run_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import lowering.late.align_streams as align

    monkeypatch.setattr(align, "STREAMING_MIN_FOOTPRINT", 128)
    before = before_late(symbolic_stencil)
    after = run_pass("align_streams", before)
    (shift,) = [s for s in stmts(after) if isinstance(s, LetStmt) and s.var.name == SHIFT_NAME]
    assert isinstance(shift.body, IfThenElse)
    # the loop runs at least twice and the output is a stream at run time: its size and the
    # arrays' total reach the (patched) thresholds, in bytes
    text = after.script()
    size = 'T.int64(4) * T.Cast("int64", m) * T.Cast("int64", w)'
    assert f"stream_shift != 0 and (w - 2) // 16 >= 2 and ({size} >= T.int64(64) and " in text
    assert f"{size} + {size} >= T.int64(128))" in text
    assert isinstance(shift.body.else_case, For)  # the original loop otherwise


@runs_avx2
@pytest.mark.parametrize(("rows", "cols", "offset"), [
    (3, 34, 0), (3, 34, 5), (5, 40, 1), (4, 3, 2), (6, 97, 3), (2, 50, 0), (9, 130, 15),
])
def test_symbolic_sizes_give_the_same_numbers(rows: int, cols: int, offset: int) -> None:
    import numpy as np
    from late_kit import AVX2, compiled_exactly

    before = before_late(symbolic_stencil)
    after = run_pass("align_streams", before)
    assert before is not after
    rng = np.random.default_rng(rows * 1000 + cols)
    A = rng.standard_normal((rows, cols)).astype("float32")
    expected = np.zeros((rows, cols), "float32")
    body = (cols - 2) // 16 * 16
    expected[1:-1, 1 : body + 1] = A[:-2, 1 : body + 1] + A[2:, 1 : body + 1]
    for func in (before, after):
        storage = np.zeros(rows * cols + offset, "float32")
        out = storage[offset:].reshape(rows, cols)
        compiled_exactly(func, AVX2)(A, out)
        assert np.array_equal(out, expected)
    # overlapping arguments: the original loop runs (same result as before the rewrite)
    results = []
    for func in (before, after):
        storage = np.random.default_rng(7).standard_normal(rows * cols + 3).astype("float32")
        view_a, view_b = storage[3:].reshape(rows, cols), storage[:-3].reshape(rows, cols)
        compiled_exactly(func, AVX2)(view_a, view_b)
        results.append(storage)
    assert np.array_equal(results[0], results[1])


@T.prim_func
def symbolic_rows_from_one(a: T.handle, b: T.handle):
    m, w = T.int32(), T.int32()
    A = T.match_buffer(a, (m, w), "float32")
    B = T.match_buffer(b, (m, w), "float32")
    for i in range(1, m - 1):
        for jo in range((w - 2) // 16):
            for ji in T.vectorized(16):
                B[i, jo * 16 + ji + 1] = A[i - 1, jo * 16 + ji + 1] + A[i + 1, jo * 16 + ji + 1]


def test_a_loop_from_one_to_a_symbolic_bound_prints_and_parses_back() -> None:
    # printed as range(1, 1 + (m - 2)) after simplification; the parser takes ``start + e``
    # as extent ``e``, so the lowered function parses back to itself
    import tvmscript
    from irbuilder.ir import structural_equal

    after = run_pass("align_streams", before_late(symbolic_rows_from_one))
    text = after.script()
    assert "for i in T.parallel(1, 1 + (m - 2), " in text
    assert structural_equal(tvmscript.from_source(text), after)
