"""Block rewrites carry the block's T.match_buffer views: the views' source regions follow the
new iter vars, a block made from part of another (an init, an rf block) declares the views it
uses, and rfactor of a reduction into a view is refused (its rf buffer cannot tell the
instances apart)."""

from __future__ import annotations

import numpy as np
import pytest
from sched_checks import assert_same_results, assert_schedule, scheduled

import tvmscript
from irbuilder.ir import Block, PrimFunc, post_order_visit
from tvmscript import tir as T
from tvmscript.tir import ScheduleError


@T.prim_func
def views(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16), dtype="float32")
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B0 = T.match_buffer(B[vi, vj], [], offset_factor=1)
            B0[()] = A[vi, vj] * 2.0
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            B1 = T.match_buffer(B[vi, vj], [], offset_factor=1)
            C[vi, vj] = B1[()] + 1.0


@T.prim_func
def sum_into_view(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16,), "float32")):
    for i, k in T.grid(16, 16):
        with T.block("C"):
            vi, vk = T.axis.remap("SR", [i, k])
            C0 = T.match_buffer(C[vi], [], offset_factor=1)
            with T.init():
                C0[()] = 0.0
            C0[()] = C0[()] + A[vi, vk]


@T.prim_func
def sum_of_view(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16,), "float32")):
    for i, k in T.grid(16, 16):
        with T.block("C"):
            vi, vk = T.axis.remap("SR", [i, k])
            A0 = T.match_buffer(A[vi, vk], [], offset_factor=1)
            with T.init():
                C[vi] = 0.0
            C[vi] = C[vi] + A0[()]


def _sch(func: PrimFunc) -> T.Schedule:
    # "all": the schedule's own checks (well-formedness, results) run after each primitive
    return T.Schedule(func, debug_mask="all")


def _runs_on_llvm(original: PrimFunc, sch: T.Schedule) -> None:
    """The scheduled function builds for the native target and matches the original."""
    rng = np.random.default_rng(0)
    params = [original.buffer_map[p] for p in original.params]
    args = [rng.standard_normal([int(s) for s in b.shape]).astype("float32") for b in params]
    want = [a.copy() for a in args]
    tvmscript.build(original, target="interp")(*want)
    got = [a.copy() for a in args]
    tvmscript.build(scheduled(sch), target="llvm -mcpu=znver3")(*got)
    for w, g in zip(want, got):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def test_transform_block_layout_moves_the_views():
    @T.prim_func
    def expected(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
        B = T.alloc_buffer((16, 16), dtype="float32")
        for ax0, ax1 in T.grid(16, 16):
            with T.block("B"):
                v0, v1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(A[v1, v0])
                T.writes(B[v1, v0])
                B0 = T.match_buffer(B[v1, v0], [], offset_factor=1)
                B0[()] = A[v1, v0] * 2.0
        for i, j in T.grid(16, 16):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                B1 = T.match_buffer(B[vi, vj], [], offset_factor=1)
                C[vi, vj] = B1[()] + 1.0

    sch = _sch(views)
    sch.transform_block_layout("B", lambda i, j: (j, i))
    assert_schedule(views, sch, expected)
    _runs_on_llvm(views, sch)


def test_blockize_moves_the_views():
    @T.prim_func
    def expected(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
        B = T.alloc_buffer((16, 16), dtype="float32")
        for i, j in T.grid(16, 16):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B0 = T.match_buffer(B[vi, vj], [], offset_factor=1)
                B0[()] = A[vi, vj] * 2.0
        for i in range(16):
            with T.block("C_o"):
                vi_o = T.axis.spatial(16, i)
                vj_o = T.axis.spatial(1, 0)  # noqa: F841
                T.reads(B[vi_o, 0:16])
                T.writes(C[vi_o, 0:16])
                for j in range(16):
                    with T.block("C"):
                        vj_i = T.axis.spatial(16, j)
                        T.reads(B[vi_o, vj_i])
                        T.writes(C[vi_o, vj_i])
                        B1 = T.match_buffer(B[vi_o, vj_i], [], offset_factor=1)
                        C[vi_o, vj_i] = B1[()] + 1.0

    sch = _sch(views)
    sch.blockize(sch.get_loops("C")[1])
    assert_schedule(views, sch, expected)
    _runs_on_llvm(views, sch)


def test_blockize_reduction_init_declares_its_view():
    @T.prim_func
    def expected(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16,), "float32")):
        for i_0 in range(4):
            with T.block("C_o"):
                vi_o = T.axis.spatial(4, i_0)
                vk_o = T.axis.reduce(1, 0)  # noqa: F841
                T.reads(A[vi_o * 4 : vi_o * 4 + 4, 0:16])
                T.writes(C[vi_o * 4 : vi_o * 4 + 4])
                with T.init():
                    for i_1 in range(4):
                        with T.block("C_init"):
                            vi_i_init = T.axis.spatial(4, i_1)
                            T.reads()
                            T.writes(C[vi_o * 4 + vi_i_init])
                            C0 = T.match_buffer(C[vi_o * 4 + vi_i_init], [], offset_factor=1)
                            C0[()] = 0.0
                for i_1, k in T.grid(4, 16):
                    with T.block("C"):
                        vi_i, vk_i = T.axis.remap("SR", [i_1, k])
                        T.reads(C[vi_o * 4 + vi_i], A[vi_o * 4 + vi_i, vk_i])
                        T.writes(C[vi_o * 4 + vi_i])
                        C0_1 = T.match_buffer(C[vi_o * 4 + vi_i], [], offset_factor=1)
                        C0_1[()] = C0_1[()] + A[vi_o * 4 + vi_i, vk_i]

    sch = _sch(sum_into_view)
    i, _ = sch.get_loops("C")
    _, i_1 = sch.split(i, [4, 4])
    sch.blockize(i_1)
    assert_schedule(sum_into_view, sch, expected)
    _runs_on_llvm(sum_into_view, sch)


