"""decompose_padding on a padded affine map, a padded 3x3 average pool (whole, and computed
tile by tile at several loops) and an int64-indexed border: a ``<name>_pad_const`` block
fills the constant over everything the block wrote, right before the given loop, and the
block keeps only its in-bound iterations (loops narrowed, other bindings shifted under a
predicate); can_decompose_padding; the pattern refusals with their messages."""

from __future__ import annotations

import pytest
from extra_checks import (
    assert_native_same,
    bindings,
    block_names,
    func_of,
    loop_shape,
    realize_of,
)
from sched_checks import assert_schedule, assert_structure
from test_trace_kinds import _replays

from irbuilder.ir import expr_text
from tvmscript import tir as T


@T.prim_func
def border_affine(x: T.Buffer((10,), "int16"), y: T.Buffer((15,), "int16")):
    for i in range(15):
        with T.block("edge"):
            vi = T.axis.spatial(15, i)
            y[vi] = T.if_then_else(
                3 <= vi and vi < 13, x[vi - 3] * T.int16(2) + T.int16(1), T.int16(-7)
            )


@T.prim_func
def border_affine_split(x: T.Buffer((10,), "int16"), y: T.Buffer((15,), "int16")):
    for i in range(15):
        with T.block("edge_pad_const"):
            vi = T.axis.spatial(15, i)
            T.reads()
            T.writes(y[vi])
            y[vi] = T.int16(-7)
    for i in range(10):
        with T.block("edge"):
            vi = T.axis.spatial(10, i)
            T.reads(x[vi])
            T.writes(y[vi + 3])
            y[vi + 3] = x[vi] * T.int16(2) + T.int16(1)


def test_a_one_dimensional_border():
    sch = T.Schedule(border_affine, debug_mask="all")
    edge = sch.get_block("edge")
    (i,) = sch.get_loops(edge)
    assert sch.can_decompose_padding(edge, i)
    fill = sch.decompose_padding(edge, i)
    assert sch.get(fill).name_hint == "edge_pad_const"
    assert_schedule(border_affine, sch, border_affine_split)
    assert loop_shape(sch, edge) == [("i", 0, 10)]  # the handle follows the in-bound block
    assert_native_same(border_affine, sch)
    assert sch.trace.as_python()[2] == "b2 = sch.decompose_padding(block=b0, loop=l1)"
    _replays(border_affine, sch)


@T.prim_func
def avg_pool3(img: T.Buffer((2, 9, 9), "float32"), out: T.Buffer((2, 9, 9), "float32")):
    padded = T.alloc_buffer((2, 11, 11))
    for c, h, w in T.grid(2, 11, 11):
        with T.block("border"):
            vc, vh, vw = T.axis.remap("SSS", [c, h, w])
            padded[vc, vh, vw] = T.if_then_else(
                1 <= vh and vh < 10 and 1 <= vw and vw < 10,
                img[vc, vh - 1, vw - 1],
                T.float32(0),
            )
    for c, h, w, dh, dw in T.grid(2, 9, 9, 3, 3):
        with T.block("mean"):
            vc, vh, vw, vdh, vdw = T.axis.remap("SSSRR", [c, h, w, dh, dw])
            with T.init():
                out[vc, vh, vw] = T.float32(0)
            out[vc, vh, vw] = out[vc, vh, vw] + padded[vc, vh + vdh, vw + vdw] * T.float32(
                1.0 / 9
            )


def test_the_whole_padding_stage():
    sch = T.Schedule(avg_pool3, debug_mask="all")
    border = sch.get_block("border")
    fill = sch.decompose_padding(border, sch.get_loops(border)[0])
    assert loop_shape(sch, fill) == [("c", 0, 2), ("h", 0, 11), ("w", 0, 11)]
    assert loop_shape(sch, border) == [("c", 0, 2), ("h", 0, 9), ("w", 0, 9)]
    assert bindings(sch, border) == ["vc=c", "vh=h", "vw=w"]
    assert getattr(realize_of(sch, border).predicate, "value", None) == 1  # no guard left
    assert block_names(func_of(sch)) == ["border_pad_const", "border", "mean"]
    assert_native_same(avg_pool3, sch)


