"""read_at / write_at: a region of a buffer staged in another scope at a loop, widened over
the loops below it and the thread loops sharing the scope (TVM's cuda_matmul programs, at
a smaller size), and the same on serial loops checked by running."""

from __future__ import annotations

import pytest
from sched_checks import assert_schedule, assert_structure
from test_trace_kinds import _replays

from tvmscript import tir as T


@T.prim_func
def cuda_matmul(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"),
                C: T.Buffer((128, 128), "float32")):
    for by in T.thread_binding(0, 2, thread="blockIdx.y"):
        for bx in T.thread_binding(0, 2, thread="blockIdx.x"):
            for vy in T.thread_binding(0, 2, thread="vthread.y"):
                for vx in T.thread_binding(0, 2, thread="vthread.x"):
                    for ty in T.thread_binding(0, 8, thread="threadIdx.y"):
                        for tx in T.thread_binding(0, 8, thread="threadIdx.x"):
                            for k0 in T.serial(0, 16):
                                for k1 in T.unroll(0, 8):
                                    for _, i, j in T.grid(1, 4, 4):
                                        with T.block("C"):
                                            vi = T.axis.S(128, by * 64 + vy * 32 + ty * 4 + i)
                                            vj = T.axis.S(128, bx * 64 + vx * 32 + tx * 4 + j)
                                            vk = T.axis.R(128, k0 * 8 + k1)
                                            T.reads([C[vi, vj], A[vi, vk], B[vk, vj]])
                                            T.writes([C[vi, vj]])
                                            with T.init():
                                                C[vi, vj] = 0.0
                                            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


@T.prim_func
def cuda_matmul_read_at_a(A: T.Buffer((128, 128), "float32"),
                          B: T.Buffer((128, 128), "float32"),
                          C: T.Buffer((128, 128), "float32")):
    A_shared = T.alloc_buffer([128, 128], dtype="float32", scope="shared")
    for by in T.thread_binding(0, 2, thread="blockIdx.y"):
        for bx in T.thread_binding(0, 2, thread="blockIdx.x"):
            for vy in T.thread_binding(0, 2, thread="vthread.y"):
                for vx in T.thread_binding(0, 2, thread="vthread.x"):
                    for ty in T.thread_binding(0, 8, thread="threadIdx.y"):
                        for tx in T.thread_binding(0, 8, thread="threadIdx.x"):
                            for k0 in T.serial(0, 16):
                                with T.block("A_shared"):
                                    v0 = T.axis.S(2, by)
                                    v1 = T.axis.S(16, k0)
                                    T.reads([A[v0 * 64 : v0 * 64 + 64, v1 * 8 : v1 * 8 + 8]])
                                    T.writes([A_shared[v0 * 64 : v0 * 64 + 64,
                                                       v1 * 8 : v1 * 8 + 8]])
                                    T.block_attr({"auto_copy": True})
                                    for ax0, ax1 in T.grid(64, 8):
                                        A_shared[v0 * 64 + ax0, v1 * 8 + ax1] = A[
                                            v0 * 64 + ax0, v1 * 8 + ax1]
                                for k1 in T.unroll(0, 8):
                                    for _v, i, j in T.grid(1, 4, 4):
                                        with T.block("C"):
                                            vi = T.axis.S(128, by * 64 + vy * 32 + ty * 4 + i)
                                            vj = T.axis.S(128, bx * 64 + vx * 32 + tx * 4 + j)
                                            vk = T.axis.R(128, k0 * 8 + k1)
                                            T.reads([C[vi, vj], A_shared[vi, vk], B[vk, vj]])
                                            T.writes([C[vi, vj]])
                                            with T.init():
                                                C[vi, vj] = T.float32(0)
                                            C[vi, vj] = C[vi, vj] + A_shared[vi, vk] * B[vk, vj]


