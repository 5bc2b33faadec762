"""Schedules in the forms MetaSchedule's traces take (TVM's tests/python/meta_schedule):
unit tiles from ``split(preserve_unit_iters=True)`` before ``cache_write``, inlining a
constant stage, ``IndexMap.from_func(..., inverse_index_map=...)``."""

from __future__ import annotations

import pytest
from sched_checks import assert_same_results, scheduled

from tvmscript import tir as T


@T.prim_func
def dense(
    A: T.Buffer((16, 8), "float32"),
    B: T.Buffer((12, 8), "float32"),
    C: T.Buffer((16, 12), "float32"),
):
    for i, j, k in T.grid(16, 12, 8):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vj, vk]


@T.prim_func
def dense_plus_const(
    A: T.Buffer((16, 8), "float32"),
    B: T.Buffer((12, 8), "float32"),
    D: T.Buffer((16, 12), "float32"),
):
    C = T.alloc_buffer((16, 12))
    c = T.alloc_buffer(())
    for i, j, k in T.grid(16, 12, 8):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vj, vk]
    with T.block("const"):
        vi = T.axis.spatial(1, 0)
        c[()] = T.float32(1.5)
    for i, j in T.grid(16, 12):
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = C[vi, vj] + c[()]


def _tile(sch: T.Schedule, block: T.BlockRV) -> T.LoopRV:
    """Multi-level tiling as MetaSchedule's CPU rule writes it: unit tiles kept."""
    i, j, k = sch.get_loops(block)
    i0, i1, i2, i3 = sch.split(i, [2, 1, 4, 2], preserve_unit_iters=True)
    j0, j1, j2, j3 = sch.split(j, [3, 1, 1, 4], preserve_unit_iters=True)
    k0, k1 = sch.split(k, [8, 1], preserve_unit_iters=True)
    sch.reorder(i0, j0, i1, j1, k0, i2, j2, k1, i3, j3)
    return j0


def test_cache_write_of_a_block_tiled_with_unit_loops() -> None:
    # j = j_0 * 4 + j_1 * 4 + j_2 * 4 + j_3: the unit loops j_1, j_2 step nothing, and the
    # block still writes every element of the tile it spans (refused before)
    sch = T.Schedule(dense, debug_mask="all")
    block = sch.get_block("C")
    j0 = _tile(sch, block)
    cached = sch.cache_write(block, 0, "global")
    sch.reverse_compute_at(cached, j0, preserve_unit_loops=True)
    assert_same_results(dense, sch)
    text = scheduled(sch).script()
    assert 'C_global = T.alloc_buffer((16, 12), "float32")' in text
    assert "for ax0, ax1 in T.grid(8, 4):" in text


def test_cache_write_still_refuses_a_block_whose_tiles_overlap() -> None:
    @T.prim_func
    def overlapping(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
        for i0, i1 in T.grid(4, 3):
            with T.block("C"):
                vi = T.axis.spatial(8, i0 + i1)  # steps 1 and 1: tiles overlap
                T.where(i0 + i1 < 8)
                C[vi] = A[vi]

    sch = T.Schedule(overlapping, debug_mask="all")
    with pytest.raises(T.ScheduleError, match="must write every element"):
        sch.cache_write(sch.get_block("C"), 0, "global")


def test_compute_inline_of_a_constant_stage() -> None:
    # TVM's compile_engine_const: an iter var of extent 1 that the 0-d store never names
    sch = T.Schedule(dense_plus_const, debug_mask="all")
    sch.compute_inline(sch.get_block("const"))
    assert_same_results(dense_plus_const, sch)
    text = scheduled(sch).script()
    assert "C[vi, vj] + T.float32(1.5)" in text
    assert "c = " not in text


def test_compute_inline_refuses_a_value_reading_an_unindexed_iter_var() -> None:
    @T.prim_func
    def row_pick(A: T.Buffer((4, 4), "float32"), C: T.Buffer((4,), "float32")):
        B = T.alloc_buffer((4,))
        for i, j in T.grid(4, 4):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi] = A[vi, vj]  # the last vj wins: not a function of vi alone
        for i in range(4):
            with T.block("C"):
                vi = T.axis.spatial(4, i)
                C[vi] = B[vi]

    sch = T.Schedule(row_pick)
    with pytest.raises(T.ScheduleError, match="reading an iter var no index names"):
        sch.compute_inline(sch.get_block("B"))


