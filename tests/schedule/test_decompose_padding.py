"""decompose_padding: a padding block split into a constant fill placed before a given loop
and an in-bound block over the in-bound iterations only (TVM's test programs, at a smaller
size), checked by structure and by running; can_decompose_padding; refusals."""

from __future__ import annotations

import pytest
from sched_checks import assert_schedule, assert_structure
from test_trace_kinds import _replays

from tvmscript import tir as T


def test_int64_indices():
    @T.prim_func
    def before(x: T.Buffer((T.int64(1), T.int64(12), T.int64(8)), "int32"),
               y: T.Buffer((T.int64(1), T.int64(14), T.int64(8)), "int32")):
        for b, i, j in T.grid(T.int64(1), T.int64(14), T.int64(8)):
            with T.block("block"):
                vb, vi, vj = T.axis.remap("SSS", [b, i, j])
                y[vb, vi, vj] = T.if_then_else(vi < T.int64(12), x[vb, vi, vj], 0)

    @T.prim_func
    def after(x: T.Buffer((T.int64(1), T.int64(12), T.int64(8)), "int32"),
              y: T.Buffer((T.int64(1), T.int64(14), T.int64(8)), "int32")):
        for _b, i in T.grid(T.int64(1), T.int64(14)):
            for j in range(T.int64(8)):
                with T.block("block_pad_const"):
                    vb = T.axis.spatial(T.int64(1), T.int64(0))
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.reads()
                    T.writes(y[vb, vi, vj])
                    y[vb, vi, vj] = 0
            for j in range(T.int64(8)):
                with T.block("block"):
                    vb = T.axis.spatial(T.int64(1), T.int64(0))
                    vi = T.axis.spatial(T.int64(12), i)
                    vj = T.axis.spatial(T.int64(8), j)
                    T.where(i < T.int64(12))
                    T.reads(x[vb, vi, vj])
                    T.writes(y[vb, vi, vj])
                    y[vb, vi, vj] = x[vb, vi, vj]

    sch = T.Schedule(before, debug_mask="all")
    block = sch.get_block("block")
    const = sch.decompose_padding(block, sch.get_loops(block)[2])
    assert sch.get(const).name_hint == "block_pad_const"
    assert_schedule(before, sch, after)


def test_1d():
    @T.prim_func
    def before(x: T.Buffer(128, "int32"), y: T.Buffer(140, "int32")):
        for i in range(140):
            with T.block("block"):
                vi = T.axis.remap("S", [i])
                y[vi] = T.if_then_else(vi >= 6 and vi < 134, x[vi - 6], 0, dtype="int32")

    @T.prim_func
    def after(x: T.Buffer(128, "int32"), y: T.Buffer(140, "int32")):
        for i in T.serial(140):
            with T.block("block_pad_const"):
                vi = T.axis.spatial(140, i)
                T.reads()
                T.writes(y[vi])
                y[vi] = 0
        for i in T.serial(128):
            with T.block("block"):
                vi = T.axis.spatial(128, i)
                T.reads(x[vi])
                T.writes(y[vi + 6])
                y[vi + 6] = x[vi]

    sch = T.Schedule(before, debug_mask="all")
    block = sch.get_block("block")
    sch.decompose_padding(block, sch.get_loops(block)[0])
    assert_schedule(before, sch, after)
    assert str(sch.trace).splitlines()[-1] == "  b2 = sch.decompose_padding(block=b0, loop=l1)"
    _replays(before, sch)


@T.prim_func
def sum_pool_2d(x: T.Buffer((1, 4, 25, 25), "int8"), tensor: T.Buffer((1, 4, 25, 25), "int8")):
    pad_temp = T.alloc_buffer([1, 4, 31, 31], dtype="int8")
    for i0, i1, i2, i3 in T.grid(1, 4, 31, 31):
        with T.block("pad_temp"):
            ax0, ax1, ax2, ax3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
            pad_temp[ax0, ax1, ax2, ax3] = T.if_then_else(
                3 <= ax2 and ax2 < 28 and 3 <= ax3 and ax3 < 28,
                x[ax0, ax1, ax2 - 3, ax3 - 3],
                T.int8(0),
                dtype="int8",
            )
    for i0, i1, i2, i3, i4, i5 in T.grid(1, 4, 25, 25, 7, 7):
        with T.block("tensor"):
            ax0, ax1, ax2, ax3, rv0, rv1 = T.axis.remap("SSSSRR", [i0, i1, i2, i3, i4, i5])
            with T.init():
                tensor[ax0, ax1, ax2, ax3] = T.int8(0)
            tensor[ax0, ax1, ax2, ax3] = (
                tensor[ax0, ax1, ax2, ax3] + pad_temp[ax0, ax1, ax2 + rv0, ax3 + rv1]
            )


