"""``split_divided_loops``: a loop whose variable is divided by a small constant runs the
quotient, one body copy per remainder, in the same order; other loops are left alone."""

from __future__ import annotations

import numpy as np
from late_kit import AVX2, assert_same_numbers, before_late, loops, run_pass, runs_avx2

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