def test_index_map_from_func_takes_an_inverse() -> None:
    mapping = T.IndexMap.from_func(
        lambda i, j: (i // 4, j, i % 4), inverse_index_map=lambda a, b, c: (a * 4 + c, b)
    )
    assert mapping.inverse_index_map is not None
    assert len(mapping.inverse_index_map.final_indices) == 2
    sch = T.Schedule(dense, debug_mask="all")
    block = sch.get_block("C")
    sch.cache_read(block, 1, "global")
    sch.transform_layout(block, ("read", 1), mapping)
    assert_same_results(dense, sch)
    assert "B_global[vj // 4, vk, vj % 4]" in scheduled(sch).script()
    # the index dtype stays a keyword (TVM's signature)
    wide = T.IndexMap.from_func(lambda i: (i,), index_dtype="int64")
    assert wide.initial_indices[0].dtype == "int64"


@T.prim_func
def tiled_with_write_back(A: T.Buffer((8, 8, 4), "float32"), C: T.Buffer((8, 8, 4), "float32")):
    Cg = T.alloc_buffer((8, 8, 4))
    for a0, b0, c0 in T.grid(2, 4, 2):
        for a1, b1, c1 in T.grid(4, 2, 2):
            with T.block("C"):
                va = T.axis.spatial(8, a0 * 4 + a1)
                vb = T.axis.spatial(8, b0 * 2 + b1)
                vc = T.axis.spatial(4, c0 * 2 + c1)
                Cg[va, vb, vc] = A[va, vb, vc] * 2.0
        for a1, b1, c1 in T.grid(4, 2, 2):
            with T.block("Cg"):
                va = T.axis.spatial(8, a0 * 4 + a1)
                vb = T.axis.spatial(8, b0 * 2 + b1)
                vc = T.axis.spatial(4, c0 * 2 + c1)
                C[va, vb, vc] = Cg[va, vb, vc]


def test_parallel_of_three_fused_tile_loops_over_a_write_back() -> None:
    # MetaSchedule's RewriteParallelVectorizeUnroll fuses the outer tile loops of a nest
    # holding a block and its write-back: the fused index's digits p // 4, p % 4 // 2, p % 2
    # each pick a tile on a dimension of its own (two loops were proven, three refused)
    sch = T.Schedule(tiled_with_write_back, debug_mask="all")
    fused = sch.fuse(*sch.get_loops(sch.get_block("C"))[:3])
    sch.parallel(fused)
    assert_same_results(tiled_with_write_back, sch)
    assert "for a0_b0_c0_fused in T.parallel(16):" in scheduled(sch).script()


def test_parallel_still_refuses_fused_loops_sharing_a_tile() -> None:
    @T.prim_func
    def shared_tile(A: T.Buffer((8, 4), "float32"), C: T.Buffer((8, 4), "float32")):
        Cg = T.alloc_buffer((8, 4))
        for a0, b0 in T.grid(2, 2):
            for a1, c in T.grid(4, 4):
                with T.block("C"):
                    va = T.axis.spatial(8, a0 * 4 + a1)
                    vc = T.axis.spatial(4, c)
                    Cg[va, vc] = A[va, vc] * 2.0
            for a1, c in T.grid(4, 4):
                with T.block("Cg"):
                    va = T.axis.spatial(8, a0 * 4 + a1)
                    vc = T.axis.spatial(4, c)
                    C[va, vc] = Cg[va, vc] + T.float32(b0)

    # b0 picks no tile: iterations b0 = 0 and 1 write and read the same Cg elements
    sch = T.Schedule(shared_tile, debug_mask="all")
    fused = sch.fuse(*sch.get_loops(sch.get_block("C"))[:2])
    with pytest.raises(T.ScheduleError, match="cannot be proven preserved"):
        sch.parallel(fused)


@T.prim_func
def layout_rewrite(B: T.Buffer((128, 16), "float32"), B_packed: T.Buffer((2, 16, 64), "float32")):
    for ax0, ax1 in T.grid(128, 16):
        with T.block("layout_rewrite"):
            v0, v1 = T.axis.remap("SS", [ax0, ax1])
            T.block_attr({"meta_schedule.layout_rewrite_preproc": 1})
            B_packed[v0 // 64, v1, v0 % 64] = B[v0, v1]


def test_parallel_of_a_layout_rewrite_block() -> None:
    # the written element [v0 // 64, v1, v0 % 64] is an injective map of (v0, v1)
    sch = T.Schedule(layout_rewrite, debug_mask="all")
    ax0, ax1 = sch.get_loops(sch.get_block("layout_rewrite"))
    sch.parallel(sch.fuse(ax0, ax1))
    assert_same_results(layout_rewrite, sch)


def test_parallel_still_refuses_a_block_writing_one_element_twice() -> None:
    @T.prim_func
    def folded(B: T.Buffer((128,), "float32"), C: T.Buffer((64,), "float32")):
        for ax0 in range(128):
            with T.block("fold"):
                v0 = T.axis.spatial(128, ax0)
                C[v0 % 64] = B[v0]  # v0 and v0 + 64 write one element

    sch = T.Schedule(folded)
    with pytest.raises(T.ScheduleError, match="not one loop-bound iter var"):
        sch.parallel(sch.get_loops(sch.get_block("fold"))[0])


def test_parallel_of_fused_tile_loops_sharing_a_dimension() -> None:
    # two tile digits on one dimension (c0 * 8 + c1 * 4 + c2: MetaSchedule's co_0, co_1)
    @T.prim_func
    def two_levels(A: T.Buffer((8, 16), "float32"), C: T.Buffer((8, 16), "float32")):
        Cg = T.alloc_buffer((8, 16))
        for a0, c0, c1 in T.grid(2, 2, 2):
            for a1, c2 in T.grid(4, 4):
                with T.block("C"):
                    va = T.axis.spatial(8, a0 * 4 + a1)
                    vc = T.axis.spatial(16, c0 * 8 + c1 * 4 + c2)
                    Cg[va, vc] = A[va, vc] + 1.0
            for a1, c2 in T.grid(4, 4):
                with T.block("Cg"):
                    va = T.axis.spatial(8, a0 * 4 + a1)
                    vc = T.axis.spatial(16, c0 * 8 + c1 * 4 + c2)
                    C[va, vc] = Cg[va, vc]

    sch = T.Schedule(two_levels, debug_mask="all")
    sch.parallel(sch.fuse(*sch.get_loops(sch.get_block("C"))[:3]))
    assert_same_results(two_levels, sch)



@T.prim_func
def dot_blocks(
    A: T.Buffer((8, 16), "int8"), B: T.Buffer((4, 16), "int8"), C: T.Buffer((8, 4), "int32")
):
    for i, j, k in T.grid(8, 4, 16):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = 0
            C[vi, vj] = C[vi, vj] + T.Cast("int32", A[vi, vk]) * T.Cast("int32", B[vj, vk])


def test_cache_write_of_a_blockized_reduction() -> None:
    # MetaSchedule's MultiLevelTilingWithIntrin: the reduction's inner loops blockized (the
    # outer block's init holds a block starting the tile, its body the updating block),
    # then a write cache at a tile (two nested writers; refused before)
    sch = T.Schedule(dot_blocks, debug_mask="all")
    block = sch.get_block("C")
    i, j, k = sch.get_loops(block)
    k0, k1 = sch.split(k, [None, 4])
    sch.reorder(k0, j, k1)
    outer = sch.blockize(j)
    cached = sch.cache_write(outer, 0, "global")
    sch.reverse_compute_at(cached, i, preserve_unit_loops=True)
    assert_same_results(dot_blocks, sch)
    text = scheduled(sch).script()
    assert "C_global[" in text and 'with T.block("C_global")' in text


@T.prim_func
def sum_of_squares(A: T.Buffer((1, 16, 16), "float32"), C: T.Buffer((1,), "float32")):
    for b, i, j in T.grid(1, 16, 16):
        with T.block("C"):
            vb, vi, vj = T.axis.remap("SRR", [b, i, j])
            with T.init():
                C[vb] = T.float32(0)
            C[vb] = C[vb] + A[vb, vi, vj] * A[vb, vi, vj]


def test_rfactor_of_fused_reduction_loops_keeps_the_rf_block_affine() -> None:
    # MetaSchedule's AddRFactor: fuse the reduction loops, split, rfactor the inner part.
    # After the split vi reads only the outer part (f_0 // 8); kept as an iter var with that
    # binding beside the new one of f_0, the rf block was not affine and
    # decompose_reduction (MetaSchedule's RewriteReductionBlock) refused it
    sch = T.Schedule(sum_of_squares, debug_mask="all")
    _, i, j = sch.get_loops(sch.get_block("C"))
    _, f1 = sch.split(sch.fuse(i, j), [128, 2])
    rf = sch.rfactor(f1, factor_axis=1)
    sch.decompose_reduction(rf, sch.get_loops(rf)[1])
    sch.parallel(sch.get_loops(rf)[0])
    assert_same_results(sum_of_squares, sch)
    text = scheduled(sch).script()
    assert "v_i = " not in text and "vi = " not in text


def test_cache_write_of_a_block_under_fused_tile_loops() -> None:
    # MetaSchedule's GPU tiling fuses the outer tiles before its write cache: the element
    # is i = f // 3 * 8 + ..., j = f % 3 * 4 + ..., digits of the fused loop (refused before)
    sch = T.Schedule(dense, debug_mask="all")
    block = sch.get_block("C")
    i, j, k = sch.get_loops(block)
    i0, i1 = sch.split(i, [2, 8])
    j0, j1 = sch.split(j, [3, 4])
    sch.reorder(i0, j0, k, i1, j1)
    fused = sch.fuse(i0, j0)
    cached = sch.cache_write(block, 0, "local")
    sch.reverse_compute_at(cached, fused, preserve_unit_loops=True)
    assert_same_results(dense, sch)
    assert "for ax0, ax1 in T.grid(8, 4):" in scheduled(sch).script()


@T.prim_func
def copy_6x10(A: T.Buffer((6, 10), "float32"), B: T.Buffer((6, 10), "float32")):
    for i, j in T.grid(6, 10):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * 2.0


def test_vectorize_and_parallel_under_a_split_predicate() -> None:
    # MetaSchedule's cooperative fetch: a fused copy split by [None, 8, 4] runs 64 iterations
    # for 60 elements under T.where((a * 8 + b) * 4 + c < 60); over a, b, c the bindings
    # (a * 32 + b * 4 + c) // 10 and % 10 are not affine, over the fused iterator the
    # predicate bounds (TVM's DetectIterMap) they are
    sch = T.Schedule(copy_6x10, debug_mask="all")
    a, b, c = sch.split(sch.fuse(*sch.get_loops(sch.get_block("B"))), [None, 8, 4])
    sch.vectorize(c)
    sch.parallel(a)
    assert_same_results(copy_6x10, sch)
    text = scheduled(sch).script()
    assert "T.vectorized(4)" in text and "T.parallel(2)" in text and "T.where(" in text
