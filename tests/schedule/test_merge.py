"""merge on three independent maps of one image (each a tiled nest of the same shape) and on
a producer/consumer pair: the chosen nests become one nest (loops named after the first
nest's, with ``_m``) running the bodies in the order given, at the last nest's place; the
shape, start, nesting, scope and annotation refusals; a dependence the merge breaks is
reported under ``debug_mask``."""

from __future__ import annotations

import pytest
from extra_checks import assert_native_same, bindings, block_names, func_of, loop_shape
from sched_checks import assert_same_results, assert_schedule, assert_structure
from test_trace_kinds import _replays

from tvmscript import tir as T


@T.prim_func
def three_maps(P: T.Buffer((8, 12), "int32"), hi: T.Buffer((8, 12), "int32"),
               lo: T.Buffer((8, 12), "int32"), sq: T.Buffer((8, 12), "int32")):
    for r0, c, r1 in T.grid(2, 12, 4):
        with T.block("hi"):
            vr = T.axis.spatial(8, r0 * 4 + r1)
            vc = T.axis.spatial(12, c)
            hi[vr, vc] = P[vr, vc] + 10
    for a, b, d in T.grid(2, 12, 4):
        with T.block("lo"):
            vr = T.axis.spatial(8, d * 2 + a)
            vc = T.axis.spatial(12, b)
            lo[vr, vc] = 7 - P[vr, vc]
    for x, y, z in T.grid(2, 12, 4):
        with T.block("sq"):
            vr = T.axis.spatial(8, x * 4 + z)
            vc = T.axis.spatial(12, 11 - y)
            sq[vr, vc] = P[vr, vc] * P[vr, vc]


@T.prim_func
def hi_lo_merged_twice(P: T.Buffer((8, 12), "int32"), hi: T.Buffer((8, 12), "int32"),
                       lo: T.Buffer((8, 12), "int32"), sq: T.Buffer((8, 12), "int32")):
    for r0_m, c_m in T.grid(2, 12):
        for r1 in range(4):
            with T.block("hi"):
                vr = T.axis.spatial(8, r0_m * 4 + r1)
                vc = T.axis.spatial(12, c_m)
                T.reads(P[vr, vc])
                T.writes(hi[vr, vc])
                hi[vr, vc] = P[vr, vc] + 10
        for d in range(4):
            with T.block("lo"):
                vr = T.axis.spatial(8, d * 2 + r0_m)
                vc = T.axis.spatial(12, c_m)
                T.reads(P[vr, vc])
                T.writes(lo[vr, vc])
                lo[vr, vc] = 7 - P[vr, vc]
    for x, y, z in T.grid(2, 12, 4):
        with T.block("sq"):
            vr = T.axis.spatial(8, x * 4 + z)
            vc = T.axis.spatial(12, 11 - y)
            T.reads(P[vr, vc])
            T.writes(sq[vr, vc])
            sq[vr, vc] = P[vr, vc] * P[vr, vc]


def test_two_levels_of_two_nests():
    sch = T.Schedule(three_maps, debug_mask="all")
    hi, lo = sch.get_block("hi"), sch.get_block("lo")
    merged = sch.merge(sch.get_loops(hi)[1], sch.get_loops(lo)[1])
    assert_schedule(three_maps, sch, hi_lo_merged_twice)
    assert sch.get(merged).loop_var.name == "c_m"
    # both blocks' handles are under the merged loops now
    assert loop_shape(sch, lo) == [("r0_m", 0, 2), ("c_m", 0, 12), ("d", 0, 4)]
    assert loop_shape(sch, hi) == [("r0_m", 0, 2), ("c_m", 0, 12), ("r1", 0, 4)]
    assert_native_same(three_maps, sch)
    assert "l8 = sch.merge(l3, l6)" in sch.trace.as_python()
    _replays(three_maps, sch)


def test_one_level_of_three_nests_stands_where_the_last_stood():
    sch = T.Schedule(three_maps, debug_mask="all")
    # given in another order than the program's: the bodies run in the order given
    merged = sch.merge(sch.get_loops("sq")[0], sch.get_loops("hi")[0], sch.get_loops("lo")[0])
    assert sch.get(merged).loop_var.name == "x_m"
    body = func_of(sch).body  # the merged loop alone
    assert body is sch.get(merged)
    assert len(body.body.seq) == 3
    assert block_names(func_of(sch)) == ["sq", "hi", "lo"]
    assert bindings(sch, "lo") == ["vr=((d * 2) + x_m)", "vc=b"]
    assert bindings(sch, "sq") == ["vr=((x_m * 4) + z)", "vc=(11 - y)"]
    assert_same_results(three_maps, sch)
    _replays(three_maps, sch)


def test_the_loops_may_be_given_as_one_list():
    sch = T.Schedule(three_maps, debug_mask="all")
    sch.merge([sch.get_loops("hi")[1], sch.get_loops("lo")[1]])
    assert_structure(sch, hi_lo_merged_twice)


