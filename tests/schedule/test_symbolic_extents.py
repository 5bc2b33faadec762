"""Loops with symbolic extents: a split of ``n * 16`` by 16 is exact (no guard), compute_at
proves a symbolic guard redundant (``k_0 * 16 + ax0 < n * 16`` for ``k_0 < n``), and blocks
bound by ``fused // n``, ``fused % n`` move (reductions too) by a mixed-radix proof over
monomials of the shape vars instead of constant extents."""

from __future__ import annotations

import numpy as np
import pytest
from sched_checks import assert_structure, scheduled

from tvmscript import build
from tvmscript import tir as T

TARGET = "llvm -mcpu=znver3"


@T.prim_func
def copy_rows(x: T.handle, y: T.handle, n: T.int64):
    X = T.match_buffer(x, (T.int64(4), n * 16))
    Y = T.match_buffer(y, (T.int64(4), n * 16))
    for i, k in T.grid(T.int64(4), n * 16):
        with T.block("Y"):
            vi, vk = T.axis.remap("SS", [i, k])
            Y[vi, vk] = X[vi, vk] + 1.0


@T.prim_func
def copy_rows_staged(x: T.handle, y: T.handle, n: T.int64):
    X = T.match_buffer(x, (T.int64(4), n * 16))
    Y = T.match_buffer(y, (T.int64(4), n * 16))
    X_global = T.alloc_buffer((T.int64(4), n * 16))
    for i, k_0 in T.grid(T.int64(4), n):
        for ax0 in range(T.int64(16)):
            with T.block("X_global"):
                v0 = T.axis.spatial(T.int64(4), i)
                v1 = T.axis.spatial(n * 16, k_0 * 16 + ax0)
                X_global[v0, v1] = X[v0, v1]
        for k_1 in range(T.int64(16)):
            with T.block("Y"):
                vi = T.axis.spatial(T.int64(4), i)
                vk = T.axis.spatial(n * 16, k_0 * 16 + k_1)
                Y[vi, vk] = X_global[vi, vk] + 1.0


def test_a_split_of_a_multiple_is_exact():
    sch = T.Schedule(copy_rows, debug_mask="all")
    _, k = sch.get_loops(sch.get_block("Y"))
    sch.split(k, [None, 16])
    text = scheduled(sch).script()
    assert "T.grid(T.int64(4), n, T.int64(16))" in text
    assert "T.where" not in text


def test_a_split_of_a_non_multiple_keeps_its_guard():
    @T.prim_func
    def odd(x: T.handle, n: T.int64):
        X = T.match_buffer(x, (n * 16 + 8,))
        for k in range(n * 16 + 8):
            with T.block("X"):
                vk = T.axis.spatial(n * 16 + 8, k)
                X[vk] = 0.0

    sch = T.Schedule(odd, debug_mask="all")
    sch.split(sch.get_loops(sch.get_block("X"))[0], [None, 16])
    assert "T.where(k_0 * T.int64(16) + k_1 < n * T.int64(16) + T.int64(8))" in (
        scheduled(sch).script()
    )


def test_cache_read_then_compute_at_under_a_symbolic_split():
    sch = T.Schedule(copy_rows, debug_mask="all")
    block = sch.get_block("Y")
    _, k = sch.get_loops(block)
    k_0, _ = sch.split(k, [None, 16])
    stage = sch.cache_read(block, 0, "global")
    sch.compute_at(stage, k_0)
    assert_structure(sch, copy_rows_staged)
    x = np.random.default_rng(0).standard_normal((4, 48)).astype("float32")
    y = np.zeros_like(x)
    build(scheduled(sch), target=TARGET)(x, y, 3)
    np.testing.assert_array_equal(y, x + 1)


