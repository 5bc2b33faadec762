"""loop_partition: a loop cut into consecutive parts, each in its own block under a common
block (TVM's test programs at a smaller size), checked by structure and by running; the
factor rules and refusals."""

from __future__ import annotations

import pytest
from sched_checks import assert_schedule
from test_trace_kinds import _replays

from tvmscript import tir as T


@T.prim_func
def elementwise(A: T.Buffer((16, 16, 16), "float32"), B: T.Buffer((16, 16, 16), "float32")):
    for i, j, k in T.grid(16, 16, 16):
        with T.block("B"):
            vi, vj, vk = T.axis.remap("SSS", [i, j, k])
            B[vi, vj, vk] = A[vi, vj, vk] * 2.0


@T.prim_func
def partitioned_case0(A: T.Buffer((16, 16, 16), "float32"),
                      B: T.Buffer((16, 16, 16), "float32")):
    with T.block("root"):
        T.reads()
        T.writes()
        with T.block("B_i_common"):
            T.reads()
            T.writes()
            with T.block("B_i0_partition"):
                T.reads()
                T.writes()
                for i0 in range(2):
                    with T.block("B_i0_j_common"):
                        T.reads()
                        T.writes()
                        with T.block("B_i0_j0_partition"):
                            T.reads()
                            T.writes()
                            for j0, k in T.grid(4, 16):
                                with T.block("B_i0_j0"):
                                    vi, vj, vk = T.axis.remap("SSS", [i0, j0, k])
                                    T.reads(A[0:2, 0:4, 0:16])
                                    T.writes(B[0:2, 0:4, 0:16])
                                    B[vi, vj, vk] = A[vi, vj, vk] * T.float32(2)
                        with T.block("B_i0_j1_partition"):
                            T.reads()
                            T.writes()
                            for j1 in range(4, 12):
                                for k in range(16):
                                    with T.block("B_i0_j1"):
                                        vi, vj, vk = T.axis.remap("SSS", [i0, j1, k])
                                        T.reads(A[0:2, 4:12, 0:16])
                                        T.writes(B[0:2, 4:12, 0:16])
                                        B[vi, vj, vk] = A[vi, vj, vk] * T.float32(2)
                        with T.block("B_i0_j2_partition"):
                            T.reads()
                            T.writes()
                            for j2 in range(12, 16):
                                for k in range(16):
                                    with T.block("B_i0_j2"):
                                        vi, vj, vk = T.axis.remap("SSS", [i0, j2, k])
                                        T.reads(A[0:2, 12:16, 0:16])
                                        T.writes(B[0:2, 12:16, 0:16])
                                        B[vi, vj, vk] = A[vi, vj, vk] * T.float32(2)
            with T.block("B_i1_partition"):
                T.reads()
                T.writes()
                for i1 in range(2, 3):
                    for j, k in T.grid(16, 16):
                        with T.block("B_i1"):
                            vi, vj, vk = T.axis.remap("SSS", [i1, j, k])
                            T.reads(A[2, 0:16, 0:16])
                            T.writes(B[2, 0:16, 0:16])
                            B[vi, vj, vk] = A[vi, vj, vk] * T.float32(2)
            with T.block("B_i2_partition"):
                T.reads()
                T.writes()
                for i2 in range(3, 9):
                    for j, k in T.grid(16, 16):
                        with T.block("B_i2"):
                            vi, vj, vk = T.axis.remap("SSS", [i2, j, k])
                            T.reads(A[3:9, 0:16, 0:16])
                            T.writes(B[3:9, 0:16, 0:16])
                            B[vi, vj, vk] = A[vi, vj, vk] * T.float32(2)
            with T.block("B_i3_partition"):
                T.reads()
                T.writes()
                for i3 in range(9, 16):
                    for j, k in T.grid(16, 16):
                        with T.block("B_i3"):
                            vi, vj, vk = T.axis.remap("SSS", [i3, j, k])
                            T.reads(A[9:16, 0:16, 0:16])
                            T.writes(B[9:16, 0:16, 0:16])
                            B[vi, vj, vk] = A[vi, vj, vk] * T.float32(2)


