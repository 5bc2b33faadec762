"""``partition_loops``: a loop comparing its variable with constants runs as parts, each with
the comparisons decided; a long loop peels short border parts; one threshold the loop does
not change (or symbolic bounds) cuts it in two; tiny parts of short loops, thresholds the
loop changes and annotated loops are left alone."""

from __future__ import annotations

import numpy as np
from late_kit import AVX2, assert_same_numbers, before_late, loops, run_pass, runs_avx2

import tvmscript
from irbuilder.ir import BufferStore, ForKind, Min, PrimFunc, structural_equal
from tvmscript import tir as T


@T.prim_func
def concat(A: T.Buffer((3, 32), "float32"), B: T.Buffer((3, 48), "float32"),
           O: T.Buffer((3, 80), "float32")):
    for i, j in T.grid(3, 80):
        with T.block("concat"):
            vi, vj = T.axis.remap("SS", [i, j])
            O[vi, vj] = T.if_then_else(vj < 32, A[vi, vj], B[vi, vj - 32])


@T.prim_func
def three_ways(A: T.Buffer((64,), "int32"), O: T.Buffer((64,), "int32")):
    for j in range(64):
        if 20 <= j:
            O[j] = T.Select(j > 39, A[j] * 2, A[j] + 1)
        else:
            O[j] = 0


@T.prim_func
def padded(X: T.Buffer((4, 6, 6), "float32"), P: T.Buffer((4, 8, 8), "float32")):
    for c, h, w in T.grid(4, 8, 8):  # borders of one element: parts shorter than MIN_PART
        P[c, h, w] = T.if_then_else(1 <= h and h < 7 and 1 <= w and w < 7,
                                    X[c, h - 1, w - 1], T.float32(0))


def _serial(func: PrimFunc) -> PrimFunc:
    return before_late(func, AVX2, config={"parallelize_loops": {"enabled": False}})


def test_a_concatenation_becomes_two_contiguous_copies() -> None:
    after = run_pass("partition_loops", _serial(concat))
    extents = [int(f.extent) for f in loops(after) if f.kind is ForKind.SERIAL]
    assert sorted(extents) == [3, 32, 48]
    text = after.script()
    # decided, and a decided T.if_then_else is the operand it chooses (the late simplify
    # folds the index arithmetic: see the build test below)
    assert "j < 32" not in text and "if_then_else" not in text
    assert "O_flat[i * 80 + j] = A_flat[i * 32 + j]" in text
    assert "O_flat[i * 80 + (j + 32)] = B_flat[i * 48 + (j + 32) - 32]" in text
    assert structural_equal(tvmscript.from_source(text), after)


def test_three_parts_decide_every_comparison() -> None:
    after = run_pass("partition_loops", _serial(three_ways))
    extents = [int(f.extent) for f in loops(after)]
    assert sorted(extents) == [20, 20, 24]
    text = after.script()
    assert "20 <= j" not in text and "> 39" not in text


def test_short_parts_and_annotated_loops_stay() -> None:
    before = _serial(padded)
    assert run_pass("partition_loops", before) is before

    @T.prim_func
    def parallel(A: T.Buffer((64,), "int32"), O: T.Buffer((64,), "int32")):
        for j in T.parallel(64):
            O[j] = T.if_then_else(j < 32, A[j], 0)

    before = _serial(parallel)
    assert run_pass("partition_loops", before) is before


@T.prim_func
def symbolic(a: T.handle, o: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n,), "int32")
    O = T.match_buffer(o, (n,), "int32")
    for j in range(n):
        O[j] = T.if_then_else(j < 32, A[j], 0)


@T.prim_func
def causal(A: T.Buffer((40, 40), "float32"), O: T.Buffer((40, 40), "float32")):
    for i, j in T.grid(40, 40):
        with T.block("mask"):
            vi, vj = T.axis.remap("SS", [i, j])
            O[vi, vj] = T.if_then_else(vj <= vi, A[vi, vj], T.float32(-1e30))


@T.prim_func
def ahead(A: T.Buffer((30, 30), "int32"), O: T.Buffer((30, 30), "int32")):
    for i, j in T.grid(30, 30):  # from i = 25 on, the second part is empty
        if j >= i + 5:
            O[i, j] = A[i, j]
        else:
            O[i, j] = -A[i, j]


@T.prim_func
def behind(A: T.Buffer((30, 30), "int32"), O: T.Buffer((30, 30), "int32")):
    for i, j in T.grid(30, 30):  # up to i = 5, the first part is empty
        O[i, j] = T.Select(j < i - 5, A[i, j] * 3, A[i, j])


