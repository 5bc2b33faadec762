"""Random TensorIR schedules of ``C = relu(A @ B)`` -- splits, loop orders, the ReLU moved
under a tile loop (``reverse_compute_at``), the init decomposed, a ``cache_write``, operand
tiles staged by ``cache_read`` + ``compute_at``, parallel rows, vectorized columns -- built on pinned targets, bit for bit
against the interpreter: what ``forward_tile_copies``, ``distribute_tile_consumers`` and
``sink_reduction_loops`` make of them must compute what the schedule says."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from irbuilder.ir import PrimFunc
from lowering.schedule.error import ScheduleError
from lowering.target import Target
from tvmscript import tir as T

sys.path.insert(0, str(Path(__file__).parent / "late"))
from late_kit import agrees_with_interpreter, one_storage, pinned_targets, standard_normal


@T.prim_func
def mm_relu(A: T.Buffer((16, 32), "float32"), B: T.Buffer((32, 32), "float32"),
            C: T.Buffer((16, 32), "float32")):
    Y = T.alloc_buffer((16, 32))
    for i, j, k in T.grid(16, 32, 32):
        with T.block("Y"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                Y[vi, vj] = T.float32(0)
            Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
    for i, j in T.grid(16, 32):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = T.max(Y[vi, vj], T.float32(0))


def _schedule(seed: int, parallel: bool = True) -> PrimFunc:
    """One random schedule (each step drawn, a step the schedule refuses skipped); a
    parallel outer loop only when ``parallel``."""
    rng = np.random.default_rng(seed)
    sch = T.Schedule(mm_relu)
    y = sch.get_block("Y")
    if rng.random() < 0.3:
        sch.cache_write(y, 0, "global")
    i, j, k = sch.get_loops(y)
    i0, i1 = sch.split(i, [None, int(rng.choice([2, 4, 8]))])
    j0, j1 = sch.split(j, [None, int(rng.choice([4, 8, 16]))])
    k0, k1 = sch.split(k, [None, int(rng.choice([4, 8]))])
    if seed % 3:
        # the tutorials' shape: tile loops outside, the reduction among the inner loops
        outer = [[i0, j0], [j0, i0]][int(rng.integers(0, 2))]
        inner = [[k0, k1, i1, j1][n] for n in rng.permutation(4)]
        if inner.index(k0) > inner.index(k1):
            inner[inner.index(k0)], inner[inner.index(k1)] = k0, k1
        order = [*outer, *inner]
    else:
        loops = [i0, i1, j0, j1, k0, k1]
        order = [loops[n] for n in rng.permutation(6)]
        for first, second in ((i0, i1), (j0, j1), (k0, k1)):  # splits stay outer first
            a, b = order.index(first), order.index(second)
            if a > b:
                order[a], order[b] = order[b], order[a]
    sch.reorder(*order)
    steps = [lambda: sch.reverse_compute_at(sch.get_block("C"), order[int(rng.integers(0, 3))])]
    if rng.random() < 0.5:
        def stage() -> None:
            staged = sch.cache_read(y, int(rng.integers(0, 2)), "global")
            sch.compute_at(staged, k0)
        steps.append(stage)
    if rng.random() < 0.4:
        steps.append(lambda: sch.decompose_reduction(y, order[int(rng.integers(0, 3))]))
    for step in steps:
        try:
            step()
        except ScheduleError:
            pass
    if rng.random() < 0.5 and parallel:
        try:
            sch.parallel(sch.get_loops(y)[0])
        except ScheduleError:
            pass
    if rng.random() < 0.3:
        try:  # the innermost loop in lanes, when it is a column loop
            sch.vectorize(sch.get_loops(sch.get_block("Y"))[-1])
        except ScheduleError:
            pass
    func = sch.mod["main"]
    assert isinstance(func, PrimFunc)
    return func


@pytest.mark.parametrize("target", pinned_targets())
@pytest.mark.parametrize("seed", range(24))
def test_random_schedules_give_the_interpreters_numbers(seed: int, target: Target) -> None:
    func = _schedule(seed)
    agrees_with_interpreter(func, lambda: standard_normal(func, seed), target, runs=2)


@pytest.mark.parametrize("target", pinned_targets())
@pytest.mark.parametrize("seed", range(12))
def test_random_schedules_with_the_output_over_both_inputs(seed: int, target: Target) -> None:
    # serial schedules: a T.parallel loop promises independent iterations, which arguments
    # that overlap break (the interpreter's one order is then not the only answer)
    func = _schedule(seed, parallel=False)
    agrees_with_interpreter(
        func, lambda: one_storage(func, (0, 600, 300), np.random.default_rng(seed)), target,
        runs=2)
