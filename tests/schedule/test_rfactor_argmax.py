"""rfactor of argmax/argmin reducers, TVM v0.16's two-buffer patterns: the rf block keeps
the (index, value) pairs per slot of the factored loop, the write-back combines the slots.
On ties the factored program returns the index TVM's factored program returns, which may be
another of the tied indices than the original's first."""

from __future__ import annotations

import numpy as np
import pytest
from sched_checks import assert_schedule, scheduled

from tvmscript import build
from tvmscript import tir as T

TARGET = "llvm -mcpu=znver3"


@T.prim_func
def argmax_rows(
    idx: T.Buffer((16, 64), "int32"),
    val: T.Buffer((16, 64), "float32"),
    out_i: T.Buffer((16,), "int32"),
    out_v: T.Buffer((16,), "float32"),
):
    for i0, k0, k1 in T.grid(16, 4, 16):
        with T.block("argmax"):
            i = T.axis.spatial(16, i0)
            k = T.axis.reduce(64, k0 * 16 + k1)
            with T.init():
                out_i[i] = -1
                out_v[i] = T.min_value("float32")
            v_i: T.int32 = T.Select(out_v[i] >= val[i, k], out_i[i], idx[i, k])
            v_v: T.float32 = T.Select(out_v[i] >= val[i, k], out_v[i], val[i, k])
            out_i[i] = v_i
            out_v[i] = v_v


@T.prim_func
def argmax_rows_rf(
    idx: T.Buffer((16, 64), "int32"),
    val: T.Buffer((16, 64), "float32"),
    out_i: T.Buffer((16,), "int32"),
    out_v: T.Buffer((16,), "float32"),
):
    out_i_rf = T.alloc_buffer((16, 16), "int32")
    out_v_rf = T.alloc_buffer((16, 16))
    for i0, k0, k1 in T.grid(16, 4, 16):
        with T.block("argmax_rf"):
            vk1, i, vk0 = T.axis.remap("SSR", [k1, i0, k0])
            T.reads(val[i, vk0 * 16 + vk1], idx[i, vk0 * 16 + vk1])
            T.writes(out_i_rf[i, vk1], out_v_rf[i, vk1])
            with T.init():
                out_i_rf[i, vk1] = -1
                out_v_rf[i, vk1] = T.min_value("float32")
            v_out_i_rf: T.int32 = T.Select(
                out_v_rf[i, vk1] >= val[i, vk0 * 16 + vk1], out_i_rf[i, vk1], idx[i, vk0 * 16 + vk1]
            )
            v_out_v_rf: T.float32 = T.Select(
                out_v_rf[i, vk1] >= val[i, vk0 * 16 + vk1], out_v_rf[i, vk1], val[i, vk0 * 16 + vk1]
            )
            out_i_rf[i, vk1] = v_out_i_rf
            out_v_rf[i, vk1] = v_out_v_rf
    for i0, k1 in T.grid(16, 16):
        with T.block("argmax"):
            vk1, i = T.axis.remap("RS", [k1, i0])
            T.reads(out_i_rf[i, vk1], out_v_rf[i, vk1])
            T.writes(out_i[i], out_v[i])
            with T.init():
                out_i[i] = -1
                out_v[i] = T.min_value("float32")
            v_out_i: T.int32 = T.Select(out_v[i] >= out_v_rf[i, vk1], out_i[i], out_i_rf[i, vk1])
            v_out_v: T.float32 = T.Select(out_v[i] >= out_v_rf[i, vk1], out_v[i], out_v_rf[i, vk1])
            out_i[i] = v_out_i
            out_v[i] = v_out_v


def _factored(func: object) -> T.Schedule:
    sch = T.Schedule(func, debug_mask="all")
    _, _, k1 = sch.get_loops(sch.get_block("argmax"))
    sch.rfactor(k1, 1)
    return sch


