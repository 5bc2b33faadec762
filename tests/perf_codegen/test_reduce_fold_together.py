"""Several accumulators of one lane-split reduction fold their lanes side by side
(``_fold_together`` in lowering/transforms/reduce_vectorize.py): the jammed outputs of a
dot product and the two outputs of a statistics block. The order is still the documented
one -- lane ``l`` sums elements ``l, l + L, ...``, then the lanes fold pairwise -- so the
results equal a numpy emulation of that order bit for bit, on both pinned targets."""

from __future__ import annotations

import numpy as np
import pytest
from pinned import AVX512, BOTH, lower_for

import tvmscript
from lowering.target import Target
from tvmscript import tir as T


@T.prim_func
def scores(Q: T.Buffer((4, 64), "float32"), K: T.Buffer((9, 64), "float32"),
           S: T.Buffer((4, 9), "float32")):
    for i, j, k in T.grid(4, 9, 64):
        with T.block("S"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                S[vi, vj] = T.float32(0)
            S[vi, vj] = S[vi, vj] + Q[vi, vk] * K[vj, vk]


@T.prim_func
def stats(X: T.Buffer((5, 300), "float32"), S: T.Buffer((5,), "float32"),
          P: T.Buffer((5,), "float32")):
    for n, k in T.grid(5, 300):
        with T.block("stats"):
            vn, vk = T.axis.remap("SR", [n, k])
            with T.init():
                S[vn] = T.float32(0)
                P[vn] = T.float32(1)
            S[vn] = S[vn] + X[vn, vk]
            P[vn] = P[vn] * X[vn, vk]


@T.prim_func
def sum_and_squares(X: T.Buffer((5, 300), "float32"), S: T.Buffer((5,), "float32"),
                    Q: T.Buffer((5,), "float32")):
    for n, k in T.grid(5, 300):
        with T.block("sq"):
            vn, vk = T.axis.remap("SR", [n, k])
            with T.init():
                S[vn] = T.float32(0)
                Q[vn] = T.float32(0)
            S[vn] = S[vn] + X[vn, vk]
            Q[vn] = Q[vn] + X[vn, vk] * X[vn, vk]


@T.prim_func
def int_sums(X: T.Buffer((5, 300), "int32"), Y: T.Buffer((5, 300), "int32"),
             S: T.Buffer((5,), "int32"), R: T.Buffer((5,), "int32")):
    for n, k in T.grid(5, 300):
        with T.block("sums"):
            vn, vk = T.axis.remap("SR", [n, k])
            with T.init():
                S[vn] = 0
                R[vn] = 0
            S[vn] = S[vn] + X[vn, vk]
            R[vn] = R[vn] + X[vn, vk] * Y[vn, vk]


def _skip_unless_runs(target: Target) -> None:
    missing = target.missing_on_host()
    if missing:
        pytest.skip(f"the host lacks {', '.join(missing)} (target {target.mcpu})")


def _lane_order(terms: np.ndarray, lanes: int, combine: np.ufunc, start: float) -> np.float32:
    """``start <op>`` the documented lane order over ``terms`` (float32 throughout)."""
    full = len(terms) // lanes * lanes
    acc = terms[:lanes].copy()
    for base in range(lanes, full, lanes):
        acc = combine(acc, terms[base:base + lanes])
    half = lanes // 2
    while half >= 1:
        acc[:half] = combine(acc[:half], acc[half:2 * half])
        half //= 2
    result = combine(np.float32(start), acc[0])
    for x in terms[full:]:
        result = combine(result, x)
    return np.float32(result)


@BOTH
def test_jammed_outputs_fold_in_one_tree(target: Target) -> None:
    text = lower_for(scores, target).script()
    assert "S_flat_lanes_fold1" in text and "T.Shuffle(" in text
    jam = 4 if target is AVX512 else 2  # jam_factor: 32 or 16 vector registers
    assert f'S_flat_lanes_fold1 = T.allocate([{jam}], "float32", "local")' in text


@BOTH
def test_jammed_scores_equal_the_documented_order(target: Target) -> None:
    _skip_unless_runs(target)
    rng = np.random.default_rng(4)
    Q = rng.standard_normal((4, 64)).astype("float32")
    K = rng.standard_normal((9, 64)).astype("float32")
    S = np.full((4, 9), np.nan, "float32")
    tvmscript.build(scores, target=target, cache=False, fp_contract=False)(Q, K, S)
    want = np.array([[_lane_order(Q[i] * K[j], 32, np.add, 0.0) for j in range(9)]
                     for i in range(4)], "float32")
    np.testing.assert_array_equal(S, want)


@BOTH
def test_two_kinds_of_one_dtype_fold_together_only_when_alike(target: Target) -> None:
    text = lower_for(stats, target).script()
    assert "S_flat_lanes_fold" not in text  # a sum beside a product: each folds alone
    _skip_unless_runs(target)
    rng = np.random.default_rng(5)
    X = (1 + rng.standard_normal((5, 300)) / 300).astype("float32")
    S = np.zeros(5, "float32")
    P = np.zeros(5, "float32")
    tvmscript.build(stats, target=target, cache=False)(X, S, P)
    for n in range(5):
        assert S[n] == _lane_order(X[n], 64, np.add, 0.0)
        assert P[n] == _lane_order(X[n], 64, np.multiply, 1.0)


@BOTH
def test_two_sums_of_one_block_equal_the_documented_order(target: Target) -> None:
    assert "S_flat_lanes_fold1" in lower_for(sum_and_squares, target).script()
    _skip_unless_runs(target)
    rng = np.random.default_rng(6)
    X = rng.standard_normal((5, 300)).astype("float32")
    S = np.zeros(5, "float32")
    Q = np.zeros(5, "float32")
    tvmscript.build(sum_and_squares, target=target, cache=False, fp_contract=False)(X, S, Q)
    for n in range(5):
        assert S[n] == _lane_order(X[n], 64, np.add, 0.0)
        assert Q[n] == _lane_order(X[n] * X[n], 64, np.add, 0.0)


@BOTH
def test_integer_sums_folded_together_wrap_like_numpy(target: Target) -> None:
    assert "S_flat_lanes_fold1" in lower_for(int_sums, target).script()
    _skip_unless_runs(target)
    rng = np.random.default_rng(7)
    X = rng.integers(-(2**31), 2**31, (5, 300), dtype=np.int64).astype("int32")
    Y = rng.integers(-(2**31), 2**31, (5, 300), dtype=np.int64).astype("int32")
    S = np.zeros(5, "int32")
    R = np.zeros(5, "int32")
    tvmscript.build(int_sums, target=target, cache=False)(X, Y, S, R)
    np.testing.assert_array_equal(S, X.sum(axis=1, dtype=np.int32))
    np.testing.assert_array_equal(R, (X * Y).sum(axis=1, dtype=np.int32))