def _pool_tiles(factors, at):
    sch = T.Schedule(avg_pool3, debug_mask="all")  # every step compared by running
    mean, border = sch.get_block("mean"), sch.get_block("border")
    c, h, w, _, _ = sch.get_loops(mean)
    ho, hi = sch.split(h, factors)
    wo, wi = sch.split(w, factors)
    sch.reorder(ho, wo, c, hi, wi)
    sch.compute_at(border, wo)
    fill = sch.decompose_padding(border, sch.get_loops(border)[at])
    return sch, fill


@pytest.mark.parametrize(
    "factors, at",
    [
        ([3, 3], 0),  # above every tile: one fill of the whole padded array, then the tiles
        ([3, 3], 1),  # at a tile loop that also holds the pool: a fill per row of tiles
        ([3, 3], 2),  # inside the tile, per channel
        ([None, 4], 2),  # tiles that do not divide the image: the fill is guarded too
    ],
    ids=["lifted", "at_tile_loop", "in_tile", "ragged"],
)
def test_tile_by_tile_padding(factors, at):
    sch, fill = _pool_tiles(factors, at)
    names = block_names(func_of(sch))
    assert names == ["border_pad_const", "border", "mean"]
    # the loops above the given one are shared, the fill has copies of the others
    border = sch.get_block("border")
    fill_loops = [sch.get(lp) for lp in sch.get_loops(fill)]
    border_loops = [sch.get(lp) for lp in sch.get_loops(border)]
    assert len(fill_loops) == len(border_loops) == 5
    assert all(a is b for a, b in zip(fill_loops[:at], border_loops[:at]))
    assert fill_loops[at] is not border_loops[at]
    # the fill covers the tile with its halo (tile + 2), the in-bound block too, guarded
    assert [e for _, _, e in loop_shape(sch, fill)][2:] == [2, factors[1] + 2, factors[1] + 2]
    t = factors[1]
    guard = expr_text(realize_of(sch, border).predicate)
    for bound in (f"(1 <= ((h_0 * {t}) + ax1))", f"(1 <= ((w_0 * {t}) + ax2))"):
        assert bound in guard
    assert_native_same(avg_pool3, sch)
    _replays(avg_pool3, sch)


def test_at_a_loop_shared_with_the_consumer_the_consumer_stays():
    # the loop given holds the in-bound block's nest and the pool: only the loops below it
    # are rebuilt (the pool was lost when the given loop itself was rebuilt)
    sch, fill = _pool_tiles([3, 3], 1)
    border, mean = sch.get_block("border"), sch.get_block("mean")
    w0 = sch.get(sch.get_loops(border)[1])
    assert sch.get(sch.get_loops(mean)[1]) is w0
    assert [n for n, _, _ in loop_shape(sch, border)][2:] == ["ax0", "ax1", "ax2"]
    fill_loops = loop_shape(sch, fill)
    assert [e for _, _, e in fill_loops] == [3, 3, 2, 5, 5]
    assert sch.get(sch.get_loops(fill)[0]) is sch.get(sch.get_loops(mean)[0])
    assert sch.get(sch.get_loops(fill)[1]) is not w0


@T.prim_func
def border_i64(x: T.Buffer((T.int64(3), T.int64(6)), "int32"),
               y: T.Buffer((T.int64(3), T.int64(10)), "int32")):
    for r, c in T.grid(T.int64(3), T.int64(10)):
        with T.block("left"):
            vr, vc = T.axis.remap("SS", [r, c])
            y[vr, vc] = T.if_then_else(T.int64(4) <= vc, x[vr, vc - T.int64(4)], 99)