@T.prim_func
def stencil(A: T.Buffer((4, 300), "float32"), B: T.Buffer((4, 300), "float32")):
    for i, j in T.grid(4, 300):
        B[i, j] = T.if_then_else(0 < j and j < 299, A[i, j - 1] + A[i, j + 1], A[i, j])


def test_a_symbolic_loop_is_cut_at_the_clamped_threshold() -> None:
    after = run_pass("partition_loops", _serial(symbolic))
    text = after.script()
    assert "j < 32" not in text
    assert text.count("for j") == 2
    assert "range(T.min(32, n))" in text


def test_a_threshold_of_an_outer_variable_cuts_the_inner_loop() -> None:
    after = run_pass("partition_loops", _serial(causal))
    text = after.script()
    assert "j <= i" not in text
    inner = [f for f in loops(after) if f.loop_var.name.startswith("j")]
    assert len(inner) == 2  # the kept columns, then the masked ones
    assert "if_then_else" not in text  # each part's operand chosen


def test_a_threshold_the_loop_changes_is_left_alone() -> None:
    @T.prim_func
    def data_dependent(A: T.Buffer((64,), "int32"), K: T.Buffer((1,), "int32"),
                       O: T.Buffer((64,), "int32")):
        for j in range(64):
            O[j] = T.if_then_else(j < K[0], A[j], 0)  # a load: a store could change it

    before = _serial(data_dependent)
    assert run_pass("partition_loops", before) is before

    @T.prim_func
    def two_symbolic(A: T.Buffer((64, 64), "int32"), O: T.Buffer((64, 64), "int32")):
        for i, j in T.grid(64, 64):
            O[i, j] = T.if_then_else(j < i and j < 2 * i - 8, A[i, j], 0)

    before = _serial(two_symbolic)
    inner = [f for f in loops(run_pass("partition_loops", before))
             if f.loop_var.name.startswith("j")]
    assert len(inner) == 1  # two symbolic thresholds: their order is unknown


def test_a_long_loop_peels_its_border_columns() -> None:
    after = run_pass("partition_loops", _serial(stencil))
    extents = sorted(int(f.extent) for f in loops(after) if f.loop_var.name.startswith("j"))
    assert extents == [1, 1, 298]  # the late simplify makes the borders plain statements
    assert "j < 299" not in after.script()


@runs_avx2
def test_cut_loops_give_the_interpreters_numbers() -> None:
    for func in (causal, ahead, behind, stencil):
        before = _serial(func)
        after = run_pass("partition_loops", before)
        assert after is not before
        assert_same_numbers(func, before, after)


@runs_avx2
def test_a_symbolic_loop_agrees_with_numpy_at_every_size() -> None:
    kernel = tvmscript.build(symbolic, target=AVX2, cache=False)
    rng = np.random.default_rng(3)
    for n in (0, 1, 31, 32, 33, 100):
        A = rng.integers(-9, 9, n).astype("int32")
        O = np.full(n, 77, "int32")
        kernel(A, O)
        np.testing.assert_array_equal(O, np.where(np.arange(n) < 32, A, 0))


@runs_avx2
def test_same_numbers_as_the_interpreter() -> None:
    for func in (concat, three_ways):
        before = _serial(func)
        after = run_pass("partition_loops", before)
        assert after is not before
        assert_same_numbers(func, before, after)


@runs_avx2
def test_the_default_build_partitions_and_agrees_with_numpy() -> None:
    kernel = tvmscript.build(concat, target=AVX2, cache=False)
    assert "if_then_else" not in kernel.get_source("tir")
    rng = np.random.default_rng(2)
    A = rng.standard_normal((3, 32)).astype("float32")
    B = rng.standard_normal((3, 48)).astype("float32")
    O = np.zeros((3, 80), "float32")
    kernel(A, B, O)
    np.testing.assert_array_equal(O, np.concatenate([A, B], axis=1))


@T.prim_func
def window(X: T.Buffer((2, 40, 40), "float32"), W: T.Buffer((2, 3, 3), "float32"),
           Y: T.Buffer((2, 40, 40), "float32")):
    for c, h, w, rh, rw in T.grid(2, 40, 40, 3, 3):
        with T.block("dw"):  # a 3 x 3 window padded by comparisons with the window's offsets
            vc, vh, vw, vrh, vrw = T.axis.remap("SSSRR", [c, h, w, rh, rw])
            with T.init():
                Y[vc, vh, vw] = T.float32(0)
            Y[vc, vh, vw] = Y[vc, vh, vw] + T.if_then_else(
                1 <= vh + vrh and vh + vrh < 41 and 1 <= vw + vrw and vw + vrw < 41,
                X[vc, vh + vrh - 1, vw + vrw - 1], T.float32(0)) * W[vc, vrh, vrw]


