"""``promote_index_reductions``: TVM's tuple argmax (and argmin) run on local accumulators
with the index's tie test decided, behind a run-time test that the accumulators overlap no
other array; bit for bit the interpreter's numbers (ties, all-equal rows, the extreme in
the last column, NaNs, overlapping arrays). Loops where the index's entry value is unknown
are left alone."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from late_kit import (
    AVX2,
    AVX512,
    agrees_with_interpreter,
    before_late,
    pinned_targets,
    run_pass,
)

import tvmscript
from irbuilder.ir import LT, BufferLoad, For, IfThenElse, PrimFunc, structural_equal
from irbuilder.ir.functor import post_order_visit
from lowering.analysis.vars import free_vars
from lowering.target import Target
from tvmscript import tir as T


@T.prim_func
def argmax_rows(A: T.Buffer((64, 37), "float32"), idx: T.Buffer((64,), "int32"),
                val: T.Buffer((64,), "float32")):
    for i0 in T.parallel(64):  # as TVM prints a tuple argmax over rows
        for k in range(37):
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
def argmin_serial(A: T.Buffer((13, 50), "float32"), idx: T.Buffer((13,), "int32"),
                  val: T.Buffer((13,), "float32")):
    for i0, k in T.grid(13, 50):  # serial rows, the index on the comparison's right
        with T.block("argmin"):
            v_i0, v_k = T.axis.remap("SR", [i0, k])
            with T.init():
                idx[v_i0] = -1
                val[v_i0] = T.max_value("float32")
            v_idx: T.int32 = T.Select(val[v_i0] < A[v_i0, v_k] or (
                val[v_i0] == A[v_i0, v_k] and v_k > idx[v_i0]), idx[v_i0], v_k)
            v_val: T.float32 = T.Select(val[v_i0] < A[v_i0, v_k] or (
                val[v_i0] == A[v_i0, v_k] and v_k > idx[v_i0]), val[v_i0], A[v_i0, v_k])
            idx[v_i0] = v_idx
            val[v_i0] = v_val


@T.prim_func
def index_not_below(A: T.Buffer((8, 30), "float32"), idx: T.Buffer((8,), "int32"),
                    val: T.Buffer((8,), "float32")):
    # the index starts at 5, which a later k does not exceed: its test stays
    for i0, k in T.grid(8, 30):
        with T.block("argmax"):
            v_i0, v_k = T.axis.remap("SR", [i0, k])
            with T.init():
                idx[v_i0] = 5
                val[v_i0] = T.min_value("float32")
            v_idx: T.int32 = T.Select(val[v_i0] > A[v_i0, v_k] or (
                val[v_i0] == A[v_i0, v_k] and idx[v_i0] < v_k), idx[v_i0], v_k)
            v_val: T.float32 = T.Select(val[v_i0] > A[v_i0, v_k] or (
                val[v_i0] == A[v_i0, v_k] and idx[v_i0] < v_k), val[v_i0], A[v_i0, v_k])
            idx[v_i0] = v_idx
            val[v_i0] = v_val


@T.prim_func
def split_reduction(A: T.Buffer((8, 64), "float32"), idx: T.Buffer((8,), "int32"),
                    val: T.Buffer((8,), "float32")):
    # the index a split reduction's two loops make: the inner loop starts where the
    # previous chunk left the index, unknown to it
    for i0, ko, ki in T.grid(8, 4, 16):
        with T.block("argmax"):
            v_i0 = T.axis.spatial(8, i0)
            v_k = T.axis.reduce(64, ko * 16 + ki)
            with T.init():
                idx[v_i0] = -1
                val[v_i0] = T.min_value("float32")
            v_idx: T.int32 = T.Select(val[v_i0] > A[v_i0, v_k] or (
                val[v_i0] == A[v_i0, v_k] and idx[v_i0] < v_k), idx[v_i0], v_k)
            v_val: T.float32 = T.Select(val[v_i0] > A[v_i0, v_k] or (
                val[v_i0] == A[v_i0, v_k] and idx[v_i0] < v_k), val[v_i0], A[v_i0, v_k])
            idx[v_i0] = v_idx
            val[v_i0] = v_val


def _index_tests(func: PrimFunc, in_fast_path: bool) -> int:
    """Comparisons of an ``idx`` element (an array's or its local copy's) with a variable,
    in the versioned nest's fast path (or its fallback)."""
    version = _version(func)
    found = 0

    def visit(node: object) -> None:
        nonlocal found
        if isinstance(node, LT) and any(
                isinstance(side, BufferLoad) and side.buffer.name.startswith("idx")
                for side in (node.a, node.b)):
            found += 1

    branch = version.then_case if in_fast_path else version.else_case
    assert branch is not None
    post_order_visit(branch, visit)
    return found


def _version(func: PrimFunc) -> IfThenElse:
    """The one ``if <no overlap>: <nest> else: <nest>`` of ``func``."""
    found: list[IfThenElse] = []
    post_order_visit(func.body, lambda n: found.append(n) if isinstance(n, IfThenElse) and (
        isinstance(n.then_case, For) and isinstance(n.else_case, For)) else None)
    (version,) = found
    return version


