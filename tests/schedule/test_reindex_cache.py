"""reindex_cache_read, reindex_cache_write."""

from __future__ import annotations

import pytest
from sched_checks import assert_same_results, assert_schedule

from tvmscript import tir as T


@T.prim_func
def scale_add(A: T.Buffer((8, 6), "float32"), D: T.Buffer((8, 6), "float32")):
    B = T.alloc_buffer((8, 6))
    for i, j in T.grid(8, 6):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * 3.0
    for i, j in T.grid(8, 6):
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = B[vi, vj] + 2.0


@T.prim_func
def row_sums(A: T.Buffer((4, 6, 5), "float32"), D: T.Buffer((4, 6), "float32")):
    S = T.alloc_buffer((4, 6))
    for a, b, r in T.grid(4, 6, 5):
        with T.block("S"):
            va, vb, vr = T.axis.remap("SSR", [a, b, r])
            with T.init():
                S[va, vb] = T.float32(0)
            S[va, vb] = S[va, vb] + A[va, vb, vr]
    for a, b in T.grid(4, 6):
        with T.block("D"):
            va, vb = T.axis.remap("SS", [a, b])
            D[va, vb] = S[va, vb] * 0.5


def _sch(func):
    return T.Schedule(func, debug_mask="all")


def test_reindex_cache_read_lays_the_copy_out_by_the_iter_vars():
    @T.prim_func
    def expected(A: T.Buffer((8, 6), "float32"), D: T.Buffer((8, 6), "float32")):
        B = T.alloc_buffer((8, 6))
        B_local = T.alloc_buffer((6, 4, 2), scope="local")
        for i, j in T.grid(8, 6):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * 3.0
        for i, j in T.grid(8, 6):
            with T.block("B_local"):
                vi, vj = T.axis.remap("SS", [i, j])
                B_local[vj, vi // 2, vi % 2] = B[vi, vj]
        for i, j in T.grid(8, 6):
            with T.block("D"):
                vi, vj = T.axis.remap("SS", [i, j])
                D[vi, vj] = B_local[vj, vi // 2, vi % 2] + 2.0

    sch = _sch(scale_add)
    stage = sch.reindex_cache_read(sch.get_block("D"), 0, "local", lambda p, q: (q, p // 2, p % 2))
    assert sch.get(stage).name_hint == "B_local"
    assert_schedule(scale_add, sch, expected)


def test_reindex_cache_write_of_a_reduction_copies_back_before_the_reader():
    @T.prim_func
    def expected(A: T.Buffer((4, 6, 5), "float32"), D: T.Buffer((4, 6), "float32")):
        S = T.alloc_buffer((4, 6))
        S_local = T.alloc_buffer((6, 4), scope="local")
        for a, b, r in T.grid(4, 6, 5):
            with T.block("S"):
                va, vb, vr = T.axis.remap("SSR", [a, b, r])
                with T.init():
                    S_local[vb, va] = T.float32(0)
                S_local[vb, va] = S_local[vb, va] + A[va, vb, vr]
        for a, b in T.grid(4, 6):
            with T.block("S_local"):
                va, vb = T.axis.remap("SS", [a, b])
                S[va, vb] = S_local[vb, va]
        for a, b in T.grid(4, 6):
            with T.block("D"):
                va, vb = T.axis.remap("SS", [a, b])
                D[va, vb] = S[va, vb] * 0.5

    sch = _sch(row_sums)
    sch.reindex_cache_write(sch.get_block("S"), 0, "local", lambda p, q, r: (q, p))
    assert_schedule(row_sums, sch, expected)


def test_reindex_cache_refusals():
    sch = _sch(scale_add)
    with pytest.raises(T.ScheduleError, match="not a bijection"):
        sch.reindex_cache_read(sch.get_block("D"), 0, "local", lambda p, q: (q,))
    with pytest.raises(T.ScheduleError, match="not a bijection"):
        sch.reindex_cache_write(sch.get_block("B"), 0, "local", lambda p, q: (p * 2, q))
    sch = _sch(row_sums)
    with pytest.raises(T.ScheduleError, match="use only its spatial ones"):
        sch.reindex_cache_write(sch.get_block("S"), 0, "local", lambda p, q, r: (q, p, r))


def test_reindex_cache_read_refuses_an_outer_block():
    @T.prim_func
    def tiled(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
        for o in range(2):
            with T.block("outer"):
                vo = T.axis.spatial(2, o)
                for e in range(4):
                    with T.block("C"):
                        vc = T.axis.spatial(8, vo * 4 + e)
                        C[vc] = A[vc] + 1.0

    sch = _sch(tiled)
    with pytest.raises(T.ScheduleError, match="leaf block accessing 'A' at one single point"):
        sch.reindex_cache_read(sch.get_block("outer"), 0, "local", lambda p: (p,))
    sch.reindex_cache_read(sch.get_block("C"), 0, "local", lambda p: (p,))
    assert_same_results(tiled, sch)


def test_reindex_cache_takes_a_map_with_star_indices():
    sch = _sch(scale_add)
    sch.reindex_cache_read(sch.get_block("D"), 0, "local", lambda *vs: tuple(reversed(vs)))
    assert "D[vi, vj] = B_local[vj, vi] + T.float32(2" in sch.mod["main"].script()
    assert_same_results(scale_add, sch)


def test_reindex_cache_write_refuses_a_reader_of_the_next_iteration():
    @T.prim_func
    def carried(A: T.Buffer((4, 8), "float32"), C: T.Buffer((4, 8), "float32")):
        B = T.alloc_buffer((8,))
        for t in range(4):
            for i in range(8):
                with T.block("R"):
                    vt, vi = T.axis.remap("SS", [t, i])
                    C[vt, vi] = B[vi]
            for i in range(8):
                with T.block("W"):
                    vi = T.axis.spatial(8, i)
                    B[vi] = A[0, vi]

    sch = _sch(carried)
    with pytest.raises(T.ScheduleError, match="'R' reads 'B' in a loop shared with 'W'"):
        sch.reindex_cache_write(sch.get_block("W"), 0, "local", lambda p: (p,))


def test_reindex_cache_read_of_a_predicated_block_copies_the_loops_of_its_predicate():
    # A random schedule (seed 9292029738) split a unit loop under the block: its predicate
    # names loops that none of its bindings use. The copy stage takes the predicate along,
    # so it must take those loops too; it used to leave them behind (ill-formed result).
    @T.prim_func
    def guarded(A: T.Buffer((6, 4), "int32"), B: T.Buffer((6, 4), "int32")):
        for i, j, u0, u1 in T.grid(6, 4, 2, 2):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.where(u0 * 2 + u1 < 1)
                B[vi, vj] = A[vi, vj] * 3

    @T.prim_func
    def expected(A: T.Buffer((6, 4), "int32"), B: T.Buffer((6, 4), "int32")):
        A_local = T.alloc_buffer((4, 6), "int32", scope="local")
        for i, j, u0, u1 in T.grid(6, 4, 2, 2):
            with T.block("A_local"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.where(u0 * 2 + u1 < 1)
                A_local[vj, vi] = A[vi, vj]
        for i, j, u0, u1 in T.grid(6, 4, 2, 2):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.where(u0 * 2 + u1 < 1)
                B[vi, vj] = A_local[vj, vi] * 3

    sch = _sch(guarded)
    sch.reindex_cache_read(sch.get_block("B"), 0, "local", lambda p, q: (q, p))
    assert_schedule(guarded, sch, expected)


def test_reindex_cache_read_refuses_a_guarded_read_that_leaves_the_buffer():
    # A random schedule (seed 9494030504) padded a layout, so the block read 'P' only where
    # an if_then_else kept the index inside. The copy stage reads at every instance, without
    # the guard: it read past the end of 'P'. Refused now, with or without the debug check.
    @T.prim_func
    def padded(P: T.Buffer((4, 6), "int32"), OUT: T.Buffer((2, 4, 4), "int32")):
        for a, b, c in T.grid(2, 4, 4):
            with T.block("OUT"):
                va, vb, vc = T.axis.remap("SSS", [a, b, c])
                OUT[va, vb, vc] = T.if_then_else(
                    va == 1 and 2 <= vc, va - vc, P[vb, va * 4 + vc]
                )

    for debug in ("all", None):
        sch = T.Schedule(padded, debug_mask=debug) if debug else T.Schedule(padded)
        with pytest.raises(T.ScheduleError, match="index 1 of the read may leave the buffer"):
            sch.reindex_cache_read(sch.get_block("OUT"), 0, "local", lambda p, q, r: (p, q, r))

    # a guarded read whose index stays inside the buffer is copied as before
    @T.prim_func
    def clamped(A: T.Buffer((6, 4), "int32"), OUT: T.Buffer((6, 4), "int32")):
        for i, j in T.grid(6, 4):
            with T.block("OUT"):
                vi, vj = T.axis.remap("SS", [i, j])
                OUT[vi, vj] = T.if_then_else(vj < 3, A[vi, T.min(vj + 1, 3)], 0)

    sch = _sch(clamped)
    sch.reindex_cache_read(sch.get_block("OUT"), 0, "local", lambda p, q: (q, p))
    assert "A_local[vj, vi] = A[vi, T.min(vj + 1, 3)]" in sch.mod["main"].script()
    assert_same_results(clamped, sch)
