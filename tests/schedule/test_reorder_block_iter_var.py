"""reorder_block_iter_var: the block declares its iter vars (with their bindings) in the
given order; everything else is unchanged. A list that is not a permutation is refused."""

from __future__ import annotations

import pytest
from sched_checks import assert_schedule
from test_trace_kinds import _replays

from tvmscript import tir as T


@T.prim_func
def matmul(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"),
           C: T.Buffer((16, 16), "float32")):
    for i, j, k in T.grid(16, 16, 16):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = 0.0
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vj, vk]


@T.prim_func
def matmul_reversed(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"),
                    C: T.Buffer((16, 16), "float32")):
    for i, j, k in T.grid(16, 16, 16):
        with T.block("C"):
            vk, vj, vi = T.axis.remap("RSS", [k, j, i])
            T.reads(A[vi, vk], B[vj, vk])
            T.writes(C[vi, vj])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vj, vk]


def test_reversed_order():
    sch = T.Schedule(matmul, debug_mask="all")
    block = sch.get_block("C")
    sch.reorder_block_iter_var(block, [2, 1, 0])
    assert_schedule(matmul, sch, matmul_reversed)
    # the handle still names the block, now with the new order
    assert [iv.var.name for iv in sch.get(block).iter_vars] == ["vk", "vj", "vi"]
    assert str(sch.trace).splitlines()[-1] == (
        "  sch.reorder_block_iter_var(block=b0, new_order=[2, 1, 0])"
    )
    _replays(matmul, sch)


def test_identity_order_and_block_name():
    sch = T.Schedule(matmul, debug_mask="all")
    sch.reorder_block_iter_var("C", [0, 1, 2])
    assert_schedule(matmul, sch, matmul)


@pytest.mark.parametrize(
    "order", [[2, 1], [-1, 3, 2], [0, 0, 2], [0, 1, 2, 3], [0, 1, 3]]
)
def test_not_a_permutation_is_refused(order):
    sch = T.Schedule(matmul, debug_mask="all")
    with pytest.raises(T.ScheduleError, match="is not a permutation of"):
        sch.reorder_block_iter_var(sch.get_block("C"), order)
    assert_schedule(matmul, sch, matmul)