def test_direct():
    @T.prim_func
    def after(x: T.Buffer((1, 4, 25, 25), "int8"), tensor: T.Buffer((1, 4, 25, 25), "int8")):
        pad_temp = T.alloc_buffer([1, 4, 31, 31], dtype="int8")
        for i0, i1, i2, i3 in T.grid(1, 4, 31, 31):
            with T.block("pad_temp_pad_const"):
                ax0, ax1, ax2, ax3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
                pad_temp[ax0, ax1, ax2, ax3] = T.int8(0)
        for i0, i1, i2, i3 in T.grid(1, 4, 25, 25):
            with T.block("pad_temp"):
                ax0, ax1, ax2, ax3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
                pad_temp[ax0, ax1, ax2 + 3, ax3 + 3] = x[ax0, ax1, ax2, ax3]
        for i0, i1, i2, i3, i4, i5 in T.grid(1, 4, 25, 25, 7, 7):
            with T.block("tensor"):
                ax0, ax1, ax2, ax3, rv0, rv1 = T.axis.remap("SSSSRR", [i0, i1, i2, i3, i4, i5])
                with T.init():
                    tensor[ax0, ax1, ax2, ax3] = T.int8(0)
                tensor[ax0, ax1, ax2, ax3] = (
                    tensor[ax0, ax1, ax2, ax3] + pad_temp[ax0, ax1, ax2 + rv0, ax3 + rv1]
                )

    sch = T.Schedule(sum_pool_2d, debug_mask="all")
    pad = sch.get_block("pad_temp")
    sch.decompose_padding(pad, sch.get_loops(pad)[0])
    assert_schedule(sum_pool_2d, sch, after)


def _tiled(factors, at):
    sch = T.Schedule(sum_pool_2d, debug_mask="all")
    block = sch.get_block("tensor")
    pad = sch.get_block("pad_temp")
    n, c, h, w, kh, kw = sch.get_loops(block)
    ho, hi = sch.split(h, factors)
    wo, wi = sch.split(w, factors)
    sch.reorder(n, ho, wo, c, hi, wi, kh, kw)
    sch.compute_at(pad, wo)
    sch.decompose_padding(pad, sch.get_loops(pad)[at])
    return sch


@T.prim_func
def tiled_expected(x: T.Buffer((1, 4, 25, 25), "int8"),
                   tensor: T.Buffer((1, 4, 25, 25), "int8")):
    pad_temp = T.alloc_buffer([1, 4, 31, 31], dtype="int8")
    for i0, i2_0, i3_0 in T.grid(1, 5, 5):
        for ax0, ax1, ax2 in T.grid(4, 11, 11):
            with T.block("pad_temp_pad_const"):
                ax0_1 = T.axis.spatial(1, 0)
                ax1_1 = T.axis.spatial(4, ax0)
                ax2_1 = T.axis.spatial(31, i2_0 * 5 + ax1)
                ax3 = T.axis.spatial(31, i3_0 * 5 + ax2)
                T.reads()
                T.writes(pad_temp[ax0_1, ax1_1, ax2_1, ax3])
                pad_temp[ax0_1, ax1_1, ax2_1, ax3] = T.int8(0)
        for ax0, ax1, ax2 in T.grid(4, 11, 11):
            with T.block("pad_temp"):
                ax0_2 = T.axis.spatial(1, 0)
                ax1_2 = T.axis.spatial(4, ax0)
                ax2_2 = T.axis.spatial(25, i2_0 * 5 + ax1 - 3)
                ax3 = T.axis.spatial(25, i3_0 * 5 + ax2 - 3)
                T.where(3 <= i2_0 * 5 + ax1 and i2_0 * 5 + ax1 < 28
                        and 3 <= i3_0 * 5 + ax2 and i3_0 * 5 + ax2 < 28)
                T.reads(x[ax0_2, ax1_2, ax2_2, ax3])
                T.writes(pad_temp[ax0_2, ax1_2, ax2_2 + 3, ax3 + 3])
                pad_temp[ax0_2, ax1_2, ax2_2 + 3, ax3 + 3] = x[ax0_2, ax1_2, ax2_2, ax3]
        for i1, i2_1, i3_1, i4, i5 in T.grid(4, 5, 5, 7, 7):
            with T.block("tensor"):
                ax0_3, ax1_3 = T.axis.remap("SS", [i0, i1])
                ax2_3 = T.axis.spatial(25, i2_0 * 5 + i2_1)
                ax3 = T.axis.spatial(25, i3_0 * 5 + i3_1)
                rv0, rv1 = T.axis.remap("RR", [i4, i5])
                T.reads(pad_temp[ax0_3, ax1_3, ax2_3 + rv0, ax3 + rv1])
                T.writes(tensor[ax0_3, ax1_3, ax2_3, ax3])
                with T.init():
                    tensor[ax0_3, ax1_3, ax2_3, ax3] = T.int8(0)
                tensor[ax0_3, ax1_3, ax2_3, ax3] = (
                    tensor[ax0_3, ax1_3, ax2_3, ax3]
                    + pad_temp[ax0_3, ax1_3, ax2_3 + rv0, ax3 + rv1]
                )


