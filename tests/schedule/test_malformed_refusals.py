"""Primitives on blocks that break TVM's block rules (non-affine reduction bindings, a
reduction var indexing the output, out-of-range reindex, ...): each either keeps the
numbers or refuses with a ScheduleError that says why."""

from __future__ import annotations

import pytest
from sched_checks import assert_same_results

from tvmscript import tir as T


@T.prim_func
def colsum_squared_index(A: T.Buffer((8, 32), "float32"), B: T.Buffer((8,), "float32")):
    # vr = r * r // 4 takes the value 0 at r = 0 and r = 1: the init runs twice per row
    for i, r in T.grid(8, 8):
        with T.block("S"):
            vi = T.axis.spatial(8, i)
            vr = T.axis.reduce(32, (r * r) // 4)
            with T.init():
                B[vi] = T.float32(1)
            B[vi] = B[vi] * T.float32(0.5) + A[vi, vr]


def test_decompose_reduction_refuses_non_affine_binding():
    sch = T.Schedule(colsum_squared_index)
    with pytest.raises(T.ScheduleError, match="not an affine map"):
        sch.decompose_reduction("S", sch.get_loops("S")[0])
    # the refusal leaves the function as it was
    assert_same_results(colsum_squared_index, sch)
