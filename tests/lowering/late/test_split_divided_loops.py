"""``split_divided_loops``: a loop whose variable is divided by a small constant runs the
quotient, one body copy per remainder, in the same order; other loops are left alone."""

from __future__ import annotations

import numpy as np
import pytest
from late_kit import AVX2, assert_same_numbers, before_late, loops, run_pass, runs_avx2

import lowering
import tvmscript
from irbuilder.ir import PrimFunc, structural_equal
from tvmscript import tir as T


@T.prim_func
def upsample(A: T.Buffer((3, 4, 5), "float32"), O: T.Buffer((3, 8, 10), "float32")):
    for c, h, w in T.grid(3, 8, 10):
        O[c, h, w] = A[c, h // 2, w // 2]


@T.prim_func
def interleave(A: T.Buffer((12,), "int32"), B: T.Buffer((12,), "int32"),
               O: T.Buffer((36,), "int32")):
    for k in range(36):  # k % 3 picks the source, k // 3 the element
        O[k] = T.Select(k % 3 == 0, A[k // 3], B[k // 3] * (k % 3))


@T.prim_func
def odd_extent(A: T.Buffer((4,), "float32"), O: T.Buffer((7,), "float32")):
    for w in range(7):
        O[w] = A[w // 2]


@T.prim_func
def two_divisors(A: T.Buffer((12,), "float32"), O: T.Buffer((12,), "float32")):
    for w in range(12):
        O[w] = A[w // 2] + A[w // 3]


def _serial(func: PrimFunc) -> PrimFunc:
    return before_late(func, AVX2, config={"parallelize_loops": {"enabled": False}})


def test_an_upsample_reads_contiguously_in_the_quotient() -> None:
    after = run_pass("split_divided_loops", _serial(upsample))
    names = {f.loop_var.name: int(f.extent) for f in loops(after)}
    assert names["w_q"] == 5 and names["h_q"] == 4
    text = after.script()
    assert "// 2" not in text
    assert structural_equal(tvmscript.from_source(text), after)


def test_remainders_become_constants() -> None:
    after = run_pass("split_divided_loops", _serial(interleave))
    text = after.script()
    assert "for k_q in range(12):" in text
    assert "% 3" not in text and "// 3" not in text


def test_other_loops_are_left_alone() -> None:
    for func in (odd_extent, two_divisors):
        before = _serial(func)
        assert run_pass("split_divided_loops", before) is before, func.name


@runs_avx2
def test_same_numbers_as_the_interpreter() -> None:
    for func in (upsample, interleave):
        before = _serial(func)
        after = run_pass("split_divided_loops", before)
        assert after is not before
        assert_same_numbers(func, before, after)


@runs_avx2
def test_the_default_build_agrees_with_numpy() -> None:
    kernel = tvmscript.build(upsample, target=AVX2, cache=False)
    assert "w_q" in kernel.get_source("tir")
    A = np.random.default_rng(1).standard_normal((3, 4, 5)).astype("float32")
    O = np.zeros((3, 8, 10), "float32")
    kernel(A, O)
    np.testing.assert_array_equal(O, A.repeat(2, axis=1).repeat(2, axis=2))


# -- loops fused by a schedule: unfused by their smallest divisor -------------------------


@T.prim_func
def fused_broadcast(A: T.Buffer((40, 24), "float32"), B: T.Buffer((24,), "float32"),
                    O: T.Buffer((40, 24), "float32")):
    for f in T.parallel(960):
        with T.block("add"):
            v0 = T.axis.spatial(40, f // 24)
            v1 = T.axis.spatial(24, f % 24)
            O[v0, v1] = A[v0, v1] + B[v1]


@T.prim_func
def fused_broadcast_serial(A: T.Buffer((40, 24), "float32"), B: T.Buffer((24,), "float32"),
                           O: T.Buffer((40, 24), "float32")):
    for f in range(960):
        O[f // 24, f % 24] = A[f // 24, f % 24] + B[f % 24]


@T.prim_func
def fused_three_axes(A: T.Buffer((4, 16, 16), "float32"), S: T.Buffer((4,), "float32"),
                     O: T.Buffer((4, 16, 16), "float32")):
    for f in T.parallel(1024):
        with T.block("scale"):
            c = T.axis.spatial(4, f // 256)
            h = T.axis.spatial(16, f % 256 // 16)
            w = T.axis.spatial(16, f % 16)
            O[c, h, w] = A[c, h, w] * S[c] + T.Cast("float32", h - w)


@T.prim_func
def fused_not_dividing(A: T.Buffer((1000,), "float32"), B: T.Buffer((24,), "float32"),
                       O: T.Buffer((1000,), "float32")):
    for f in range(1000):  # 1000 is not a multiple of 24: no row structure to recover
        O[f] = A[f] + B[f % 24]


@T.prim_func
def fused_unrelated_divisors(A: T.Buffer((960,), "float32"), B: T.Buffer((24,), "float32"),
                             C: T.Buffer((20,), "float32"), O: T.Buffer((960,), "float32")):
    for f in range(960):  # 20 is not a multiple of 24: unfusing by 20 would not simplify 24
        O[f] = A[f] + B[f % 24] + C[f % 20]


def test_a_fused_loop_runs_its_rows_in_an_inner_loop() -> None:
    before = _serial(fused_broadcast)
    after = run_pass("split_divided_loops", before)
    found = {f.loop_var.name: (int(f.extent), f.kind.value) for f in loops(after)}
    assert found["f_o"] == (40, "parallel") and found["f_i"] == (24, "serial")
    text = after.script()
    assert "% 24" not in text and "// 24" not in text
    assert "B_flat[f_i]" in text
    assert structural_equal(tvmscript.from_source(text), after)


def test_three_fused_axes_unfuse_by_the_innermost() -> None:
    after = run_pass("split_divided_loops", _serial(fused_three_axes))
    text = after.script()
    assert "for f_o in T.parallel(64):" in text and "for f_i in range(16):" in text
    # (16 * f_o + f_i) // 256 is f_o // 16 and its % 256 // 16 is f_o % 16
    assert "S_flat[f_o // 16]" in text
    assert "// 256" not in text and "% 256" not in text


def test_a_serial_fused_loop_stays_serial() -> None:
    after = run_pass("split_divided_loops", _serial(fused_broadcast_serial))
    kinds = {f.loop_var.name: f.kind.value for f in loops(after)}
    assert kinds == {"f_o": "serial", "f_i": "serial"}


def test_fused_loops_without_rows_are_left_alone() -> None:
    for func in (fused_not_dividing, fused_unrelated_divisors):
        before = _serial(func)
        assert run_pass("split_divided_loops", before) is before, func.name


@runs_avx2
def test_unfused_loops_give_the_interpreters_numbers() -> None:
    for func in (fused_broadcast, fused_broadcast_serial, fused_three_axes):
        for lowered in (_serial(func), before_late(func, AVX2)):
            after = run_pass("split_divided_loops", lowered)
            assert after is not lowered
            assert_same_numbers(func, lowered, after)


@T.prim_func
def concat_fused(A: T.Buffer((16, 30), "float32"), B: T.Buffer((16, 50), "float32"),
                 O: T.Buffer((16, 80), "float32")):
    for f in T.parallel(1280):
        with T.block("concat"):
            v0 = T.axis.spatial(16, f // 80)
            v1 = T.axis.spatial(80, f % 80)
            O[v0, v1] = T.if_then_else(30 <= v1, B[v0, v1 - 30], A[v0, v1])


def test_an_unfused_row_is_then_partitioned() -> None:
    # split_divided_loops runs before partition_loops: the concatenation's row splits at 30
    lowered = lowering.lower(concat_fused, target=AVX2)
    text = lowered.script()
    assert "if_then_else" not in text
    extents = [int(f.extent) for f in loops(lowered) if f.kind.value == "serial"]
    assert {30, 50} <= set(extents)


@runs_avx2
def test_an_unfused_concatenation_gives_the_interpreters_numbers() -> None:
    kernel = tvmscript.build(concat_fused, target=AVX2, cache=False)
    rng = np.random.default_rng(3)
    A = rng.standard_normal((16, 30)).astype("float32")
    B = rng.standard_normal((16, 50)).astype("float32")
    O = np.zeros((16, 80), "float32")
    kernel(A, B, O)
    np.testing.assert_array_equal(O, np.concatenate([A, B], axis=1))


@T.prim_func
def fused_by_hand(A: T.Buffer((300, 240), "float32"), B: T.Buffer((240,), "float32"),
                  O: T.Buffer((300, 240), "float32")):
    for f in range(72000):  # parallelize_loops makes it parallel behind its no-overlap test
        O[f // 240, f % 240] = A[f // 240, f % 240] + B[f % 240]


def test_an_automatically_parallel_fused_loop_keeps_its_test_on_the_rows() -> None:
    lowered = before_late(fused_by_hand, AVX2)
    (loop,) = [f for f in loops(lowered) if f.kind.value == "parallel"]
    assert "tvmscript.parallel_if" in loop.annotations
    after = run_pass("split_divided_loops", lowered)
    outer = [f for f in loops(after) if f.kind.value == "parallel"]
    assert len(outer) == 1 and int(outer[0].extent) == 300
    assert outer[0].annotations == loop.annotations
    assert "B_flat[f_i]" in after.script()


@runs_avx2
@pytest.mark.parametrize("offset", [0, 10, 72000])
def test_a_fused_loop_on_overlapping_arrays_gives_the_interpreters_numbers(offset: int) -> None:
    # O a view into A's storage (offset 0: the same elements; 10: shifted; 72000: apart)
    def make(seed: int) -> list[np.ndarray]:
        rng = np.random.default_rng(seed)
        storage = rng.standard_normal(72000 + 72000 + 240).astype("float32")
        A = storage[:72000].reshape(300, 240)
        O = storage[offset : offset + 72000].reshape(300, 240)
        return [A, storage[-240:], O]

    interp = tvmscript.build(fused_by_hand, target="interp")
    kernel = tvmscript.build(fused_by_hand, target=AVX2, cache=False)
    for seed in range(3):
        want, got = make(seed), make(seed)
        interp(*want)
        kernel(*got)
        np.testing.assert_array_equal(got[2], want[2])