@T.prim_func
def cuda_matmul_write_at_c(A: T.Buffer((128, 128), "float32"),
                           B: T.Buffer((128, 128), "float32"),
                           C: T.Buffer((128, 128), "float32")):
    A_shared = T.alloc_buffer([128, 128], dtype="float32", scope="shared")
    C_shared = T.alloc_buffer([128, 128], dtype="float32", scope="shared")
    for by in T.thread_binding(0, 2, thread="blockIdx.y"):
        for bx in T.thread_binding(0, 2, thread="blockIdx.x"):
            for vy in T.thread_binding(0, 2, thread="vthread.y"):
                for vx in T.thread_binding(0, 2, thread="vthread.x"):
                    for ty in T.thread_binding(0, 8, thread="threadIdx.y"):
                        for tx in T.thread_binding(0, 8, thread="threadIdx.x"):
                            for k0 in T.serial(0, 16):
                                with T.block("A_shared"):
                                    v0 = T.axis.S(2, by)
                                    v1 = T.axis.S(16, k0)
                                    T.reads([A[v0 * 64 : v0 * 64 + 64, v1 * 8 : v1 * 8 + 8]])
                                    T.writes([A_shared[v0 * 64 : v0 * 64 + 64,
                                                       v1 * 8 : v1 * 8 + 8]])
                                    T.block_attr({"auto_copy": True})
                                    for ax0, ax1 in T.grid(64, 8):
                                        A_shared[v0 * 64 + ax0, v1 * 8 + ax1] = A[
                                            v0 * 64 + ax0, v1 * 8 + ax1]
                                for k1 in T.unroll(0, 8):
                                    for _v, i, j in T.grid(1, 4, 4):
                                        with T.block("C"):
                                            vi = T.axis.S(128, by * 64 + vy * 32 + ty * 4 + i)
                                            vj = T.axis.S(128, bx * 64 + vx * 32 + tx * 4 + j)
                                            vk = T.axis.R(128, k0 * 8 + k1)
                                            T.reads([C_shared[vi, vj], A_shared[vi, vk],
                                                     B[vk, vj]])
                                            T.writes([C_shared[vi, vj]])
                                            with T.init():
                                                C_shared[vi, vj] = T.float32(0)
                                            C_shared[vi, vj] = (C_shared[vi, vj]
                                                                + A_shared[vi, vk] * B[vk, vj])
                            with T.block("C_shared"):
                                v0 = T.axis.S(2, by)
                                v1 = T.axis.S(2, bx)
                                T.reads([C_shared[v0 * 64 : v0 * 64 + 64, v1 * 64 : v1 * 64 + 64]])
                                T.writes([C[v0 * 64 : v0 * 64 + 64, v1 * 64 : v1 * 64 + 64]])
                                T.block_attr({"auto_copy": True})
                                for ax0, ax1 in T.grid(64, 64):
                                    C[v0 * 64 + ax0, v1 * 64 + ax1] = C_shared[
                                        v0 * 64 + ax0, v1 * 64 + ax1]


def test_read_at_shared_relaxes_threads_and_vthreads():
    # GPU programs: compared by structure (the CPU backend does not run thread bindings)
    sch = T.Schedule(cuda_matmul)
    block = sch.get_block("C")
    k0 = sch.get_loops(block)[6]
    copy = sch.read_at(k0, block, 1, "shared")
    assert_structure(sch, cuda_matmul_read_at_a)
    assert sch.get(copy).name_hint == "A_shared"
    assert str(sch.trace).splitlines()[-1] == (
        '  b12 = sch.read_at(loop=l7, block=b0, read_buffer_index=1, storage_scope="shared")'
    )


def test_write_at_shared_copies_back_after_the_loop_body():
    sch = T.Schedule(cuda_matmul_read_at_a)
    block = sch.get_block("C")
    tx = sch.get_loops(block)[5]
    copy = sch.write_at(tx, block, 0, "shared")
    assert_structure(sch, cuda_matmul_write_at_c)
    assert sch.get(copy).name_hint == "C_shared"
    assert str(sch.trace).splitlines()[-1] == (
        '  b12 = sch.write_at(loop=l6, block=b0, write_buffer_index=0, storage_scope="shared")'
    )


@T.prim_func
def tiled_matmul(A: T.Buffer((32, 32), "float32"), B: T.Buffer((32, 32), "float32"),
                 C: T.Buffer((32, 32), "float32")):
    for i0, j0, k0, i1, j1, k1 in T.grid(4, 4, 4, 8, 8, 8):
        with T.block("C"):
            vi = T.axis.spatial(32, i0 * 8 + i1)
            vj = T.axis.spatial(32, j0 * 8 + j1)
            vk = T.axis.reduce(32, k0 * 8 + k1)
            with T.init():
                C[vi, vj] = 0.0
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


@T.prim_func
def tiled_matmul_staged(A: T.Buffer((32, 32), "float32"), B: T.Buffer((32, 32), "float32"),
                        C: T.Buffer((32, 32), "float32")):
    A_local = T.alloc_buffer((32, 32), scope="local")
    C_global = T.alloc_buffer((32, 32))
    for i0, j0 in T.grid(4, 4):
        for k0 in range(4):
            with T.block("A_local"):
                v0, v1 = T.axis.remap("SS", [i0, k0])
                T.reads(A[v0 * 8:v0 * 8 + 8, v1 * 8:v1 * 8 + 8])
                T.writes(A_local[v0 * 8:v0 * 8 + 8, v1 * 8:v1 * 8 + 8])
                T.block_attr({"auto_copy": True})
                for ax0, ax1 in T.grid(8, 8):
                    A_local[v0 * 8 + ax0, v1 * 8 + ax1] = A[v0 * 8 + ax0, v1 * 8 + ax1]
            for i1, j1, k1 in T.grid(8, 8, 8):
                with T.block("C"):
                    vi = T.axis.spatial(32, i0 * 8 + i1)
                    vj = T.axis.spatial(32, j0 * 8 + j1)
                    vk = T.axis.reduce(32, k0 * 8 + k1)
                    with T.init():
                        C_global[vi, vj] = T.float32(0)
                    C_global[vi, vj] = C_global[vi, vj] + A_local[vi, vk] * B[vk, vj]
        with T.block("C_global"):
            v0, v1 = T.axis.remap("SS", [i0, j0])
            T.reads(C_global[v0 * 8:v0 * 8 + 8, v1 * 8:v1 * 8 + 8])
            T.writes(C[v0 * 8:v0 * 8 + 8, v1 * 8:v1 * 8 + 8])
            T.block_attr({"auto_copy": True})
            for ax0, ax1 in T.grid(8, 8):
                C[v0 * 8 + ax0, v1 * 8 + ax1] = C_global[v0 * 8 + ax0, v1 * 8 + ax1]


