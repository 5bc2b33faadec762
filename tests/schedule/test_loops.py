"""Loop primitives: split, fuse, reorder, add_unit_loop, parallel, vectorize, unroll, bind."""

from __future__ import annotations

import numpy as np
import pytest
from sched_checks import assert_same_results, assert_schedule, scheduled

import tvmscript
from tvmscript import tir as T


@T.prim_func
def elementwise(A: T.Buffer((16, 12), "float32"), C: T.Buffer((16, 12), "float32")):
    for i, j in T.grid(16, 12):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj] * 2.0


@T.prim_func
def matmul(
    A: T.Buffer((8, 8), "int32"), B: T.Buffer((8, 8), "int32"), C: T.Buffer((8, 8), "int32")
):
    for i, j, k in T.grid(8, 8, 8):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = 0
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vj, vk]


def _sch(func):  # every test checks well-formedness and results after each step
    return T.Schedule(func, debug_mask="all")


def test_split_divisible():
    @T.prim_func
    def expected(A: T.Buffer((16, 12), "float32"), C: T.Buffer((16, 12), "float32")):
        for i_0, i_1, j in T.grid(4, 4, 12):
            with T.block("C"):
                vi = T.axis.spatial(16, i_0 * 4 + i_1)
                vj = T.axis.spatial(12, j)
                C[vi, vj] = A[vi, vj] * 2.0

    sch = _sch(elementwise)
    i, _ = sch.get_loops(sch.get_block("C"))
    outer, inner = sch.split(i, [None, 4])
    assert sch.get(outer).extent.value == 4 and sch.get(inner).extent.value == 4
    assert_schedule(elementwise, sch, expected)


def test_split_not_divisible_adds_predicate():
    @T.prim_func
    def expected(A: T.Buffer((16, 12), "float32"), C: T.Buffer((16, 12), "float32")):
        for i, j_0, j_1 in T.grid(16, 3, 5):
            with T.block("C"):
                vi = T.axis.spatial(16, i)
                vj = T.axis.spatial(12, j_0 * 5 + j_1)
                T.where(j_0 * 5 + j_1 < 12)
                C[vi, vj] = A[vi, vj] * 2.0

    sch = _sch(elementwise)
    _, j = sch.get_loops(sch.get_block("C"))
    sch.split(j, [None, 5])
    assert_schedule(elementwise, sch, expected)


def test_split_three_ways_and_unit_iters():
    @T.prim_func
    def expected(A: T.Buffer((16, 12), "float32"), C: T.Buffer((16, 12), "float32")):
        for i_0, i_1, i_2, j in T.grid(2, 1, 8, 12):  # noqa: B007  (TVMScript loop)
            with T.block("C"):
                vi = T.axis.spatial(16, i_0 * 8 + i_2)
                vj = T.axis.spatial(12, j)
                C[vi, vj] = A[vi, vj] * 2.0

    sch = _sch(elementwise)
    i, _ = sch.get_loops(sch.get_block("C"))
    sch.split(i, [2, 1, 8], preserve_unit_iters=False)
    assert_schedule(elementwise, sch, expected)


@pytest.mark.parametrize(
    ("factors", "message"),
    [
        ([None, None], "at most one factor may be None"),
        ([2, 4], "less than the loop's extent 16"),
        ([0, None], "factors must be positive"),
    ],
)
def test_split_refused(factors, message):
    sch = _sch(elementwise)
    i, _ = sch.get_loops(sch.get_block("C"))
    with pytest.raises(T.ScheduleError, match=message):
        sch.split(i, factors)
    assert scheduled(sch).body is not None
    assert_same_results(elementwise, sch)