@T.prim_func
def fused_sum(a: T.handle, c: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (4, n, 8))
    C = T.match_buffer(c, (4, n))
    P = T.alloc_buffer((4, n, 8))
    for f, k in T.grid(n * 4, 8):
        with T.block("P"):
            v0 = T.axis.spatial(4, f // n)
            v1 = T.axis.spatial(n, f % n)
            vk = T.axis.spatial(8, k)
            P[v0, v1, vk] = A[v0, v1, vk] * 2.0
    for f, k in T.grid(n * 4, 8):
        with T.block("C"):
            v0 = T.axis.spatial(4, f // n)
            v1 = T.axis.spatial(n, f % n)
            vk = T.axis.reduce(8, k)
            with T.init():
                C[v0, v1] = 0.0
            C[v0, v1] = C[v0, v1] + P[v0, v1, vk]


@T.prim_func
def fused_sum_reverse(a: T.handle, c: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (4, n, 8))
    C = T.match_buffer(c, (4, n))
    P = T.alloc_buffer((4, n, 8))
    for f in range(n * 4):
        for k in range(8):
            with T.block("P"):
                v0 = T.axis.spatial(4, f // n)
                v1 = T.axis.spatial(n, f % n)
                vk = T.axis.spatial(8, k)
                P[v0, v1, vk] = A[v0, v1, vk] * 2.0
        for ax0 in range(8):
            with T.block("C"):
                v0 = T.axis.spatial(4, f // n)
                v1 = T.axis.spatial(n, f % n)
                vk = T.axis.reduce(8, ax0)
                with T.init():
                    C[v0, v1] = 0.0
                C[v0, v1] = C[v0, v1] + P[v0, v1, vk]


def _run_sum(func: object) -> None:
    a = np.random.default_rng(1).standard_normal((4, 3, 8)).astype("float32")
    c = np.zeros((4, 3), "float32")
    build(func, target=TARGET)(a, c)
    np.testing.assert_allclose(c, (a * 2).sum(axis=2), rtol=1e-5)


def test_reverse_compute_at_of_a_reduction_bound_by_fused_digits():
    sch = T.Schedule(fused_sum, debug_mask="all")
    sch.reverse_compute_at(sch.get_block("C"), sch.get_loops("P")[0])
    assert_structure(sch, fused_sum_reverse)
    _run_sum(scheduled(sch))


def test_compute_at_of_a_producer_bound_by_fused_digits():
    sch = T.Schedule(fused_sum, debug_mask="all")
    sch.compute_at(sch.get_block("P"), sch.get_loops("C")[0])
    text = scheduled(sch).script()
    assert "for ax0 in range(8):" in text and "vk = T.axis.spatial(8, ax0)" in text
    _run_sum(scheduled(sch))


def test_digits_by_another_shape_var_are_refused():
    # f runs over n * 4 but is read in digits of m: nothing shows they cover the domains once
    @T.prim_func
    def mixed(a: T.handle, c: T.handle):
        n = T.int32()
        m = T.int32()
        A = T.match_buffer(a, (4, n))
        C = T.match_buffer(c, (4, n))
        B = T.alloc_buffer((4, n))
        for f in range(n * 4):
            with T.block("B"):
                v0 = T.axis.spatial(4, f // m)
                v1 = T.axis.spatial(n, f % m)
                B[v0, v1] = A[v0, v1]
        for i, j in T.grid(4, n):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vi, vj]

    sch = T.Schedule(mixed, debug_mask="all")
    with pytest.raises(T.ScheduleError, match="does not have affine bindings"):
        sch.compute_at(sch.get_block("B"), sch.get_loops("C")[0])


def test_digits_covering_part_of_a_domain_are_refused():
    # f // (n * 2) over n * 4 iterations takes 2 values, not the 4 of v0's domain
    @T.prim_func
    def half(a: T.handle, c: T.handle):
        n = T.int32()
        A = T.match_buffer(a, (4, n))
        C = T.match_buffer(c, (4, n))
        B = T.alloc_buffer((4, n))
        for i, j in T.grid(4, n):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj]
        for f in range(n * 4):
            with T.block("C"):
                v0 = T.axis.spatial(4, f // (n * 2))
                v1 = T.axis.spatial(n, f % n)
                C[v0, v1] = B[v0, v1]

    sch = T.Schedule(half, debug_mask="all")
    with pytest.raises(T.ScheduleError, match="do not cover the domain of its iter var 'v0'"):
        sch.reverse_compute_at(sch.get_block("C"), sch.get_loops("B")[0])


@T.prim_func
def shape_var_in_a_product_only(a: T.handle, b: T.handle):
    n = T.int64()
    A = T.match_buffer(a, (n * 16,), "float32")
    B = T.match_buffer(b, (n * 16,), "float32")
    for i in range(n * 16):
        with T.block("B"):
            vi = T.axis.spatial(n * 16, i)
            B[vi] = A[vi] + T.float32(1)


def test_a_function_not_well_formed_as_given_is_still_scheduled():
    # No parameter defines n (the build refuses the function, as TVM's does); the schedule
    # works on it as TVM's does, and its debug check blames a primitive only for problems
    # the primitive made.
    sch = T.Schedule(shape_var_in_a_product_only, debug_mask="all")
    (i,) = sch.get_loops("B")
    outer, inner = sch.split(i, [None, 16])
    assert sch.get(outer).extent.name == "n"
    assert sch.get(inner).extent.value == 16
    with pytest.raises(ValueError, match=r"shape\[0\] = \(n \* 16\) uses 'n', which no "
                                         r"parameter defines"):
        build(shape_var_in_a_product_only, target="interp")
