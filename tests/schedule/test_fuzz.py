"""A short run of the random-schedule fuzz (tests/schedule/fuzz_schedule.py runs it long), on
random int32 chains and on the hand-written kernels of fuzz_kernels.py."""

from __future__ import annotations

import pytest
from fuzz_kernels import KERNELS
from fuzz_schedule import run_case


@pytest.mark.parametrize("seed", range(24))
def test_random_schedule_is_refused_or_equivalent(seed: int) -> None:
    outcome = run_case(seed)
    assert len(outcome.applied) + len(outcome.refused) >= 1


def test_fuzz_exercises_both_outcomes() -> None:
    applied: set[str] = set()
    refused: set[str] = set()
    for seed in range(100, 130):
        outcome = run_case(seed)
        applied.update(outcome.applied)
        refused.update(outcome.refused)
    assert {"split", "fuse", "reorder"} <= applied
    assert refused  # the generator also proposes illegal primitives


@pytest.mark.parametrize("seed", range(28))
def test_random_schedule_of_a_kernel_is_refused_or_equivalent(seed: int) -> None:
    outcome = run_case(seed, kernel=seed % len(KERNELS))
    assert len(outcome.applied) + len(outcome.refused) >= 1


def test_kernel_fuzz_applies_the_newer_primitives() -> None:
    applied: set[str] = set()
    for seed in range(200, 260):
        applied.update(run_case(seed, kernel=seed % len(KERNELS)).applied)
    assert {"loop_partition", "pad_einsum", "set_scope", "storage_align", "blockize"} <= applied