def test_decompose_reduction_init_declares_its_view():
    @T.prim_func
    def expected(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16,), "float32")):
        for i in range(16):
            with T.block("C_init"):
                vi = T.axis.spatial(16, i)
                T.reads()
                T.writes(C[vi])
                C0 = T.match_buffer(C[vi], [], offset_factor=1)
                C0[()] = 0.0
            for k in range(16):
                with T.block("C_update"):
                    vi, vk = T.axis.remap("SR", [i, k])
                    T.reads(C[vi], A[vi, vk])
                    T.writes(C[vi])
                    C0_1 = T.match_buffer(C[vi], [], offset_factor=1)
                    C0_1[()] = C0_1[()] + A[vi, vk]

    sch = _sch(sum_into_view)
    sch.decompose_reduction(sch.get_block("C"), sch.get_loops("C")[1])
    assert_schedule(sum_into_view, sch, expected)
    _runs_on_llvm(sum_into_view, sch)


def test_decompose_reduction_refuses_an_init_view_over_a_reduction_var():
    # the init reads a view depending on vk, which the init block does not have (an init
    # of that kind starts from the reduction's first element)
    @T.prim_func
    def init_view_over_k(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16,), "float32")):
        for i, k in T.grid(16, 16):
            with T.block("C"):
                vi, vk = T.axis.remap("SR", [i, k])
                A0 = T.match_buffer(A[vi, vk], [], offset_factor=1)
                with T.init():
                    C[vi] = A0[()]
                C[vi] = C[vi] + A[vi, vk]

    sch = _sch(init_view_over_k)
    with pytest.raises(ScheduleError, match="iter var 'vk', which the rewritten block"):
        sch.decompose_reduction(sch.get_block("C"), sch.get_loops("C")[1])


def test_rfactor_declares_the_read_view_in_the_rf_block():
    @T.prim_func
    def expected(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16,), "float32")):
        C_rf = T.alloc_buffer((16, 16), "float32")
        for i, k in T.grid(16, 16):
            with T.block("C_rf"):
                vk, vi = T.axis.remap("SS", [k, i])
                T.reads(A[vi, vk])
                T.writes(C_rf[vk, vi])
                A0 = T.match_buffer(A[vi, vk], [], offset_factor=1)
                C_rf[vk, vi] = A0[()]
        for i, k in T.grid(16, 16):
            with T.block("C"):
                vk, vi = T.axis.remap("RS", [k, i])
                T.reads(C_rf[vk, vi])
                T.writes(C[vi])
                with T.init():
                    C[vi] = 0.0
                C[vi] = C[vi] + C_rf[vk, vi]

    sch = _sch(sum_of_view)
    sch.rfactor(sch.get_loops("C")[1], 0)
    assert_schedule(sum_of_view, sch, expected)
    _runs_on_llvm(sum_of_view, sch)


def test_rfactor_refuses_a_reduction_into_a_view():
    sch = _sch(sum_into_view)
    before = scheduled(sch)
    with pytest.raises(ScheduleError, match="a match_buffer view of the block: the rf buffer"):
        sch.rfactor(sch.get_loops("C")[1], 0)
    assert scheduled(sch) is before


def test_rfactor_of_a_split_loop_keeps_a_view_of_the_outer_part():
    # the rf block keeps vi and gets vk_0, vk_1 for the loops: A0's source over them
    sch = _sch(sum_of_view)
    _, k = sch.get_loops("C")
    k_0, _ = sch.split(k, [4, 4])
    sch.rfactor(k_0, 0)
    assert_same_results(sum_of_view, sch)
    _runs_on_llvm(sum_of_view, sch)


