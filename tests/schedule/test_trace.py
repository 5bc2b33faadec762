"""The trace API in TVM v0.16's form: instructions built by hand or recorded, their printed
text and JSON, pop/append, simplified(), decisions and their overrides, and refusals of
malformed input."""

from __future__ import annotations

import json

import pytest
from sched_checks import scheduled

from irbuilder.ir import FloatImm, IntImm, Var, structural_equal
from tvmscript import tir as T

Instruction = T.Instruction
Kind = T.InstructionKind
HEADER = ["# from tvm import tir", "def apply_trace(sch: tir.Schedule) -> None:"]


@T.prim_func
def two_stage(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16))
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * 2.0
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + 1.0


def _text(*lines: str) -> str:
    return "\n".join([*HEADER, *("  " + line for line in lines)])


def _get_block(name, out):
    return Instruction(Kind.get("GetBlock"), [], [name, "main"], [out])


def test_hand_built_trace_prints_tvm_text():
    b0, l1 = T.BlockRV(), T.LoopRV()
    l2, l3 = T.LoopRV(), T.LoopRV()
    trace = T.Trace(
        [
            _get_block("B", b0),
            Instruction(Kind.get("GetLoops"), [b0], [], [l1]),
            Instruction(Kind.get("Split"), [l1, None, IntImm("int32", 8)],
                        [IntImm("bool", 1), IntImm("bool", 0)], [l2, l3]),
            Instruction(Kind.get("Fuse"), [l2, l3], [True], [T.LoopRV()]),
        ],
        {},
    )
    assert str(trace) == _text(
        'b0 = sch.get_block(name="B", func_name="main")',
        "l1, = sch.get_loops(block=b0)",
        "l2, l3 = sch.split(loop=l1, factors=[None, 8], preserve_unit_iters=True, "
        "disable_predication=False)",
        "l4 = sch.fuse(l2, l3, preserve_unit_iters=True)",
    )
    assert str(T.Trace()) == _text("pass")


def test_pop_and_append():
    b0, b1 = T.BlockRV(), T.BlockRV()
    first, second = _get_block("B", b0), _get_block("C", b1)
    trace = T.Trace([first], {})
    trace.append(second)
    assert [i.same_as(j) for i, j in zip(trace.insts, [first, second])] == [True, True]
    popped = trace.pop()
    assert popped is not None and popped.same_as(second)
    assert str(trace) == _text('b0 = sch.get_block(name="B", func_name="main")')
    sample = Instruction(Kind.get("SampleCategorical"), [], [[4, 8], [0.5, 0.5]], [T.ExprRV()])
    trace.append(sample, decision=1)
    assert trace.get_decision(sample) == 1 and trace.get_decision(first) is None
    assert trace.as_python()[-1] == (
        "v1 = sch.sample_categorical(candidates=[4, 8], probs=[0.5, 0.5], decision=1)"
    )
    assert trace.pop() is sample and sample not in trace.decisions  # its decision goes too
    assert trace.pop() is first and trace.pop() is None and str(trace) == _text("pass")


def test_recorded_trace_json_form_and_round_trip():
    sch = T.Schedule(two_stage, seed=1)
    b = sch.get_block("B")
    i, _ = sch.get_loops(b)
    tiles = sch.sample_perfect_tile(i, n=2, max_innermost_factor=4, decision=[4, 4])
    sch.split(i, tiles)
    sch.annotate(b, "note", "x")
    data = sch.trace.as_json()
    assert data == [
        [
            ["GetBlock", [], ["B", "main"], ["b0"]],
            ["GetLoops", ["b0"], [], ["l1", "l2"]],
            ["SamplePerfectTile", ["l1"], [2, 4], ["v3", "v4"]],
            ["Split", ["l1", "v3", "v4"], [True, False], ["l5", "l6"]],
            ["Annotate", ["b0", '"x"'], ["note"], []],
        ],
        [[2, [4, 4]]],
    ]
    text = json.dumps(data)
    again = T.Trace.from_json(text)
    assert again.as_python() == sch.trace.as_python()
    target = T.Schedule(two_stage)
    T.Trace.apply_json_to_schedule(text, target)
    assert structural_equal(scheduled(target), scheduled(sch))


def test_ir_constant_attrs_print_and_serialize_as_tvm():
    v = Var("v", "int32")
    inst = Instruction(
        Kind.get("SampleCategorical"), [], [[IntImm("int32", 3)], [FloatImm("float32", 1.0)]], [v]
    )
    trace = T.Trace([inst], {})
    shown = "[[['SampleCategorical', [], [[3], [T.float32(1.0)]], ['v0']]], []]"
    assert str(trace.as_json()) == shown
    assert json.dumps(trace.as_json()) == '[[["SampleCategorical", [], [[3], [1.0]], ["v0"]]], []]'
    sch = T.Schedule(two_stage)
    T.Trace.apply_json_to_schedule(trace.as_json(), sch)
    # TVM prints probabilities with 17 significant digits: 1.0 as 1
    assert sch.trace.as_python() == [
        "v0 = sch.sample_categorical(candidates=[3], probs=[1], decision=0)"
    ]


