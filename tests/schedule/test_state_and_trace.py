"""Schedule state (queries, handles, copies, modules), errors, sampling and the trace."""

from __future__ import annotations

import json

import pytest
from sched_checks import assert_same_results, scheduled

import lowering.schedule.split_fuse as split_fuse
from irbuilder.ir import For, IRModule, structural_equal
from lowering.schedule import Trace
from tvmscript import tir as T


@T.prim_func
def pipeline(A: T.Buffer((16, 16), "float32"), D: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16))
    C = T.alloc_buffer((16, 16))
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] + 1.0
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] * 2.0
    for i, j in T.grid(16, 16):
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = C[vi, vj] + B[vi, vj]


def _names(sch, rvs):
    return [sch.get(rv).name_hint for rv in rvs]


def test_queries():
    sch = T.Schedule(pipeline)
    c = sch.get_block("C")
    assert _names(sch, sch.get_producers(c)) == ["B"]
    assert _names(sch, sch.get_consumers(c)) == ["D"]
    assert _names(sch, sch.get_producers(sch.get_block("D"))) == ["B", "C"]
    loops = sch.get_loops(c)
    assert [sch.get(lp).loop_var.name for lp in loops] == ["i", "j"]
    assert _names(sch, sch.get_child_blocks(loops[0])) == ["C"]
    root = sch.get_block("root")  # TVM's name for the function's root block
    assert _names(sch, sch.get_child_blocks(root)) == ["B", "C", "D"]
    with pytest.raises(T.ScheduleError, match="no block named 'E'; the blocks are"):
        sch.get_block("E")


