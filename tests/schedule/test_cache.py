"""cache_read, cache_write, set_scope."""

from __future__ import annotations

import pytest
from sched_checks import assert_schedule

from tvmscript import tir as T


@T.prim_func
def two_stage(A: T.Buffer((16, 8), "float32"), C: T.Buffer((16, 8), "float32")):
    B = T.alloc_buffer((16, 8))
    for i, j in T.grid(16, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * 2.0
    for i, j in T.grid(16, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + 1.0


@T.prim_func
def matmul(
    A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")
):
    for i, j, k in T.grid(8, 8, 8):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vj, vk]


def _sch(func):
    return T.Schedule(func, debug_mask="all")


def test_cache_read_of_parameter_goes_first():
    @T.prim_func
    def expected(A: T.Buffer((16, 8), "float32"), C: T.Buffer((16, 8), "float32")):
        B = T.alloc_buffer((16, 8))
        A_shared = T.alloc_buffer((16, 8), scope="shared")
        for ax0, ax1 in T.grid(16, 8):
            with T.block("A_shared"):
                v0, v1 = T.axis.remap("SS", [ax0, ax1])
                A_shared[v0, v1] = A[v0, v1]
        for i, j in T.grid(16, 8):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A_shared[vi, vj] * 2.0
        for i, j in T.grid(16, 8):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vi, vj] + 1.0

    sch = _sch(two_stage)
    stage = sch.cache_read(sch.get_block("B"), 0, "shared")
    assert sch.get(stage).name_hint == "A_shared"
    assert_schedule(two_stage, sch, expected)


def test_cache_write_then_cache_read():
    @T.prim_func
    def expected(A: T.Buffer((16, 8), "float32"), C: T.Buffer((16, 8), "float32")):
        B = T.alloc_buffer((16, 8))
        B_local = T.alloc_buffer((16, 8), scope="local")
        B_shared = T.alloc_buffer((16, 8), scope="shared")
        for i, j in T.grid(16, 8):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B_local[vi, vj] = A[vi, vj] * 2.0
        for ax0, ax1 in T.grid(16, 8):
            with T.block("B_local"):
                v0, v1 = T.axis.remap("SS", [ax0, ax1])
                B[v0, v1] = B_local[v0, v1]
        for ax0, ax1 in T.grid(16, 8):
            with T.block("B_shared"):
                v0, v1 = T.axis.remap("SS", [ax0, ax1])
                B_shared[v0, v1] = B[v0, v1]
        for i, j in T.grid(16, 8):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B_shared[vi, vj] + 1.0

    sch = _sch(two_stage)
    sch.cache_write(sch.get_block("B"), 0, "local")
    sch.cache_read(sch.get_block("C"), 0, "shared")
    assert_schedule(two_stage, sch, expected)


