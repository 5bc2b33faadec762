"""reindex and transform_block_layout."""

from __future__ import annotations

import pytest
from sched_checks import assert_schedule

from tvmscript import tir as T


@T.prim_func
def matmul(
    A: T.Buffer((16, 8), "int32"), B: T.Buffer((12, 8), "int32"), C: T.Buffer((16, 12), "int32")
):
    for i, j, k in T.grid(16, 12, 8):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = 0
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vj, vk]


def _sch(func):
    return T.Schedule(func, debug_mask="all")


def _read_index(sch, block, name):
    return [r.buffer.name for r in sch.get(block).reads].index(name)


def test_reindex_read_and_write():
    @T.prim_func
    def expected(
        A: T.Buffer((16, 8), "int32"), B: T.Buffer((12, 8), "int32"), C: T.Buffer((16, 12), "int32")
    ):
        B_reindex = T.alloc_buffer((12, 8), "int32")
        C_reindex = T.alloc_buffer((16, 12), "int32")
        for ax0, ax1 in T.grid(12, 8):
            with T.block("B_reindex"):
                v0, v1 = T.axis.remap("SS", [ax0, ax1])
                B_reindex[v0, v1] = B[v0, v1]
        for i, j, k in T.grid(16, 12, 8):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C_reindex[vi, vj] = 0
                C_reindex[vi, vj] = C_reindex[vi, vj] + A[vi, vk] * B_reindex[vj, vk]
        for ax0, ax1 in T.grid(16, 12):
            with T.block("C_reindex"):
                v0, v1 = T.axis.remap("SS", [ax0, ax1])
                C[v0, v1] = C_reindex[v0, v1]

    sch = _sch(matmul)
    block = sch.get_block("C")
    sch.reindex(block, ("read", _read_index(sch, block, "B")))
    stage = sch.reindex(block, ("write", 0))
    assert sch.get(stage).name_hint == "C_reindex"
    assert_schedule(matmul, sch, expected)


def test_reindex_transposed_read_gathers():
    @T.prim_func
    def transposed(A: T.Buffer((8, 16), "int32"), C: T.Buffer((16, 8), "int32")):
        for i, j in T.grid(16, 8):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = A[vj, vi] + 1

    @T.prim_func
    def expected(A: T.Buffer((8, 16), "int32"), C: T.Buffer((16, 8), "int32")):
        A_reindex = T.alloc_buffer((16, 8), "int32")
        for ax0, ax1 in T.grid(16, 8):
            with T.block("A_reindex"):
                v0, v1 = T.axis.remap("SS", [ax0, ax1])
                A_reindex[v0, v1] = A[v1, v0]
        for i, j in T.grid(16, 8):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = A_reindex[vi, vj] + 1

    sch = _sch(transposed)
    sch.reindex(sch.get_block("C"), ("read", 0))
    assert_schedule(transposed, sch, expected)


def test_reindex_refuses_partial_writer():
    @T.prim_func
    def accumulate(A: T.Buffer((8,), "int32"), C: T.Buffer((8,), "int32")):
        for i in range(8):
            with T.block("C"):
                vi = T.axis.spatial(8, i)
                C[vi] = C[vi] + A[vi]

    sch = _sch(accumulate)
    with pytest.raises(T.ScheduleError, match="reads 'C' before writing it"):
        sch.reindex(sch.get_block("C"), ("write", 0))