def test_tiled():
    sch = _tiled([5, 5], 3)
    assert_schedule(sum_pool_2d, sch, tiled_expected)


def test_tiled_and_lifted():
    @T.prim_func
    def after(x: T.Buffer((1, 4, 25, 25), "int8"), tensor: T.Buffer((1, 4, 25, 25), "int8")):
        pad_temp = T.alloc_buffer([1, 4, 31, 31], dtype="int8")
        for _i0, i2_0, i3_0, ax0, ax1, ax2 in T.grid(1, 5, 5, 4, 11, 11):
            with T.block("pad_temp_pad_const"):
                ax0_1 = T.axis.spatial(1, 0)
                ax1_1 = T.axis.spatial(4, ax0)
                ax2_1 = T.axis.spatial(31, i2_0 * 5 + ax1)
                ax3 = T.axis.spatial(31, i3_0 * 5 + ax2)
                T.reads()
                T.writes(pad_temp[ax0_1, ax1_1, ax2_1, ax3])
                pad_temp[ax0_1, ax1_1, ax2_1, ax3] = T.int8(0)
        for i0, i2_0, i3_0 in T.grid(1, 5, 5):
            for ax0, ax1, ax2 in T.grid(4, 11, 11):
                with T.block("pad_temp"):
                    ax0_2 = T.axis.spatial(1, 0)
                    ax1_2 = T.axis.spatial(4, ax0)
                    ax2_2 = T.axis.spatial(25, i2_0 * 5 + ax1 - 3)
                    ax3 = T.axis.spatial(25, i3_0 * 5 + ax2 - 3)
                    T.where(3 <= i2_0 * 5 + ax1 and i2_0 * 5 + ax1 < 28
                            and 3 <= i3_0 * 5 + ax2 and i3_0 * 5 + ax2 < 28)
                    T.reads(x[ax0_2, ax1_2, ax2_2, ax3])
                    T.writes(pad_temp[ax0_2, ax1_2, ax2_2 + 3, ax3 + 3])
                    pad_temp[ax0_2, ax1_2, ax2_2 + 3, ax3 + 3] = x[ax0_2, ax1_2, ax2_2, ax3]
            for i1, i2_1, i3_1, i4, i5 in T.grid(4, 5, 5, 7, 7):
                with T.block("tensor"):
                    ax0_3, ax1_3 = T.axis.remap("SS", [i0, i1])
                    ax2_3 = T.axis.spatial(25, i2_0 * 5 + i2_1)
                    ax3 = T.axis.spatial(25, i3_0 * 5 + i3_1)
                    rv0, rv1 = T.axis.remap("RR", [i4, i5])
                    T.reads(pad_temp[ax0_3, ax1_3, ax2_3 + rv0, ax3 + rv1])
                    T.writes(tensor[ax0_3, ax1_3, ax2_3, ax3])
                    with T.init():
                        tensor[ax0_3, ax1_3, ax2_3, ax3] = T.int8(0)
                    tensor[ax0_3, ax1_3, ax2_3, ax3] = (
                        tensor[ax0_3, ax1_3, ax2_3, ax3]
                        + pad_temp[ax0_3, ax1_3, ax2_3 + rv0, ax3 + rv1]
                    )

    assert_schedule(sum_pool_2d, _tiled([5, 5], 0), after)


