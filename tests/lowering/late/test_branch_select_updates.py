"""``branch_select_updates``: a reduction step that keeps its accumulators with selects on
one condition stores them in a branch instead; bit for bit the interpreter's numbers, ties,
NaNs and overlapping accumulators included. Other selects are left alone."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from late_kit import AVX2, before_late, one_storage, pinned_targets, run_pass

import tvmscript
from irbuilder.ir import IfThenElse, LetStmt, PrimFunc, Select, structural_equal
from irbuilder.ir.functor import post_order_visit
from lowering.target import Target
from tvmscript import tir as T


@T.prim_func
def argmax_tuple(A: T.Buffer((24, 40), "float32"), idx: T.Buffer((24,), "int32"),
                 val: T.Buffer((24,), "float32")):
    for i0, k in T.grid(24, 40):
        with T.block("argmax"):
            v_i0, v_k = T.axis.remap("SR", [i0, k])
            with T.init():
                idx[v_i0] = -1
                val[v_i0] = T.min_value("float32")
            v_idx: T.int32 = T.Select(val[v_i0] > A[v_i0, v_k] or (
                val[v_i0] == A[v_i0, v_k] and idx[v_i0] < v_k), idx[v_i0], v_k)
            v_val: T.float32 = T.Select(val[v_i0] > A[v_i0, v_k] or (
                val[v_i0] == A[v_i0, v_k] and idx[v_i0] < v_k), val[v_i0], A[v_i0, v_k])
            idx[v_i0] = v_idx
            val[v_i0] = v_val


@T.prim_func
def argmax_parallel(A: T.Buffer((64, 40), "float32"), idx: T.Buffer((64,), "int32"),
                    val: T.Buffer((64,), "float32")):
    for i0 in T.parallel(64):  # TVM's form under a parallel row loop: every core a share
        for k in range(40):
            with T.block("argmax"):
                v_i0, v_k = T.axis.remap("SR", [i0, k])
                with T.init():
                    idx[v_i0] = -1
                    val[v_i0] = T.min_value("float32")
                v_idx: T.int32 = T.Select(val[v_i0] > A[v_i0, v_k] or (
                    val[v_i0] == A[v_i0, v_k] and idx[v_i0] < v_k), idx[v_i0], v_k)
                v_val: T.float32 = T.Select(val[v_i0] > A[v_i0, v_k] or (
                    val[v_i0] == A[v_i0, v_k] and idx[v_i0] < v_k), val[v_i0], A[v_i0, v_k])
                idx[v_i0] = v_idx
                val[v_i0] = v_val


@T.prim_func
def min_and_arg(A: T.Buffer((8, 30), "float32"), pos: T.Buffer((8,), "float32"),
                low: T.Buffer((8,), "float32")):
    # the kept element on the false side, both accumulators float32 (so that a test can make
    # them overlap each other and the input)
    for i in range(8):
        low[i] = T.float32(3e38)
        pos[i] = T.float32(-1)
        for k in range(30):
            p: T.float32 = T.Select(A[i, k] < low[i], T.Cast("float32", k), pos[i])
            m: T.float32 = T.Select(A[i, k] < low[i], A[i, k], low[i])
            pos[i] = p
            low[i] = m


@T.prim_func
def two_conditions(A: T.Buffer((8, 30), "float32"), pos: T.Buffer((8,), "float32"),
                   low: T.Buffer((8,), "float32")):
    for i, k in T.grid(8, 30):
        p: T.float32 = T.Select(A[i, k] < low[i], T.Cast("float32", k), pos[i])
        m: T.float32 = T.Select(A[i, k] <= low[i], A[i, k], low[i])
        pos[i] = p
        low[i] = m


@T.prim_func
def keeps_another_element(A: T.Buffer((8, 30), "float32"), O: T.Buffer((9,), "float32")):
    for i, k in T.grid(8, 30):
        m: T.float32 = T.Select(A[i, k] < O[i], A[i, k], O[i + 1])
        O[i] = m


@T.prim_func
def streaming_select(A: T.Buffer((8, 30), "float32"), O: T.Buffer((8, 30), "float32")):
    for i, k in T.grid(8, 30):
        m: T.float32 = T.Select(A[i, k] < T.float32(0), A[i, k], O[i, k])
        O[i, k] = m


def _branches(func: PrimFunc) -> int:
    found = 0

    def visit(node: object) -> None:
        nonlocal found
        found += isinstance(node, IfThenElse) and isinstance(node.then_case, LetStmt)

    post_order_visit(func.body, visit)
    return found


def _selects(func: PrimFunc) -> int:
    found: list[object] = []
    post_order_visit(func.body, lambda n: found.append(n) if isinstance(n, Select) else None)
    return len(found)


def test_the_tuple_argmax_becomes_a_branch() -> None:
    before = before_late(argmax_tuple, AVX2)
    after = run_pass("branch_select_updates", before)
    assert _selects(before) == 2 and _selects(after) == 0
    assert _branches(after) == 1
    text = after.script()
    assert "if not (val_flat[i0] > A_flat[i0 * 40 + k]" in text
    assert structural_equal_roundtrip(after)


def test_a_false_side_keeper_tests_the_condition_itself() -> None:
    after = run_pass("branch_select_updates", before_late(min_and_arg, AVX2))
    assert _branches(after) == 1 and _selects(after) == 0
    assert "if A_flat[i * 30 + k] < low_flat[i]:" in after.script()


@pytest.mark.parametrize("func", [two_conditions, keeps_another_element, streaming_select],
                         ids=lambda f: f.name)
def test_other_selects_are_left_alone(func: PrimFunc) -> None:
    before = before_late(func, AVX2)
    assert run_pass("branch_select_updates", before) is before


def structural_equal_roundtrip(func: PrimFunc) -> bool:
    return structural_equal(tvmscript.from_source(func.script()), func)


def _ties_and_nans(shape: tuple[int, int], seed: int) -> np.ndarray[Any, Any]:
    rng = np.random.default_rng(seed)
    a = rng.integers(-3, 4, shape).astype("float32")  # many ties
    a[rng.random(shape) < 0.05] = np.nan
    return a


@pytest.mark.parametrize("target", pinned_targets())
@pytest.mark.parametrize("func", [argmax_tuple, argmax_parallel], ids=lambda f: f.name)
def test_argmax_gives_the_interpreters_numbers(target: Target, func: PrimFunc) -> None:
    interp = tvmscript.build(func, target="interp")
    kernel = tvmscript.build(func, target=target, cache=False)
    assert "if not" in kernel.get_source("tir")
    rows = int(func.buffer_map[func.params[1]].shape[0])
    for seed in range(5):
        runs = []
        for run in (interp, kernel):
            args = [_ties_and_nans((rows, 40), seed), np.zeros(rows, "int32"),
                    np.zeros(rows, "float32")]
            run(*args)
            runs.append(args)
        np.testing.assert_array_equal(runs[0][1], runs[1][1])
        np.testing.assert_array_equal(runs[0][2], runs[1][2])


@pytest.mark.parametrize("target", pinned_targets())
@pytest.mark.parametrize("offsets", [(0, 240, 248), (0, 240, 240), (0, 5, 9), (0, 3, 3)])
def test_overlapping_accumulators_give_the_interpreters_numbers(
    target: Target, offsets: tuple[int, int, int]
) -> None:
    interp = tvmscript.build(min_and_arg, target="interp")
    kernel = tvmscript.build(min_and_arg, target=target, cache=False)
    assert "if A_flat[i * 30 + k] < low_flat[i]:" in kernel.get_source("tir")
    for seed in range(3):
        want = one_storage(min_and_arg, offsets, np.random.default_rng(seed))
        got = one_storage(min_and_arg, offsets, np.random.default_rng(seed))
        interp(*want)
        kernel(*got)
        for w, g in zip(want, got):
            np.testing.assert_array_equal(g, w)
