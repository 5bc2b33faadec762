"""Each pass of the late stage on its own: its IR effect, and a kernel built with only that
rewrite enabled gives the interpreter's results."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
from pinned import AVX2, AVX512, lower_before_late_stage
from stream_checks import random_inputs

import lowering
import tvmscript
from irbuilder.ir import PrimFunc
from lowering.pipeline import LATE_STAGE
from tvmscript import tir as T

N = 1024


@T.prim_func
def stream_fill(A: T.Buffer((N,), "float32"), B: T.Buffer((N,), "float32")):
    for i in range(N):
        B[i] = A[i] * T.float32(2)


@T.prim_func
def remainder(A: T.Buffer((23,), "float32"), B: T.Buffer((23,), "float32")):
    for i in T.vectorized(23):
        B[i] = A[i] + T.float32(1)


@T.prim_func
def mixed(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32"),
          S: T.Buffer((1,), "float32")):
    s = T.decl_buffer((1,), "float32")
    s[0] = T.float32(0)
    for j in range(64):
        B[j] = T.exp(A[j])
        s[0] = s[0] + B[j]
    S[0] = s[0]


@T.prim_func
def parallel_rows(A: T.Buffer((16, 64), "float32"), S: T.Buffer((16,), "float32")):
    for i in T.parallel(16):
        acc = T.decl_buffer((1,), "float32")
        acc[0] = T.float32(0)
        for k in range(64):
            acc[0] = acc[0] + A[i, k]
        S[i] = acc[0]


@T.prim_func
def matmul(A: T.Buffer((32, 32), "float32"), B: T.Buffer((32, 32), "float32"),
           C: T.Buffer((32, 32), "float32")):
    for i, j in T.grid(32, 32):
        C[i, j] = T.float32(0)
        for k in range(32):
            C[i, j] = C[i, j] + A[i, k] * B[k, j]


@T.prim_func
def rowsum(A: T.Buffer((32, 64), "float32"), S: T.Buffer((32,), "float32")):
    for i in range(32):
        S[i] = T.float32(0)
        for k in range(64):
            S[i] = S[i] + A[i, k]


@T.prim_func
def gather(Tb: T.Buffer((97,), "float32"), I: T.Buffer((256,), "int32"),
           O: T.Buffer((256,), "float32")):
    for i in range(256):
        O[i] = Tb[I[i]]


@T.prim_func
def stencil(A: T.Buffer((8, 80), "float32"), B: T.Buffer((8, 80), "float32")):
    for i in range(1, 7):
        for j in T.vectorized(64):
            B[i, j + 1] = A[i - 1, j + 1] + A[i + 1, j + 1]


@pytest.fixture(autouse=True)
def small_streams_here(small_streams: None) -> Iterator[None]:
    yield


def _only(name: str) -> lowering.PassContext:
    others = set(LATE_STAGE) - {name, "simplify"}
    return lowering.PassContext(disabled_passes=frozenset(others))


def _counts(text: str, *words: str) -> tuple[int, ...]:
    return tuple(text.count(w) for w in words)


def _all_inputs(func: PrimFunc, rng: np.random.Generator, low: int, high: int) -> list[Any]:
    out = random_inputs(func, rng, low, high)
    last = list(func.buffer_map.values())[-1]
    return [*out, np.zeros(tuple(int(d) for d in last.shape), str(last.dtype))]


def _equal_to_interpreter(func: PrimFunc, name: str, low: int = -3, high: int = 3) -> None:
    inputs = _all_inputs(func, np.random.default_rng(7), low, high)
    want = [a.copy() for a in inputs]
    tvmscript.build(func, target="interp")(*want)
    with _only(name):
        kernel = tvmscript.build(func, target=AVX2, cache=False)
        assert kernel.lowered is not None
    got = [a.copy() for a in inputs]
    kernel(*got)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def _effect(func: PrimFunc, name: str, target: lowering.target.Target = AVX2) -> tuple[str, str]:
    before = lower_before_late_stage(func)
    with _only(name):
        after = lowering.lower(func, target=target)
    return before.script(), after.script()


Case = tuple[PrimFunc, str, Callable[[str, str], bool]]
CASES: list[Case] = [
    (stream_fill, "vectorize_streams",
     lambda b, a: "T.Ramp" not in b and "stream_vectorized" in a and "T.Ramp(" in a),
    (remainder, "vectorize_remainders",
     lambda b, a: "T.Ramp(16, 1, 4)" not in b and "T.Ramp(16, 1, 4)" in a),
    (mixed, "distribute_reductions",
     lambda b, a: _counts(a, "for j")[0] + _counts(a, "for j_")[0] > _counts(b, "for j")[0]),
    (parallel_rows, "jam_parallel_reductions",
     lambda b, a: "T.parallel(4)" in a and "T.parallel(16)" in b),
    (matmul, "interchange_reductions",
     lambda b, a: "tvms.noalias_region" not in b and "tvms.noalias_region" in a),
    (rowsum, "promote_accumulators", lambda b, a: "_acc" not in b and "S_flat_acc" in a),
    (stencil, "align_streams", lambda b, a: "stream_shift" not in b and "stream_shift" in a),
    (stream_fill, "mark_streams",
     lambda b, a: "tvms.streaming_stores" not in b and '"tvms.streaming_stores": [1]' in a),
]


@pytest.mark.parametrize(("func", "name", "effect"), CASES, ids=[c[1] for c in CASES])
def test_late_pass_alone(func: PrimFunc, name: str, effect: Callable[[str, str], bool]) -> None:
    before, after = _effect(func, name)
    assert effect(before, after), after
    _equal_to_interpreter(func, name)


def test_alias_version_alone() -> None:
    before, after = _effect(gather, "version_gathers", AVX512)
    assert "tvms.noalias_region" not in before and "tvms.noalias_region" in after
    inputs = _all_inputs(gather, np.random.default_rng(5), 0, 97)
    want = [a.copy() for a in inputs]
    tvmscript.build(gather, target="interp")(*want)
    config = {"version_gathers": {"enabled": True}}  # runnable on any host
    with _only("version_gathers"), lowering.PassContext(
        disabled_passes=_only("version_gathers").disabled_passes, config=config
    ):
        kernel = tvmscript.build(gather, target=AVX2, cache=False)
    assert "tvms.noalias_region" in kernel.get_source("tir")
    got = [a.copy() for a in inputs]
    kernel(*got)
    np.testing.assert_array_equal(got[2], want[2])
