"""The rewrites that cut, fuse and tabulate loops (``partition_loops`` at symbolic
thresholds, ``fuse_parallel_loops``, ``tabulate_bindings``) give the interpreter's numbers
on every shape of a small family: each comparison against an outer variable, each way a
second loop may read a first loop's rows, each kind of column binding."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import tvmscript
from tvmscript import tir as T

sys.path.insert(0, str(Path(__file__).parent.parent / "perf_codegen"))
from pinned import AVX2, needs_host_features

_COMPARISONS = {
    "j < i": lambda i, j: j < i,
    "j <= i + 3": lambda i, j: j <= i + 3,
    "j > i - 5": lambda i, j: j > i - 5,
    "j >= 2 * i": lambda i, j: j >= 2 * i,
    "i + 7 < j": lambda i, j: i + 7 < j,
    "40 - i >= j": lambda i, j: 40 - i >= j,
}


def _masked(name: str) -> object:
    source = f'''from tvmscript import tir as T

@T.prim_func
def masked(A: T.Buffer((37, 45), "float32"), O: T.Buffer((37, 45), "float32")):
    for i, j in T.grid(37, 45):
        O[i, j] = T.if_then_else({name}, A[i, j] * T.float32(2), A[i, j] - T.float32(1))
'''
    return tvmscript.from_source(source)


_READS = {
    "same row": "S[i]",
    "reversed": "S[255 - i]",
    "next": "S[T.min(i + 1, 255)]",
    "half": "S[i // 2]",
    "first": "S[0]",
}


def _two_loops(read: str) -> object:
    source = f'''from tvmscript import tir as T

@T.prim_func
def two_loops(A: T.Buffer((256, 300), "float32"), O: T.Buffer((256,), "float32")):
    S = T.alloc_buffer((256,), "float32")
    R = T.alloc_buffer((256,), "float32")
    for i in T.parallel(256):
        S[i] = T.float32(0)
        for j in range(300):
            S[i] = S[i] + A[i, j]
    for i in T.parallel(256):
        R[i] = {read} * T.float32(3) + S[i]
    for i in T.parallel(256):
        O[i] = R[i] - T.float32(1)
'''
    return tvmscript.from_source(source)


def _agree(func: object, arrays: list[np.ndarray], rtol: float = 0.0) -> None:
    want = [a.copy() for a in arrays]
    tvmscript.build(func, target="interp")(*want)
    kernel = tvmscript.build(func, target=AVX2, cache=False)
    for _ in range(3):  # parallel code: the same numbers every run
        got = [a.copy() for a in arrays]
        kernel(*got)
        for g, w in zip(got, want):
            if rtol:
                np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol)
            else:
                np.testing.assert_array_equal(g, w)


@needs_host_features(AVX2)
@pytest.mark.parametrize("name", list(_COMPARISONS))
def test_a_mask_against_an_outer_variable(name: str) -> None:
    rng = np.random.default_rng(len(name))
    A = rng.standard_normal((37, 45)).astype("float32")
    _agree(_masked(name), [A, np.zeros((37, 45), "float32")])
    i, j = np.meshgrid(np.arange(37), np.arange(45), indexing="ij")
    O = np.zeros((37, 45), "float32")
    tvmscript.build(_masked(name), target=AVX2, cache=False)(A, O)
    np.testing.assert_array_equal(O, np.where(_COMPARISONS[name](i, j), A * 2, A - 1))


@needs_host_features(AVX2)
@pytest.mark.parametrize("read", list(_READS))
def test_a_second_loop_reading_the_first_loops_rows(read: str) -> None:
    rng = np.random.default_rng(7)
    A = rng.standard_normal((256, 300)).astype("float32")
    _agree(_two_loops(_READS[read]), [A, np.zeros(256, "float32")], rtol=1e-5)


@T.prim_func
def column_bindings(A: T.Buffer((6, 50), "int32"), W: T.Buffer((50,), "float32"),
                    O: T.Buffer((6, 90), "float32")):
    for h in range(6):
        for w in range(3, 93):
            q = T.floordiv(w * 5 - 7, 3)  # negative for the first columns
            r = T.floormod(w * 5 - 7, 3)
            x = T.Cast("float32", w) * T.float32(0.37)
            f = x - T.floor(x)
            k = T.max(T.min(q, 49), 0)
            O[h, w - 3] = T.Cast("float32", A[h, k] + r) * f + W[k] * T.Cast("float32", h)


@needs_host_features(AVX2)
def test_column_bindings_through_tables() -> None:
    rng = np.random.default_rng(8)
    arrays = [rng.integers(-9, 9, (6, 50)).astype("int32"),
              rng.standard_normal(50).astype("float32"), np.zeros((6, 90), "float32")]
    text = tvmscript.build(column_bindings, target=AVX2, cache=False).get_source("tir")
    assert all(f"{v}_table" in text for v in "rfk")  # q is read only by k: no table
    _agree(column_bindings, arrays, rtol=1e-5)