@T.prim_func
def shift_copy(A: T.Buffer((10,), "float32"), C: T.Buffer((10,), "float32")):
    B = T.alloc_buffer((10,))
    for i in range(10):
        with T.block("triple"):
            vi = T.axis.spatial(10, i)
            B[vi] = A[vi] * T.float32(3)
    for i in range(10):
        with T.block("rotate"):
            vi = T.axis.spatial(10, i)
            C[vi] = B[(vi + 3) % 10]


@T.prim_func
def same_index_copy(A: T.Buffer((10,), "float32"), C: T.Buffer((10,), "float32")):
    B = T.alloc_buffer((10,))
    for i in range(10):
        with T.block("triple"):
            vi = T.axis.spatial(10, i)
            B[vi] = A[vi] * T.float32(3)
    for i in range(10):
        with T.block("rotate"):
            vi = T.axis.spatial(10, i)
            C[vi] = B[vi] - T.float32(1)


def test_a_broken_dependence_is_reported_only_under_debug():
    sch = T.Schedule(shift_copy, debug_mask="all")
    with pytest.raises(T.ScheduleError, match="the primitive does not check the data dependences"):
        sch.merge(sch.get_loops("triple")[0], sch.get_loops("rotate")[0])
    assert_structure(sch, shift_copy)
    # unchecked, the schedule does as told: 'rotate' now reads values not yet written
    sch = T.Schedule(shift_copy)
    sch.merge(sch.get_loops("triple")[0], sch.get_loops("rotate")[0])
    assert loop_shape(sch, "rotate") == [("i_m", 0, 10)]


def test_a_dependence_kept_in_order_passes_the_debug_check():
    sch = T.Schedule(same_index_copy, debug_mask="all")
    sch.merge(sch.get_loops("triple")[0], sch.get_loops("rotate")[0])
    assert_same_results(same_index_copy, sch)
    assert_native_same(same_index_copy, sch)


@T.prim_func
def uneven(A: T.Buffer((6, 8), "float32"), B: T.Buffer((6, 8), "float32"),
           C: T.Buffer((6, 8), "float32"), D: T.Buffer((6, 8), "float32")):
    for i, j in T.grid(6, 8):
        with T.block("full"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] + T.float32(1)
    for i in range(6):
        for j in range(1, 8):
            with T.block("tail"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = A[vi, vj] - T.float32(1)
    for j, i in T.grid(8, 6):
        with T.block("swapped"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = A[vi, vj] * T.float32(2)
    for i in T.serial(6, annotations={"pragma_note": 1}):
        for j in range(8):
            with T.block("noted"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = C[vi, vj] * T.float32(0.5)


@T.prim_func
def crowded(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4, 4), "float32"),
            C: T.Buffer((4, 4), "float32")):
    for i in range(4):
        for j in range(4):
            with T.block("first"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj]
        for j in range(4):
            with T.block("second"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = A[vi, vj]
    for i, j in T.grid(4, 4):
        with T.block("third"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = C[vi, vj] + B[vi, vj]
    with T.block("wrap"):
        for k in range(4):
            with T.block("diag"):
                vk = T.axis.spatial(4, k)
                B[vk, vk] = B[vk, vk] * T.float32(2)


@pytest.mark.parametrize(
    "func, pick, message",
    [
        (uneven, lambda s: [s.get_loops("full")[1], s.get_loops("tail")[1]],
         "loop 'j' does not start at 0"),
        (uneven, lambda s: [s.get_loops("full")[1], s.get_loops("swapped")[1]],
         "loops 'i' and 'j' do not have the same extent"),
        (uneven, lambda s: [s.get_loops("full")[0], s.get_loops("swapped")[1]],
         "must have the same depth below their common ancestor: 1 and 2 loops"),
        (crowded, lambda s: [s.get_loops("third")[1], s.get_loops("diag")[0]],
         "not under the same block scope"),
        (uneven, lambda s: [s.get_loops("full")[1], s.get_loops("noted")[1]],
         "loop 'i' has annotations or a thread binding"),
        (uneven, lambda s: [s.get_loops("full")[0], s.get_loops("full")[1]],
         "loop 'i' holds another of the merged loops"),
        (uneven, lambda s: [s.get_loops("full")[0]], "needs at least two distinct loops"),
        (uneven, lambda s: [s.get_loops("full")[0]] * 2, "needs at least two distinct loops"),
        (crowded, lambda s: [s.get_loops("second")[1], s.get_loops("third")[1]],
         "loop 'j' is not the only statement directly inside loop 'i'"),
    ],
    ids=["start", "extent", "depth", "scope", "annotation", "nested", "one", "repeated",
         "not_only_child"],
)
def test_refusals(func, pick, message):
    sch = T.Schedule(func, debug_mask="all")
    with pytest.raises(T.ScheduleError, match=message):
        sch.merge(*pick(sch))
    assert_structure(sch, func)