def _run(func: object, val: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    idx = np.tile(np.arange(64, dtype="int32"), (16, 1))
    out_i = np.zeros(16, "int32")
    out_v = np.zeros(16, "float32")
    build(func, target=TARGET)(idx, val, out_i, out_v)
    return out_i, out_v


def test_rfactor_of_argmax_gives_tvms_program():
    sch = _factored(argmax_rows)
    assert_schedule(argmax_rows, sch, argmax_rows_rf)
    val = np.random.default_rng(0).permutation(16 * 64).reshape(16, 64).astype("float32")
    out_i, out_v = _run(scheduled(sch), val)
    np.testing.assert_array_equal(out_i, val.argmax(axis=1))
    np.testing.assert_array_equal(out_v, val.max(axis=1))


def test_rfactor_of_argmin_with_stores_in_another_order():
    @T.prim_func
    def argmin_rows(
        idx: T.Buffer((16, 64), "int32"),
        val: T.Buffer((16, 64), "float32"),
        out_i: T.Buffer((16,), "int32"),
        out_v: T.Buffer((16,), "float32"),
    ):
        for i0, k0, k1 in T.grid(16, 4, 16):
            with T.block("argmax"):
                i = T.axis.spatial(16, i0)
                k = T.axis.reduce(64, k0 * 16 + k1)
                with T.init():
                    out_v[i] = T.max_value("float32")
                    out_i[i] = -1
                v_i: T.int32 = T.Select(out_v[i] <= val[i, k], out_i[i], idx[i, k])
                v_v: T.float32 = T.Select(out_v[i] <= val[i, k], out_v[i], val[i, k])
                out_v[i] = v_v
                out_i[i] = v_i

    sch = _factored(argmin_rows)
    text = scheduled(sch).script()
    # the new blocks follow the lets' order (index first), as TVM's
    assert "out_i_rf[i, vk1] = -1\n                    out_v_rf[i, vk1] = T.float32(" in text
    val = np.random.default_rng(1).permutation(16 * 64).reshape(16, 64).astype("float32")
    out_i, out_v = _run(scheduled(sch), val)
    np.testing.assert_array_equal(out_i, val.argmin(axis=1))
    np.testing.assert_array_equal(out_v, val.min(axis=1))


def test_on_ties_the_factored_program_keeps_tvms_index():
    # row 0's maximum 5.0 is at k = 2 (slot 2 of the first chunk) and k = 17 (slot 1 of
    # the second): the original meets k = 2 first; the factored program combines the slots
    # in order, and slot 1 holds k = 17
    val = np.zeros((16, 64), "float32")
    val[0, 2] = val[0, 17] = 5.0
    original_i, _ = _run(argmax_rows, val)
    factored_i, factored_v = _run(scheduled(_factored(argmax_rows)), val)
    assert original_i[0] == 2 and factored_i[0] == 17 and factored_v[0] == 5.0
    assert (original_i[1:] == 0).all() and (factored_i[1:] == 0).all()


def test_a_non_identity_init_is_refused():
    @T.prim_func
    def from_zero(
        idx: T.Buffer((16, 64), "int32"),
        val: T.Buffer((16, 64), "float32"),
        out_i: T.Buffer((16,), "int32"),
        out_v: T.Buffer((16,), "float32"),
    ):
        for i0, k0, k1 in T.grid(16, 4, 16):
            with T.block("argmax"):
                i = T.axis.spatial(16, i0)
                k = T.axis.reduce(64, k0 * 16 + k1)
                with T.init():
                    out_i[i] = 0
                    out_v[i] = T.float32(0)
                v_i: T.int32 = T.Select(out_v[i] >= val[i, k], out_i[i], idx[i, k])
                v_v: T.float32 = T.Select(out_v[i] >= val[i, k], out_v[i], val[i, k])
                out_i[i] = v_i
                out_v[i] = v_v

    sch = T.Schedule(from_zero, debug_mask="all")
    with pytest.raises(T.ScheduleError, match="not in TVM's argmax/argmin form"):
        sch.rfactor(sch.get_loops(sch.get_block("argmax"))[2], 1)


def test_factoring_the_only_reduction_loop_is_refused():
    @T.prim_func
    def unsplit(
        idx: T.Buffer((16, 64), "int32"),
        val: T.Buffer((16, 64), "float32"),
        out_i: T.Buffer((16,), "int32"),
        out_v: T.Buffer((16,), "float32"),
    ):
        for i0, k0 in T.grid(16, 64):
            with T.block("argmax"):
                i, k = T.axis.remap("SR", [i0, k0])
                with T.init():
                    out_i[i] = -1
                    out_v[i] = T.min_value("float32")
                v_i: T.int32 = T.Select(out_v[i] >= val[i, k], out_i[i], idx[i, k])
                v_v: T.float32 = T.Select(out_v[i] >= val[i, k], out_v[i], val[i, k])
                out_i[i] = v_i
                out_v[i] = v_v

    sch = T.Schedule(unsplit, debug_mask="all")
    with pytest.raises(T.ScheduleError, match="split it first"):
        sch.rfactor(sch.get_loops(sch.get_block("argmax"))[1], 1)