def test_duplicate_block_names_are_refused():
    @T.prim_func
    def twice(A: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("X"):
                vi = T.axis.spatial(4, i)
                A[vi] = 1.0
        for i in range(4):
            with T.block("X"):
                vi = T.axis.spatial(4, i)
                A[vi] = 2.0

    with pytest.raises(T.ScheduleError, match="2 blocks are named 'X'"):
        T.Schedule(twice).get_block("X")


def test_copy_is_independent_and_mod_is_a_module():
    sch = T.Schedule(pipeline, debug_mask="all")
    i, _ = sch.get_loops(sch.get_block("C"))
    other = sch.copy()
    other.split(i, [None, 4])
    assert len(sch.get_loops(sch.get_block("C"))) == 2
    assert len(other.get_loops(other.get_block("C"))) == 3
    assert isinstance(sch.mod, IRModule) and list(sch.mod) == ["main"]
    assert structural_equal(sch.mod["main"], pipeline)


def test_work_on_module_functions():
    module = IRModule({"first": pipeline, "second": pipeline.with_attr("global_symbol", "second")})
    sch = T.Schedule(module, debug_mask="all")
    with pytest.raises(ValueError, match=r"call sch.work_on"):
        sch.get_block("B")
    sch.work_on("second")
    assert sch.func_working_on == sch.mod.get_global_var("second")
    with pytest.raises(ValueError, match="no function 'third'"):
        sch.mod.get_global_var("third")
    sch.compute_inline(sch.get_block("B"))
    assert structural_equal(sch.mod["first"], pipeline)
    assert not structural_equal(sch.mod["second"], pipeline)
    with pytest.raises(ValueError, match="no function 'third'"):
        sch.work_on("third")


def test_error_shows_underlined_ir_and_render_levels():
    sch = T.Schedule(pipeline)
    i, _ = sch.get_loops(sch.get_block("C"))
    with pytest.raises(T.ScheduleError) as info:
        sch.split(i, [3, 3])
    text = str(info.value)
    assert text.startswith("ScheduleError: split: the product of the factors [3, 3] is 9")
    lines = text.splitlines()
    # The underline marks the var of C's loop (sibling loops print the same names, as TVM's).
    row = next(k for k, line in enumerate(lines) if line.rstrip().endswith("^"))
    assert "for i, j in T.grid(16, 16):" in lines[row - 1]
    assert lines[row].rstrip().endswith(" ^") and 'T.block("C")' in lines[row + 1]
    fast = T.Schedule(pipeline, error_render_level="fast")
    with pytest.raises(T.ScheduleError) as info:
        fast.split(fast.get_loops(fast.get_block("C"))[0], [3, 3])
    assert "\n" not in str(info.value)


def test_internal_check_refuses_a_wrong_result(monkeypatch):
    """A primitive that produced a wrong program is rolled back by debug_mask='all'."""
    original_split = split_fuse.split

    def broken_split(state, loop, factors, preserve, *rest):
        result = original_split(state, loop, factors, preserve, *rest)
        for node in state.index.nodes.values():
            if isinstance(node, For) and node.loop_var.name.endswith("_1"):
                from irbuilder.ir import const, rebuild

                shorter = rebuild(node, {"extent": const(node.extent.value - 1)})
                state.replace(node, shorter, {node: shorter})
                break
        return result

    monkeypatch.setattr(split_fuse, "split", broken_split)
    sch = T.Schedule(pipeline, debug_mask="all")
    i, _ = sch.get_loops(sch.get_block("C"))
    with pytest.raises(T.ScheduleError, match=r"internal check failed.*buffer D differs"):
        sch.split(i, [None, 4])
    assert structural_equal(scheduled(sch), pipeline)
    assert len(sch.trace.as_python()) == 2  # the refused split is not recorded


def _schedule_steps(sch):
    c = sch.get_block("C")
    i, j = sch.get_loops(c)
    factors = sch.sample_perfect_tile(i, n=2, max_innermost_factor=8)
    outer, inner = sch.split(i, factors)
    sch.reorder(inner, outer)
    choice = sch.sample_categorical([2, 4, 8], [0.2, 0.3, 0.5])
    sch.split(j, [None, choice])
    sch.fuse(*sch.get_loops(c)[:2])
    sch.compute_inline(sch.get_block("B"))
    sch.parallel(sch.get_loops(c)[0])


def test_trace_prints_runnable_python_and_replays():
    sch = T.Schedule(pipeline, seed=7, debug_mask="all")
    _schedule_steps(sch)
    text = str(sch.trace)
    assert text.startswith(
        "# from tvm import tir\ndef apply_trace(sch: tir.Schedule) -> None:\n"
        '  b0 = sch.get_block(name="C", func_name="main")'
    )
    assert "sch.fuse(l" in text and "decision=" in text
    namespace: dict[str, object] = {"tir": T}  # the annotation names TVM's module
    exec(text, namespace)
    fresh = T.Schedule(pipeline, debug_mask="all")
    namespace["apply_trace"](fresh)
    assert structural_equal(scheduled(fresh), scheduled(sch))
    replayed = T.Schedule(pipeline)
    sch.trace.apply_to_schedule(replayed)
    assert structural_equal(scheduled(replayed), scheduled(sch))
    assert_same_results(pipeline, sch)


def test_trace_json_round_trip():
    sch = T.Schedule(pipeline, seed=3)
    _schedule_steps(sch)
    data = json.dumps(sch.trace.as_json())
    again = Trace.from_json(data)
    assert again.as_python() == sch.trace.as_python()
    target = T.Schedule(pipeline)
    Trace.apply_json_to_schedule(data, target)
    assert structural_equal(scheduled(target), scheduled(sch))


def test_sampling_is_seeded_and_recorded():
    runs = []
    for _ in range(2):
        sch = T.Schedule(pipeline, seed=11)
        i, _ = sch.get_loops(sch.get_block("C"))
        tiles = sch.sample_perfect_tile(i, n=3, max_innermost_factor=4)
        values = [sch.get(v) for v in tiles]
        assert values[0] * values[1] * values[2] == 16 and values[2] <= 4
        runs.append((values, sch.trace.get_decision(sch.trace.insts[-1])))
    assert runs[0] == (runs[1][0], runs[0][0])
    sch = T.Schedule(pipeline)
    with pytest.raises(T.ScheduleError, match="not 2 factors whose product is 16"):
        sch.sample_perfect_tile(sch.get_loops(sch.get_block("C"))[0], n=2, decision=[3, 5])


def test_trace_with_another_decision_replays_it():
    sch = T.Schedule(pipeline, seed=5)
    i, _ = sch.get_loops(sch.get_block("C"))
    tiles = sch.sample_perfect_tile(i, n=2, max_innermost_factor=16)
    sch.split(i, tiles)
    sample = next(inst for inst in sch.trace.insts if inst.kind.name == "SamplePerfectTile")
    changed = sch.trace.with_decision(sample, [2, 8], remove_postproc=False)
    assert changed.get_decision(changed.insts[2]) == [2, 8]
    other = T.Schedule(pipeline)
    changed.apply_to_schedule(other)
    loops = other.get_loops(other.get_block("C"))
    assert [other.get(lp).extent.value for lp in loops[:2]] == [2, 8]


def test_get_output_blocks_lists_writers_of_parameters_at_any_depth():
    @T.prim_func
    def nested(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        tmp = T.alloc_buffer((8,))
        for i in range(8):
            with T.block("tmp"):
                vi = T.axis.spatial(8, i)
                tmp[vi] = A[vi] + 1.0
        with T.block("outer"):
            for i in range(8):
                with T.block("B"):
                    vi = T.axis.spatial(8, i)
                    B[vi] = tmp[vi] * 2.0

    sch = T.Schedule(nested)
    assert _names(sch, sch.get_output_blocks("root")) == ["outer", "B"]
    assert _names(sch, sch.get_output_blocks(sch.get_block("outer"))) == ["B"]
    assert [i.kind.name for i in sch.trace.insts][-1] == "GetOutputBlocks"
