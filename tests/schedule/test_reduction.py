"""decompose_reduction and rfactor."""

from __future__ import annotations

from typing import Any

import pytest
from sched_checks import assert_schedule

from irbuilder.ir import Block, post_order_visit
from tvmscript import tir as T


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


@T.prim_func
def row_max(A: T.Buffer((4, 16), "float32"), C: T.Buffer((4,), "float32")):
    for i, k in T.grid(4, 16):
        with T.block("C"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                C[vi] = T.min_value("float32")
            C[vi] = T.max(C[vi], A[vi, vk])


def _sch(func):
    return T.Schedule(func, debug_mask="all")


def test_decompose_reduction():
    @T.prim_func
    def expected(
        A: T.Buffer((8, 8), "int32"), B: T.Buffer((8, 8), "int32"), C: T.Buffer((8, 8), "int32")
    ):
        for i, j in T.grid(8, 8):
            with T.block("C_init"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = 0
            for k_0, k_1 in T.grid(2, 4):
                with T.block("C_update"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    vk = T.axis.reduce(8, k_0 * 4 + k_1)
                    C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vj, vk]

    sch = _sch(matmul)
    block = sch.get_block("C")
    _, _, k = sch.get_loops(block)
    k_0, _ = sch.split(k, [None, 4])
    init = sch.decompose_reduction(block, k_0)
    assert sch.get(init).name_hint == "C_init"
    assert sch.get(block).name_hint == "C_update"
    assert_schedule(matmul, sch, expected)


def test_decompose_reduction_replicates_spatial_loops():
    @T.prim_func
    def expected(
        A: T.Buffer((8, 8), "int32"), B: T.Buffer((8, 8), "int32"), C: T.Buffer((8, 8), "int32")
    ):
        for i in range(8):
            for j_init in range(8):
                with T.block("C_init"):
                    vi, vj = T.axis.remap("SS", [i, j_init])
                    C[vi, vj] = 0
            for j, k in T.grid(8, 8):
                with T.block("C_update"):
                    vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                    C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vj, vk]

    sch = _sch(matmul)
    block = sch.get_block("C")
    _, j, _ = sch.get_loops(block)
    sch.decompose_reduction(block, j)
    assert_schedule(matmul, sch, expected)


def test_decompose_reduction_refuses_loop_inside_reduction():
    sch = _sch(matmul)
    block = sch.get_block("C")
    _, _, k = sch.get_loops(block)
    sch.reorder(k, sch.get_loops(block)[1])
    with pytest.raises(T.ScheduleError, match="bound to a loop outside the given loop"):
        sch.decompose_reduction(block, sch.get_loops(block)[2])


@T.prim_func
def recomputed_sums(A: T.Buffer((4, 4), "int32"), B: T.Buffer((4,), "int32")):
    for rep in range(3):  # noqa: B007 - a recomputation, as compute_at under a consumer's loop makes
        for i, k in T.grid(4, 4):
            with T.block("sum"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = 0
                B[vi] = B[vi] + A[vi, vk]


def test_decompose_reduction_refuses_a_repeating_loop_inside_the_given_loop():
    # One init above `rep` would serve three passes of the reduction: the sums would triple.
    sch = _sch(recomputed_sums)
    block = sch.get_block("sum")
    rep, i, _ = sch.get_loops(block)
    with pytest.raises(T.ScheduleError, match="loop 'rep' inside the given loop repeats"):
        sch.decompose_reduction(block, rep)
    sch.decompose_reduction(block, i)  # below the repetition: each pass restarts
    assert [b.name_hint for b in _block_nodes(sch)] == ["sum_init", "sum_update"]


def _block_nodes(sch: T.Schedule) -> list[Any]:
    found: list[Any] = []

    def visit(node: object) -> None:
        if isinstance(node, Block) and node.name_hint != "root":
            found.append(node)

    post_order_visit(sch.mod["main"].body, visit)
    return found


def test_rfactor():
    @T.prim_func
    def expected(
        A: T.Buffer((8, 8), "int32"), B: T.Buffer((8, 8), "int32"), C: T.Buffer((8, 8), "int32")
    ):
        C_rf = T.alloc_buffer((4, 8, 8), "int32")
        for i, j, k_0, k_1 in T.grid(8, 8, 2, 4):
            with T.block("C_rf"):
                vk_1, vi, vj, vk_0 = T.axis.remap("SSSR", [k_1, i, j, k_0])
                with T.init():
                    C_rf[vk_1, vi, vj] = 0
                C_rf[vk_1, vi, vj] = (
                    C_rf[vk_1, vi, vj] + A[vi, vk_0 * 4 + vk_1] * B[vj, vk_0 * 4 + vk_1]
                )
        for i, j, k_1 in T.grid(8, 8, 4):
            with T.block("C"):
                vk_1, vi, vj = T.axis.remap("RSS", [k_1, i, j])
                with T.init():
                    C[vi, vj] = 0
                C[vi, vj] = C[vi, vj] + C_rf[vk_1, vi, vj]

    sch = _sch(matmul)
    _, _, k = sch.get_loops(sch.get_block("C"))
    _, k_1 = sch.split(k, [None, 4])
    rf = sch.rfactor(k_1, 0)
    assert sch.get(rf).name_hint == "C_rf"
    assert_schedule(matmul, sch, expected)


def test_rfactor_max_on_last_axis():
    @T.prim_func
    def expected(A: T.Buffer((4, 16), "float32"), C: T.Buffer((4,), "float32")):
        C_rf = T.alloc_buffer((4, 4))
        for i, k_0, k_1 in T.grid(4, 4, 4):
            with T.block("C_rf"):
                vk_0, vi, vk_1 = T.axis.remap("SSR", [k_0, i, k_1])
                with T.init():
                    C_rf[vi, vk_0] = T.min_value("float32")
                C_rf[vi, vk_0] = T.max(C_rf[vi, vk_0], A[vi, vk_0 * 4 + vk_1])
        for i, k_0 in T.grid(4, 4):
            with T.block("C"):
                vk_0, vi = T.axis.remap("RS", [k_0, i])
                with T.init():
                    C[vi] = T.min_value("float32")
                C[vi] = T.max(C[vi], C_rf[vi, vk_0])

    sch = _sch(row_max)
    _, k = sch.get_loops(sch.get_block("C"))
    k_0, _ = sch.split(k, [None, 4])
    sch.rfactor(k_0, 1)
    assert_schedule(row_max, sch, expected)


def test_rfactor_refuses_spatial_loop_and_bad_init():
    @T.prim_func
    def offset_sum(A: T.Buffer((4, 16), "float32"), C: T.Buffer((4,), "float32")):
        for i, k in T.grid(4, 16):
            with T.block("C"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    C[vi] = T.float32(1)
                C[vi] = C[vi] + A[vi, vk]

    sch = _sch(matmul)
    i, _, _ = sch.get_loops(sch.get_block("C"))
    with pytest.raises(T.ScheduleError, match="bound to a spatial iter var"):
        sch.rfactor(i, 0)
    sch = _sch(offset_sum)
    _, k = sch.get_loops(sch.get_block("C"))
    with pytest.raises(T.ScheduleError, match="not the identity of its reduction"):
        sch.rfactor(k, 0)


@T.prim_func
def blocked_colsum(A: T.Buffer((3, 12), "float32"), S: T.Buffer((3,), "float32")):
    for r, c_o in T.grid(3, 3):
        with T.block("tile"):
            vr, vco = T.axis.remap("SR", [r, c_o])
            tmp = T.alloc_buffer((4,), "float32")
            with T.init():
                S[vr] = T.float32(0)
            for t in range(4):
                with T.block("stage"):
                    vt = T.axis.spatial(4, t)
                    tmp[vt] = A[vr, vco * 4 + vt] * T.float32(2)
            for t in range(4):
                with T.block("acc"):
                    vt = T.axis.reduce(4, t)
                    S[vr] = S[vr] + tmp[vt]


def test_decompose_reduction_with_block_local_scratch():
    # A buffer allocated inside the reduction block is private to each instance: its writes
    # and reads at other indices do not make the block a non-reduction. The update lists the
    # element it accumulates into first among its reads.
    @T.prim_func
    def expected(A: T.Buffer((3, 12), "float32"), S: T.Buffer((3,), "float32")):
        for r in range(3):
            with T.block("tile_init"):
                vr = T.axis.spatial(3, r)
                T.reads()
                T.writes(S[vr])
                S[vr] = T.float32(0)
            for c_o in range(3):
                with T.block("tile_update"):
                    vr, vco = T.axis.remap("SR", [r, c_o])
                    T.reads(S[vr], A[vr, vco * 4 : vco * 4 + 4])
                    T.writes(S[vr])
                    tmp = T.alloc_buffer((4,), "float32")
                    for t in range(4):
                        with T.block("stage"):
                            vt = T.axis.spatial(4, t)
                            tmp[vt] = A[vr, vco * 4 + vt] * T.float32(2)
                    for t in range(4):
                        with T.block("acc"):
                            vt = T.axis.reduce(4, t)
                            S[vr] = S[vr] + tmp[vt]

    sch = _sch(blocked_colsum)
    block = sch.get_block("tile")
    _, c_o = sch.get_loops(block)
    sch.decompose_reduction(block, c_o)
    assert_schedule(blocked_colsum, sch, expected)


@T.prim_func
def tagged_sum(A: T.Buffer((4, 6), "float32"), C: T.Buffer((4,), "float32")):
    for i, k in T.grid(4, 6):
        with T.block("C"):
            T.block_attr({"tag": 7})
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                C[vi] = T.float32(0)
            C[vi] = C[vi] + A[vi, vk]


def test_rfactor_negative_axis_spatial_only_rf_block_keeps_annotations():
    # factor_axis -1 counts from the end of the rf buffer's shape (axis 1 of (4, 6)); with
    # every reduction loop factored out, the rf block has nothing left to reduce and stores
    # the value directly; both blocks keep the original's annotations.
    @T.prim_func
    def expected(A: T.Buffer((4, 6), "float32"), C: T.Buffer((4,), "float32")):
        C_rf = T.alloc_buffer((4, 6))
        for i, k in T.grid(4, 6):
            with T.block("C_rf"):
                T.block_attr({"tag": 7})
                vk, vi = T.axis.remap("SS", [k, i])
                C_rf[vi, vk] = A[vi, vk]
        for i, k in T.grid(4, 6):
            with T.block("C"):
                T.block_attr({"tag": 7})
                vk, vi = T.axis.remap("RS", [k, i])
                with T.init():
                    C[vi] = T.float32(0)
                C[vi] = C[vi] + C_rf[vi, vk]

    sch = _sch(tagged_sum)
    _, k = sch.get_loops(sch.get_block("C"))
    sch.rfactor(k, -1)
    assert_schedule(tagged_sum, sch, expected)
    for axis in (2, -3):
        sch2 = _sch(tagged_sum)
        _, k2 = sch2.get_loops(sch2.get_block("C"))
        with pytest.raises(T.ScheduleError, match=f"factor_axis {axis} is out of range"):
            sch2.rfactor(k2, axis)


def test_rfactor_refuses_parallel_reduction_loop():
    @T.prim_func
    def par_sum(A: T.Buffer((4, 6), "float32"), C: T.Buffer((4,), "float32")):
        for i in range(4):
            for k_0 in T.parallel(2):
                for k_1 in range(3):
                    with T.block("C"):
                        vi = T.axis.spatial(4, i)
                        vk = T.axis.reduce(6, k_0 * 3 + k_1)
                        with T.init():
                            C[vi] = T.float32(0)
                        C[vi] = C[vi] + A[vi, vk]

    sch = _sch(par_sum)
    _, _, k_1 = sch.get_loops(sch.get_block("C"))
    with pytest.raises(T.ScheduleError, match="reduction loop 'k_0' is not serial"):
        sch.rfactor(k_1, 0)
