"""``privatize_scatter_adds``: an integer histogram loop counts into per-task private copies
in parallel and adds them up afterwards, under a run-time test that the histogram overlaps
no array the loop reads; integer addition wraps, so every bin ends with the same bits."""

from __future__ import annotations

import numpy as np
import pytest
from late_kit import AVX2, before_late, loops, run_pass, runs_avx2

import tvmscript
from irbuilder.ir import Allocate, ForKind, IfThenElse, PrimFunc
from irbuilder.ir.functor import post_order_visit
from lowering.late.privatize import TASKS
from tvmscript import tir as T
from tvmscript.ir import structural_equal

N = 1 << 17


@T.prim_func
def histogram(D: T.Buffer((N,), "int32"), H: T.Buffer((256,), "int32")):
    for i in range(N):
        H[D[i]] = H[D[i]] + 1


@T.prim_func
def weighted(D: T.Buffer((N,), "uint8"), W: T.Buffer((N,), "int8"), H: T.Buffer((256,), "int8")):
    for i in range(N):
        H[D[i]] = W[i] + H[D[i]]  # wraps around int8 many times


@T.prim_func
def sized(d: T.handle, h: T.handle):
    n = T.int32()
    D = T.match_buffer(d, (n,), "int32")
    H = T.match_buffer(h, (64,), "int64")
    for i in range(n):
        H[D[i]] = H[D[i]] + T.Cast("int64", i)


def _ifs(func: PrimFunc) -> list[IfThenElse]:
    found: list[IfThenElse] = []
    post_order_visit(func.body, lambda n: found.append(n) if isinstance(n, IfThenElse) else None)
    return found


def test_the_loop_counts_into_private_copies_behind_a_no_overlap_test() -> None:
    before = before_late(histogram)
    after = run_pass("privatize_scatter_adds", before)
    assert after is not before
    (branch,) = [b for b in _ifs(after) if isinstance(b.then_case, Allocate)]
    assert int(branch.then_case.extent) == TASKS * 256
    kinds = {lp.loop_var.name: lp.kind for lp in loops(after)}
    assert kinds["task"] is ForKind.PARALLEL
    assert branch.else_case is not None  # the original loop, for overlapping arrays


def test_loops_it_must_not_touch_are_left_alone() -> None:
    @T.prim_func
    def floats(D: T.Buffer((N,), "int32"), H: T.Buffer((256,), "float32")):
        for i in range(N):
            H[D[i]] = H[D[i]] + T.float32(1)  # float sums depend on their order

    @T.prim_func
    def affine(H: T.Buffer((N,), "int32")):
        for i in range(N):
            H[i] = H[i] + 1  # no scatter: nothing to privatize

    @T.prim_func
    def short(D: T.Buffer((4096,), "int32"), H: T.Buffer((256,), "int32")):
        for i in range(4096):
            H[D[i]] = H[D[i]] + 1  # too few iterations per bin

    @T.prim_func
    def reads_itself(D: T.Buffer((N,), "int32"), H: T.Buffer((256,), "int32")):
        for i in range(N):
            H[D[i]] = H[D[i]] + H[0]  # a value read from the histogram

    for func in (floats, affine, short, reads_itself):
        before = before_late(func)
        assert run_pass("privatize_scatter_adds", before) is before, func


@runs_avx2
@pytest.mark.parametrize("func", [histogram, weighted], ids=["count", "weighted_int8"])
def test_same_bins_as_the_loop(func: PrimFunc) -> None:
    rng = np.random.default_rng(3)
    if func is histogram:
        args = [rng.integers(0, 256, N).astype("int32"), rng.integers(-9, 9, 256).astype("int32")]
    else:
        args = [rng.integers(0, 256, N).astype("uint8"), rng.integers(-128, 128, N).astype("int8"),
                rng.integers(-128, 128, 256).astype("int8")]
    want = [a.copy() for a in args]
    tvmscript.build(func, target="interp")(*want)
    kernel = tvmscript.build(func, target=AVX2, cache=False)
    assert "_private" in kernel.get_source("tir")
    for _ in range(3):  # parallel tasks: the same bits on every run
        got = [a.copy() for a in args]
        kernel(*got)
        np.testing.assert_array_equal(got[-1], want[-1])


@runs_avx2
def test_symbolic_length_and_overlapping_arrays() -> None:
    kernel = tvmscript.build(sized, target=AVX2, cache=False)
    assert "_private" in kernel.get_source("tir")
    rng = np.random.default_rng(5)
    for n in (10, TASKS * 64 * 16 - 1, 200_003):  # below, just below and above the test
        d = rng.integers(0, 64, n).astype("int32")
        h = np.zeros(64, "int64")
        kernel(d, h)
        np.testing.assert_array_equal(h, np.bincount(d, weights=np.arange(n), minlength=64))
    # the histogram inside the index array: the loop runs as written, in order
    storage = rng.integers(0, 64, 70_000).astype("int32")
    storage[:128] = 0  # read before the bins they hold change (all into bin 0 meanwhile)
    hist = storage[:128].view("int64")  # 64 int64 bins over D's first 128 elements
    want = storage.copy()
    want_hist = want[:128].view("int64")
    tvmscript.build(sized, target="interp")(want, want_hist)
    kernel(storage, hist)
    np.testing.assert_array_equal(storage, want)


def test_the_pass_runs_in_the_pipeline() -> None:
    from lowering.pipeline import LATE_STAGE

    assert "privatize_scatter_adds" in LATE_STAGE
    kernel = tvmscript.build(histogram, target=AVX2, cache=False)
    assert "for task in T.parallel(8)" in kernel.get_source("tir")


@runs_avx2
def test_checked_builds_count_in_parallel_and_fail_as_the_loop_does() -> None:
    kernel = tvmscript.build(histogram, target=AVX2, cache=False, bounds_check=True)
    source = kernel.get_source("tir")
    assert "for task in T.parallel(8)" in source and "H_flat_private_failed[task] = 1" in source
    assert kernel.lowered is not None
    assert structural_equal(tvmscript.from_source(source), kernel.lowered)  # it re-parses
    rng = np.random.default_rng(9)
    d = rng.integers(0, 256, N).astype("int32")
    h = np.zeros(256, "int32")
    kernel(d, h)
    np.testing.assert_array_equal(h, np.bincount(d, minlength=256))
    # two bad indices in different tasks' shares: the first in source order is reported,
    # after the elements before it were counted (the original loop runs from the start)
    d[1000], d[N - 5] = -5, 999
    for _ in range(3):
        h = np.zeros(256, "int32")
        with pytest.raises(IndexError, match=r"index D\[i\] = -5 out of bounds for shape \(256,\)"):
            kernel(d, h)
        np.testing.assert_array_equal(h, np.bincount(d[:1000], minlength=256))
    want = np.zeros(256, "int32")  # the interpreter stops at the same element
    with pytest.raises(IndexError, match="out-of-bounds access"):
        tvmscript.build(histogram, target="interp")(d, want)
    np.testing.assert_array_equal(h, want)
