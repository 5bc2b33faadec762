"""loop_partition on a row-scaling map, a matrix-vector product and a wrapped (opaque) map:
the loop is cut into consecutive parts, each a loop in a ``<block>_<var>k_partition``
block under ``<block>_<var>_common``, whose block ``<block>_<var>k`` covers only its part;
a None factor takes the rest; the factor, loop-kind and reduction refusals."""

from __future__ import annotations

import pytest
from extra_checks import assert_native_same, block_names, func_of, loop_shape, region_text
from sched_checks import assert_same_results, assert_structure
from test_trace_kinds import _replays

from irbuilder.ir import ForKind, assert_structural_equal
from tvmscript import from_source
from tvmscript import tir as T


@T.prim_func
def scale_rows(X: T.Buffer((12, 10), "int32"), Y: T.Buffer((12, 10), "int32")):
    for r, c in T.grid(12, 10):
        with T.block("scale"):
            vr, vc = T.axis.remap("SS", [r, c])
            Y[vr, vc] = X[vr, vc] * (vr + 1) - vc


def _domains(sch: T.Schedule, name: str) -> list[tuple[int, int]]:
    block = sch.get(sch.get_block(name))
    return [(int(iv.dom.min.value), int(iv.dom.extent.value)) for iv in block.iter_vars]


def test_rows_in_three_parts():
    sch = T.Schedule(scale_rows, debug_mask="all")  # each step compared by running
    r, _ = sch.get_loops("scale")
    parts = sch.loop_partition(r, [3, 4])  # and the remaining 5 rows
    assert [(sch.get(lp).min.value, sch.get(lp).extent.value) for lp in parts] == [
        (0, 3), (3, 4), (7, 5)
    ]
    assert [sch.get(lp).loop_var.name for lp in parts] == ["r0", "r1", "r2"]
    assert sorted(block_names(func_of(sch))) == sorted([
        "scale_r_common", "scale_r0_partition", "scale_r1_partition", "scale_r2_partition",
        "scale_r0", "scale_r1", "scale_r2",
    ])
    # each part's block: its row iter narrowed, its declared regions the whole part
    assert _domains(sch, "scale_r1") == [(3, 4), (0, 10)]
    middle = sch.get(sch.get_block("scale_r1"))
    assert [region_text(x) for x in middle.reads] == ["X[3:3+4, 0:0+10]"]
    assert [region_text(x) for x in middle.writes] == ["Y[3:3+4, 0:0+10]"]
    assert _domains(sch, "scale_r2") == [(7, 5), (0, 10)]
    assert loop_shape(sch, "scale_r2") == [("r2", 7, 5), ("c", 0, 10)]
    assert_native_same(scale_rows, sch)
    assert (
        "l3, l4, l5 = sch.loop_partition(loop=l1, factors=[3, 4], preserve_unit_iters=True)"
        in sch.trace.as_python()
    )
    _replays(scale_rows, sch)


def test_a_part_partitioned_again_with_an_inferred_factor():
    sch = T.Schedule(scale_rows, debug_mask="all")
    r, _ = sch.get_loops("scale")
    first, second = sch.loop_partition(r, [None, 2])  # 10 rows, then the last 2
    assert sch.get(first).extent.value == 10 and sch.get(second).min.value == 10
    _, c = sch.get_loops("scale_r1")
    cols = sch.loop_partition(c, [1, None, 3])  # 1, the 6 between, the last 3
    assert [(sch.get(lp).min.value, sch.get(lp).extent.value) for lp in cols] == [
        (0, 1), (1, 6), (7, 3)
    ]
    assert "scale_r1_c_common" in block_names(func_of(sch))
    assert _domains(sch, "scale_r1_c2") == [(10, 2), (7, 3)]
    assert loop_shape(sch, "scale_r1_c1") == [("c1", 1, 6)]  # in the scope of its partition
    # the first rows' block is left alone
    assert _domains(sch, "scale_r0") == [(0, 10), (0, 10)]
    assert_native_same(scale_rows, sch)
    _replays(scale_rows, sch)


