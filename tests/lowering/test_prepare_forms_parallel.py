"""The forms this session's CPU preparation and race check admit, inside ``T.parallel``
loops: compiled on both pinned targets (both cores), against the interpreter, several runs
in a row (a race would show as a run that differs)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tvmscript
from backend.runtime import get_num_threads, set_num_threads
from lowering.target import Target

AVX2 = Target("llvm -mcpu=znver3")
AVX512 = Target("llvm -mcpu=znver4")
RUNS = 5

SOURCES = {
    # a guarded out-of-bounds load (unsafe select) per parallel row
    "select_guard": """
from tvmscript import tir as T

@T.prim_func
def f(A: T.Buffer((64, 128), "float32"), B: T.Buffer((64, 128), "float32")):
    for i in T.parallel(64):
        for j in range(128):
            B[i, j] = T.Select(j > 0, A[i, j - 1], T.float32(-1))
""",
    # vector-typed parameters (lanes as a last dimension)
    "vector_params": """
from tvmscript import tir as T

@T.prim_func
def f(A: T.Buffer((512,), "float32x4"), B: T.Buffer((512,), "float32x4")):
    for i in T.parallel(512):
        B[i] = A[i] * T.Broadcast(T.float32(3), 4) + T.Broadcast(T.float32(1), 4)
""",
    # TVM's printed vector stores, interleaved between the iterations
    "ramp_interleaved": """
from tvmscript import tir as T

@T.prim_func
def f(A: T.Buffer((4096,), "float32"), B: T.Buffer((4096,), "float32")):
    for x in T.parallel(2):
        for k in range(128):
            B[T.ramp(x + k * 32, 2, 16)] = A[T.ramp(x + k * 32, 2, 16)] * T.Broadcast(T.float32(2), 16)
""",
    # virtual threads inside a parallel loop, with per-copy scratch
    "vthread": """
from tvmscript import tir as T

@T.prim_func
def f(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32")):
    for i in T.parallel(64):
        for v in T.thread_binding(2, "vthread.x"):
            t = T.alloc_buffer((32,), "float32")
            for j in range(32):
                t[j] = A[i, v * 32 + j] * T.float32(2)
            for j in range(32):
                B[i, v * 32 + j] = t[j] + T.float32(1)
""",
}


def _pinned() -> list[Any]:
    return [
        pytest.param(t, id=t.mcpu, marks=pytest.mark.skipif(
            bool(t.missing_on_host()), reason=f"the host lacks {t.missing_on_host()}"))
        for t in (AVX2, AVX512)
    ]


def _arrays(func: Any, rng: np.random.Generator) -> list[np.ndarray]:
    out = []
    for buffer in func.buffer_map.values():
        shape = tuple(int(d) for d in buffer.shape)
        if buffer.dtype.lanes > 1:
            shape = (*shape, buffer.dtype.lanes)
        out.append(rng.standard_normal(shape).astype(str(buffer.dtype.element_of())))
    return out


@pytest.mark.parametrize("target", _pinned())
@pytest.mark.parametrize("name", sorted(SOURCES))
def test_parallel_forms_match_the_interpreter_every_run(name: str, target: Target) -> None:
    func = tvmscript.from_source(SOURCES[name])
    kernel = tvmscript.build(func, target=target, cache=False, fp_contract=False)
    interp = tvmscript.build(func, target="interp")
    inputs = _arrays(func, np.random.default_rng(5))
    want = [a.copy() for a in inputs]
    interp(*want)
    threads = get_num_threads()
    set_num_threads(2)
    try:
        for _ in range(RUNS):
            got = [a.copy() for a in inputs]
            kernel(*got)
            np.testing.assert_array_equal(got[-1], want[-1])
    finally:
        set_num_threads(threads)
