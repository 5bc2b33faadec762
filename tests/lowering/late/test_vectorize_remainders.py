"""``vectorize_remainders`` alone: the scalar remainder loop ``vectorize_loop`` leaves after
the full-width vectors becomes power-of-two vectors (then scalars for what is left)."""

from __future__ import annotations

from late_kit import AVX2, assert_same_numbers, before_late, loops, run_pass, runs_avx2, stmts

from irbuilder.ir import BufferStore, For, PrimFunc, Ramp
from lowering.transforms.vectorize import REMAINDER_ANNOTATION
from tvmscript import tir as T


@T.prim_func
def add_one(A: T.Buffer((23,), "float32"), B: T.Buffer((23,), "float32")):
    for i in T.vectorized(23):
        B[i] = A[i] + T.float32(1)


def _remainders(func: PrimFunc) -> list[For]:
    return [loop for loop in loops(func) if REMAINDER_ANNOTATION in loop.annotations]


def _store_widths(func: PrimFunc) -> list[int]:
    widths = []
    for s in stmts(func):
        if isinstance(s, BufferStore):
            index = s.indices[0]
            widths.append(index.lanes if isinstance(index, Ramp) else 1)
    return sorted(widths, reverse=True)


def test_the_remainder_loop_becomes_narrower_vectors() -> None:
    before = before_late(add_one)  # 16 lanes: one vector, a remainder of 7
    assert [int(loop.extent) for loop in _remainders(before)] == [7]
    assert _store_widths(before) == [16, 1]
    after = run_pass("vectorize_remainders", before)
    assert not _remainders(after)
    assert _store_widths(after) == [16, 4, 2, 1]  # 7 = 4 + 2 + 1


def test_narrower_full_vectors_leave_a_longer_remainder() -> None:
    before = before_late(add_one, AVX2, {"vectorize_loop": {"max_width": 4}})
    assert [int(loop.extent) for loop in _remainders(before)] == [3]  # 23 = 5 * 4 + 3
    assert _store_widths(before) == [4, 1]
    after = run_pass("vectorize_remainders", before)
    assert _store_widths(after) == [4, 2, 1]


def test_nothing_to_do_without_a_remainder() -> None:
    @T.prim_func
    def exact(A: T.Buffer((32,), "float32"), B: T.Buffer((32,), "float32")):
        for i in T.vectorized(32):
            B[i] = A[i] * T.float32(3)

    before = before_late(exact, AVX2)
    assert run_pass("vectorize_remainders", before) is before


@runs_avx2
def test_same_numbers_before_and_after() -> None:
    for width in (16, 4):
        before = before_late(add_one, AVX2, {"vectorize_loop": {"max_width": width}})
        assert_same_numbers(add_one, before, run_pass("vectorize_remainders", before))
