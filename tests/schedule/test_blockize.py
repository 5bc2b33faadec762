"""blockize."""

from __future__ import annotations

import pytest
from sched_checks import assert_schedule

from tvmscript import tir as T


@T.prim_func
def scale(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj] * 2.0


@T.prim_func
def matmul(
    A: T.Buffer((16, 16), "int32"), B: T.Buffer((16, 16), "int32"), C: T.Buffer((16, 16), "int32")
):
    for i, j, k in T.grid(16, 16, 16):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = 0
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vj, vk]


def test_blockize_split_loop():
    @T.prim_func
    def expected(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
        for i_0 in range(4):
            with T.block("C_o"):
                vi_o = T.axis.spatial(4, i_0)
                vj_o = T.axis.spatial(1, 0)  # noqa: F841  (TVMScript: the iter var exists)
                for i_1, j in T.grid(4, 16):
                    with T.block("C"):
                        vi_i, vj_i = T.axis.remap("SS", [i_1, j])
                        C[vi_o * 4 + vi_i, vj_i] = A[vi_o * 4 + vi_i, vj_i] * 2.0

    sch = T.Schedule(scale, debug_mask="all")
    block = sch.get_block("C")
    i, _ = sch.get_loops(block)
    _, inner = sch.split(i, [None, 4])
    outer = sch.blockize(inner)
    assert sch.get(outer).name_hint == "C_o"
    assert sch.get(block).name_hint == "C"
    assert_schedule(scale, sch, expected)


def test_blockize_reduction_moves_init():
    @T.prim_func
    def expected(
        A: T.Buffer((16, 16), "int32"),
        B: T.Buffer((16, 16), "int32"),
        C: T.Buffer((16, 16), "int32"),
    ):
        for i in range(16):
            with T.block("C_o"):
                vi_o = T.axis.spatial(16, i)
                vj_o = T.axis.spatial(1, 0)  # noqa: F841
                vk_o = T.axis.reduce(1, 0)  # noqa: F841
                with T.init():
                    for j in range(16):
                        with T.block("C_init"):
                            vj_i_init = T.axis.spatial(16, j)
                            C[vi_o, vj_i_init] = 0
                for j, k in T.grid(16, 16):
                    with T.block("C"):
                        vj_i, vk_i = T.axis.remap("SR", [j, k])
                        C[vi_o, vj_i] = C[vi_o, vj_i] + A[vi_o, vk_i] * B[vj_i, vk_i]

    sch = T.Schedule(matmul, debug_mask="all")
    _, j, _ = sch.get_loops(sch.get_block("C"))
    sch.blockize(j)
    assert_schedule(matmul, sch, expected)


def test_blockize_refuses_interleaved_digits():
    sch = T.Schedule(scale, debug_mask="all")
    block = sch.get_block("C")
    fused = sch.fuse(*sch.get_loops(block))
    outer, inner = sch.split(fused, [None, 32])
    sch.reorder(inner, outer)
    with pytest.raises(T.ScheduleError, match="does not divide into a part outside"):
        sch.blockize(sch.get_loops(block)[1])