def test_non_perfect_tiles():
    @T.prim_func
    def after(x: T.Buffer((1, 4, 25, 25), "int8"), tensor: T.Buffer((1, 4, 25, 25), "int8")):
        pad_temp = T.alloc_buffer([1, 4, 31, 31], dtype="int8")
        for i0, i2_0, i3_0 in T.grid(1, 3, 3):
            for ax0, ax1, ax2 in T.grid(4, 16, 16):
                with T.block("pad_temp_pad_const"):
                    ax0_1 = T.axis.spatial(1, 0)
                    ax1_1 = T.axis.spatial(4, ax0)
                    ax2_1 = T.axis.spatial(31, i2_0 * 10 + ax1)
                    ax3 = T.axis.spatial(31, i3_0 * 10 + ax2)
                    T.where(i2_0 * 10 + ax1 < 31 and i3_0 * 10 + ax2 < 31)
                    T.reads()
                    T.writes(pad_temp[ax0_1, ax1_1, ax2_1, ax3])
                    pad_temp[ax0_1, ax1_1, ax2_1, ax3] = T.int8(0)
            for ax0, ax1, ax2 in T.grid(4, 16, 16):
                with T.block("pad_temp"):
                    ax0_2 = T.axis.spatial(1, 0)
                    ax1_2 = T.axis.spatial(4, ax0)
                    ax2_2 = T.axis.spatial(25, i2_0 * 10 + ax1 - 3)
                    ax3 = T.axis.spatial(25, i3_0 * 10 + ax2 - 3)
                    T.where(3 <= i2_0 * 10 + ax1 and i2_0 * 10 + ax1 < 28
                            and 3 <= i3_0 * 10 + ax2 and i3_0 * 10 + ax2 < 28
                            and i2_0 * 10 + ax1 < 31 and i3_0 * 10 + ax2 < 31)
                    T.reads(x[ax0_2, ax1_2, ax2_2, ax3])
                    T.writes(pad_temp[ax0_2, ax1_2, ax2_2 + 3, ax3 + 3])
                    pad_temp[ax0_2, ax1_2, ax2_2 + 3, ax3 + 3] = x[ax0_2, ax1_2, ax2_2, ax3]
            for i1, i2_1, i3_1, i4, i5 in T.grid(4, 10, 10, 7, 7):
                with T.block("tensor"):
                    ax0_3, ax1_3 = T.axis.remap("SS", [i0, i1])
                    ax2_3 = T.axis.spatial(25, i2_0 * 10 + i2_1)
                    ax3 = T.axis.spatial(25, i3_0 * 10 + i3_1)
                    rv0, rv1 = T.axis.remap("RR", [i4, i5])
                    T.where(i2_0 * 10 + i2_1 < 25 and i3_0 * 10 + i3_1 < 25)
                    T.reads(pad_temp[ax0_3, ax1_3, ax2_3 + rv0, ax3 + rv1])
                    T.writes(tensor[ax0_3, ax1_3, ax2_3, ax3])
                    with T.init():
                        tensor[ax0_3, ax1_3, ax2_3, ax3] = T.int8(0)
                    tensor[ax0_3, ax1_3, ax2_3, ax3] = (
                        tensor[ax0_3, ax1_3, ax2_3, ax3]
                        + pad_temp[ax0_3, ax1_3, ax2_3 + rv0, ax3 + rv1]
                    )

    assert_schedule(sum_pool_2d, _tiled([None, 10], 3), after)


@T.prim_func
def pad_op(x: T.Buffer((1, 4, 25, 25), "int8"), y: T.Buffer((1, 4, 31, 31), dtype="int8")):
    for i0, i1, i2, i3 in T.grid(1, 4, 31, 31):
        with T.block("pad_temp"):
            ax0, ax1, ax2, ax3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
            y[ax0, ax1, ax2, ax3] = T.if_then_else(
                3 <= ax2 and ax2 < 28 and 3 <= ax3 and ax3 < 28,
                x[ax0, ax1, ax2 - 3, ax3 - 3],
                T.int8(0),
                dtype="int8",
            )


