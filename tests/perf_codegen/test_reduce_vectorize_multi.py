"""A reduction block with several outputs (a sum and a sum of squares, a max and a sum)
accumulates every output in lanes, in one vector loop: lowering/transforms/lower_blocks.py
marks the loops, lowering/transforms/reduce_vectorize.py splits them. Blocks whose updates
depend on each other keep source order."""

from __future__ import annotations

import numpy as np
import pytest
from pinned import AVX2, AVX512, lower_for

import tvmscript
from lowering.transforms.lower_blocks import lower_blocks
from tvmscript import tir as T


@T.prim_func
def stats(X: T.Buffer((6, 4, 700), "float32"), S: T.Buffer((6,), "float32"),
          Q: T.Buffer((6,), "float32")):
    for n, c, k in T.grid(6, 4, 700):
        with T.block("stats"):
            vn, vc, vk = T.axis.remap("SRR", [n, c, k])
            with T.init():
                S[vn] = T.float32(0)
                Q[vn] = T.float32(0)
            S[vn] = S[vn] + X[vn, vc, vk]
            Q[vn] = Q[vn] + X[vn, vc, vk] * X[vn, vc, vk]


@T.prim_func
def stats_one_buffer(X: T.Buffer((8, 1000), "float64"), P: T.Buffer((8, 2), "float64")):
    for n, k in T.grid(8, 1000):
        with T.block("stats"):
            vn, vk = T.axis.remap("SR", [n, k])
            with T.init():
                P[vn, 0] = T.float64(0)
                P[vn, 1] = T.float64(0)
            P[vn, 0] = P[vn, 0] + X[vn, vk]
            P[vn, 1] = P[vn, 1] + X[vn, vk] * X[vn, vk]


@T.prim_func
def max_and_sum(X: T.Buffer((8, 1000), "float32"), M: T.Buffer((8,), "float32"),
                S: T.Buffer((8,), "float32")):
    for n, k in T.grid(8, 1000):
        with T.block("ms"):
            vn, vk = T.axis.remap("SR", [n, k])
            with T.init():
                M[vn] = T.float32(-3.0e38)
                S[vn] = T.float32(0)
            M[vn] = T.max(M[vn], X[vn, vk])
            S[vn] = S[vn] + X[vn, vk]


@T.prim_func
def int_min_max(X: T.Buffer((8, 1000), "int32"), L: T.Buffer((8,), "int32"),
                H: T.Buffer((8,), "int32")):
    for n, k in T.grid(8, 1000):
        with T.block("mm"):
            vn, vk = T.axis.remap("SR", [n, k])
            with T.init():
                L[vn] = 2147483647
                H[vn] = -2147483648
            L[vn] = T.min(L[vn], X[vn, vk])
            H[vn] = T.max(H[vn], X[vn, vk])


@T.prim_func
def dependent(X: T.Buffer((4, 1000), "float32"), S: T.Buffer((4,), "float32"),
              Q: T.Buffer((4,), "float32")):
    for n, k in T.grid(4, 1000):
        with T.block("dep"):
            vn, vk = T.axis.remap("SR", [n, k])
            with T.init():
                S[vn] = T.float32(0)
                Q[vn] = T.float32(0)
            S[vn] = S[vn] + X[vn, vk]
            Q[vn] = Q[vn] + S[vn]  # reads the other accumulator: a running sum of sums


@T.prim_func
def max_then_sum_same_element(X: T.Buffer((4, 1000), "float32"), B: T.Buffer((4,), "float32")):
    for n, k in T.grid(4, 1000):
        with T.block("mix"):
            vn, vk = T.axis.remap("SR", [n, k])
            with T.init():
                B[vn] = T.float32(0)
            B[vn] = T.max(B[vn], X[vn, vk])
            B[vn] = B[vn] + X[vn, vk]