def test_int64_loops_and_a_one_sided_border():
    sch = T.Schedule(border_i64, debug_mask="all")
    left = sch.get_block("left")
    fill = sch.decompose_padding(left, sch.get_loops(left)[1])
    assert loop_shape(sch, fill) == [("r", 0, 3), ("c", 0, 10)]
    assert loop_shape(sch, left) == [("r", 0, 3), ("c", 0, 6)]
    assert [str(sch.get(lp).loop_var.dtype) for lp in sch.get_loops(left)] == ["int64"] * 2
    assert sch.get(sch.get_loops(fill)[0]) is sch.get(sch.get_loops(left)[0])
    assert_native_same(border_i64, sch)
    _replays(border_i64, sch)


@T.prim_func
def no_border(x: T.Buffer((4, 6), "int8"), y: T.Buffer((4, 6), "int8")):
    for r, c in T.grid(4, 6):
        with T.block("same"):
            vr, vc = T.axis.remap("SS", [r, c])
            y[vr, vc] = T.if_then_else(0 <= vc and vc < 6, x[vr, vc], T.int8(1))


@T.prim_func
def clamped(x: T.Buffer((6,), "int32"), y: T.Buffer((9,), "int32")):
    for i in range(9):
        with T.block("clamp"):
            vi = T.axis.spatial(9, i)
            y[vi] = x[T.min(vi, 5)]


@T.prim_func
def edge_repeat(x: T.Buffer((6,), "int32"), y: T.Buffer((9,), "int32")):
    for i in range(9):
        with T.block("rep"):
            vi = T.axis.spatial(9, i)
            y[vi] = T.if_then_else(vi < 6, x[T.min(vi, 5)], x[5])


@T.prim_func
def every_third(x: T.Buffer((6,), "int32"), y: T.Buffer((27,), "int32")):
    for i in range(9):
        with T.block("step"):
            vi = T.axis.spatial(27, i * 3)
            y[vi] = T.if_then_else(vi < 18, x[T.min(vi // 3, 5)], 0)


@T.prim_func
def diagonal(x: T.Buffer((5, 5), "int32"), y: T.Buffer((7, 7), "int32")):
    for i, j in T.grid(7, 7):
        with T.block("tri"):
            vi, vj = T.axis.remap("SS", [i, j])
            y[vi, vj] = T.if_then_else(vi - vj < 2, x[T.min(vi, 4), T.min(vj, 4)], 0)


@T.prim_func
def two_outputs(x: T.Buffer((6,), "int32"), y: T.Buffer((8,), "int32"),
                z: T.Buffer((8,), "int32")):
    for i in range(8):
        with T.block("pair"):
            vi = T.axis.spatial(8, i)
            y[vi] = T.if_then_else(vi < 6, x[T.min(vi, 5)], 0)
            z[vi] = 1


@pytest.mark.parametrize(
    "func, message",
    [
        (no_border, "The in-bound predicate is trivial"),
        (clamped, "Value of BufferStore expect to be constrained by a padding predicate"),
        (edge_repeat, "Pad value should be constant"),
        (every_third, "Strided iteration is not supported"),
        (diagonal, "Block iters are not independent wrt padding condition"),
        (two_outputs, "Block body expect a BufferStore to the write buffer"),
    ],
)
def test_blocks_that_are_not_a_padding_pattern(func, message):
    sch = T.Schedule(func, debug_mask="all")
    (block,) = sch.get_child_blocks(sch.get_block("root"))
    loop = sch.get_loops(block)[0]
    assert not sch.can_decompose_padding(block, loop)
    with pytest.raises(T.ScheduleError, match=message):
        sch.decompose_padding(block, loop)
    assert_structure(sch, func)


def test_a_reduction_and_a_loop_not_above_are_refused():
    sch = T.Schedule(avg_pool3, debug_mask="all")
    mean, border = sch.get_block("mean"), sch.get_block("border")
    with pytest.raises(T.ScheduleError, match="block 'mean' is not a complete block"):
        sch.decompose_padding(mean, sch.get_loops(mean)[0])
    assert not sch.can_decompose_padding(mean, sch.get_loops(mean)[0])
    with pytest.raises(T.ScheduleError, match="loop 'c' is not an ancestor of block 'border'"):
        sch.decompose_padding(border, sch.get_loops(mean)[0])
    assert_structure(sch, avg_pool3)