def test_serial_loops_checked_by_running():
    sch = T.Schedule(tiled_matmul, debug_mask="all")  # each step compared by running
    block = sch.get_block("C")
    _, j0, k0, _, _, _ = sch.get_loops(block)
    sch.read_at(k0, block, "A", "local")
    assert sch.get(k0).loop_var.name == "k0"  # the loop's handle follows it
    sch.write_at(j0, block, 0, "global")
    assert sch.get(j0).loop_var.name == "j0"
    assert_schedule(tiled_matmul, sch, tiled_matmul_staged)
    _replays(tiled_matmul, sch)


def test_the_copy_goes_after_the_writes_before_the_first_read():
    @T.prim_func
    def two(A: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
        B = T.alloc_buffer((8, 8))
        for i in range(8):
            for j in range(8):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B[vi, vj] = A[vi, vj] + 1.0
            for j in range(8):
                with T.block("C"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    C[vi, vj] = B[vi, vj] * 2.0

    @T.prim_func
    def staged(A: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
        B = T.alloc_buffer((8, 8))
        B_local = T.alloc_buffer((8, 8), scope="local")
        for i in range(8):
            for j in range(8):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B[vi, vj] = A[vi, vj] + 1.0
            with T.block("B_local"):
                v0 = T.axis.spatial(8, i)
                T.reads(B[v0, 0:8])
                T.writes(B_local[v0, 0:8])
                T.block_attr({"auto_copy": True})
                for ax0, ax1 in T.grid(1, 8):
                    B_local[v0 + ax0, ax1] = B[v0 + ax0, ax1]
            for j in range(8):
                with T.block("C"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    C[vi, vj] = B_local[vi, vj] * T.float32(2)

    sch = T.Schedule(two, debug_mask="all")
    c = sch.get_block("C")
    sch.read_at(sch.get_loops(c)[0], c, 0, "local")
    assert_schedule(two, sch, staged)
    # TVM's order check: no read of the buffer after the last write below the loop
    b = sch.get_block("B")
    with pytest.raises(T.ScheduleError, match="'B' is read below loop 'i' after its last write"):
        sch.write_at(sch.get_loops(b)[0], b, 0, "local")


def test_a_write_after_the_first_read_is_refused():
    @T.prim_func
    def read_then_write(A: T.Buffer((8, 8), "float32"), D: T.Buffer((8, 8), "float32")):
        B = T.alloc_buffer((8, 8))
        for i in range(8):
            for j in range(8):
                with T.block("D"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    D[vi, vj] = B[vi, vj]
            for j in range(8):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B[vi, vj] = A[vi, vj]

    sch = T.Schedule(read_then_write, debug_mask="all")
    d = sch.get_block("D")
    with pytest.raises(T.ScheduleError, match="'B' is written below loop 'i' at or after"):
        sch.read_at(sch.get_loops(d)[0], d, 0, "local")


def test_a_block_outside_the_loop_and_a_bad_scope_are_refused():
    @T.prim_func
    def two(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32"),
            D: T.Buffer((8,), "float32"), E: T.Buffer((8,), "float32")):
        for i in range(8):
            with T.block("C"):
                vi = T.axis.spatial(8, i)
                C[vi] = A[vi] + 1.0
        for i in range(8):
            with T.block("D"):
                vi = T.axis.spatial(8, i)
                D[vi] = E[vi] * 2.0

    sch = T.Schedule(two, debug_mask="all")
    with pytest.raises(T.ScheduleError, match="no block below loop 'i' reads 'E'"):
        sch.read_at(sch.get_loops("C")[0], sch.get_block("D"), 0, "local")
    with pytest.raises(T.ScheduleError, match="is not a storage scope"):
        sch.read_at(sch.get_loops("C")[0], sch.get_block("C"), 0, "nowhere")
    assert_schedule(two, sch, two)