def test_reverse_compute_at_of_a_consumer_reading_through_a_view():
    @T.prim_func
    def expected(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
        B = T.alloc_buffer((16, 16), dtype="float32")
        for i in range(16):
            for j in range(16):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B0 = T.match_buffer(B[vi, vj], [], offset_factor=1)
                    B0[()] = A[vi, vj] * 2.0
            for ax0 in range(16):
                with T.block("C"):
                    vi, vj = T.axis.remap("SS", [i, ax0])
                    B1 = T.match_buffer(B[vi, vj], [], offset_factor=1)
                    C[vi, vj] = B1[()] + 1.0

    sch = _sch(views)
    sch.reverse_compute_at(sch.get_block("C"), sch.get_loops("B")[0])
    assert_schedule(views, sch, expected)
    _runs_on_llvm(views, sch)


@T.prim_func
def row_view_consumer(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16), dtype="float32")
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * 2.0
    for i in range(16):
        with T.block("C"):
            vi = T.axis.spatial(16, i)
            B1 = T.match_buffer(B[vi, 0:16], [16], offset_factor=1)
            for j in range(16):
                C[vi, j] = B1[j] + 1.0


def test_reverse_compute_at_maps_a_row_view_back_to_the_iter_var():
    # C's instance vi reads row vi (its read region B[vi, 0:16], as TVM maps it): it runs in
    # the iteration of B's loop that writes that row
    sch = _sch(row_view_consumer)
    sch.reverse_compute_at(sch.get_block("C"), sch.get_loops("B")[0])
    text = scheduled(sch).script()
    assert "vi = T.axis.spatial(16, i)" in text.split('T.block("C")')[1]
    assert_same_results(row_view_consumer, sch)
    _runs_on_llvm(row_view_consumer, sch)


def test_reverse_compute_at_refuses_a_column_view_of_later_rows():
    @T.prim_func
    def column_view_consumer(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
        B = T.alloc_buffer((16, 16), dtype="float32")
        for i, j in T.grid(16, 16):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * 2.0
        for j in range(16):
            with T.block("C"):
                vj = T.axis.spatial(16, j)
                B1 = T.match_buffer(B[0:16, vj], [16, 1], strides=[16, 1], offset_factor=1)
                for i in range(16):
                    C[i, vj] = B1[i, 0] + 1.0

    sch = _sch(column_view_consumer)
    with pytest.raises(ScheduleError, match="neither by loads nor through match_buffer views"):
        sch.reverse_compute_at(sch.get_block("C"), sch.get_loops("B")[0])


def test_reindex_refuses_a_buffer_read_only_through_a_view():
    sch = _sch(views)
    before = scheduled(sch)
    with pytest.raises(
        ScheduleError, match="accesses 'B' only through match_buffer view B1, with no loads"
    ):
        sch.reindex("C", ("read", 0))
    assert scheduled(sch) is before


@T.prim_func
def store_then_view_write(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16), dtype="float32")
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B0 = T.match_buffer(B[vi, vj], [], offset_factor=1)
            B[vi, vj] = A[vi, vj] + 1.0
            B0[()] = A[vi, vj] * 2.0  # the value that stays
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + 1.0


@pytest.mark.parametrize(
    "apply",
    [
        lambda s: s.reindex("B", ("write", 0)),
        lambda s: s.reindex_cache_write("B", 0, "local", lambda i, j: (i, j)),
    ],
)
def test_reindexed_writes_refused_beside_a_view_write(apply):
    # the stores would move to the new buffer and its copy back overwrite the view's write
    sch = T.Schedule(store_then_view_write)  # debug_mask "none": no check would catch it
    with pytest.raises(ScheduleError, match="also accesses 'B' through a match_buffer view"):
        apply(sch)


def test_cache_write_moves_the_view_write_too():
    sch = _sch(store_then_view_write)
    sch.cache_write("B", 0, "local")
    assert_same_results(store_then_view_write, sch)
    _runs_on_llvm(store_then_view_write, sch)


def test_blockize_of_several_blocks_moves_the_views():
    sch = _sch(views)
    sch.blockize([sch.get_block("B"), sch.get_block("C")])
    blocks = {b.name_hint: b for b in _all_blocks(scheduled(sch))}
    for name in ("B", "C"):
        (view,) = blocks[name].match_buffers
        ivs = [iv.var for iv in blocks[name].iter_vars]
        # identity, not ==, which builds an EQ expression on PrimExprs
        assert all(r.min is v for r, v in zip(view.source.region, ivs, strict=True))
    assert_same_results(views, sch)
    _runs_on_llvm(views, sch)


def _all_blocks(func: PrimFunc) -> list[Block]:
    found: list[Block] = []
    post_order_visit(func.body, lambda n: found.append(n) if isinstance(n, Block) else None)
    return found
