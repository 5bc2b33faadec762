"""The exact IR shapes TVM v0.16's loop primitives print, so results compare structurally
equal to TVM's expected programs: unit iterators kept by split, fuse's ``x % (a*b) // b``
pieces, split predicates left as substituted, symbolic splits, refusals of annotated or
thread-bound loops, block names accepted for handles."""

from __future__ import annotations

import pytest
from sched_checks import assert_schedule

from tvmscript import tir as T


@T.prim_func
def scale3(A: T.Buffer((24, 6, 5), "float32"), B: T.Buffer((24, 6, 5), "float32")):
    for x, y, z in T.grid(24, 6, 5):
        with T.block("S"):
            vx, vy, vz = T.axis.remap("SSS", [x, y, z])
            B[vx, vy, vz] = A[vx, vy, vz] + 3.0


def _sch(func):
    return T.Schedule(func, debug_mask="all")


def test_split_keeps_unit_iterators_in_the_binding():
    @T.prim_func
    def expected(A: T.Buffer((24, 6, 5), "float32"), B: T.Buffer((24, 6, 5), "float32")):
        for x_0, x_1, x_2, y, z in T.grid(3, 1, 8, 6, 5):
            with T.block("S"):
                vx = T.axis.spatial(24, x_0 * 8 + x_1 * 8 + x_2)
                vy, vz = T.axis.remap("SS", [y, z])
                B[vx, vy, vz] = A[vx, vy, vz] + 3.0

    sch = _sch(scale3)
    x, _, _ = sch.get_loops("S")
    sch.split(x, [3, 1, 8])
    assert_schedule(scale3, sch, expected)


def test_split_without_unit_iterators_binds_them_away():
    @T.prim_func
    def expected(A: T.Buffer((24, 6, 5), "float32"), B: T.Buffer((24, 6, 5), "float32")):
        for x_0, x_1, x_2, y, z in T.grid(3, 1, 8, 6, 5):
            with T.block("S"):
                vx = T.axis.spatial(24, x_0 * 8 + x_2)
                vy, vz = T.axis.remap("SS", [y, z])
                B[vx, vy, vz] = A[vx, vy, vz] + 3.0

    sch = _sch(scale3)
    x, _, _ = sch.get_loops("S")
    sch.split(x, [3, 1, 8], preserve_unit_iters=False)
    assert_schedule(scale3, sch, expected)


def test_fuse_spells_middle_pieces_as_mod_then_div():
    @T.prim_func
    def expected(A: T.Buffer((24, 6, 5), "float32"), B: T.Buffer((24, 6, 5), "float32")):
        for x_y_z_fused in range(720):
            with T.block("S"):
                vx = T.axis.spatial(24, x_y_z_fused // 30)
                vy = T.axis.spatial(6, x_y_z_fused % 30 // 5)
                vz = T.axis.spatial(5, x_y_z_fused % 5)
                B[vx, vy, vz] = A[vx, vy, vz] + 3.0

    sch = _sch(scale3)
    sch.fuse(*sch.get_loops("S"))
    assert_schedule(scale3, sch, expected)


def test_split_predicate_is_the_substituted_value_unsimplified():
    @T.prim_func
    def expected(A: T.Buffer((24, 6, 5), "float32"), B: T.Buffer((24, 6, 5), "float32")):
        for x, y, z_0, z_1, z_2 in T.grid(24, 6, 2, 2, 2):
            with T.block("S"):
                vx, vy = T.axis.remap("SS", [x, y])
                vz = T.axis.spatial(5, z_0 * 4 + z_1 * 2 + z_2)
                T.where((z_0 * 2 + z_1) * 2 + z_2 < 5)
                B[vx, vy, vz] = A[vx, vy, vz] + 3.0

    sch = _sch(scale3)
    _, _, z = sch.get_loops("S")
    sch.split(z, [2, 2, 2])
    assert_schedule(scale3, sch, expected)


def test_split_of_a_symbolic_extent_infers_a_ceiling_factor():
    @T.prim_func
    def ragged(a: T.handle, b: T.handle, m: T.int32):
        A = T.match_buffer(a, (m,))
        B = T.match_buffer(b, (m,))
        for t in range(m):
            with T.block("R"):
                vt = T.axis.spatial(m, t)
                B[vt] = A[vt] - 1.0

    @T.prim_func
    def expected(a: T.handle, b: T.handle, m: T.int32):
        A = T.match_buffer(a, (m,))
        B = T.match_buffer(b, (m,))
        for t_0, t_1 in T.grid(T.floordiv(m + 7, 8), 8):
            with T.block("R"):
                vt = T.axis.spatial(m, t_0 * 8 + t_1)
                T.where(t_0 * 8 + t_1 < m)
                B[vt] = A[vt] - 1.0

    sch = _sch(ragged)
    (t,) = sch.get_loops("R")
    sch.split(t, [None, 8])
    assert_schedule(ragged, sch, expected)
    sch2 = _sch(ragged)
    with pytest.raises(T.ScheduleError, match="one factor must be None"):
        sch2.split(sch2.get_loops("R")[0], [4, 8])


def test_split_and_fuse_refuse_annotated_or_bound_loops():
    @T.prim_func
    def marked(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32")):
        for p in range(8):
            for q in T.serial(8, annotations={"hint": 1}):
                with T.block("M"):
                    vp, vq = T.axis.remap("SS", [p, q])
                    B[vp, vq] = A[vp, vq]

    sch = _sch(marked)
    p, q = sch.get_loops("M")
    with pytest.raises(T.ScheduleError, match="annotations or a thread binding"):
        sch.split(q, [2, 4])
    with pytest.raises(T.ScheduleError, match="annotations or a thread binding"):
        sch.fuse(p, q)
    sch3 = _sch(scale3)
    x, _, _ = sch3.get_loops("S")
    sch3.bind(x, "blockIdx.x")
    with pytest.raises(T.ScheduleError, match="annotations or a thread binding"):
        sch3.split(x, [None, 4])


def test_serial_from_zero_has_the_stop_as_extent():
    @T.prim_func
    def f(a: T.handle, n: T.int32):
        A = T.match_buffer(a, (n,))
        for i in T.serial(0, n * 4 // 4):
            A[i] = 0.0

    loop = f.body
    while not hasattr(loop, "loop_var"):
        loop = loop.body
    assert str(loop.extent) == str(f.params[1] * 4 // 4)


def test_compute_at_errors_use_tvm_wording():
    @T.prim_func
    def two(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32"), D: T.Buffer((8,), "float32")):
        Bt = T.alloc_buffer((8,))
        for i in range(8):
            with T.block("B"):
                vi = T.axis.spatial(8, i)
                Bt[vi] = A[vi] + 1.0
        for i in range(8):
            with T.block("C"):
                vi = T.axis.spatial(8, i)
                C[vi] = Bt[vi] * 2.0
        for i in range(8):
            with T.block("D"):
                vi = T.axis.spatial(8, i)
                D[vi] = Bt[vi] * 3.0

    sch = _sch(two)
    (c_loop,) = sch.get_loops("C")
    with pytest.raises(T.ScheduleError, match="requires all the consumers"):
        sch.compute_at("B", c_loop)
    (b_loop,) = sch.get_loops("B")
    with pytest.raises(T.ScheduleError, match="ancestor of block"):
        sch.compute_at("B", b_loop)
    (d_loop,) = sch.get_loops("D")
    with pytest.raises(T.ScheduleError, match="output block"):
        sch.compute_at("C", d_loop)
