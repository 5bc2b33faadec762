"""``mark_streams`` alone: the function attr ``tvms.streaming_stores`` lists the parameters
code generation writes with non-temporal stores (large arrays the function never reads)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from late_kit import assert_same_numbers, before_late, run_pass, runs_avx2

from lowering.late.align_streams import STREAMS_ATTR
from tvmscript import tir as T


@T.prim_func
def scale_into(A: T.Buffer((256,), "float32"), B: T.Buffer((256,), "float32"),
               C: T.Buffer((256,), "float32")):
    for i in range(256):
        B[i] = A[i] * T.float32(2)
        C[i] = B[i] + T.float32(1)  # B is read back: not a stream


@pytest.fixture(autouse=True)
def _small_streams(small_streams: None) -> Iterator[None]:
    yield


def test_the_write_only_parameter_is_listed() -> None:
    before = before_late(scale_into)
    assert STREAMS_ATTR not in before.attrs
    after = run_pass("mark_streams", before)
    assert list(after.attrs[STREAMS_ATTR]) == [2]  # C, the third parameter
    assert after.body is before.body  # only the attribute changes


def test_marking_twice_changes_nothing() -> None:
    once = run_pass("mark_streams", before_late(scale_into))
    assert run_pass("mark_streams", once) is once


def test_nothing_is_marked_below_the_threshold(monkeypatch: pytest.MonkeyPatch) -> None:
    import lowering.late.align_streams as align

    monkeypatch.setattr(align, "STREAMING_MIN_BYTES", 2048)
    before = before_late(scale_into)
    assert run_pass("mark_streams", before) is before


@runs_avx2
def test_same_numbers_before_and_after() -> None:
    before = before_late(scale_into)
    assert_same_numbers(scale_into, before, run_pass("mark_streams", before))
