"""unsafe_set_dtype on a three-tap smoothing and a row-view kernel: the intermediate is
stored in the new dtype (stores cast to it, loads cast back, views retyped), so values
round or wrap exactly as numpy's conversions do; parameters, unknown dtypes and bad
positions are refused."""

from __future__ import annotations

import numpy as np
import pytest
from extra_checks import NATIVE, func_of
from sched_checks import assert_same_results, assert_schedule, assert_structure
from test_trace_kinds import _replays

import tvmscript
from tvmscript import tir as T


@T.prim_func
def smooth3(X: T.Buffer((20,), "int32"), Y: T.Buffer((18,), "int32")):
    acc = T.alloc_buffer((18,), "int32")
    for i in range(18):
        with T.block("taps"):
            vi = T.axis.spatial(18, i)
            acc[vi] = X[vi] + X[vi + 1] * 2 + X[vi + 2]
    for i in range(18):
        with T.block("shift"):
            vi = T.axis.spatial(18, i)
            Y[vi] = acc[vi] - 5


@T.prim_func
def smooth3_int16(X: T.Buffer((20,), "int32"), Y: T.Buffer((18,), "int32")):
    acc = T.alloc_buffer((18,), "int16")
    for i in range(18):
        with T.block("taps"):
            vi = T.axis.spatial(18, i)
            T.reads(X[vi:vi + 3])
            T.writes(acc[vi])
            acc[vi] = T.Cast("int16", X[vi] + X[vi + 1] * 2 + X[vi + 2])
    for i in range(18):
        with T.block("shift"):
            vi = T.axis.spatial(18, i)
            T.reads(acc[vi])
            T.writes(Y[vi])
            Y[vi] = T.Cast("int32", acc[vi]) - 5


def _smooth_reference(x: np.ndarray, storage: str) -> np.ndarray:
    acc = (x[:-2] + 2 * x[1:-1] + x[2:]).astype(storage).astype("int32")
    return acc - 5


def _call(func, target, *arrays):
    arrays = [a.copy() for a in arrays]
    tvmscript.build(func, target=target)(*arrays)
    return arrays


def test_int16_storage_by_position():
    sch = T.Schedule(smooth3, debug_mask="all")
    sch.unsafe_set_dtype(sch.get_block("taps"), 0, "int16")
    assert_schedule(smooth3, sch, smooth3_int16)  # random inputs fit in int16
    assert sch.trace.as_python()[1] == (
        'sch.unsafe_set_dtype(block=b0, buffer_index=0, dtype="int16")'
    )
    _replays(smooth3, sch)


@pytest.mark.parametrize("target", ["interp", NATIVE])
def test_int8_storage_wraps_like_numpy(target):
    sch = T.Schedule(smooth3)
    sch.unsafe_set_dtype("taps", "acc", "int8")  # block and buffer by name
    x = np.random.default_rng(11).integers(-1000, 1000, 20).astype("int32")
    _, y = _call(func_of(sch), target, x, np.zeros(18, "int32"))
    np.testing.assert_array_equal(y, _smooth_reference(x, "int8"))
    # the original keeps the exact sums
    _, exact = _call(smooth3, target, x, np.zeros(18, "int32"))
    np.testing.assert_array_equal(exact, _smooth_reference(x, "int32"))
    assert not np.array_equal(y, exact)


@T.prim_func
def row_scale(A: T.Buffer((4, 8), "float64"), s: T.Buffer((4,), "float64"),
              B: T.Buffer((4, 8), "float64")):
    tmp = T.alloc_buffer((4, 8), "float64")
    for r in range(4):
        with T.block("fill"):
            vr = T.axis.spatial(4, r)
            row = T.match_buffer(tmp[vr, 0:8], (8,), "float64", offset_factor=1)
            for c in range(8):
                row[c] = A[vr, c] / T.float64(3)
    for r, c in T.grid(4, 8):
        with T.block("use"):
            vr, vc = T.axis.remap("SS", [r, c])
            B[vr, vc] = tmp[vr, vc] * s[vr]


@pytest.mark.parametrize("target", ["interp", NATIVE])
def test_a_view_of_the_buffer_is_retyped_too(target):
    sch = T.Schedule(row_scale)
    sch.unsafe_set_dtype("fill", 0, "float32")
    func = func_of(sch)
    fill = sch.get(sch.get_block("fill"))
    assert str(fill.match_buffers[0].buffer.dtype) == "float32"
    assert str(fill.match_buffers[0].source.buffer.dtype) == "float32"
    assert [str(b.dtype) for b in sch.get(sch.get_block("root")).alloc_buffers] == ["float32"]
    rng = np.random.default_rng(5)
    a, s = rng.uniform(-9, 9, (4, 8)), rng.uniform(-2, 2, 4)
    *_, b = _call(func, target, a, s, np.zeros((4, 8)))
    want = (a / 3).astype("float32").astype("float64") * s[:, None]
    np.testing.assert_allclose(b, want, rtol=1e-15)
    assert not np.allclose(b, a / 3 * s[:, None], rtol=1e-12)


def test_the_same_dtype_is_a_no_op():
    sch = T.Schedule(smooth3, debug_mask="all")
    sch.unsafe_set_dtype(sch.get_block("taps"), 0, "int32")
    assert_structure(sch, smooth3)
    assert_same_results(smooth3, sch)


def test_a_wider_dtype_keeps_every_value():
    sch = T.Schedule(smooth3, debug_mask="all")  # each step compared by running
    sch.unsafe_set_dtype(sch.get_block("taps"), 0, "int64")
    assert str(sch.get(sch.get_block("shift")).reads[0].buffer.dtype) == "int64"
    assert_same_results(smooth3, sch)


def test_later_steps_are_compared_with_the_retyped_function():
    sch = T.Schedule(smooth3, debug_mask="all")
    sch.unsafe_set_dtype(sch.get_block("taps"), 0, "int8")
    # under debug_mask each later primitive is checked against the function the unsafe one
    # left (the original's exact sums would differ once the int8 storage wraps)
    (i,) = sch.get_loops("shift")
    io, _ = sch.split(i, [None, 6])
    sch.compute_at(sch.get_block("taps"), io)
    x = np.random.default_rng(3).integers(-500, 500, 20).astype("int32")
    _, y = _call(func_of(sch), "interp", x, np.zeros(18, "int32"))
    np.testing.assert_array_equal(y, _smooth_reference(x, "int8"))
    twin = sch.copy()
    twin.compute_inline(twin.get_block("taps"))
    _, y = _call(func_of(twin), "interp", x, np.zeros(18, "int32"))
    np.testing.assert_array_equal(y, _smooth_reference(x, "int8"))


@pytest.mark.parametrize(
    "block, index, dtype, message",
    [
        ("shift", 0, "int16", "'Y' is not allocated by a block"),
        ("taps", 0, "int33x", "'int33x' is not a data type"),
        ("taps", 1, "int16", r"block 'taps' writes 1 buffer\(s\); index 1 is out of range"),
        ("taps", -1, "int16", "index -1 is out of range"),
        ("taps", "X", "int16", "block 'taps' writes no buffer 'X'"),
    ],
)
def test_refusals(block, index, dtype, message):
    sch = T.Schedule(smooth3, debug_mask="all")
    with pytest.raises(T.ScheduleError, match=message):
        sch.unsafe_set_dtype(sch.get_block(block), index, dtype)
    assert_structure(sch, smooth3)
