"""Assertions shared by the schedule tests: structure against an expected program, and
results against the original on random inputs (the reference interpreter)."""

from __future__ import annotations

from irbuilder.ir import PrimFunc, assert_structural_equal
from tvmscript import tir as T
from tvmscript.schedule import check_same_results


def scheduled(sch: T.Schedule) -> PrimFunc:
    return sch.mod["main"]


def assert_structure(sch: T.Schedule, expected: PrimFunc) -> None:
    """The scheduled function equals ``expected`` (its name aside)."""
    got = scheduled(sch)
    want = expected.with_attr("global_symbol", got.name)
    assert_structural_equal(got, want)


def assert_same_results(original: PrimFunc, sch: T.Schedule) -> None:
    """The scheduled function computes what ``original`` computes on random inputs."""
    assert check_same_results(original, scheduled(sch)) is None


def assert_schedule(original: PrimFunc, sch: T.Schedule, expected: PrimFunc) -> None:
    assert_structure(sch, expected)
    assert_same_results(original, sch)
    # the result prints and parses back to itself
    from tvmscript import from_source

    text = scheduled(sch).script()
    assert_structural_equal(from_source(text), scheduled(sch))
