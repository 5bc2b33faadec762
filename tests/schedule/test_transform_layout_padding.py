"""transform_layout with padding (TVM's plans), pad values, parameter layouts, separators."""

from __future__ import annotations

import numpy as np
import pytest
from sched_checks import assert_same_results, assert_structure

import tvmscript
from irbuilder.ir import Var
from tvmscript import tir as T

TARGET = "llvm -mcpu=x86-64"  # pinned: the numbers must not depend on the host


@T.prim_func
def copy14(A: T.Buffer((14,), "int32"), C: T.Buffer((14,), "int32")):
    B = T.alloc_buffer((14,), "int32")
    for i in range(14):
        with T.block("B"):
            vi = T.axis.spatial(14, i)
            B[vi] = A[vi] * 3
    for i in range(14):
        with T.block("C"):
            vi = T.axis.spatial(14, i)
            C[vi] = B[vi] + 1


def _sch(func: object) -> T.Schedule:
    return T.Schedule(func, debug_mask="all")


def test_row_major_producer_writes_the_padding_in_place():
    @T.prim_func
    def expected(A: T.Buffer((14,), "int32"), C: T.Buffer((14,), "int32")):
        B = T.alloc_buffer((4, 4), "int32")
        for i, j in T.grid(4, 4):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = T.if_then_else(vi == 3 and 2 <= vj, 0, A[vi * 4 + vj] * 3)
        for i in range(14):
            with T.block("C"):
                vi = T.axis.spatial(14, i)
                C[vi] = B[vi // 4, vi % 4] + 1

    sch = _sch(copy14)
    sch.transform_layout("B", "B", lambda i: [i // 4, i % 4], pad_value=0)
    assert_structure(sch, expected)
    assert_same_results(copy14, sch)
    a = np.arange(14, dtype="int32")
    c = np.zeros(14, dtype="int32")
    tvmscript.build(sch.mod["main"], target=TARGET)(a, c)
    np.testing.assert_array_equal(c, a * 3 + 1)


def test_pad_value_may_be_a_function_of_the_new_indices():
    sch = _sch(copy14)
    sch.transform_layout("B", "B", lambda i: [i // 4, i % 4], pad_value=lambda i, j: i + j)
    assert "T.if_then_else(v_axis0 == 3 and T.int32(2) <= v_axis1, v_axis0 + v_axis1," in (
        sch.mod["main"].script()
    )
    assert_same_results(copy14, sch)


def test_stage_with_other_effects_gets_a_padding_block_after_it():
    @T.prim_func
    def two_outputs(A: T.Buffer((14,), "int32"), D: T.Buffer((14,), "int32")):
        B = T.alloc_buffer((14,), "int32")
        for i in range(14):
            with T.block("B"):
                vi = T.axis.spatial(14, i)
                B[vi] = A[vi] + 5
                D[vi] = A[vi] - 5
        for i in range(14):
            with T.block("C"):
                vi = T.axis.spatial(14, i)
                D[vi] = D[vi] + B[vi]

    sch = _sch(two_outputs)
    sch.transform_layout("B", "B", lambda i: [i // 4, i % 4], pad_value=-1)
    text = sch.mod["main"].script()
    assert 'with T.block("buffer_B_padding")' in text
    assert "T.where(axis0 == 3 and T.int32(2) <= axis1)" in text
    assert "B[v_axis0, v_axis1] = -1" in text
    assert_same_results(two_outputs, sch)
    a = np.arange(14, dtype="int32")
    d = np.zeros(14, dtype="int32")
    tvmscript.build(sch.mod["main"], target=TARGET)(a, d)
    np.testing.assert_array_equal(d, 2 * a)


def test_reduction_into_a_padded_buffer():
    @T.prim_func
    def rowsum(A: T.Buffer((6, 8), "float32"), C: T.Buffer((6,), "float32")):
        B = T.alloc_buffer((6,))
        for i, k in T.grid(6, 8):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vk]
        for i in range(6):
            with T.block("C"):
                vi = T.axis.spatial(6, i)
                C[vi] = B[vi] * 2.0

    sch = _sch(rowsum)
    sch.transform_layout("B", "B", lambda i: [i // 4, i % 4], pad_value=0.0)
    assert "for axis0, axis1, k in T.grid(2, 4, 8):" in sch.mod["main"].script()
    a = np.random.default_rng(3).uniform(-1, 1, (6, 8)).astype("float32")
    c = np.zeros(6, dtype="float32")
    tvmscript.build(sch.mod["main"], target=TARGET)(a, c)
    np.testing.assert_allclose(c, a.sum(axis=1) * 2, rtol=1e-5)


def test_input_parameter_padding_is_assumed():
    sch = _sch(copy14)
    sch.transform_layout("B", "A", lambda i: [i // 4, i % 4], pad_value=42)
    func = sch.mod["main"]
    assert [int(d) for d in func.buffer_map[func.params[0]].shape] == [4, 4]
    text = func.script()
    assert 'with T.block("buffer_A_assumptions")' in text
    fact = "T.assume(not (v_axis0 == 3 and T.int32(2) <= v_axis1) or A[v_axis0, v_axis1] == 42)"
    assert fact in text
    # the caller passes A in the new layout, its padding holding the pad value
    a = np.full(16, 42, dtype="int32")
    a[:14] = np.arange(14)
    c = np.zeros(14, dtype="int32")
    tvmscript.build(func, target="interp")(a.reshape(4, 4), c)
    np.testing.assert_array_equal(c, np.arange(14) * 3 + 1)


def test_output_parameter_padding_is_written():
    sch = _sch(copy14)
    sch.transform_layout("C", "C", lambda i: [i // 4, i % 4], pad_value=-7)
    func = sch.mod["main"]
    c = np.zeros((4, 4), dtype="int32")
    tvmscript.build(func, target=TARGET)(np.arange(14, dtype="int32"), c)
    want = np.full(16, -7, dtype="int32")
    want[:14] = np.arange(14) * 3 + 1
    np.testing.assert_array_equal(c.reshape(-1), want)


def test_assume_injective_leaves_the_padding_unwritten():
    sch = _sch(copy14)
    sch.transform_layout(
        "B", "B", lambda i: [i // 4, i % 4], assume_injective_transform=True
    )
    text = sch.mod["main"].script()
    assert 'B = T.alloc_buffer((4, 4), "int32")' in text
    assert "B[vi // 4, vi % 4] = A[vi] * 3" in text
    assert_same_results(copy14, sch)


def test_axis_separators_go_to_the_new_buffer():
    sch = _sch(copy14)
    sch.transform_layout(
        "B", "B", lambda i: [i // 4, T.IndexMap.AXIS_SEPARATOR, i % 4], pad_value=0
    )
    func = sch.mod["main"]
    assert "axis_separators=[1]" in func.script()


def test_padding_refusal_shows_the_predicate_as_text():
    # the predicate was shown as the IR objects' repr (``And(a=EQ(a=Var('axis0', ...``)
    sch = _sch(copy14)
    with pytest.raises(T.ScheduleError) as info:
        sch.transform_layout("B", "B", lambda i: [i // 4, i % 4])
    assert "introduce padding where (axis0 == 3) and (2 <= axis1) (shape (14,)" in str(info.value)


def test_refusals_name_the_problem():
    sch = _sch(copy14)
    with pytest.raises(T.ScheduleError, match="would introduce padding where"):
        sch.transform_layout("B", "B", lambda i: [i // 4, i % 4])
    with pytest.raises(T.ScheduleError, match="Type mismatch int32 vs float32"):
        sch.transform_layout("B", "B", lambda i: [i // 4, i % 4], pad_value=0.5)
    with pytest.raises(T.ScheduleError, match="pad_value may not read a buffer"):
        A = sch.get(sch.get_block("B")).reads[0].buffer
        sch.transform_layout("B", "B", lambda i: [i // 4, i % 4], pad_value=lambda i, j: A[0])
    with pytest.raises(T.ScheduleError, match="not an injective layout"):
        sch.transform_layout("B", "B", lambda i: [i // 4, i % 3], pad_value=0)
    with pytest.raises(T.ScheduleError, match="not an injective layout"):
        sch.transform_layout(
            "B", "B", lambda i: [i // 4, i % 4 // 2], assume_injective_transform=True
        )
    assert sch.mod["main"].script() == T.Schedule(copy14).mod["main"].script()


def test_trace_replays_a_padded_transform():
    sch = _sch(copy14)
    sch.transform_layout("B", "B", lambda i: [i // 4, i % 4], pad_value=lambda i, j: i * j)
    namespace = {"T": T}
    exec(str(sch.trace), namespace)
    replayed = T.Schedule(copy14)
    namespace["apply_trace"](replayed)
    assert replayed.mod["main"].script() == sch.mod["main"].script()


def test_symbolic_shape_linearized_row_major():
    @T.prim_func
    def scale(a: T.handle, c: T.handle):
        n = T.int64()
        A = T.match_buffer(a, (T.int64(2), n), "float32")
        C = T.match_buffer(c, (T.int64(1), T.int64(2), n), "float32")
        for i, j in T.grid(T.int64(2), n):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[T.int64(0), vi, vj] = A[vi, vj] * 2.0

    n = scale.buffer_map[scale.params[0]].shape[1]
    sch = _sch(scale)
    sch.transform_layout("C", "C", lambda x, y, z: x * 2 * n + y * n + z)
    func = sch.mod["main"]
    assert "C[vi * n + vj] = A[vi, vj] * T.float32(2)" in func.script()
    a = np.arange(10, dtype="float32").reshape(2, 5)
    c = np.zeros(10, dtype="float32")
    tvmscript.build(func, target=TARGET)(a, c)
    np.testing.assert_array_equal(c, a.reshape(-1) * 2)
    with pytest.raises(T.ScheduleError, match="only a map linearizing its indices"):
        sch.transform_layout("C", "A", lambda y, z: z * 2 + y)
    m = Var("m", "int64")
    with pytest.raises(T.ScheduleError, match="uses 'm', unknown to the function"):
        sch.transform_layout("C", "A", lambda y, z: y * m + z)


def test_transform_block_layout_over_a_symbolic_domain():
    @T.prim_func
    def rowsum(a: T.handle, c: T.handle):
        n = T.int64()
        A = T.match_buffer(a, (T.int64(1), T.int64(4), n, T.int64(8)), "float32")
        C = T.match_buffer(c, (n * T.int64(4),), "float32")
        for i0, i1, i2, k in T.grid(T.int64(1), T.int64(4), n, T.int64(8)):
            with T.block("C"):
                v0, v1, v2, vk = T.axis.remap("SSSR", [i0, i1, i2, k])
                with T.init():
                    C[v1 * n + v2] = T.float32(0)
                C[v1 * n + v2] = C[v1 * n + v2] + A[v0, v1, v2, vk]

    n = rowsum.buffer_map[rowsum.params[0]].shape[2]
    sch = _sch(rowsum)
    sch.transform_block_layout("C", lambda x, y, z, k: (x * 4 * n + y * n + z, k))
    text = sch.mod["main"].script()
    assert "for ax0, ax1 in T.grid(n * T.int64(4), T.int64(8)):" in text
    assert "C[v0] = C[v0] + A[T.int64(0), v0 // n, v0 % n, v1]" in text
    a = np.random.default_rng(5).uniform(-1, 1, (1, 4, 3, 8)).astype("float32")
    c = np.zeros(12, dtype="float32")
    tvmscript.build(sch.mod["main"], target=TARGET)(a, c)
    np.testing.assert_allclose(c, a.sum(axis=3).reshape(-1), rtol=1e-5)
    with pytest.raises(T.ScheduleError, match="not a provable bijection"):
        sch.transform_block_layout("C", lambda v, k: (v // 2, k))


def test_axis_separators_are_a_second_instruction_of_the_trace():
    sch = _sch(copy14)
    sch.transform_layout(
        "B", "B", lambda i: [i // 4, T.IndexMap.AXIS_SEPARATOR, i % 4], pad_value=0
    )
    text = str(sch.trace)
    assert "sch.set_axis_separator(" in text and "axis_separators=[1]" in text
    namespace = {"T": T}
    exec(text, namespace)
    replayed = T.Schedule(copy14)
    namespace["apply_trace"](replayed)
    assert replayed.mod["main"].script() == sch.mod["main"].script()
    with pytest.raises(T.ScheduleError, match=r"must increase strictly within 1\.\.1"):
        sch.set_axis_separator("C", "B", [2])
    sch.set_axis_separator("B", "A", [])  # a parameter may be given separators too
    assert_same_results(copy14, sch)