def test_under_a_single_child_subtree():
    @T.prim_func
    def after(x: T.Buffer((1, 4, 25, 25), "int8"), y: T.Buffer((1, 4, 31, 31), "int8")):
        for _i0, i1 in T.grid(1, 4):
            for i2, i3 in T.grid(31, 31):
                with T.block("pad_temp_pad_const"):
                    ax0 = T.axis.spatial(1, 0)
                    ax1, ax2, ax3 = T.axis.remap("SSS", [i1, i2, i3])
                    y[ax0, ax1, ax2, ax3] = T.int8(0)
            for i2, i3 in T.grid(25, 25):
                with T.block("pad_temp"):
                    ax0 = T.axis.spatial(1, 0)
                    ax1, ax2, ax3 = T.axis.remap("SSS", [i1, i2, i3])
                    y[ax0, ax1, ax2 + 3, ax3 + 3] = x[ax0, ax1, ax2, ax3]

    sch = T.Schedule(pad_op, debug_mask="all")
    pad = sch.get_block("pad_temp")
    _, _, h, _ = sch.get_loops(pad)
    assert sch.can_decompose_padding(pad, h)
    sch.decompose_padding(pad, h)
    assert_schedule(pad_op, sch, after)
    # the in-bound block's handle follows it; its loops are the narrowed ones
    assert [sch.get(lp).extent.value for lp in sch.get_loops(pad)] == [1, 4, 25, 25]


def test_a_trivial_predicate_does_not_decompose():
    @T.prim_func
    def trivial(x: T.Buffer((1, 4, 25, 25), "int8"), y: T.Buffer([1, 4, 25, 25], dtype="int8")):
        for i0, i1, i2, i3 in T.grid(1, 4, 25, 25):
            with T.block("pad_temp"):
                ax0, ax1, ax2, ax3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
                y[ax0, ax1, ax2, ax3] = T.if_then_else(
                    0 <= ax2 and ax2 < 25 and 0 <= ax3 and ax3 < 25,
                    x[ax0, ax1, ax2, ax3],
                    T.int8(0),
                    dtype="int8",
                )

    sch = T.Schedule(trivial, debug_mask="all")
    pad = sch.get_block("pad_temp")
    _, _, h, _ = sch.get_loops(pad)
    assert not sch.can_decompose_padding(pad, h)
    with pytest.raises(T.ScheduleError, match="The in-bound predicate is trivial"):
        sch.decompose_padding(pad, h)
    assert_schedule(trivial, sch, trivial)


def test_refusals():
    sch = T.Schedule(sum_pool_2d, debug_mask="all")
    tensor = sch.get_block("tensor")
    pad = sch.get_block("pad_temp")
    with pytest.raises(T.ScheduleError, match="is not a complete block"):
        sch.decompose_padding(tensor, sch.get_loops(tensor)[0])
    with pytest.raises(T.ScheduleError, match="is not an ancestor of block 'pad_temp'"):
        sch.decompose_padding(pad, sch.get_loops(tensor)[0])

    @T.prim_func
    def not_padding(x: T.Buffer((8,), "int32"), y: T.Buffer((10,), "int32")):
        for i in range(10):
            with T.block("copy"):
                vi = T.axis.spatial(10, i)
                y[vi] = x[T.min(vi, 7)]

    @T.prim_func
    def computed_pad(x: T.Buffer((8,), "int32"), y: T.Buffer((10,), "int32")):
        for i in range(10):
            with T.block("pad"):
                vi = T.axis.spatial(10, i)
                y[vi] = T.if_then_else(vi < 8, x[T.min(vi, 7)], x[0])

    @T.prim_func
    def strided(x: T.Buffer((8,), "int32"), y: T.Buffer((20,), "int32")):
        for i in range(10):
            with T.block("pad"):
                vi = T.axis.spatial(20, i * 2)
                y[vi] = T.if_then_else(vi < 16, x[T.min(vi // 2, 7)], 0)

    @T.prim_func
    def mixed(x: T.Buffer((8, 8), "int32"), y: T.Buffer((10, 10), "int32")):
        for i, j in T.grid(10, 10):
            with T.block("pad"):
                vi, vj = T.axis.remap("SS", [i, j])
                y[vi, vj] = T.if_then_else(vi + vj < 16, x[T.min(vi, 7), T.min(vj, 7)], 0)

    for func, match in (
        (not_padding, "Value of BufferStore expect to be constrained by a padding predicate"),
        (computed_pad, "Pad value should be constant"),
        (strided, "Strided iteration is not supported"),
        (mixed, "Block iters are not independent wrt padding condition"),
    ):
        sch = T.Schedule(func, debug_mask="all")
        (block,) = sch.get_child_blocks(sch.get_block("root"))
        loop = sch.get_loops(block)[0]
        assert not sch.can_decompose_padding(block, loop)
        with pytest.raises(T.ScheduleError, match=match):
            sch.decompose_padding(block, loop)
        assert_structure(sch, func)
