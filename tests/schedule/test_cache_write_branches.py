"""cache_write of a block storing its element in every branch of an if/else: each instance
writes exactly its element, so the copy back copies only what was computed. A branch (or a
loop that may not run) skipping the store keeps the block refused."""

from __future__ import annotations

import numpy as np
import pytest
from sched_checks import assert_schedule, scheduled

import tvmscript
from irbuilder.ir import Block, PrimFunc, post_order_visit
from tvmscript import tir as T
from tvmscript.tir import ScheduleError


@T.prim_func
def both_branches(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16), "float32")
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            if vi < vj:
                B[vi, vj] = A[vi, vj]
            else:
                B[vi, vj] = A[vj, vi]
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] * 3.0


def _sch(func: PrimFunc) -> T.Schedule:
    return T.Schedule(func, debug_mask="all")


def test_cache_write_of_an_if_else_storing_in_both_branches():
    @T.prim_func
    def expected(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
        B = T.alloc_buffer((16, 16), "float32")
        B_local = T.alloc_buffer((16, 16), "float32", scope="local")
        for i, j in T.grid(16, 16):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                if vi < vj:
                    B_local[vi, vj] = A[vi, vj]
                else:
                    B_local[vi, vj] = A[vj, vi]
        for ax0, ax1 in T.grid(16, 16):
            with T.block("B_local"):
                v0, v1 = T.axis.remap("SS", [ax0, ax1])
                B[v0, v1] = B_local[v0, v1]
        for i, j in T.grid(16, 16):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vi, vj] * 3.0

    sch = _sch(both_branches)
    sch.cache_write("B", 0, "local")
    assert_schedule(both_branches, sch, expected)
    a = np.random.default_rng(2).standard_normal((16, 16)).astype("float32")
    c = np.zeros((16, 16), "float32")
    tvmscript.build(scheduled(sch), target="llvm -mcpu=znver3")(a, c)
    np.testing.assert_allclose(c, np.where(np.triu(np.ones((16, 16)), 1) > 0, a, a.T) * 3)


def test_cache_write_of_nested_branches_all_storing():
    @T.prim_func
    def nested(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
        B = T.alloc_buffer((16, 16), "float32")
        for i, j in T.grid(16, 16):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                if vi < 8:
                    if vj < 8:
                        B[vi, vj] = A[vi, vj]
                    else:
                        B[vi, vj] = 1.0
                else:
                    x = A[vj, vi] + 1.0
                    B[vi, vj] = x
        for i, j in T.grid(16, 16):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vi, vj] * 3.0

    sch = _sch(nested)
    sch.cache_write("B", 0, "local")  # debug_mask="all" compares the results
    assert [b.name_hint for b in _blocks(scheduled(sch))] == ["B", "B_local", "C"]


def _blocks(func: PrimFunc) -> list[Block]:
    found: list[Block] = []
    post_order_visit(func.body, lambda n: found.append(n) if isinstance(n, Block) else None)
    return [b for b in found if b.name_hint != "root"]


@T.prim_func
def then_only(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16), "float32")
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            if vi < vj:
                B[vi, vj] = A[vi, vj]
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] * 3.0


@T.prim_func
def one_branch_stores(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16), "float32")
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            if vi < vj:
                B[vi, vj] = A[vi, vj]
            else:
                T.evaluate(0)
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] * 3.0


@T.prim_func
def store_in_a_loop_that_may_not_run(
    A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32"), n: T.int32
):
    B = T.alloc_buffer((16, 16), "float32")
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            for _ in range(n):
                B[vi, vj] = A[vi, vj]
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] * 3.0


@pytest.mark.parametrize("func", [then_only, one_branch_stores, store_in_a_loop_that_may_not_run])
def test_cache_write_refuses_a_path_without_the_store(func):
    sch = _sch(func)
    before = scheduled(sch)
    with pytest.raises(ScheduleError, match="must write every element of the 'B' region"):
        sch.cache_write("B", 0, "local")
    assert scheduled(sch) is before


@T.prim_func
def view_writer(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16), "float32")
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B0 = T.match_buffer(B[vi, vj], [], offset_factor=1)
            if vi < vj:
                B0[()] = A[vi, vj]
            else:
                B0[()] = A[vj, vi]
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] * 3.0


@T.prim_func
def view_writer_then_only(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16), "float32")
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B0 = T.match_buffer(B[vi, vj], [], offset_factor=1)
            if vi < vj:
                B0[()] = A[vi, vj]
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] * 3.0


def test_cache_write_counts_stores_through_a_view():
    sch = _sch(view_writer)
    sch.cache_write("B", 0, "local")  # checked by running (debug_mask="all")
    assert "B_local" in [b.name_hint for b in _blocks(scheduled(sch))]
    sch = _sch(view_writer_then_only)
    with pytest.raises(ScheduleError, match="must write every element of the 'B' region"):
        sch.cache_write("B", 0, "local")
