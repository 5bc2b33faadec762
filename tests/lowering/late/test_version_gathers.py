"""``version_gathers`` alone: a gather loop ``O[i] = T[I[i]]`` gets a fast path LLVM may
vectorize with hardware gathers, inside a ``tvms.noalias_region`` attribute (scoped no-alias
metadata) under a run-time test that the output overlaps neither the table nor the indices.
The pipeline selects it on AVX-512 targets only; run here on its own for any target."""

from __future__ import annotations

from typing import Any

import numpy as np
from late_kit import (
    AVX2,
    AVX512,
    assert_same_numbers,
    before_late,
    loops,
    run_pass,
    runs_avx2,
    versioning_ifs,
)

import lowering
from lowering.late.alias_version import NOALIAS_ATTR
from lowering.pipeline import lowering_passes
from tvmscript import tir as T


@T.prim_func
def gather(Tb: T.Buffer((97,), "float32"), Idx: T.Buffer((256,), "int32"),
           Out: T.Buffer((256,), "float32")):
    for i in range(256):
        Out[i] = Tb[Idx[i]]


def test_the_gather_loop_gets_a_no_alias_fast_path() -> None:
    before = before_late(gather, AVX512)
    assert len(loops(before)) == 1
    after = run_pass("version_gathers", before)
    (branch,) = versioning_ifs(after, NOALIAS_ATTR)
    region = branch.then_case
    assert [v.name[0] for v in region.node] == ["O", "T", "I"]  # type: ignore[attr-defined]
    assert int(region.value) == 1  # type: ignore[attr-defined]  # O: the one written
    assert len(loops(after)) == 2  # the fast copy and the original loop


def test_selected_by_the_target_and_by_config() -> None:
    def names(target: Any, config: dict[str, Any]) -> list[str]:
        with lowering.PassContext(config=config):
            return [p.name for p in lowering_passes(3, target)]

    assert "version_gathers" in names(AVX512, {})
    assert "version_gathers" not in names(AVX2, {})
    assert "version_gathers" in names(AVX2, {"version_gathers": {"enabled": True}})
    assert "version_gathers" not in names(AVX512, {"version_gathers": {"enabled": False}})


def test_a_loop_without_indirect_loads_is_left_alone() -> None:
    @T.prim_func
    def copy(A: T.Buffer((256,), "float32"), B: T.Buffer((256,), "float32")):
        for i in range(256):
            B[i] = A[i]

    before = before_late(copy, AVX512)
    assert run_pass("version_gathers", before) is before


def _table_and_indices(rng: np.random.Generator) -> list[np.ndarray[Any, Any]]:
    table = rng.standard_normal(97).astype("float32")
    return [table, rng.integers(0, 97, 256).astype("int32"), np.zeros(256, "float32")]


def _output_over_the_table(rng: np.random.Generator) -> list[np.ndarray[Any, Any]]:
    storage = rng.standard_normal(300).astype("float32")
    indices = rng.integers(0, 97, 256).astype("int32")
    return [storage[:97], indices, storage[40:296]]  # O starts inside T


@runs_avx2
def test_same_numbers_before_and_after() -> None:
    before = before_late(gather, AVX512)
    after = run_pass("version_gathers", before)
    assert_same_numbers(gather, before, after, _table_and_indices)
    assert_same_numbers(gather, before, after, _output_over_the_table)