@pytest.mark.parametrize("target", [AVX2, AVX512], ids=["znver3", "znver4"])
def test_the_argmax_runs_on_locals_with_the_index_test_decided(target: Target) -> None:
    before = run_pass("branch_select_updates", before_late(argmax_rows, target), target)
    after = run_pass("promote_index_reductions", before, target)
    text = after.script()
    assert "idx_flat_acc = T.decl_buffer((1,), \"int32\")" in text
    assert "if not (val_flat_acc[0] > A_flat[i0 * 37 + k] or " \
        "val_flat_acc[0] == A_flat[i0 * 37 + k]):" in text
    assert _index_tests(after, in_fast_path=True) == 0
    assert _index_tests(after, in_fast_path=False) == 1  # the loop as written
    version = _version(after)
    # the three arrays' pointers: each pair tested once, before the nest
    assert str(version.condition).count("LE(") == 6  # (per pair: two comparisons)
    assert {v.name for v in free_vars(version.condition)} == {
        "A_data", "idx_data", "val_data"}
    assert structural_equal(tvmscript.from_source(text), after)


def test_the_whole_pipeline_jams_the_promoted_rows() -> None:
    text = tvmscript.build(argmax_rows, target=AVX2, cache=False).get_source("tir")
    assert "for i0_jam in T.parallel(16):" in text
    assert "idx_flat[i0 * 37 + k] < k" not in text
    assert "idx_flat[i0] < k" in text  # the fallback, for overlapping arrays


def test_an_argmin_with_the_index_on_the_right_is_decided() -> None:
    before = run_pass("branch_select_updates", before_late(argmin_serial, AVX2), AVX2)
    after = run_pass("promote_index_reductions", before, AVX2)
    assert _index_tests(after, in_fast_path=True) == 0
    assert "if not (val_flat_acc[0] < A_flat[i0 * 50 + k] or " \
        "val_flat_acc[0] == A_flat[i0 * 50 + k]):" in after.script()


@pytest.mark.parametrize("func", [index_not_below, split_reduction], ids=lambda f: f.name)
def test_an_index_of_unknown_entry_value_is_left_alone(func: PrimFunc) -> None:
    before = run_pass("branch_select_updates", before_late(func, AVX2), AVX2)
    assert run_pass("promote_index_reductions", before, AVX2) is before


def _edge_rows(shape: tuple[int, int], seed: int) -> np.ndarray[Any, Any]:
    """Rows of many ties, all-equal rows, the maximum (and minimum) in the first or last
    column, rows of +-inf and of the init's own value, and a few NaNs."""
    rows, cols = shape
    rng = np.random.default_rng(seed)
    a = rng.integers(-3, 4, shape).astype("float32")
    a[1] = 2.0
    a[2, -1] = 100.0
    a[3, -1] = -100.0
    a[4, 0] = 100.0
    a[5] = -np.inf
    a[6] = np.float32(np.finfo("float32").min)
    a[7] = np.float32(np.finfo("float32").max)
    a[8, [0, -1]] = 7.0
    a[9:] += rng.standard_normal((rows - 9, cols)).astype("float32")
    a[rows - 1, 3] = np.nan
    a[rows - 2, -1] = np.nan
    return a


def _fresh(func: PrimFunc, seed: int) -> Callable[[], list[np.ndarray[Any, Any]]]:
    rows, cols = (int(d) for d in func.buffer_map[func.params[0]].shape)

    def make() -> list[np.ndarray[Any, Any]]:
        return [_edge_rows((rows, cols), seed), np.zeros(rows, "int32"),
                np.zeros(rows, "float32")]
    return make


@pytest.mark.parametrize("target", pinned_targets())
@pytest.mark.parametrize("func", [argmax_rows, argmin_serial], ids=lambda f: f.name)
def test_the_interpreters_numbers(target: Target, func: PrimFunc) -> None:
    kernel = tvmscript.build(func, target=target, cache=False)
    assert "_acc" in kernel.get_source("tir")
    for seed in range(3):
        agrees_with_interpreter(func, _fresh(func, seed), target, runs=1)


def _overlapping(shift: int, seed: int) -> Callable[[], list[np.ndarray[Any, Any]]]:
    """``argmin_serial``'s ``A``, ``idx`` (an int32 view) and ``val`` in one float32 storage,
    ``idx`` starting ``shift`` elements into ``A``'s last row and ``val`` right after ``idx``
    (or on it). (Serial rows: a parallel loop promises its rows independent, which
    overlapping arrays break whatever the compiler does.)"""
    def make() -> list[np.ndarray[Any, Any]]:
        rng = np.random.default_rng(seed)
        storage = rng.integers(-3, 4, 13 * 50 + 60).astype("float32")
        start = 12 * 50 + shift
        a = storage[: 13 * 50].reshape(13, 50)
        idx = storage[start : start + 13].view("int32")
        val = storage[start + 13 - shift : start + 26 - shift]
        return [a, idx, val]
    return make


@pytest.mark.parametrize("target", pinned_targets())
@pytest.mark.parametrize("shift", [0, 5, 13])
def test_overlapping_arrays_run_the_loop_as_written(target: Target, shift: int) -> None:
    for seed in range(3):
        agrees_with_interpreter(argmin_serial, _overlapping(shift, seed), target, runs=1)