def test_transform_block_layout_permutes_and_fuses():
    @T.prim_func
    def permuted(
        A: T.Buffer((16, 8), "int32"), B: T.Buffer((12, 8), "int32"), C: T.Buffer((16, 12), "int32")
    ):
        for ax0, ax1, ax2 in T.grid(8, 16, 12):
            with T.block("C"):
                v0, v1, v2 = T.axis.remap("RSS", [ax0, ax1, ax2])
                with T.init():
                    C[v1, v2] = 0
                C[v1, v2] = C[v1, v2] + A[v1, v0] * B[v2, v0]

    sch = _sch(matmul)
    sch.transform_block_layout(sch.get_block("C"), lambda i, j, k: (k, i, j))
    assert_schedule(matmul, sch, permuted)

    @T.prim_func
    def fused(
        A: T.Buffer((16, 8), "int32"), B: T.Buffer((12, 8), "int32"), C: T.Buffer((16, 12), "int32")
    ):
        for ax0, ax1 in T.grid(192, 8):
            with T.block("C"):
                v0, v1 = T.axis.remap("SR", [ax0, ax1])
                with T.init():
                    C[v0 // 12, v0 % 12] = 0
                C[v0 // 12, v0 % 12] = C[v0 // 12, v0 % 12] + A[v0 // 12, v1] * B[v0 % 12, v1]

    sch = _sch(matmul)
    sch.transform_block_layout(sch.get_block("C"), lambda i, j, k: (i * 12 + j, k))
    assert_schedule(matmul, sch, fused)


def test_transform_block_layout_refusals():
    sch = _sch(matmul)
    block = sch.get_block("C")
    with pytest.raises(T.ScheduleError, match="mixes spatial and reduction"):
        sch.transform_block_layout(block, lambda i, j, k: (i, j * 8 + k))
    with pytest.raises(T.ScheduleError, match="not a bijection"):
        sch.transform_block_layout(block, lambda i, j, k: (i, j, k // 2))
    sch.split(sch.get_loops(block)[0], [None, 4])
    with pytest.raises(T.ScheduleError, match="bound one to one"):
        sch.transform_block_layout(block, lambda i, j, k: (k, i, j))


def test_transform_block_layout_keeps_a_unit_iter_var_and_writes_tvm_digits():
    @T.prim_func
    def box(A: T.Buffer((1, 4, 6), "float32"), B: T.Buffer((1, 4, 6), "float32")):
        for u, p, q in T.grid(1, 4, 6):
            with T.block("B"):
                vu, vp, vq = T.axis.remap("SSS", [u, p, q])
                B[vu, vp, vq] = A[vu, vp, vq] + 1.0

    @T.prim_func
    def expected(A: T.Buffer((1, 4, 6), "float32"), B: T.Buffer((1, 4, 6), "float32")):
        for ax0, ax1 in T.grid(24, 1):
            with T.block("B"):
                v0, v1 = T.axis.remap("SS", [ax0, ax1])
                B[v1, v0 // 6, v0 % 6] = A[v1, v0 // 6, v0 % 6] + 1.0

    sch = _sch(box)
    sch.transform_block_layout(sch.get_block("B"), lambda u, p, q: (p * 6 + q, u))
    assert_schedule(box, sch, expected)


def test_transform_block_layout_middle_digit_and_bounded_indices():
    @T.prim_func
    def cube(A: T.Buffer((2, 3, 4), "float32"), B: T.Buffer((2, 3, 4), "float32")):
        for p, q, r in T.grid(2, 3, 4):
            with T.block("B"):
                vp, vq, vr = T.axis.remap("SSS", [p, q, r])
                B[vp, vq, vr] = A[vp, vq + vr // 4, vr] * 2.0

    @T.prim_func
    def expected(A: T.Buffer((2, 3, 4), "float32"), B: T.Buffer((2, 3, 4), "float32")):
        for ax0 in range(24):
            with T.block("B"):
                v0 = T.axis.spatial(24, ax0)
                B[v0 // 12, v0 % 12 // 4, v0 % 4] = A[v0 // 12, v0 % 12 // 4, v0 % 4] * 2.0

    sch = _sch(cube)
    sch.transform_block_layout(sch.get_block("B"), lambda p, q, r: (p * 12 + q * 4 + r,))
    assert_schedule(cube, sch, expected)


def test_transform_layout_accepts_a_pad_value_when_there_is_no_padding():
    @T.prim_func
    def fill(out: T.Buffer((12,), "int32")):
        A = T.alloc_buffer((12,), "int32")
        for i in range(12):
            with T.block("A"):
                vi = T.axis.spatial(12, i)
                A[vi] = vi
        for i in range(12):
            with T.block("out"):
                vi = T.axis.spatial(12, i)
                out[vi] = A[vi]

    sch = _sch(fill)
    sch.transform_layout(sch.get_block("A"), "A", lambda i: (i // 4, i % 4), pad_value=7)
    assert "A[vi // 4, vi % 4] = vi" in sch.mod["main"].script()
    sch = _sch(fill)  # with padding, the row-major producer writes the pad value too
    sch.transform_layout(sch.get_block("A"), "A", lambda i: (i // 5, i % 5), pad_value=7)
    assert "T.if_then_else(v_axis0 == 2 and T.int32(2) <= v_axis1, 7, v_axis0 * 5 + v_axis1)" in (
        sch.mod["main"].script()
    )


def test_transform_layout_takes_a_map_with_star_indices():
    @T.prim_func
    def planes(A: T.Buffer((2, 3, 8), "float32"), C: T.Buffer((2, 3, 8), "float32")):
        B = T.alloc_buffer((2, 3, 8))
        for i, j, k in T.grid(2, 3, 8):
            with T.block("B"):
                vi, vj, vk = T.axis.remap("SSS", [i, j, k])
                B[vi, vj, vk] = A[vi, vj, vk] * 2.0
        for i, j, k in T.grid(2, 3, 8):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSS", [i, j, k])
                C[vi, vj, vk] = B[vi, vj, vk] + 1.0

    sch = _sch(planes)
    sch.transform_layout(sch.get_block("B"), "B", lambda *lead, k: [*lead, k // 4, k % 4])
    text = sch.mod["main"].script()
    assert "B[vi, vj, vk // 4, vk % 4] = A[vi, vj, vk]" in text
    assert "T.alloc_buffer((2, 3, 2, 4)" in text