def test_cache_write_of_reduction_then_compute_at():
    @T.prim_func
    def expected(
        A: T.Buffer((8, 8), "float32"),
        B: T.Buffer((8, 8), "float32"),
        C: T.Buffer((8, 8), "float32"),
    ):
        C_local = T.alloc_buffer((8, 8), scope="local")
        for i, j in T.grid(8, 8):
            for ax0 in range(8):
                with T.block("C"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    vk = T.axis.reduce(8, ax0)
                    with T.init():
                        C_local[vi, vj] = T.float32(0)
                    C_local[vi, vj] = C_local[vi, vj] + A[vi, vk] * B[vj, vk]
            with T.block("C_local"):
                v0, v1 = T.axis.remap("SS", [i, j])
                C[v0, v1] = C_local[v0, v1]

    sch = _sch(matmul)
    writeback = sch.cache_write(sch.get_block("C"), 0, "local")
    _, j = sch.get_loops(writeback)
    sch.compute_at(sch.get_block("C"), j)
    assert_schedule(matmul, sch, expected)


def test_cache_write_refuses_partial_writer():
    @T.prim_func
    def accumulate(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
        for i in range(8):
            with T.block("C"):
                vi = T.axis.spatial(8, i)
                C[vi] = C[vi] + A[vi]

    sch = _sch(accumulate)
    with pytest.raises(T.ScheduleError, match="reads 'C' before writing it"):
        sch.cache_write(sch.get_block("C"), 0, "local")


def test_cache_read_refuses_write_between_copy_and_consumer():
    @T.prim_func
    def overwrite(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
        B = T.alloc_buffer((8,))
        for i in range(8):
            with T.block("B0"):
                vi = T.axis.spatial(8, i)
                B[vi] = A[vi]
        for i in range(8):
            with T.block("C0"):
                vi = T.axis.spatial(8, i)
                C[vi] = B[vi]
        for i in range(8):
            with T.block("B1"):
                vi = T.axis.spatial(8, i)
                B[vi] = A[vi] * 2.0
        for i in range(8):
            with T.block("C1"):
                vi = T.axis.spatial(8, i)
                C[vi] = C[vi] + B[vi]

    sch = _sch(overwrite)
    with pytest.raises(T.ScheduleError, match="is written between the place of the copy"):
        sch.cache_read(sch.get_block("C0"), 0, "local", consumer_blocks=[sch.get_block("C1")])


def test_set_scope():
    @T.prim_func
    def expected(A: T.Buffer((16, 8), "float32"), C: T.Buffer((16, 8), "float32")):
        B = T.alloc_buffer((16, 8), scope="shared")
        for i, j in T.grid(16, 8):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * 2.0
        for i, j in T.grid(16, 8):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vi, vj] + 1.0

    sch = _sch(two_stage)
    block = sch.get_block("B")
    sch.set_scope(block, 0, "shared")
    assert sch.get(block).writes[0].buffer.scope == "shared"
    assert_schedule(two_stage, sch, expected)
    with pytest.raises(T.ScheduleError, match="a parameter of the function"):
        sch.set_scope(sch.get_block("C"), 0, "shared")


def test_cache_write_consumer_blocks_read_the_cache():
    @T.prim_func
    def expected(A: T.Buffer((16, 8), "float32"), C: T.Buffer((16, 8), "float32")):
        B = T.alloc_buffer((16, 8))
        B_local = T.alloc_buffer((16, 8), scope="local")
        for i, j in T.grid(16, 8):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B_local[vi, vj] = A[vi, vj] * 2.0
        for ax0, ax1 in T.grid(16, 8):
            with T.block("B_local"):
                v0, v1 = T.axis.remap("SS", [ax0, ax1])
                B[v0, v1] = B_local[v0, v1]
        for i, j in T.grid(16, 8):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B_local[vi, vj] + 1.0

    sch = _sch(two_stage)
    sch.cache_write(sch.get_block("B"), 0, "local", consumer_blocks=[sch.get_block("C")])
    assert_schedule(two_stage, sch, expected)


def test_cache_write_consumer_blocks_refusals():
    @T.prim_func
    def rewritten(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
        B = T.alloc_buffer((8,))
        for i in range(8):
            with T.block("B0"):
                vi = T.axis.spatial(8, i)
                B[vi] = A[vi]
        for i in range(4):
            with T.block("B1"):
                vi = T.axis.spatial(4, i)
                B[vi] = A[vi] * 2.0
        for i in range(8):
            with T.block("C"):
                vi = T.axis.spatial(8, i)
                C[vi] = B[vi]

    sch = _sch(rewritten)
    with pytest.raises(T.ScheduleError, match="writes 'B' between the copy and 'C'"):
        sch.cache_write(sch.get_block("B0"), 0, "local", consumer_blocks=[sch.get_block("C")])
    with pytest.raises(T.ScheduleError, match="may read 'B' outside what the cache holds"):
        sch.cache_write(sch.get_block("B1"), 0, "local", consumer_blocks=[sch.get_block("C")])
