"""A short run of the random-schedule fuzz (tests/schedule/fuzz_schedule.py runs it long)."""

from __future__ import annotations

import pytest
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