def test_fuse():
    @T.prim_func
    def expected(A: T.Buffer((16, 12), "float32"), C: T.Buffer((16, 12), "float32")):
        for i_j_fused in range(192):
            with T.block("C"):
                vi = T.axis.spatial(16, i_j_fused // 12)
                vj = T.axis.spatial(12, i_j_fused % 12)
                C[vi, vj] = A[vi, vj] * 2.0

    sch = _sch(elementwise)
    fused = sch.fuse(*sch.get_loops(sch.get_block("C")))
    assert sch.get(fused).extent.value == 192
    assert_schedule(elementwise, sch, expected)


def test_split_after_fuse_stays_affine():
    @T.prim_func
    def expected(A: T.Buffer((16, 12), "float32"), C: T.Buffer((16, 12), "float32")):
        for i_j_fused_0, i_j_fused_1 in T.grid(16, 12):
            with T.block("C"):
                vi = T.axis.spatial(16, i_j_fused_0)
                vj = T.axis.spatial(12, i_j_fused_1)
                C[vi, vj] = A[vi, vj] * 2.0

    sch = _sch(elementwise)
    fused = sch.fuse(*sch.get_loops(sch.get_block("C")))
    sch.split(fused, [None, 12])
    assert_schedule(elementwise, sch, expected)


def test_fuse_refuses_non_adjacent_loops():
    sch = _sch(matmul)
    i, _, k = sch.get_loops(sch.get_block("C"))
    with pytest.raises(T.ScheduleError, match="only perfectly nested consecutive loops fuse"):
        sch.fuse(i, k)


def test_reorder():
    @T.prim_func
    def expected(
        A: T.Buffer((8, 8), "int32"), B: T.Buffer((8, 8), "int32"), C: T.Buffer((8, 8), "int32")
    ):
        for k, j, i in T.grid(8, 8, 8):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = 0
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vj, vk]

    sch = _sch(matmul)
    i, _, k = sch.get_loops(sch.get_block("C"))
    sch.reorder(k, i)  # the listed loops trade places; j stays where it was
    assert [sch.get(lp).loop_var.name for lp in sch.get_loops(sch.get_block("C"))] == [
        "k",
        "j",
        "i",
    ]
    assert_schedule(matmul, sch, expected)


def test_reorder_refuses_dependent_blocks():
    @T.prim_func
    def shifted(A: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
        B = T.alloc_buffer((8, 8))
        for i, j in T.grid(8, 8):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] + 1.0
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vi, vj] * 2.0

    sch = _sch(shifted)
    i, j = sch.get_loops(sch.get_block("C"))
    with pytest.raises(T.ScheduleError, match="both access buffer 'B'"):
        sch.reorder(j, i)