def test_partition_twice():
    sch = T.Schedule(elementwise, debug_mask="all")
    i, _, _ = sch.get_loops(sch.get_block("B"))
    loops = sch.loop_partition(i, factors=[2, 1, 6])
    assert [(sch.get(lp).min.value, sch.get(lp).extent.value) for lp in loops] == [
        (0, 2), (2, 1), (3, 6), (9, 7)
    ]
    _, j, _ = sch.get_loops(sch.get_block("B_i0"))
    sch.loop_partition(j, factors=[4, 8])
    assert_schedule(elementwise, sch, partitioned_case0)
    assert str(sch.trace).splitlines()[-1] == (
        "  l12, l13, l14 = sch.loop_partition(loop=l10, factors=[4, 8], preserve_unit_iters=True)"
    )
    _replays(elementwise, sch)


@T.prim_func
def partitioned_case1(A: T.Buffer((16, 16, 16), "float32"),
                      B: T.Buffer((16, 16, 16), "float32")):
    with T.block("root"):
        T.reads()
        T.writes()
        with T.block("B_i_common"):
            T.reads()
            T.writes()
            with T.block("B_i0_partition"):
                T.reads()
                T.writes()
                for i0, j, k in T.grid(7, 16, 16):
                    with T.block("B_i0"):
                        vi, vj, vk = T.axis.remap("SSS", [i0, j, k])
                        T.reads(A[0:7, 0:16, 0:16])
                        T.writes(B[0:7, 0:16, 0:16])
                        B[vi, vj, vk] = A[vi, vj, vk] * T.float32(2)
            with T.block("B_i1_partition"):
                T.reads()
                T.writes()
                for i1 in range(7, 8):
                    for j in range(16):
                        with T.block("B_i1_k_common"):
                            T.reads()
                            T.writes()
                            with T.block("B_i1_k0_partition"):
                                T.reads()
                                T.writes()
                                for k0 in range(1):
                                    with T.block("B_i1_k0"):
                                        vi, vj, vk = T.axis.remap("SSS", [i1, j, k0])
                                        T.reads(A[7, 0:16, 0])
                                        T.writes(B[7, 0:16, 0])
                                        B[vi, vj, vk] = A[vi, vj, vk] * T.float32(2)
                            with T.block("B_i1_k1_partition"):
                                T.reads()
                                T.writes()
                                for k1 in range(1, 9):
                                    with T.block("B_i1_k1"):
                                        vi, vj, vk = T.axis.remap("SSS", [i1, j, k1])
                                        T.reads(A[7, 0:16, 1:9])
                                        T.writes(B[7, 0:16, 1:9])
                                        B[vi, vj, vk] = A[vi, vj, vk] * T.float32(2)
                            with T.block("B_i1_k2_partition"):
                                T.reads()
                                T.writes()
                                for k2 in range(9, 16):
                                    with T.block("B_i1_k2"):
                                        vi, vj, vk = T.axis.remap("SSS", [i1, j, k2])
                                        T.reads(A[7, 0:16, 9:16])
                                        T.writes(B[7, 0:16, 9:16])
                                        B[vi, vj, vk] = A[vi, vj, vk] * T.float32(2)
            with T.block("B_i2_partition"):
                T.reads()
                T.writes()
                for i2 in range(8, 16):
                    for j, k in T.grid(16, 16):
                        with T.block("B_i2"):
                            vi, vj, vk = T.axis.remap("SSS", [i2, j, k])
                            T.reads(A[8:16, 0:16, 0:16])
                            T.writes(B[8:16, 0:16, 0:16])
                            B[vi, vj, vk] = A[vi, vj, vk] * T.float32(2)


def test_inferred_factor():
    sch = T.Schedule(elementwise, debug_mask="all")
    i, _, _ = sch.get_loops(sch.get_block("B"))
    sch.loop_partition(i, factors=[None, 1, 8])
    _, _, k = sch.get_loops(sch.get_block("B_i1"))
    sch.loop_partition(k, factors=[1, 8, None])
    assert_schedule(elementwise, sch, partitioned_case1)
    _replays(elementwise, sch)


