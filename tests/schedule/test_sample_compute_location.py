"""sample_compute_location: TVM's candidates, its generator, and compute_at at the marks."""

from __future__ import annotations

import numpy as np
import pytest
from sched_checks import scheduled

from irbuilder.ir import structural_equal
from lowering.schedule.sampling import TvmRandom
from tvmscript import tir as T


@T.prim_func
def two_stage(A: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
    B = T.alloc_buffer((8, 8))
    for i, j in T.grid(8, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * 2.0
    for i, j in T.grid(8, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + 1.0


@T.prim_func
def row_sum_consumer(A: T.Buffer((8, 8), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8, 8))
    for i, j in T.grid(8, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * 2.0
    for i, _u, k in T.grid(8, 1, 8):
        with T.block("C"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                C[vi] = T.float32(0)
            C[vi] = C[vi] + B[vi, vk]


def _decisions(func, block: str, draws: int = 60) -> set[int]:
    sch = T.Schedule(func, seed=3)
    seen = set()
    for _ in range(draws):
        sch.sample_compute_location(block)
        seen.add(sch.trace.get_decision(sch.trace.insts[-1]))
    return seen


def test_candidates_are_inline_root_and_the_consumer_loops():
    assert _decisions(two_stage, "B") == {-2, -1, 0, 1}
    # the unit loop u is skipped; the reduction loop k, below the last spatial loop i, ends
    # the candidates; B (read by a reduction) may still be inlined
    assert _decisions(row_sum_consumer, "B") == {-2, -1, 0}
    # a block without consumers may only stay (C writes a parameter, so it cannot be inlined)
    assert _decisions(two_stage, "C") == {-1}


def test_a_decision_places_the_block_where_compute_at_would():
    sch = T.Schedule(two_stage, debug_mask="all")
    b = sch.get_block("B")
    loc = sch.sample_compute_location(b, decision=1)
    sch.compute_at(b, loc, preserve_unit_loops=True)
    ref = T.Schedule(two_stage)
    _, j = ref.get_loops(ref.get_block("C"))
    ref.compute_at(ref.get_block("B"), j, preserve_unit_loops=True)
    assert structural_equal(scheduled(sch), scheduled(ref))
    assert sch.get(loc) is sch.get(sch.get_loops(sch.get_block("C"))[1])


def test_marks_inline_or_leave_the_block():
    sch = T.Schedule(two_stage, debug_mask="all")
    b = sch.get_block("B")
    sch.compute_at(b, sch.sample_compute_location(b, decision=-1))
    assert structural_equal(scheduled(sch), two_stage)
    sch.compute_at(b, sch.sample_compute_location(b, decision=-2))
    ref = T.Schedule(two_stage)
    ref.compute_inline(ref.get_block("B"))
    assert structural_equal(scheduled(sch), scheduled(ref))
    kinds = [inst.kind.name for inst in sch.trace.insts]
    assert kinds.count("SampleComputeLocation") == 2 and kinds.count("ComputeAt") == 2


def test_a_decision_that_is_no_candidate_falls_back_to_the_one_before():
    sch = T.Schedule(row_sum_consumer)
    b = sch.get_block("B")
    loc = sch.sample_compute_location(b, decision=2)  # k: not a candidate
    assert sch.trace.get_decision(sch.trace.insts[-1]) == 0
    assert sch.get(loc) is sch.get(sch.get_loops(sch.get_block("C"))[0])


def test_the_trace_replays_the_sampled_location():
    sch = T.Schedule(two_stage, seed=9)
    b = sch.get_block("B")
    sch.compute_at(b, sch.sample_compute_location(b), preserve_unit_loops=True)
    again = T.Schedule(two_stage)
    sch.trace.apply_to_schedule(again)
    assert structural_equal(scheduled(again), scheduled(sch))
    assert "sch.sample_compute_location(block=b0, decision=" in str(sch.trace)


def test_the_generator_is_tvms_minimal_standard_engine():
    rng = TvmRandom(1)
    for _ in range(10000):
        rng.random()
    # the C++ standard's check value of minstd_rand: the 10000th state from seed 1
    assert rng.getstate() == (399268537,)
    assert TvmRandom(0).getstate() == (1,)  # TVM turns a zero seed into 1
    draws = [TvmRandom(42).sample_int(0, 8) for _ in range(3)]
    assert draws == [draws[0]] * 3  # same seed, same draw
    rng = TvmRandom(42)
    counts = np.bincount([rng.sample_int(0, 8) for _ in range(8000)], minlength=8)
    assert counts.min() > 850 and counts.max() < 1150


def test_an_unknown_block_is_refused():
    sch = T.Schedule(two_stage)
    with pytest.raises(T.ScheduleError, match="no block named 'X'"):
        sch.sample_compute_location("X")