@T.prim_func
def window_shift(A: T.Buffer((64,), "int32"), O: T.Buffer((64,), "int32")):
    for i in range(64):  # the threshold 60 - k ranges over 49..60: parts 0..49, 49..60, 60..64
        O[i] = 0
        for k in range(12):
            O[i] = O[i] + T.if_then_else(i + k < 60, A[i] * k, 1)


def _comparisons(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if "if_then_else" in line]


def test_a_window_comparison_peels_the_borders_of_short_loops() -> None:
    after = run_pass("partition_loops", _serial(window))
    text = after.script()
    rows = sorted(int(f.extent) for f in loops(after) if f.loop_var.name.startswith("h"))
    assert rows == [1, 1, 38]  # first row, the 38 inner rows, last row
    columns = sorted(int(f.extent) for f in loops(after) if f.loop_var.name.startswith("w"))
    # the border rows keep their columns whole (peeled parts are not split again); the
    # inner rows peel their first and last column
    assert columns == [1, 1, 38, 40, 40]
    assert "if_then_else(True" not in text and "if_then_else(False" not in text
    # the inner rows (h + 1) keep the tests of their first and last column; the border
    # rows and the inner rows' inner columns are decided: their operand chosen
    inner = [line for line in _comparisons(text) if "(h + 1) * 40" in line]
    assert len(inner) == 2


def test_a_window_threshold_cuts_where_every_offset_agrees() -> None:
    # (a threshold sweeping 16 values or more is no window: a causal mask's j <= i seen from
    # the i loop, test_a_threshold_of_an_outer_variable_cuts_the_inner_loop)
    after = run_pass("partition_loops", _serial(window_shift))
    extents = sorted(int(f.extent) for f in loops(after) if f.loop_var.name.startswith("i"))
    assert extents == [4, 11, 49]  # i + k < 60 is True below 49, False from 60
    text = after.script()
    assert "if_then_else(True" not in text and "if_then_else(False" not in text
    assert "if_then_else" in text  # the 11 rows in between keep the test


@runs_avx2
def test_window_parts_give_the_interpreters_numbers() -> None:
    for func in (window, window_shift):
        before = _serial(func)
        after = run_pass("partition_loops", before)
        assert after is not before
        assert_same_numbers(func, before, after)


@runs_avx2
def test_a_padded_window_agrees_with_numpy() -> None:
    rng = np.random.default_rng(8)
    X = rng.standard_normal((2, 40, 40)).astype("float32")
    W = rng.standard_normal((2, 3, 3)).astype("float32")
    Y = np.zeros((2, 40, 40), "float32")
    tvmscript.build(window, target=AVX2, cache=False, fp_contract=False)(X, W, Y)
    padded = np.pad(X.astype("float64"), ((0, 0), (1, 1), (1, 1)))
    want = sum(padded[:, rh:rh + 40, rw:rw + 40] * W[:, rh, rw][:, None, None]
               for rh in range(3) for rw in range(3))
    np.testing.assert_allclose(Y, want, rtol=1e-5, atol=1e-5)


@T.prim_func
def guarded_tail(a: T.handle, b: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n,), "float32")
    B = T.match_buffer(b, (n,), "float32")
    for io in range(T.ceildiv(n, 64)):
        for ii in range(64):
            if io * 64 + ii < n:  # a split's guard: var + e against a bound
                B[io * 64 + ii] = A[io * 64 + ii] * T.float32(2)


def test_a_split_guard_becomes_the_inner_loop_bound() -> None:
    after = run_pass("partition_loops", _serial(guarded_tail))
    text = after.script()
    assert "range(T.min(T.max(n - io * 64, 0), 64))" in text
    assert "if io * 64 + ii < n" not in text


@runs_avx2
def test_a_guarded_tail_agrees_with_numpy_at_every_size() -> None:
    kernel = tvmscript.build(guarded_tail, target=AVX2, cache=False)
    rng = np.random.default_rng(4)
    for n in (0, 1, 63, 64, 65, 200):
        A = rng.standard_normal(n).astype("float32")
        B = np.full(n, 5, "float32")
        kernel(A, B)
        np.testing.assert_array_equal(B, A * 2)


