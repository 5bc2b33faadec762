"""rfactor where the outer loops hold other blocks (the rf nest goes before them), of a unit
loop bound to no iter var, of a let-bound update, and its refusal of a scope that is not a
stage pipeline."""

from __future__ import annotations

import numpy as np
import pytest
from sched_checks import assert_same_results, assert_schedule

import tvmscript
from tvmscript import tir as T


@T.prim_func
def two_sums(A: T.Buffer((4, 8), "float32"), D: T.Buffer((4,), "float32")):
    C = T.alloc_buffer((4,))
    for i in range(4):
        for k0, k1 in T.grid(2, 4):
            with T.block("C"):
                vi = T.axis.spatial(4, i)
                vk = T.axis.reduce(8, k0 * 4 + k1)
                with T.init():
                    C[vi] = T.float32(0)
                C[vi] = C[vi] + A[vi, vk]
        for k in range(8):
            with T.block("D"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    D[vi] = T.float32(0)
                D[vi] = D[vi] + A[vi, vk] * C[vi]


@T.prim_func
def two_sums_rfactor(A: T.Buffer((4, 8), "float32"), D: T.Buffer((4,), "float32")):
    C = T.alloc_buffer((4,))
    C_rf = T.alloc_buffer((2, 4))
    for i, k0, k1 in T.grid(4, 2, 4):
        with T.block("C_rf"):
            vk0, vi, vk1 = T.axis.remap("SSR", [k0, i, k1])
            with T.init():
                C_rf[vk0, vi] = T.float32(0)
            C_rf[vk0, vi] = C_rf[vk0, vi] + A[vi, vk0 * 4 + vk1]
    for i_1 in range(4):
        for k0_1 in range(2):
            with T.block("C"):
                vk0_1, vi_1 = T.axis.remap("RS", [k0_1, i_1])
                with T.init():
                    C[vi_1] = T.float32(0)
                C[vi_1] = C[vi_1] + C_rf[vk0_1, vi_1]
        for k in range(8):
            with T.block("D"):
                vi, vk = T.axis.remap("SR", [i_1, k])
                with T.init():
                    D[vi] = T.float32(0)
                D[vi] = D[vi] + A[vi, vk] * C[vi]


@T.prim_func
def input_rewritten(A: T.Buffer((4, 8), "float32"), D: T.Buffer((4,), "float32")):
    C = T.alloc_buffer((4,))
    for i in range(4):
        for k in range(8):
            with T.block("scale"):
                vi, vk = T.axis.remap("SS", [i, k])
                A[vi, vk] = A[vi, vk] * 2.0
        for k0, k1 in T.grid(2, 4):
            with T.block("C"):
                vi = T.axis.spatial(4, i)
                vk = T.axis.reduce(8, k0 * 4 + k1)
                with T.init():
                    C[vi] = T.float32(0)
                C[vi] = C[vi] + A[vi, vk]
        with T.block("D"):
            vi = T.axis.spatial(4, i)
            D[vi] = C[vi]


@T.prim_func
def half_written(A: T.Buffer((8, 8), "float32"), D: T.Buffer((8,), "float32")):
    C = T.alloc_buffer((8,))
    for i, k in T.grid(4, 8):
        with T.block("C"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                C[vi] = T.float32(0)
            C[vi] = C[vi] + A[vi, vk]
    for i in range(8):
        with T.block("D"):
            vi = T.axis.spatial(8, i)
            D[vi] = C[vi]


def test_rf_nest_goes_before_outer_loops_holding_other_blocks():
    sch = T.Schedule(two_sums, debug_mask="all")
    c = sch.get_block("C")
    _, k0, _ = sch.get_loops(c)
    rf = sch.rfactor(k0, 0)
    assert sch.get(rf).name_hint == "C_rf"
    assert sch.get(c).name_hint == "C"
    assert_schedule(two_sums, sch, two_sums_rfactor)


def test_a_block_of_the_outer_loops_writing_the_input_is_refused():
    sch = T.Schedule(input_rewritten, debug_mask="all")
    _, k0, _ = sch.get_loops(sch.get_block("C"))
    with pytest.raises(T.ScheduleError, match="block 'scale', under the loops of block 'C'"):
        sch.rfactor(k0, 0)


@T.prim_func
def shared_reduction_loop(A: T.Buffer((4, 8), "float32"), E: T.Buffer((4, 2), "float32")):
    C = T.alloc_buffer((4,))
    for i, k0 in T.grid(4, 2):
        for k1 in range(4):
            with T.block("C"):
                vi = T.axis.spatial(4, i)
                vk = T.axis.reduce(8, k0 * 4 + k1)
                with T.init():
                    C[vi] = T.float32(0)
                C[vi] = C[vi] + A[vi, vk]
        with T.block("E"):
            vi, vk0 = T.axis.remap("SS", [i, k0])
            E[vi, vk0] = A[vi, vk0]


def test_a_reduction_loop_holding_other_blocks_is_refused():
    # the write-back drops k0 from C's loops, which E still needs
    sch = T.Schedule(shared_reduction_loop, debug_mask="all")
    _, _, k1 = sch.get_loops(sch.get_block("C"))
    with pytest.raises(T.ScheduleError, match="reduction loop 'k0' of block 'C' holds other"):
        sch.rfactor(k1, 0)


def test_a_scope_that_is_no_stage_pipeline_is_refused():
    # D reads C[0:8]; C's block writes only C[0:4]
    sch = T.Schedule(half_written, debug_mask="all")
    _, k = sch.get_loops(sch.get_block("C"))
    with pytest.raises(T.ScheduleError, match="not a stage pipeline: block 'D' reads"):
        sch.rfactor(k, 0)


@T.prim_func
def unit_inner(A: T.Buffer((4, 8), "float32"), C: T.Buffer((4,), "float32")):
    for i, k, _u in T.grid(4, 8, 1):
        with T.block("C"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                C[vi] = T.float32(0)
            C[vi] = C[vi] + A[vi, vk]


@T.prim_func
def unit_inner_rfactor(A: T.Buffer((4, 8), "float32"), C: T.Buffer((4,), "float32")):
    C_rf = T.alloc_buffer((1, 4))
    for i, k, u in T.grid(4, 8, 1):
        with T.block("C_rf"):
            vu, vi = T.axis.remap("SS", [u, i])
            vk = T.axis.reduce(8, k)
            with T.init():
                C_rf[vu, vi] = T.float32(0)
            C_rf[vu, vi] = C_rf[vu, vi] + A[vi, vk]
    for i, u in T.grid(4, 1):
        with T.block("C"):
            vu, vi = T.axis.remap("RS", [u, i])
            with T.init():
                C[vi] = T.float32(0)
            C[vi] = C[vi] + C_rf[vu, vi]


@T.prim_func
def repeated(A: T.Buffer((4, 8), "float32"), C: T.Buffer((4,), "float32")):
    for i, k, _r in T.grid(4, 8, 2):
        with T.block("C"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                C[vi] = T.float32(0)
            C[vi] = C[vi] + A[vi, vk]


def test_a_unit_loop_bound_to_nothing_factors_into_a_dimension_of_one():
    # the reduction iter var vk does not use the loop: it keeps its binding in the rf block
    sch = T.Schedule(unit_inner, debug_mask="all")
    _, _, u = sch.get_loops(sch.get_block("C"))
    sch.rfactor(u, 0)
    assert_schedule(unit_inner, sch, unit_inner_rfactor)


def test_a_longer_loop_bound_to_nothing_is_refused():
    sch = T.Schedule(repeated)
    _, _, r = sch.get_loops(sch.get_block("C"))
    with pytest.raises(T.ScheduleError, match="not bound to any reduction iter var"):
        sch.rfactor(r, 0)


@T.prim_func
def let_sum(A: T.Buffer((4, 8), "float32"), C: T.Buffer((4,), "float32")):
    for i, k0, k1 in T.grid(4, 2, 4):
        with T.block("C"):
            vi = T.axis.spatial(4, i)
            vk = T.axis.reduce(8, k0 * 4 + k1)
            with T.init():
                C[vi] = T.float32(0)
            v: T.float32 = C[vi] + A[vi, vk]
            C[vi] = v


def test_a_let_bound_update_is_read_through_its_let():
    sch = T.Schedule(let_sum, debug_mask="all")
    _, _, k1 = sch.get_loops(sch.get_block("C"))
    sch.rfactor(k1, 0)
    assert_same_results(let_sum, sch)
    text = sch.mod["main"].script()
    assert "C_rf[vk1, vi] = C_rf[vk1, vi] + A[vi, vk0 * 4 + vk1]" in text


@T.prim_func
def argmax(
    val: T.Buffer((4, 8), "float32"), arg: T.Buffer((4,), "int32"), top: T.Buffer((4,), "float32")
):
    for i, k0, k1 in T.grid(4, 2, 4):
        with T.block("argmax"):
            vi = T.axis.spatial(4, i)
            vk = T.axis.reduce(8, k0 * 4 + k1)
            with T.init():
                arg[vi] = -1
                top[vi] = T.min_value("float32")
            new_arg: T.int32 = T.Select(top[vi] >= val[vi, vk], arg[vi], vk)
            new_top: T.float32 = T.Select(top[vi] >= val[vi, vk], top[vi], val[vi, vk])
            arg[vi] = new_arg
            top[vi] = new_top


def test_an_argmax_is_factored_as_tvm_factors_it():
    # equal values at k = 5 (stripe k1 = 1) and k = 2 (stripe k1 = 2): the original keeps
    # k = 2, the stripes combined in k1 order keep k = 5, TVM's answer (below)
    sch = T.Schedule(argmax, debug_mask="all")
    _, _, k1 = sch.get_loops(sch.get_block("argmax"))
    sch.rfactor(k1, 0)
    val = np.zeros((4, 8), "float32")
    val[:, 2] = val[:, 5] = 1.0
    for func in (sch.mod["main"], argmax_factored_as_tvm):
        arg = np.zeros(4, "int32")
        top = np.zeros(4, "float32")
        tvmscript.build(func, target="interp")(val, arg, top)
        np.testing.assert_array_equal(arg, [5, 5, 5, 5])


@T.prim_func
def argmax_factored_as_tvm(
    val: T.Buffer((4, 8), "float32"), arg: T.Buffer((4,), "int32"), top: T.Buffer((4,), "float32")
):
    # what TVM v0.16's rfactor(k1, 0) builds from `argmax` (the same combiner on each stripe
    # k1, then on the stripes' results in k1 order)
    arg_rf = T.alloc_buffer((4, 4), "int32")
    top_rf = T.alloc_buffer((4, 4), "float32")
    for i, k0, k1 in T.grid(4, 2, 4):
        with T.block("argmax_rf"):
            vk1, vi, vk0 = T.axis.remap("SSR", [k1, i, k0])
            with T.init():
                arg_rf[vk1, vi] = -1
                top_rf[vk1, vi] = T.min_value("float32")
            keep: T.bool = top_rf[vk1, vi] >= val[vi, vk0 * 4 + vk1]
            new_arg: T.int32 = T.Select(keep, arg_rf[vk1, vi], vk0 * 4 + vk1)
            new_top: T.float32 = T.Select(keep, top_rf[vk1, vi], val[vi, vk0 * 4 + vk1])
            arg_rf[vk1, vi] = new_arg
            top_rf[vk1, vi] = new_top
    for i, k1 in T.grid(4, 4):
        with T.block("argmax"):
            vk1, vi = T.axis.remap("RS", [k1, i])
            with T.init():
                arg[vi] = -1
                top[vi] = T.min_value("float32")
            keep: T.bool = top[vi] >= top_rf[vk1, vi]
            new_arg: T.int32 = T.Select(keep, arg[vi], arg_rf[vk1, vi])
            new_top: T.float32 = T.Select(keep, top[vi], top_rf[vk1, vi])
            arg[vi] = new_arg
            top[vi] = new_top


def test_the_factored_argmax_keeps_another_index_on_ties():
    # TVM's factored argmax is not the original on ties (the keep-the-earlier rule holds
    # within a stripe, the stripes are then combined in k1 order): docs/schedule.md says so
    val = np.zeros((4, 8), "float32")
    val[:, 2] = val[:, 5] = 1.0  # k = 2 is stripe k1 = 2, k = 5 is stripe k1 = 1
    results = []
    for func in (argmax, argmax_factored_as_tvm):
        arg = np.zeros(4, "int32")
        top = np.zeros(4, "float32")
        tvmscript.build(func, target="interp")(val, arg, top)
        results.append(arg)
    np.testing.assert_array_equal(results[0], [2, 2, 2, 2])
    np.testing.assert_array_equal(results[1], [5, 5, 5, 5])