def _normal(shape: tuple[int, ...], dtype: str, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _run(func: object, *arrays: np.ndarray, target: str | None = None) -> list[np.ndarray]:
    copies = [a.copy() for a in arrays]
    if target is None:
        tvmscript.build(func)(*copies)
    else:
        tvmscript.build(func, target=target)(*copies)
    return copies


@pytest.mark.parametrize("target", [AVX2, AVX512], ids=["avx2", "avx512"])
def test_both_outputs_accumulate_in_one_vector_loop(target: object) -> None:
    text = lower_for(stats, target).script()
    assert text.count('T.decl_buffer((64,), "float32", data=S_flat_lanes,') == 1
    assert text.count('T.decl_buffer((64,), "float32", data=Q_flat_lanes,') == 1
    # c and k fuse into one loop of 2800 = 43 * 64 + 48: the remainder runs both updates
    assert "for r in range(48):" in text
    for ko_loop in [line for line in text.splitlines() if "for ko in" in line]:
        assert "T.serial(1, 43)" in ko_loop


def test_sum_and_sum_of_squares_within_the_lane_split_bound() -> None:
    X = _normal((6, 4, 700), "float32") + 0.5
    S, Q = np.zeros(6, "float32"), np.zeros(6, "float32")
    got = _run(stats, X, S, Q)
    ref = X.astype("float64").reshape(6, -1)
    eps = float(np.finfo("float32").eps)
    n = ref.shape[1]
    bound = (n / 64 + 7) * eps
    np.testing.assert_array_less(np.abs(got[1] - ref.sum(1)), bound * np.abs(ref).sum(1) + 1e-30)
    np.testing.assert_array_less(np.abs(got[2] - (ref * ref).sum(1)),
                                 bound * (ref * ref).sum(1) + 1e-30)


def test_two_elements_of_one_buffer() -> None:
    text = lower_for(stats_one_buffer, AVX512).script()
    lanes = [line for line in text.splitlines()
             if 'T.decl_buffer((32,), "float64"' in line and "_fold" not in line]
    assert len(lanes) == 2  # 32 lanes of float64, each
    assert 'P_flat_lanes_fold1 = T.allocate([2], "float64", "local")' in text  # one tree
    X = _normal((8, 1000), "float64", seed=2)
    got = _run(stats_one_buffer, X, np.zeros((8, 2)))[1]
    np.testing.assert_allclose(got[:, 0], X.sum(1), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got[:, 1], (X * X).sum(1), rtol=1e-12)


def test_max_and_sum_keep_the_max_exact() -> None:
    X = _normal((8, 1000), "float32", seed=3)
    X[2, 17] = np.nan  # the guard sends this row's max and sum back to source order
    X[5, :] = 0.0  # a zero max is order-dependent (signed zeros): source order too
    X[5, 3] = -0.0
    want = _run(max_and_sum, X, np.zeros(8, "float32"), np.zeros(8, "float32"), target="interp")
    got = _run(max_and_sum, X, np.zeros(8, "float32"), np.zeros(8, "float32"))
    np.testing.assert_array_equal(got[1].view("int32"), want[1].view("int32"))
    for row in (2, 5):
        assert got[2][row].tobytes() == want[2][row].tobytes()
    np.testing.assert_allclose(got[2], want[2], rtol=1e-4, atol=1e-4)
    assert "M_flat_finite" in lower_for(max_and_sum, AVX2).script()
    assert "S_flat_finite" not in lower_for(max_and_sum, AVX2).script()


def test_integer_min_and_max_are_exact() -> None:
    rng = np.random.default_rng(4)
    X = rng.integers(-(10**9), 10**9, (8, 1000)).astype("int32")
    got = _run(int_min_max, X, np.zeros(8, "int32"), np.zeros(8, "int32"))
    np.testing.assert_array_equal(got[1], X.min(1))
    np.testing.assert_array_equal(got[2], X.max(1))
    text = lower_for(int_min_max, AVX512).script()
    assert "L_flat_lanes" in text and "H_flat_lanes" in text


@pytest.mark.parametrize("func", [dependent, max_then_sum_same_element],
                         ids=["reads-other-accumulator", "two-kinds-one-element"])
def test_dependent_updates_keep_source_order(func: object) -> None:
    text = lower_for(func, AVX512).script()
    assert "tvmscript.reduction" not in lower_blocks(func).script()
    assert "_lanes" not in text
    X = _normal((4, 1000), "float32", seed=5)
    outs = [np.zeros(4, "float32") for _ in range(2 if func is dependent else 1)]
    want = _run(func, X, *outs, target="interp")
    got = _run(func, X, *outs)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_aliased_outputs_of_different_kinds_take_the_source_order_path() -> None:
    X = np.abs(_normal((8, 1000), "float32", seed=6)) + 1.0
    shared = np.zeros(8, "float32")
    want = shared.copy()
    tvmscript.build(max_and_sum, target="interp")(X, want, want)
    tvmscript.build(max_and_sum)(X, shared, shared)
    np.testing.assert_array_equal(shared, want)


@pytest.mark.parametrize("aliased", [False, True], ids=["separate", "aliased"])
def test_the_interpreter_runs_the_lowered_no_overlap_tests(aliased: bool) -> None:
    # The lowered kernel compares array addresses (T.Cast("uint64", data)); the interpreter
    # gives argument arrays their real addresses, so it takes the same path as compiled code.
    lowered = lower_for(max_and_sum, AVX512)
    assert 'T.Cast("uint64", M' in lowered.script()
    X = np.abs(_normal((8, 1000), "float32", seed=8)) + 1.0
    results = []
    for func in (max_and_sum, lowered):
        M = np.zeros(8, "float32")
        S = M if aliased else np.zeros(8, "float32")
        tvmscript.build(func, target="interp")(X, M, S)
        results.append((M.copy(), S.copy()))
    np.testing.assert_allclose(results[1][0], results[0][0], rtol=1e-5)
    np.testing.assert_allclose(results[1][1], results[0][1], rtol=1e-5)
    if aliased:  # source order in both: the same bits
        np.testing.assert_array_equal(results[1][0], results[0][0])


@T.prim_func
def stats_parallel(X: T.Buffer((16, 900), "float32"), S: T.Buffer((16,), "float32"),
                   Q: T.Buffer((16,), "float32")):
    for n in T.parallel(16):
        for k in range(900):
            with T.block("stats"):
                vn, vk = T.axis.remap("SR", [n, k])
                with T.init():
                    S[vn] = T.float32(0)
                    Q[vn] = T.float32(0)
                S[vn] = S[vn] + X[vn, vk]
                Q[vn] = Q[vn] + X[vn, vk] * X[vn, vk]


def test_parallel_rows_agree_with_the_interpreter_on_every_run() -> None:
    assert "S_flat_lanes" in lower_for(stats_parallel, AVX2).script()
    X = _normal((16, 900), "float32", seed=10)
    want = _run(stats_parallel, X, np.zeros(16, "float32"), np.zeros(16, "float32"),
                target="interp")
    kernel = tvmscript.build(stats_parallel, target=AVX2, cache=False)
    first = None
    for _ in range(5):  # every core, several runs: the same bits each time
        S, Q = np.zeros(16, "float32"), np.zeros(16, "float32")
        kernel(X, S, Q)
        np.testing.assert_allclose(S, want[1], rtol=1e-4, atol=1e-3)
        np.testing.assert_allclose(Q, want[2], rtol=1e-4)
        first = (S, Q) if first is None else first
        assert S.tobytes() == first[0].tobytes() and Q.tobytes() == first[1].tobytes()