def test_simplified_drops_unused_queries_and_postproc():
    sch = T.Schedule(two_stage, seed=2)
    b = sch.get_block("B")
    sch.get_loops(sch.get_block("C"))  # nothing uses these: dropped
    sch.sample_categorical([1, 2], [0.5, 0.5])  # an unused sample: dropped with its decision
    tiles = sch.sample_perfect_tile(sch.get_loops(b)[0], n=2, decision=[2, 8])
    sch.split(sch.get_loops(b)[0], tiles)
    sch.enter_postproc()
    sch.parallel(sch.get_loops(b)[0])
    full = sch.trace.simplified(remove_postproc=False)
    assert full.as_python() == [
        'b0 = sch.get_block(name="B", func_name="main")',
        "l1, l2 = sch.get_loops(block=b0)",
        "v3, v4 = sch.sample_perfect_tile(loop=l1, n=2, max_innermost_factor=16, "
        "decision=[2, 8])",
        "l5, l6 = sch.get_loops(block=b0)",
        "l7, l8 = sch.split(loop=l5, factors=[v3, v4], preserve_unit_iters=True, "
        "disable_predication=False)",
        "sch.enter_postproc()",
        "l9, l10, l11 = sch.get_loops(block=b0)",
        "sch.parallel(loop=l9)",
    ]
    assert list(full.decisions.values()) == [[2, 8]]
    cut = sch.trace.simplified(remove_postproc=True)
    assert cut.as_python() == full.as_python()[:5]
    # the simplified trace replays to what the schedule had before postprocessing
    before = T.Schedule(two_stage)
    sch.trace.apply_to_schedule(before, remove_postproc=True)
    replayed = T.Schedule(two_stage)
    cut.apply_to_schedule(replayed)
    assert structural_equal(scheduled(replayed), scheduled(before))
    assert sch.trace.as_json(remove_postproc=True)[0][-1][0] == "Split"
    assert sch.trace.as_python(remove_postproc=True) == sch.trace.as_python()[:8]


def test_decision_override():
    sch = T.Schedule(two_stage, seed=5)
    b = sch.get_block("B")
    i, _ = sch.get_loops(b)
    sch.split(i, sch.sample_perfect_tile(i, n=2, max_innermost_factor=16))
    sample = next(inst for inst in sch.trace.insts if inst.kind.name == "SamplePerfectTile")
    original = sch.trace.get_decision(sample)
    changed = sch.trace.with_decision(sample, [2, 8], remove_postproc=False)
    assert changed.get_decision(sample) == [2, 8]
    assert sch.trace.get_decision(sample) == original  # the schedule's trace is untouched

    def extents(trace):
        other = T.Schedule(two_stage)
        trace.apply_to_schedule(other)
        loops = other.get_loops(other.get_block("B"))
        return [other.get(lp).extent.value for lp in loops[:2]]

    assert extents(changed) == [2, 8]
    seen = []

    def provider(inst, inputs, attrs, decision):
        seen.append((inst.kind.name, attrs, decision))
        return [4, 4] if inst.kind.name == "SamplePerfectTile" else decision

    other = T.Schedule(two_stage)
    changed.apply_to_schedule(other, decision_provider=provider)
    loops = other.get_loops(other.get_block("B"))
    assert [other.get(lp).extent.value for lp in loops[:2]] == [4, 4]
    assert ("SamplePerfectTile", [2, 16], [2, 8]) in seen
    # the replay records the decision it used
    assert other.trace.as_python()[2].endswith("decision=[4, 4])")


def test_copy_has_its_own_trace():
    sch = T.Schedule(two_stage)
    sch.get_block("B")
    other = sch.copy()
    other.get_block("C")
    assert len(sch.trace.insts) == 1 and len(other.trace.insts) == 2


def test_bad_input_is_refused_clearly():
    with pytest.raises(TypeError, match="kind must be an InstructionKind"):
        Instruction("GetBlock", [], ["B", "main"], [T.BlockRV()])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown instruction kind 'Nope'"):
        Kind.get("Nope")
    with pytest.raises(ValueError, match="GetBlock takes 2 attrs, got 1"):
        Instruction(Kind.get("GetBlock"), [], ["B"], [T.BlockRV()])
    with pytest.raises(ValueError, match="Split takes 2 or more inputs, got 1"):
        Instruction(Kind.get("Split"), [T.LoopRV()], [True, False], [])
    with pytest.raises(TypeError, match="expected a Schedule"):
        T.Trace().apply_to_schedule(two_stage)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="outputs must be"):
        Instruction(Kind.get("GetBlock"), [], ["B", "main"], ["b0"])
    with pytest.raises(TypeError, match="expected an Instruction"):
        T.Trace().append("GetBlock")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="insts must be a list"):
        T.Trace("GetBlock")  # type: ignore[arg-type]
    orphan = T.Trace([Instruction(Kind.get("GetLoops"), [T.BlockRV()], [], [T.LoopRV()])], {})
    with pytest.raises(ValueError, match="used before any instruction"):
        orphan.as_python()
    with pytest.raises(ValueError, match="used before any instruction"):
        orphan.apply_to_schedule(T.Schedule(two_stage))
    for bad, message in [
        ("not json", "not JSON"),
        ([[]], r"\[instructions, decisions\]"),
        ([[["GetBlock", [], ["B", "main"]]], []], r"\[kind, inputs, attrs, outputs\]"),
        ([[["GetLoops", ["b9"], [], ["l0"]]], []], "'b9' is not defined"),
        ([[["GetBlock", [], ["B", "main"], ["x0"]]], []], "not an RV name"),
        ([[["GetBlock", [], ["B", "main"], ["b0"]]], [[3, 1]]], r"\[instruction index"),
        ([[["Nope", [], [], []]], []], "unknown instruction kind"),
        (
            [[["GetBlock", [], ["B", "main"], ["b0"]],
              ["TransformBlockLayout", ["b0"], ["lambda i: __import__('os')"], []]], []],
            "not an index map lambda",
        ),
    ]:
        with pytest.raises(ValueError, match=message):
            T.Trace.apply_json_to_schedule(bad, T.Schedule(two_stage))
