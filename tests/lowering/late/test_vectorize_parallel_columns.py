"""``vectorize_parallel_columns``: a parallel loop over the contiguous dimension, around
serial loops, runs neighbouring iterations in vector lanes (bit-exact, leftover columns as
written); strided, gathering or allocating bodies are left alone. Also the vectorizer's
rule it relies on: a ``T.vectorized`` loop around a serial loop vectorizes the inner body."""

from __future__ import annotations

import numpy as np
import pytest
from late_kit import AVX2, AVX512, assert_same_numbers, before_late, loops, run_pass, runs_avx2

import lowering
import tvmscript
from irbuilder.ir import ForKind, PrimFunc, Ramp, post_order_visit
from lowering.target import Target
from tvmscript import tir as T


@T.prim_func
def column_cumsum(A: T.Buffer((9, 37), "float32"), O: T.Buffer((9, 37), "float32")):
    for j in T.parallel(37):
        O[0, j] = A[0, j]
        for i in range(1, 9):
            O[i, j] = O[i - 1, j] + A[i, j]


@T.prim_func
def column_scale(A: T.Buffer((6, 32), "int32"), w: T.Buffer((6,), "int32"),
                 O: T.Buffer((6, 32), "int32")):
    for j in T.parallel(32):
        for i in range(6):
            O[i, j] = A[i, j] * w[i] + 1


@T.prim_func
def row_sums(A: T.Buffer((32, 8), "float32"), S: T.Buffer((32,), "float32")):
    for i in T.parallel(32):  # the parallel variable steps a row: not contiguous lanes
        S[i] = T.float32(0)
        for k in range(8):
            S[i] = S[i] + A[i, k]


@T.prim_func
def gathered(A: T.Buffer((6, 32), "float32"), I: T.Buffer((32,), "int32"),
             O: T.Buffer((6, 32), "float32")):
    for j in T.parallel(32):
        for i in range(6):
            O[i, j] = A[i, I[j]]


@T.prim_func
def explicit(A: T.Buffer((5, 32), "float32"), O: T.Buffer((5, 32), "float32")):
    for jo in T.parallel(2):
        for ji in T.vectorized(16):
            O[0, jo * 16 + ji] = A[0, jo * 16 + ji]
            for i in range(1, 5):
                O[i, jo * 16 + ji] = O[i - 1, jo * 16 + ji] * T.float32(0.5) + A[i, jo * 16 + ji]


def _ramps(func: PrimFunc) -> int:
    count = 0

    def visit(node: object) -> None:
        nonlocal count
        count += isinstance(node, Ramp)

    post_order_visit(func.body, visit)
    return count


@pytest.mark.parametrize(("target", "lanes"), [(AVX2, 8), (AVX512, 16)], ids=["avx2", "avx512"])
def test_columns_run_in_lanes_with_the_leftover_as_written(target: Target,
                                                           lanes: int) -> None:
    after = run_pass("vectorize_parallel_columns", before_late(column_cumsum, target), target)
    named = {f.loop_var.name: f for f in loops(after)}
    group, rest = named["j_lanes"], named["j_rest"]
    assert (group.kind, int(group.extent)) == (ForKind.PARALLEL, 37 // lanes)
    assert (rest.kind, int(rest.extent)) == (ForKind.SERIAL, 37 % lanes)
    text = after.script()
    assert f"O_flat[T.Ramp(i * 37 + j_lanes * {lanes}, 1, {lanes})]" in text
    assert "for i in T.serial(1, 9):" in text  # the inner loop runs once for all lanes


def test_other_parallel_loops_are_left_alone() -> None:
    for func in (row_sums, gathered):
        before = before_late(func, AVX2)
        assert run_pass("vectorize_parallel_columns", before, AVX2) is before, func.name


@runs_avx2
def test_same_numbers_as_the_interpreter() -> None:
    for func in (column_cumsum, column_scale):
        before = before_late(func, AVX2)
        after = run_pass("vectorize_parallel_columns", before, AVX2)
        assert after is not before
        assert_same_numbers(func, before, after)


@runs_avx2
def test_a_vectorized_loop_around_a_serial_loop_vectorizes_its_body() -> None:
    lowered = lowering.lower(explicit, target=AVX2)
    assert _ramps(lowered) > 0
    assert all(f.kind is not ForKind.VECTORIZED for f in loops(lowered))
    kernel = tvmscript.build(explicit, target=AVX2, cache=False, fp_contract=False)
    rng = np.random.default_rng(8)
    A = rng.standard_normal((5, 32)).astype("float32")
    O = np.zeros((5, 32), "float32")
    kernel(A, O)
    want = np.zeros_like(A)
    tvmscript.build(explicit, target="interp")(A, want)
    np.testing.assert_array_equal(O, want)


@runs_avx2
def test_the_default_build_agrees_with_numpy_on_every_run() -> None:
    kernel = tvmscript.build(column_cumsum, target=AVX2, cache=False)
    assert "j_lanes" in kernel.get_source("tir")
    A = np.random.default_rng(3).standard_normal((9, 37)).astype("float32")
    want = np.cumsum(A, axis=0, dtype=np.float32)
    for _ in range(5):  # parallel code: several runs
        O = np.zeros_like(A)
        kernel(A, O)
        np.testing.assert_array_equal(O, want)


@T.prim_func
def wide_cumsum(A: T.Buffer((3, 4100), "float32"), O: T.Buffer((3, 4100), "float32")):
    for j in T.parallel(4100):
        O[0, j] = A[0, j]
        for i in range(1, 3):
            O[i, j] = O[i - 1, j] + A[i, j]


@pytest.mark.parametrize("target", [AVX2, AVX512], ids=["avx2", "avx512"])
def test_long_loops_take_four_cache_lines_of_columns_per_group(target: Target) -> None:
    # 4100 columns: 64-lane groups (256 bytes) leave 64 groups; 4 columns are left over
    after = run_pass("vectorize_parallel_columns", before_late(wide_cumsum, target), target)
    named = {f.loop_var.name: f for f in loops(after)}
    assert int(named["j_lanes"].extent) == 64 and int(named["j_rest"].extent) == 4
    assert "O_flat[T.Ramp(i * 4100 + j_lanes * 64, 1, 64)]" in after.script()
    # 37 columns cannot leave 64 groups of anything wider than a vector
    short = run_pass("vectorize_parallel_columns", before_late(column_cumsum, target), target)
    assert "j_lanes * 8, 1, 8)" in short.script() or "j_lanes * 16, 1, 16)" in short.script()


@runs_avx2
def test_wide_groups_give_the_interpreter_numbers() -> None:
    before = before_late(wide_cumsum, AVX2)
    after = run_pass("vectorize_parallel_columns", before, AVX2)
    assert "1, 64)" in after.script()
    assert_same_numbers(wide_cumsum, before, after)
