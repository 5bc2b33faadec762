"""The kernel shapes whose code changed with window partitions, guard cuts, widened index
ramps, packed float-to-int casts, folded-together lanes and the jam rule give the
interpreter's numbers, built with default options (parallel loops on every core) for both
pinned targets, three runs each."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import tvmscript
from lowering.target import Target
from tvmscript import tir as T

sys.path.insert(0, str(Path(__file__).parent.parent / "perf_codegen"))
from pinned import AVX2, AVX512

TARGETS = pytest.mark.parametrize("target", [AVX2, AVX512], ids=["znver3", "znver4"])


def _agree(func: object, arrays: list[np.ndarray], target: Target) -> None:
    missing = target.missing_on_host()
    if missing:
        pytest.skip(f"the host lacks {', '.join(missing)} (target {target.mcpu})")
    want = [a.copy() for a in arrays]
    tvmscript.build(func, target="interp")(*want)
    kernel = tvmscript.build(func, target=target, cache=False)
    for _ in range(3):  # parallel code: the same numbers every run
        got = [a.copy() for a in arrays]
        kernel(*got)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)


@T.prim_func
def padded_window(X: T.Buffer((8, 20, 21), "int32"), W: T.Buffer((8, 3, 3), "int32"),
                  Y: T.Buffer((8, 20, 21), "int32")):
    for c, h, w, rh, rw in T.grid(8, 20, 21, 3, 3):
        with T.block("dw"):
            vc, vh, vw, vrh, vrw = T.axis.remap("SSSRR", [c, h, w, rh, rw])
            with T.init():
                Y[vc, vh, vw] = 0
            Y[vc, vh, vw] = Y[vc, vh, vw] + T.if_then_else(
                1 <= vh + vrh and vh + vrh < 21 and 1 <= vw + vrw and vw + vrw < 22,
                X[vc, vh + vrh - 1, vw + vrw - 1], 0) * W[vc, vrh, vrw]


@T.prim_func
def guarded_tail(a: T.handle, b: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n,), "int32")
    B = T.match_buffer(b, (n,), "int32")
    for io in T.parallel(T.ceildiv(n, 64)):
        for ii in T.vectorized(64):
            if io * 64 + ii < n:
                B[io * 64 + ii] = A[io * 64 + ii] * 3 - 1


@T.prim_func
def rows_by_int64(Idx: T.Buffer((96,), "int64"), E: T.Buffer((300, 80), "float32"),
                  Out: T.Buffer((96, 80), "float32")):
    for b in T.parallel(96):
        for d in T.vectorized(80):
            Out[b, d] = E[Idx[b], d] * T.float32(2)


@T.prim_func
def casts(A: T.Buffer((64, 48), "float32"), Q: T.Buffer((64, 48), "int8"),
          U: T.Buffer((64, 48), "uint16"), S: T.Buffer((64, 48), "int32")):
    for i in T.parallel(64):
        for j in T.vectorized(48):
            Q[i, j] = T.Cast("int8", T.min(T.max(T.round(A[i, j]), T.float32(-128)),
                                           T.float32(127)))
            U[i, j] = T.Cast("uint16", A[i, j])
            S[i, j] = T.Cast("int32", A[i, j] * T.float32(1e8))


@T.prim_func
def int_dots(A: T.Buffer((12, 128), "int32"), B: T.Buffer((30, 128), "int32"),
             C: T.Buffer((12, 30), "int32")):
    for i, j, k in T.grid(12, 30, 128):  # jammed outputs, their lanes folded together
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = 0
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vj, vk]


@T.prim_func
def two_sums(A: T.Buffer((12, 300), "int32"), S: T.Buffer((12,), "int32"),
             Q: T.Buffer((12,), "int32")):
    for i, k in T.grid(12, 300):  # two accumulators of one block, folded together
        with T.block("S"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                S[vi] = 0
                Q[vi] = 0
            S[vi] = S[vi] + A[vi, vk]
            Q[vi] = Q[vi] + A[vi, vk] * A[vi, vk]


@T.prim_func
def batched_matvec(A: T.Buffer((6, 40, 128), "int32"), x: T.Buffer((6, 128), "int32"),
                   y: T.Buffer((6, 40), "int32")):
    for b, i, k in T.grid(6, 40, 128):  # each row read once: not jammed
        with T.block("y"):
            vb, vi, vk = T.axis.remap("SSR", [b, i, k])
            with T.init():
                y[vb, vi] = 0
            y[vb, vi] = y[vb, vi] + A[vb, vi, vk] * x[vb, vk]


def _ints(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return rng.integers(-50, 50, shape).astype("int32")


@TARGETS
def test_a_padded_window(target: Target) -> None:
    rng = np.random.default_rng(1)
    _agree(padded_window, [_ints(rng, 8, 20, 21), _ints(rng, 8, 3, 3),
                           np.zeros((8, 20, 21), "int32")], target)


@TARGETS
@pytest.mark.parametrize("n", [1, 63, 64, 130, 1000])
def test_a_guarded_tail(target: Target, n: int) -> None:
    rng = np.random.default_rng(n)
    _agree(guarded_tail, [_ints(rng, n), np.full(n, 7, "int32")], target)


@TARGETS
def test_rows_picked_by_int64_indices(target: Target) -> None:
    rng = np.random.default_rng(2)
    _agree(rows_by_int64, [rng.integers(0, 300, 96).astype("int64"),
                           rng.standard_normal((300, 80)).astype("float32"),
                           np.zeros((96, 80), "float32")], target)


@TARGETS
def test_vector_casts_with_edge_values(target: Target) -> None:
    rng = np.random.default_rng(3)
    A = (rng.standard_normal((64, 48)) * 200).astype("float32")
    A[0, :8] = [np.nan, np.inf, -np.inf, 127.5, -128.5, 65535.9, -0.5, 3e9]
    _agree(casts, [A, np.zeros((64, 48), "int8"), np.zeros((64, 48), "uint16"),
                   np.zeros((64, 48), "int32")], target)


@TARGETS
def test_jammed_outputs_folded_together(target: Target) -> None:
    rng = np.random.default_rng(4)
    _agree(int_dots, [_ints(rng, 12, 128), _ints(rng, 30, 128),
                      np.zeros((12, 30), "int32")], target)


@TARGETS
def test_two_outputs_folded_together(target: Target) -> None:
    rng = np.random.default_rng(6)
    _agree(two_sums, [_ints(rng, 12, 300), np.zeros(12, "int32"), np.zeros(12, "int32")],
           target)


@TARGETS
def test_a_batched_matvec(target: Target) -> None:
    rng = np.random.default_rng(5)
    _agree(batched_matvec, [_ints(rng, 6, 40, 128), _ints(rng, 6, 128),
                            np.zeros((6, 40), "int32")], target)