def test_a_decided_guard_leaves_the_part_and_a_dead_part_goes() -> None:
    """Below the cut the guard is true: the part's body is the guarded statement itself; at
    and above it the guard is false and nothing else is there: no part at all."""
    after = run_pass("partition_loops", _serial(guarded_tail))
    text = after.script()
    assert "T.If(" not in text and "if T.bool(" not in text and "if True" not in text, text
    (inner,) = [lp for lp in loops(after) if lp.loop_var.name == "ii"]
    assert isinstance(inner.extent, Min) and isinstance(inner.body, BufferStore)


@T.prim_func
def chunk_sums(a: T.Buffer((1000,), "float32"), part: T.Buffer((12,), "float32")):
    for c in T.parallel(12):  # 12 chunks of ceil(1000 / 12) = 84: the last one is cut short
        acc = T.alloc_buffer((1,), "float32")
        acc[0] = T.float32(0)
        for k in range(84):
            if c * 84 + k < 1000:
                acc[0] = acc[0] + a[c * 84 + k]
        part[c] = acc[0]


@runs_avx2
def test_guarded_chunk_sums_run_in_lanes_and_agree_with_the_interpreter() -> None:
    kernel = tvmscript.build(chunk_sums, target=AVX2, cache=False, fp_contract=False)
    assert "acc_rows" in kernel.get_source("tir")  # vectorize_row_reductions took them
    rng = np.random.default_rng(11)
    for _ in range(3):
        a = rng.standard_normal(1000).astype("float32")
        want = np.zeros(12, "float32")
        tvmscript.build(chunk_sums, target="interp")(a, want)
        got = np.full(12, 7, "float32")
        kernel(a, got)
        np.testing.assert_array_equal(got, want)


@T.prim_func
def wide_window(X: T.Buffer((3, 400), "float32"), W: T.Buffer((3, 31), "float32"),
                Y: T.Buffer((3, 400), "float32")):
    for c, x, r in T.grid(3, 400, 31):
        with T.block("conv1d"):  # 31 taps padded by 15: a window of 30 thresholds
            vc, vx, vr = T.axis.remap("SSR", [c, x, r])
            with T.init():
                Y[vc, vx] = T.float32(0)
            Y[vc, vx] = Y[vc, vx] + T.if_then_else(
                15 <= vx + vr and vx + vr < 415, X[vc, vx + vr - 15], T.float32(0)) * W[vc, vr]


@T.prim_func
def wide_window_short_row(X: T.Buffer((3, 160), "float32"), W: T.Buffer((3, 31), "float32"),
                          Y: T.Buffer((3, 160), "float32")):
    for c, x, r in T.grid(3, 160, 31):
        with T.block("conv1d"):  # the same window over 160 columns: more than an eighth
            vc, vx, vr = T.axis.remap("SSR", [c, x, r])
            with T.init():
                Y[vc, vx] = T.float32(0)
            Y[vc, vx] = Y[vc, vx] + T.if_then_else(
                15 <= vx + vr and vx + vr < 175, X[vc, vx + vr - 15], T.float32(0)) * W[vc, vr]


def test_a_wide_window_in_a_long_loop_leaves_its_middle_without_the_test() -> None:
    # window_limit: up to an eighth of the loop (400 // 8 = 50 > 30 thresholds)
    after = run_pass("partition_loops", _serial(wide_window))
    extents = sorted(int(f.extent) for f in loops(after) if f.loop_var.name.startswith("x"))
    assert extents == [15, 15, 370]  # x < 15 and x >= 385 keep the test
    assert len(_comparisons(after.script())) == 2
    short = _serial(wide_window_short_row)
    assert run_pass("partition_loops", short).script() == short.script()


@runs_avx2
def test_a_wide_window_agrees_with_the_interpreter_and_numpy() -> None:
    before = _serial(wide_window)
    assert_same_numbers(wide_window, before, run_pass("partition_loops", before))
    rng = np.random.default_rng(5)
    X = rng.standard_normal((3, 400)).astype("float32")
    W = rng.standard_normal((3, 31)).astype("float32")
    Y = np.zeros((3, 400), "float32")
    tvmscript.build(wide_window, target=AVX2, cache=False)(X, W, Y)
    padded = np.pad(X.astype("float64"), ((0, 0), (15, 15)))
    want = sum(padded[:, r:r + 400] * W[:, r, None] for r in range(31))
    np.testing.assert_allclose(Y, want, rtol=1e-4, atol=1e-4)