@T.prim_func
def wrapped(A: T.Buffer((9, 3), "float32"), B: T.Buffer((9, 3), "float32")):
    for i, j in T.grid(9, 3):
        with T.block("wrap"):
            T.reads(A[i, j])
            T.writes(B[i, j])
            with T.block("neg"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = T.float32(0) - A[vi, vj]


def test_an_opaque_block_and_the_block_inside_it():
    sch = T.Schedule(wrapped, debug_mask="all")
    i, _ = sch.get_loops("wrap")
    sch.loop_partition(i, [4])
    # the partitions are named after the opaque block; the bound block inside is narrowed
    names = block_names(func_of(sch))
    assert {"wrap_i_common", "wrap_i0_partition", "wrap_i1_partition", "wrap_i0", "wrap_i1",
            "neg_i0", "neg_i1"} == set(names)
    assert _domains(sch, "neg_i1") == [(4, 5), (0, 3)]
    outer = sch.get(sch.get_block("wrap_i1"))
    assert outer.iter_vars == () and [region_text(x) for x in outer.reads] == ["A[i1, j]"]
    assert_same_results(wrapped, sch)


@T.prim_func
def matvec(M: T.Buffer((8, 6), "float32"), v: T.Buffer((6,), "float32"),
           y: T.Buffer((8,), "float32")):
    for i, k in T.grid(8, 6):
        with T.block("dot"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                y[vi] = T.float32(0.25)
            y[vi] = y[vi] + M[vi, vk] * v[vk]


def test_a_reduction_loop_only_once_the_init_is_apart():
    sch = T.Schedule(matvec, debug_mask="all")
    _, k = sch.get_loops("dot")
    # every part would start its sums again from the init
    with pytest.raises(T.ScheduleError, match="loop 'k' carries the reduction 'vk' of block 'dot'"):
        sch.loop_partition(k, [2])
    assert_structure(sch, matvec)
    # the spatial loop partitions with the init in place
    i, _ = sch.get_loops("dot")
    sch.loop_partition(i, [5])
    assert_same_results(matvec, sch)
    sch = T.Schedule(matvec, debug_mask="all")
    dot = sch.get_block("dot")
    sch.decompose_reduction(dot, sch.get_loops(dot)[0])
    _, k = sch.get_loops("dot_update")
    sch.loop_partition(k, [2, 2])
    assert_same_results(matvec, sch)
    assert_native_same(matvec, sch)


@pytest.mark.parametrize(
    "factors, message",
    [
        ([5, 7], r"the factors \[5, 7\] sum to 12, not less than the extent 12 of loop 'r'"),
        ([100], "sum to 100, not less than the extent 12"),
        ([3, 0], "factor 1 is 0; factors must be positive"),
        ([-1, None], "factor 0 is -1; factors must be positive"),
        ([None, 2, None], r"at most one factor may be None \(inferred\)"),
    ],
)
def test_bad_factors(factors, message):
    sch = T.Schedule(scale_rows, debug_mask="all")
    r, _ = sch.get_loops("scale")
    with pytest.raises(T.ScheduleError, match=message):
        sch.loop_partition(r, factors)
    assert_structure(sch, scale_rows)


@T.prim_func
def sized(a: T.handle, b: T.handle, n: T.int32):
    A = T.match_buffer(a, (n, 4), "int32")
    B = T.match_buffer(b, (n, 4), "int32")
    for i, j in T.grid(n, 4):
        with T.block("copy"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj]


@T.prim_func
def kinds(A: T.Buffer((6, 8), "int32"), B: T.Buffer((6, 8), "int32"),
          C: T.Buffer((6, 8), "int32")):
    for i in T.parallel(6):
        for j in T.serial(8, annotations={"pragma_unroll_explicit": 0}):
            with T.block("noted"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] + 1
    for i in range(6):
        for j in T.thread_binding(8, thread="threadIdx.x"):
            with T.block("bound"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = A[vi, vj] + 2


@T.prim_func
def two_bodies(A: T.Buffer((6, 8), "int32"), B: T.Buffer((6, 8), "int32"),
               C: T.Buffer((6, 8), "int32")):
    for i in range(6):
        for j in range(8):
            with T.block("first"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] + 1
        for j in range(8):
            with T.block("second"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = A[vi, vj] + 2


@pytest.mark.parametrize(
    "func, pick, message",
    [
        (sized, lambda s: s.get_loops("copy")[0],
         r"the min and extent of loop 'i' must be constants \(dynamic shape detected\)"),
        (kinds, lambda s: s.get_loops("noted")[1], "loop 'j' has annotations or a thread binding"),
        (kinds, lambda s: s.get_loops("bound")[1], "loop 'j' has annotations or a thread binding"),
        (two_bodies, lambda s: s.get_loops("first")[0],
         "no block below loop 'i' through its nested loops names the partitions"),
    ],
    ids=["symbolic", "annotated", "thread", "two_bodies"],
)
def test_loops_that_do_not_partition(func, pick, message):
    sch = T.Schedule(func)
    with pytest.raises(T.ScheduleError, match=message):
        sch.loop_partition(pick(sch), [2, None])


def test_a_parallel_loop_partitions_into_serial_parts():
    # only annotations and thread bindings refuse; the parts are built as serial loops
    sch = T.Schedule(kinds, debug_mask="all")
    parts = sch.loop_partition(sch.get_loops("noted")[0], [2, None])
    assert [sch.get(lp).kind for lp in parts] == [ForKind.SERIAL] * 2
    assert_same_results(kinds, sch)


@T.prim_func
def tail_scale(X: T.Buffer((9,), "int32"), Y: T.Buffer((9,), "int32")):
    for r in T.serial(2, 9):
        with T.block("tail"):
            vr = T.axis.spatial(9, r)
            Y[vr] = X[vr] * 3 + vr


def test_a_loop_starting_above_zero_is_cut_from_its_start():
    # 2..8 cut as [None, 2]: 2..6 and 7..8 (the parts ended at 5 and 7, dropping row 8)
    sch = T.Schedule(tail_scale, debug_mask="all")
    loops = sch.loop_partition(sch.get_loops("tail")[0], [None, 2])
    spans = [(int(sch.get(lp).min.value), int(sch.get(lp).extent.value)) for lp in loops]
    assert spans == [(2, 5), (7, 2)]
    sch2 = T.Schedule(tail_scale, debug_mask="all")
    loops2 = sch2.loop_partition(sch2.get_loops("tail")[0], [3])
    assert [(int(sch2.get(lp).min.value), int(sch2.get(lp).extent.value)) for lp in loops2] == [
        (2, 3), (5, 4)
    ]
    for s in (sch, sch2):
        assert_same_results(tail_scale, s)
        assert_native_same(tail_scale, s)
    _replays(tail_scale, sch)


@T.prim_func
def via_view(X: T.Buffer((6, 4), "float32"), Y: T.Buffer((6, 4), "float32")):
    for r, c in T.grid(6, 4):
        with T.block("pick"):
            vr, vc = T.axis.remap("SS", [r, c])
            cell = T.match_buffer(X[vr, vc], (), offset_factor=1)
            Y[vr, vc] = cell[()] * T.float32(2)


def test_each_part_declares_views_of_its_own():
    # the parts shared one view buffer (and its offset var), so the printed function parsed
    # back to a different one
    sch = T.Schedule(via_view, debug_mask="all")
    sch.loop_partition(sch.get_loops("pick")[0], [4])
    views = [sch.get(sch.get_block(f"pick_r{k}")).match_buffers[0].buffer for k in (0, 1)]
    assert views[0] is not views[1]
    assert views[0].data is not views[1].data
    assert views[0].elem_offset is not views[1].elem_offset
    assert_same_results(via_view, sch)
    assert_native_same(via_view, sch)
    assert_structural_equal(from_source(func_of(sch).script()), func_of(sch))


@T.prim_func
def double_all(X: T.Buffer((8,), "float32"), Y: T.Buffer((8,), "float32")):
    for r in range(8):
        with T.block("dbl"):
            vr = T.axis.spatial(8, r)
            Y[vr] = X[vr] * T.float32(2)


def test_the_root_block_stays_above_a_partitioned_outermost_loop():
    # the function's body became the "_common" block, which a later schedule of the result
    # took for its root (get_block("root") failed, get_consumers of it raised ValueError)
    sch = T.Schedule(double_all, debug_mask="all")
    sch.loop_partition(sch.get_loops("dbl")[0], [5])
    func = func_of(sch)
    assert func.body.block.name_hint == "root"
    assert func.body.block.body.block.name_hint == "dbl_r_common"
    again = T.Schedule(func, debug_mask="all")
    assert again.get(again.get_block("root")).name_hint == "root"
    assert again.get_consumers("dbl_r_common") == []
    with pytest.raises(T.ScheduleError, match="block 'root' is the function's root block, which "
                       "has no producers or consumers"):
        again.get_consumers("root")
    assert_structural_equal(from_source(func.script()), func)
    assert_same_results(double_all, sch)


@T.prim_func
def staged_rows(X: T.Buffer((6, 4), "float32"), Y: T.Buffer((6, 4), "float32")):
    for r in range(6):
        with T.block("row"):
            vr = T.axis.spatial(6, r)
            buf = T.alloc_buffer((4,))
            for c in range(4):
                with T.block("load"):
                    vc = T.axis.spatial(4, c)
                    buf[vc] = X[vr, vc] * T.float32(2)
            for c in range(4):
                with T.block("store"):
                    vc = T.axis.spatial(4, c)
                    Y[vr, vc] = buf[3 - vc] + T.float32(1)


def test_each_part_allocates_its_block_local_buffers():
    # the parts' copies of "row" shared one allocation, which printed and parsed back as two
    sch = T.Schedule(staged_rows, debug_mask="all")
    sch.loop_partition(sch.get_loops("row")[0], [2])
    allocs = [sch.get(sch.get_block(f"row_r{k}")).alloc_buffers[0] for k in (0, 1)]
    assert allocs[0] is not allocs[1] and allocs[0].data is not allocs[1].data
    assert_same_results(staged_rows, sch)
    assert_native_same(staged_rows, sch)
    assert_structural_equal(from_source(func_of(sch).script()), func_of(sch))


@T.prim_func
def views_and_scratch(A: T.Buffer((8, 10), "float32"), B: T.Buffer((8, 10), "float32")):
    for i, j in T.grid(8, 10):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            src = T.match_buffer(A[vi, vj], (1,), offset_factor=1)
            tmp = T.alloc_buffer((1,), "float32")
            tmp[0] = src[0] * T.float32(3)
            B[vi, vj] = tmp[0] + T.float32(1)


def test_each_part_declares_its_own_views_and_scratch():
    """The body's match_buffer view and alloc_buffer are declared once per part, each part
    with its own objects (one buffer defined twice did not print and parse back to the
    same function)."""
    from irbuilder.ir import Block, assert_structural_equal
    from irbuilder.ir.functor import post_order_visit
    from tvmscript import from_source

    sch = T.Schedule(views_and_scratch)
    sch.loop_partition(sch.get_loops("C")[1], [None, 3])
    func = func_of(sch)
    blocks: list[Block] = []
    post_order_visit(func.body, lambda n: blocks.append(n) if isinstance(n, Block) else None)
    parts = [b for b in blocks if b.match_buffers]
    assert len(parts) == 2
    views = {id(b.match_buffers[0].buffer) for b in parts}
    scratch = {id(b.alloc_buffers[0]) for b in parts}
    data = {id(b.match_buffers[0].buffer.data) for b in parts}
    offsets = {id(b.match_buffers[0].buffer.elem_offset) for b in parts}
    assert len(views) == len(scratch) == len(data) == len(offsets) == 2
    assert_structural_equal(from_source(func.script()), func)
    assert_same_results(views_and_scratch, sch)
    assert_native_same(views_and_scratch, sch)


@T.prim_func
def offset_rows(A: T.Buffer((12, 6), "float32"), B: T.Buffer((12, 6), "float32")):
    for i in T.serial(4, 12):
        for j in range(6):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] + T.float32(1)


@pytest.mark.parametrize("factors", [[None, 3], [2, None], [3], [1, 2, None]])
def test_a_loop_not_starting_at_zero_partitions_from_its_start(factors):
    """The parts of ``T.serial(4, 12)`` cover 4..12 (they covered 0..8: rows 0-3 written,
    8-11 left alone); a part of an earlier partition partitions the same way."""
    sch = T.Schedule(offset_rows)
    parts = sch.loop_partition(sch.get_loops("B")[0], factors)
    starts = [int(sch.get(p).min) for p in parts]
    ends = [int(sch.get(p).min) + int(sch.get(p).extent) for p in parts]
    assert starts[0] == 4 and ends[-1] == 12 and starts[1:] == ends[:-1]
    assert_same_results(offset_rows, sch)
    again = T.Schedule(offset_rows)
    again.loop_partition(again.get_loops("B")[0], [None, 4])
    inner = again.get_loops("B_i1")[0]
    assert (int(again.get(inner).min), int(again.get(inner).extent)) == (8, 4)
    again.loop_partition(inner, [None, 1])
    assert_same_results(offset_rows, again)
    assert_native_same(offset_rows, again)

