"""ExprRV arithmetic, as TVM's ExprRV (a Var) has it: a sampled tile size used in an index
map (``j // (j1 * j2)``) stands for its sampled value when the primitive is applied, and
the trace keeps the RVs (printed by name, replayed with the replay's samples)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sched_checks import assert_same_results, assert_structure, scheduled

from irbuilder.ir import FloorDiv, Mul, Var, structural_equal
from tvmscript import build
from tvmscript import tir as T

TARGET = "llvm -mcpu=znver3"


@T.prim_func
def scale(A: T.Buffer((8, 64), "float32"), C: T.Buffer((8, 64), "float32")):
    B = T.alloc_buffer((8, 64))
    for i, j in T.grid(8, 64):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * 2.0
    for i, j in T.grid(8, 64):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + 1.0


@T.prim_func
def scale_packed(A: T.Buffer((8, 64), "float32"), C: T.Buffer((8, 64), "float32")):
    B = T.alloc_buffer((8, 4, 16))
    for i, j in T.grid(8, 64):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj // 16, vj % 16] = A[vi, vj] * 2.0
    for i, j in T.grid(8, 64):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj // 16, vj % 16] + 1.0


def _packed(decision: list[int]) -> T.Schedule:
    sch = T.Schedule(scale, debug_mask="all")
    block = sch.get_block("B")
    _, j1, j2 = sch.sample_perfect_tile(sch.get_loops(block)[1], 3, decision=decision)
    sch.transform_layout(block, ("write", 0), lambda i, j: (i, j // (j1 * j2), j % (j1 * j2)))
    return sch


def test_arithmetic_builds_expressions_over_the_rv():
    sch = T.Schedule(scale)
    j0, j1 = sch.sample_perfect_tile(sch.get_loops("B")[1], 2, decision=[4, 16])
    j = Var("j", "int32")
    expr = j // (j0 * j1)
    assert isinstance(expr, FloorDiv) and isinstance(expr.b, Mul)
    assert expr.b.a is j0.var and expr.b.b is j1.var
    assert str(2 * j0 + 1 - j1 % 3) != ""  # the reflected and mixed forms build too
    assert sch.get(j0) == 4 and sch.get(j1) == 16


def test_the_map_uses_the_sampled_values():
    sch = _packed([4, 2, 8])
    assert_structure(sch, scale_packed)
    assert_same_results(scale, sch)
    a = np.random.default_rng(0).standard_normal((8, 64)).astype("float32")
    c = np.zeros_like(a)
    build(scheduled(sch), target=TARGET)(a, c)
    np.testing.assert_array_equal(c, a * 2 + 1)


def test_the_trace_prints_the_rvs_and_replays_them():
    sch = _packed([4, 2, 8])
    text = str(sch.trace)
    assert "index_map=lambda i, j: (i, j // (v4 * v5), j % (v4 * v5))" in text
    replays = []
    again = T.Schedule(scale, debug_mask="all")
    sch.trace.apply_to_schedule(again)
    replays.append(again)
    from_json = T.Schedule(scale, debug_mask="all")
    type(sch.trace).apply_json_to_schedule(json.loads(json.dumps(sch.trace.as_json())), from_json)
    replays.append(from_json)
    from_python = T.Schedule(scale, debug_mask="all")
    namespace: dict[str, object] = {}
    exec("\n".join(text.splitlines()[1:]), {"tir": T}, namespace)
    namespace["apply_trace"](from_python)  # type: ignore[operator]
    replays.append(from_python)
    for replay in replays:
        assert structural_equal(scheduled(replay), scheduled(sch))


def test_a_replay_with_another_decision_uses_its_own_sample():
    sch = _packed([4, 2, 8])
    sample = next(i for i in sch.trace.insts if i.kind.name == "SamplePerfectTile")
    other = T.Schedule(scale, debug_mask="all")
    sch.trace.with_decision(sample, [2, 4, 8], True).apply_to_schedule(other)
    text = scheduled(other).script()
    assert "B = T.alloc_buffer((8, 2, 32), \"float32\")" in text
    assert_same_results(scale, other)


def test_a_sample_used_only_in_a_map_survives_simplification():
    sch = _packed([4, 2, 8])
    kinds = [i.kind.name for i in sch.trace.simplified(True).insts]
    assert "SamplePerfectTile" in kinds


def test_another_schedules_sample_is_refused_by_name():
    other = T.Schedule(scale)
    _, foreign = other.sample_perfect_tile(other.get_loops("B")[1], 2, decision=[4, 16])
    sch = T.Schedule(scale)
    with pytest.raises(IndexError, match="does not belong to this schedule"):
        sch.transform_layout(
            sch.get_block("B"), ("write", 0), lambda i, j: (i, j // foreign, j % foreign)
        )