def test_reorder_refuses_loops_not_in_a_chain():
    @T.prim_func
    def two(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
        for i in range(8):
            with T.block("A"):
                vi = T.axis.spatial(8, i)
                A[vi] = 1.0
        for i in range(8):
            with T.block("C"):
                vi = T.axis.spatial(8, i)
                C[vi] = 2.0

    sch = _sch(two)
    (a,) = sch.get_loops(sch.get_block("A"))
    (c,) = sch.get_loops(sch.get_block("C"))
    with pytest.raises(T.ScheduleError, match="not nested in one another"):
        sch.reorder(c, a)


def test_add_unit_loop():
    @T.prim_func
    def expected(A: T.Buffer((16, 12), "float32"), C: T.Buffer((16, 12), "float32")):
        for i, j in T.grid(16, 12):
            for u in range(1):  # noqa: B007
                with T.block("C"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    C[vi, vj] = A[vi, vj] * 2.0

    sch = _sch(elementwise)
    loop = sch.add_unit_loop(sch.get_block("C"))
    assert sch.get(loop).extent.value == 1
    assert_schedule(elementwise, sch, expected)


def test_parallel_vectorize_unroll_build_and_run():
    @T.prim_func
    def expected(A: T.Buffer((16, 12), "float32"), C: T.Buffer((16, 12), "float32")):
        for i_0 in T.parallel(4):
            for i_1 in T.unroll(4):
                for j in T.vectorized(12):
                    with T.block("C"):
                        vi = T.axis.spatial(16, i_0 * 4 + i_1)
                        vj = T.axis.spatial(12, j)
                        C[vi, vj] = A[vi, vj] * 2.0

    sch = _sch(elementwise)
    i, j = sch.get_loops(sch.get_block("C"))
    outer, inner = sch.split(i, [4, 4])
    sch.parallel(outer)
    sch.unroll(inner)
    sch.vectorize(j)
    assert_schedule(elementwise, sch, expected)
    kernel = tvmscript.build(scheduled(sch))
    a = np.random.default_rng(0).standard_normal((16, 12)).astype("float32")
    c = np.zeros_like(a)
    kernel(a, c)
    np.testing.assert_array_equal(c, a * 2)


def test_parallel_refuses_reduction_loop():
    sch = _sch(matmul)
    _, _, k = sch.get_loops(sch.get_block("C"))
    with pytest.raises(T.ScheduleError, match="reduction iter var 'vk'"):
        sch.parallel(k)


def test_parallel_refuses_same_element_writes():
    @T.prim_func
    def collapse(A: T.Buffer((8,), "float32"), C: T.Buffer((1,), "float32")):
        for i in range(8):
            with T.block("C"):
                vi = T.axis.spatial(8, i)
                C[0] = A[vi]

    sch = _sch(collapse)
    (i,) = sch.get_loops(sch.get_block("C"))
    with pytest.raises(T.ScheduleError, match="same element for every value"):
        sch.parallel(i)


def test_parallel_refuses_non_injective_index():
    @T.prim_func
    def halves(A: T.Buffer((8,), "float32"), C: T.Buffer((4,), "float32")):
        for i in range(8):
            with T.block("C"):
                vi = T.axis.spatial(8, i)
                C[vi // 2] = A[vi]

    sch = _sch(halves)
    (i,) = sch.get_loops(sch.get_block("C"))
    with pytest.raises(T.ScheduleError, match="not one loop-bound iter var"):
        sch.vectorize(i)


@T.prim_func
def pack_columns(A: T.Buffer((8, 16), "float32"), C: T.Buffer((2, 8, 8), "float32")):
    for p, k, lane in T.grid(2, 8, 8):
        with T.block("pack"):
            v0, v1, v2 = T.axis.remap("SSS", [p, k, lane])
            C[(v0 * 8 + v2) // 8, v1, (v0 * 8 + v2) % 8] = A[v1, v0 * 8 + v2]


def test_parallel_and_vectorize_over_a_packed_layout():
    # transform_block_layout leaves (v0 * 8 + v2) // 8 unsimplified (as TVM does); under
    # v2 < 8 it is v0, so distinct iterations write distinct panels and lanes. The race
    # check of the build reads the lowered index the same way.
    sch = _sch(pack_columns)
    p, _, lane = sch.get_loops(sch.get_block("pack"))
    sch.parallel(p)
    sch.vectorize(lane)
    assert_same_results(pack_columns, sch)
    a = np.random.default_rng(0).standard_normal((8, 16)).astype("float32")
    c = np.zeros((2, 8, 8), "float32")
    tvmscript.build(scheduled(sch))(a, c)
    np.testing.assert_array_equal(c, a.reshape(8, 2, 8).transpose(1, 0, 2))


def test_parallel_over_fused_tiles_with_a_write_cache():
    # fuse(i_0, j_0) binds each tile through (p // 2, p % 2): two iterations differ in a
    # digit, and each digit picks its own dimension of the local tile buffer.
    sch = _sch(matmul)
    block = sch.get_block("C")
    i, j, k = sch.get_loops(block)
    i_0, i_1 = sch.split(i, [None, 4])
    j_0, j_1 = sch.split(j, [None, 4])
    sch.reorder(i_0, j_0, k, i_1, j_1)
    local = sch.cache_write(block, 0, "local")
    sch.reverse_compute_at(local, j_0)
    fused = sch.fuse(i_0, j_0)
    sch.parallel(fused)
    assert_same_results(matmul, sch)
    a = np.arange(64, dtype="int32").reshape(8, 8) % 7
    b = np.arange(64, dtype="int32").reshape(8, 8) % 5
    c = np.zeros((8, 8), "int32")
    # The build's race check reads the digits too (lowering/checks/race_digits.py): the
    # loop builds with the check on.
    tvmscript.build(scheduled(sch))(a, b, c)
    np.testing.assert_array_equal(c, a @ b.T)


def test_bind_is_ir_only():
    @T.prim_func
    def expected(A: T.Buffer((16, 12), "float32"), C: T.Buffer((16, 12), "float32")):
        for i in T.thread_binding(16, thread="blockIdx.x"):
            for j in T.thread_binding(12, thread="threadIdx.x"):
                with T.block("C"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    C[vi, vj] = A[vi, vj] * 2.0

    sch = _sch(elementwise)
    i, j = sch.get_loops(sch.get_block("C"))
    sch.bind(i, "blockIdx.x")
    sch.bind(j, "threadIdx.x")
    assert_schedule(elementwise, sch, expected)
    with pytest.raises(Exception, match="bound to a GPU thread"):
        tvmscript.build(scheduled(sch))
    # a bound loop no longer splits (TVM refuses it); bind a fresh loop to a bad axis
    with pytest.raises(T.ScheduleError, match="annotations or a thread binding"):
        sch.split(i, [None, 2])
    fresh = _sch(elementwise)
    with pytest.raises(T.ScheduleError, match="unknown thread axis"):
        fresh.bind(fresh.get_loops(fresh.get_block("C"))[0], "warp.x")


def test_annotate_and_unannotate():
    sch = _sch(elementwise)
    block = sch.get_block("C")
    i, _ = sch.get_loops(block)
    sch.annotate(block, "meta", "x")
    sch.annotate(i, "pragma_unroll", 4)
    assert sch.get(block).annotations["meta"] == "x"
    assert sch.get(i).annotations["pragma_unroll"] == 4
    sch.unannotate(block, "meta")
    assert "meta" not in sch.get(block).annotations
    with pytest.raises(T.ScheduleError, match="no annotation 'meta'"):
        sch.unannotate(block, "meta")
    assert_same_results(elementwise, sch)


def test_removed_loop_handle_is_reported():
    sch = _sch(elementwise)
    i, _ = sch.get_loops(sch.get_block("C"))
    sch.split(i, [None, 4])
    with pytest.raises(T.ScheduleError, match="no longer exists"):
        sch.split(i, [None, 2])


@T.prim_func
def tiles(A: T.Buffer((16, 8), "int32"), C: T.Buffer((16, 8), "int32")):
    B = T.alloc_buffer((16, 8), "int32")
    for i_0 in range(4):
        for i_1, j in T.grid(4, 8):
            with T.block("B"):
                vi = T.axis.spatial(16, i_0 * 4 + i_1)
                vj = T.axis.spatial(8, j)
                B[vi, vj] = A[vi, vj] * 2
        for i_1, j in T.grid(4, 8):
            with T.block("C"):
                vi = T.axis.spatial(16, i_0 * 4 + i_1)
                vj = T.axis.spatial(8, j)
                C[vi, vj] = B[vi, 7 - vj] + 1


def test_parallel_over_blocks_touching_separate_tiles():
    sch = _sch(tiles)
    (outer,) = sch.get_loops(sch.get_block("B"))[:1]
    sch.parallel(outer)
    assert sch.get(outer).kind.value == "parallel"
    assert_same_results(tiles, sch)


def test_parallel_refuses_blocks_reading_another_iterations_tile():
    @T.prim_func
    def neighbour(A: T.Buffer((16, 8), "int32"), C: T.Buffer((16, 8), "int32")):
        B = T.alloc_buffer((16, 8), "int32")
        for i_0 in range(4):
            for i_1, j in T.grid(4, 8):
                with T.block("B"):
                    vi = T.axis.spatial(16, i_0 * 4 + i_1)
                    vj = T.axis.spatial(8, j)
                    B[vi, vj] = A[vi, vj] * 2
            for i_1, j in T.grid(4, 8):
                with T.block("C"):
                    vi = T.axis.spatial(16, i_0 * 4 + i_1)
                    vj = T.axis.spatial(8, j)
                    C[vi, vj] = B[T.min(vi + 1, 15), vj]

    sch = _sch(neighbour)
    (outer,) = sch.get_loops(sch.get_block("C"))[:1]
    with pytest.raises(T.ScheduleError, match="both access buffer 'B'"):
        sch.parallel(outer)


@T.prim_func
def store_outside_blocks(A: T.Buffer((12, 8), "int32"), C: T.Buffer((4, 4), "int32")):
    B = T.alloc_buffer((4, 4), "int32")
    for i, j in T.grid(4, 4):
        B[i, j] = 0
        for k in range(8):
            with T.block("acc"):
                B[i, j] = B[i, j] + A[i * 2 + j, k]
    for i, j in T.grid(4, 4):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj]


def test_a_split_that_does_not_divide_refuses_a_store_outside_blocks():
    """The predicate of a non-dividing split guards blocks: the bare ``B[i, j] = 0`` would
    run for j = 4 and 5 and store past B (it did); a dividing split needs no predicate."""
    sch = T.Schedule(store_outside_blocks)
    with pytest.raises(T.ScheduleError, match=r"outside any block \(a store to 'B'\)"):
        sch.split(sch.get_loops("acc")[1], [None, 3])
    sch.split(sch.get_loops("acc")[1], [None, 2])
    assert_same_results(store_outside_blocks, sch)