def test_opaque_block_and_opaque_access():
    @T.prim_func
    def with_opaque(A: T.Buffer((16, 4), "float32"), B: T.Buffer((16, 4), "float32")):
        for i, j in T.grid(16, 4):
            with T.block("opaque"):
                T.reads([A[i, j]])
                T.writes([B[i, j]])
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.reads([A[vi, vj]])
                    T.writes([B[vi, vj]])
                    B[vi, vj] = A[vi, vj] * 2.0

    @T.prim_func
    def expected(A: T.Buffer((16, 4), "float32"), B: T.Buffer((16, 4), "float32")):
        with T.block("root"):
            T.reads()
            T.writes()
            with T.block("opaque_i_common"):
                T.reads()
                T.writes()
                with T.block("opaque_i0_partition"):
                    T.reads()
                    T.writes()
                    for i0, j in T.grid(12, 4):
                        with T.block("opaque_i0"):
                            T.reads(A[i0, j])
                            T.writes(B[i0, j])
                            with T.block("B_i0"):
                                vi, vj = T.axis.remap("SS", [i0, j])
                                T.reads(A[0:12, 0:4])
                                T.writes(B[0:12, 0:4])
                                B[vi, vj] = A[vi, vj] * T.float32(2)
                with T.block("opaque_i1_partition"):
                    T.reads()
                    T.writes()
                    for i1 in range(12, 16):
                        for j in range(4):
                            with T.block("opaque_i1"):
                                T.reads(A[i1, j])
                                T.writes(B[i1, j])
                                with T.block("B_i1"):
                                    vi, vj = T.axis.remap("SS", [i1, j])
                                    T.reads(A[12:16, 0:4])
                                    T.writes(B[12:16, 0:4])
                                    B[vi, vj] = A[vi, vj] * T.float32(2)

    sch = T.Schedule(with_opaque, debug_mask="all")
    i, _ = sch.get_loops(sch.get_block("opaque"))
    sch.loop_partition(i, factors=[None, 4])
    assert_schedule(with_opaque, sch, expected)


@pytest.mark.parametrize(
    "factors, match",
    [
        ([1000, 2, 3], "not less than the extent 16"),
        ([8, 8], "not less than the extent 16"),
        ([-2, -4], "factors must be positive"),
        ([0, None], "factors must be positive"),
        ([None, None], "at most one factor may be None"),
    ],
)
def test_bad_factors_are_refused(factors, match):
    sch = T.Schedule(elementwise, debug_mask="all")
    i, _, _ = sch.get_loops(sch.get_block("B"))
    with pytest.raises(T.ScheduleError, match=match):
        sch.loop_partition(i, factors=factors)
    assert_schedule(elementwise, sch, elementwise)


def test_symbolic_annotated_and_bound_loops_are_refused():
    @T.prim_func
    def symbolic(a: T.handle, b: T.handle, n: T.int32):
        A = T.match_buffer(a, (4, n))
        B = T.match_buffer(b, (4, n))
        for i, k in T.grid(4, n):
            with T.block("B"):
                vi, vk = T.axis.remap("SS", [i, k])
                B[vi, vk] = A[vi, vk] * 2.0

    @T.prim_func
    def annotated(A: T.Buffer((4, 16), "float32"), B: T.Buffer((4, 16), "float32")):
        for i in range(4):
            for k in T.serial(0, 16, annotations={"useless_annotation": True}):
                with T.block("B"):
                    vi, vk = T.axis.remap("SS", [i, k])
                    B[vi, vk] = A[vi, vk] * 2.0

    @T.prim_func
    def bound(A: T.Buffer((4, 16), "float32"), B: T.Buffer((4, 16), "float32")):
        for i in range(4):
            for k in T.thread_binding(0, 16, thread="threadIdx.x"):
                with T.block("B"):
                    vi, vk = T.axis.remap("SS", [i, k])
                    B[vi, vk] = A[vi, vk] * 2.0

    for func, match in (
        (symbolic, "must be constants"),
        (annotated, "has annotations or a thread binding"),
        (bound, "has annotations or a thread binding"),
    ):
        sch = T.Schedule(func)
        _, k = sch.get_loops(sch.get_block("B"))
        with pytest.raises(T.ScheduleError, match=match):
            sch.loop_partition(k, factors=[10, None] if func is symbolic else [None, 10])


@T.prim_func
def matmul(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"),
           C: T.Buffer((16, 16), "float32")):
    for i, j, k in T.grid(16, 16, 16):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vj, vk]


def test_a_reduction_loop_of_a_block_with_init_is_refused():
    # every part would initialize again; TVM applies it and loses the earlier parts' sums
    sch = T.Schedule(matmul, debug_mask="all")
    _, _, k = sch.get_loops(sch.get_block("C"))
    with pytest.raises(T.ScheduleError, match="carries the reduction 'vk' of block 'C'"):
        sch.loop_partition(k, [8])
    # once the init is its own block, the update's reduction loop partitions
    block = sch.get_block("C")
    sch.decompose_reduction(block, sch.get_loops(block)[0])
    _, _, k = sch.get_loops(sch.get_block("C_update"))
    sch.loop_partition(k, [8])
    i, _ = sch.get_loops(sch.get_block("C_init"))
    sch.loop_partition(i, [3, 5])
