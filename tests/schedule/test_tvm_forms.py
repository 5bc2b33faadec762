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


@T.prim_func
def rowmax(A: T.Buffer((6, 20), "float32"), M: T.Buffer((6,), "float32")):
    for r, c in T.grid(6, 20):
        with T.block("M"):
            T.block_attr({"keep": 7})
            vr, vc = T.axis.remap("SR", [r, c])
            with T.init():
                M[vr] = T.float32(-1e30)
            M[vr] = T.max(M[vr], A[vr, vc])


def test_decompose_reduction_drops_a_reduction_guard_that_held_at_the_init():
    @T.prim_func
    def expected(A: T.Buffer((6, 20), "float32"), M: T.Buffer((6,), "float32")):
        for r_init in range(6):
            with T.block("M_init"):
                T.block_attr({"keep": 7})
                vr = T.axis.spatial(6, r_init)
                M[vr] = T.float32(-1e30)
        for r, c_0, c_1 in T.grid(6, 3, 7):
            with T.block("M_update"):
                    T.block_attr({"keep": 7})
                    vr = T.axis.spatial(6, r)
                    vc = T.axis.reduce(20, c_0 * 7 + c_1)
                    T.where(c_0 * 7 + c_1 < 20)
                    M[vr] = T.max(M[vr], A[vr, vc])

    sch = _sch(rowmax)
    r, c = sch.get_loops("M")
    sch.split(c, [3, 7])
    sch.decompose_reduction("M", r)
    assert_schedule(rowmax, sch, expected)


def test_decompose_reduction_refuses_a_guard_false_at_the_first_reduction_step():
    @T.prim_func
    def skipping(A: T.Buffer((6, 20), "float32"), M: T.Buffer((6,), "float32")):
        for r, c in T.grid(6, 20):
            with T.block("M"):
                vr, vc = T.axis.remap("SR", [r, c])
                T.where(c >= 3)
                with T.init():
                    M[vr] = T.float32(0)
                M[vr] = M[vr] + A[vr, vc]

    sch = _sch(skipping)
    r, _ = sch.get_loops("M")
    with pytest.raises(T.ScheduleError, match="does not provably hold where the init ran"):
        sch.decompose_reduction("M", r)


def test_decompose_reduction_copies_loop_kinds_with_their_own_thread_var():
    @T.prim_func
    def vec(A: T.Buffer((9, 16), "float32"), S: T.Buffer((16,), "float32")):
        for k in range(9):
            for j in T.vectorized(16):
                with T.block("S"):
                    vk, vj = T.axis.remap("RS", [k, j])
                    with T.init():
                        S[vj] = T.float32(0)
                    S[vj] = S[vj] + A[vk, vj]

    @T.prim_func
    def expected(A: T.Buffer((9, 16), "float32"), S: T.Buffer((16,), "float32")):
        for j_init in T.vectorized(16):
            with T.block("S_init"):
                vj = T.axis.spatial(16, j_init)
                S[vj] = T.float32(0)
        for k in range(9):
            for j in T.vectorized(16):
                with T.block("S_update"):
                    vk, vj = T.axis.remap("RS", [k, j])
                    S[vj] = S[vj] + A[vk, vj]

    sch = _sch(vec)
    k, _ = sch.get_loops("S")
    init = sch.decompose_reduction("S", k)
    assert_schedule(vec, sch, expected)
    assert sch.get(init).same_as(sch.get(sch.get_block("S_init")))

    @T.prim_func
    def bound(A: T.Buffer((8, 4), "float32"), S: T.Buffer((8,), "float32")):
        for t in T.thread_binding(8, thread="threadIdx.x"):
            for k in range(4):
                with T.block("S"):
                    vt, vk = T.axis.remap("SR", [t, k])
                    with T.init():
                        S[vt] = T.float32(0)
                    S[vt] = S[vt] + A[vt, vk]

    sch = T.Schedule(bound)
    t, _ = sch.get_loops("S")
    sch.decompose_reduction("S", t)
    init_loop, update_loop = sch.mod["main"].body.seq
    assert init_loop.thread_binding.thread_tag == "threadIdx.x"
    assert init_loop.thread_binding.var is not update_loop.thread_binding.var


def test_explicit_empty_root_block_is_the_implicit_root():
    @T.prim_func
    def explicit(A: T.Buffer((4,), "float32")):
        with T.block("root"):
            T.reads()
            T.writes()
            for i in range(4):
                A[i] = 0.0

    @T.prim_func
    def implicit(A: T.Buffer((4,), "float32")):
        for i in range(4):
            A[i] = 0.0

    from irbuilder.ir.structural import assert_structural_equal

    assert_structural_equal(explicit, implicit)


def test_block_names_count_unless_asked_for_tvms_rule():
    from irbuilder.ir.structural import structural_equal

    @T.prim_func
    def one(A: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("first"):
                vi = T.axis.spatial(4, i)
                A[vi] = 0.0

    @T.prim_func
    def other(A: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("second"):
                vi = T.axis.spatial(4, i)
                A[vi] = 0.0

    assert structural_equal(one, other)  # TVM's rule: block names are not compared
    assert not structural_equal(one, other, compare_block_names=True)


def test_blockize_keeps_a_unit_outer_loop_as_the_outer_binding():
    @T.prim_func
    def tiles(A: T.Buffer((4, 24), "float32"), B: T.Buffer((4, 24), "float32")):
        for p, q, r, s in T.grid(1, 3, 4, 8):
            with T.block("B"):
                vr = T.axis.spatial(4, p * 4 + r)
                vs = T.axis.spatial(24, q * 8 + s)
                B[vr, vs] = A[vr, vs] - 1.0

    for keep in (True, False):
        sch = _sch(tiles)
        _, _, r, _ = sch.get_loops("B")
        sch.blockize(r, preserve_unit_iters=keep)
        text = sch.mod.script()
        outer = 'vr_o, vs_o = T.axis.remap("SS", [p, q])' if keep else "vr_o = T.axis.spatial(1, 0)"
        assert outer in text
        assert "B[vr_i, vs_o * 8 + vs_i] = A[vr_i, vs_o * 8 + vs_i]" in text


def test_slice_extent_folds_when_the_variables_cancel():
    @T.prim_func
    def f(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
        for t in range(4):
            with T.block("copy"):
                vt = T.axis.spatial(4, t)
                T.reads(A[vt * 16 : vt * 16 + 16])
                T.writes(B[vt * 16 : vt * 16 + 16])
                for u in range(16):
                    B[vt * 16 + u] = A[vt * 16 + u]

    block = f.body.block.body.body.block  # below the implicit root block
    assert [getattr(r.region[0].extent, "value", None) for r in block.reads + block.writes] == [
        16,
        16,
    ]


def test_render_levels_and_a_missing_block_in_tvm_words():
    texts = {}
    for level in ("detail", "fast", "none"):
        sch = T.Schedule(scale3, error_render_level=level)
        with pytest.raises(T.ScheduleError) as info:
            sch.get_block("nowhere")
        texts[level] = str(info.value)
    assert "Cannot find a block with the name: nowhere" in texts["detail"]
    assert texts["fast"].endswith("Cannot find a block with the specified name")
    assert texts["none"].endswith("(not rendered)")


def test_trace_decisions_are_keyed_by_instruction():
    sch = T.Schedule(scale3, seed=5)
    x, _, _ = sch.get_loops("S")
    tiles = sch.sample_perfect_tile(x, n=2)
    pick = sch.sample_categorical([3, 4], [0.5, 0.5])
    decisions = sch.trace.decisions
    sampled = [inst for inst in sch.trace.insts if inst.kind.name.startswith("Sample")]
    assert len(sampled) == 2 and all(inst in decisions for inst in sampled)
    assert [sch.get(t) for t in tiles] == list(decisions[sampled[0]])
    assert sch.get(pick) == [3, 4][decisions[sampled[1]]]


def test_empty_scope_is_global_and_srefs_and_unknown_handles():
    @T.prim_func
    def scoped(A: T.Buffer((4,), "float32")):
        B = T.alloc_buffer((4,), scope="")
        for i in range(4):
            with T.block("B"):
                vi = T.axis.spatial(4, i)
                B[vi] = A[vi]

    (buffer,) = scoped.body.block.alloc_buffers
    assert buffer.scope == "global" and buffer.data.type_annotation.scope == "global"
    sch = T.Schedule(scoped)
    rv = sch.get_block("B")
    assert sch.get_sref(rv).stmt is sch.get(rv) and sch.get_sref(rv) is sch.get_sref(rv)
    other = sch.copy()
    assert not other.get_sref(rv).same_as(sch.get_sref(rv))
    sch.remove_rv(rv)
    with pytest.raises(IndexError):
        sch.get(rv)


def test_storage_align_again_on_the_same_axis_replaces_the_entry():
    @T.prim_func
    def staged(A: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
        Bt = T.alloc_buffer((8, 8))
        for i, j in T.grid(8, 8):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                Bt[vi, vj] = A[vi, vj] + 1.0
        for i, j in T.grid(8, 8):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = Bt[vi, vj]

    sch = _sch(staged)
    sch.storage_align("B", 0, axis=0, factor=8, offset=1)
    sch.storage_align("B", 0, axis=1, factor=4, offset=2)
    sch.storage_align("B", 0, axis=0, factor=8, offset=3)
    assert [list(e) for e in sch.get(sch.get_block("B")).annotations["buffer_dim_align"]] == [
        [0, 1, 4, 2],
        [0, 0, 8, 3],
    ]


def test_reindex_by_name_folds_constant_index_parts_and_swaps_regions():
    @T.prim_func
    def grouped(
        X: T.Buffer((10, 4), "float32"), W: T.Buffer((8, 4), "float32"), Y: T.Buffer((10, 8), "float32")
    ):
        for p, q, r in T.grid(10, 8, 4):
            with T.block("Y"):
                vp, vq, vr = T.axis.remap("SSR", [p, q, r])
                with T.init():
                    Y[vp, vq] = T.float32(0)
                Y[vp, vq] = Y[vp, vq] + X[vp, vq // 8 * 4 + vr] * W[vq, vr]

    @T.prim_func
    def expected(
        X: T.Buffer((10, 4), "float32"), W: T.Buffer((8, 4), "float32"), Y: T.Buffer((10, 8), "float32")
    ):
        X_reindex = T.alloc_buffer((10, 4))
        for ax0, ax1 in T.grid(10, 4):
            with T.block("X_reindex"):
                v0, v1 = T.axis.remap("SS", [ax0, ax1])
                X_reindex[v0, v1] = X[v0, v1]
        for p, q, r in T.grid(10, 8, 4):
            with T.block("Y"):
                vp, vq, vr = T.axis.remap("SSR", [p, q, r])
                T.reads(X_reindex[vp, vr], W[vq, vr])
                T.writes(Y[vp, vq])
                with T.init():
                    Y[vp, vq] = T.float32(0)
                Y[vp, vq] = Y[vp, vq] + X_reindex[vp, vr] * W[vq, vr]

    sch = _sch(grouped)
    sch.reindex("Y", "X")
    assert_schedule(grouped, sch, expected)

    sch2 = _sch(grouped)
    sch2.reindex("Y", "Y")  # read and written: the write side, as TVM
    text = sch2.mod.script()
    assert 'with T.block("Y_reindex")' in text and "Y[v0, v1] = Y_reindex[v0, v1]" in text
    assert "T.writes(Y_reindex[vp, vq])" in text


def test_reverse_compute_at_requires_every_producer_under_the_loop():
    @T.prim_func
    def joined(A: T.Buffer((8,), "float32"), D: T.Buffer((8,), "float32")):
        Bt = T.alloc_buffer((8,))
        Ct = T.alloc_buffer((8,))
        for i in range(8):
            with T.block("B"):
                vi = T.axis.spatial(8, i)
                Bt[vi] = A[vi] + 1.0
        for i in range(8):
            with T.block("C"):
                vi = T.axis.spatial(8, i)
                Ct[vi] = A[vi] * 2.0
        for i in range(8):
            with T.block("D"):
                vi = T.axis.spatial(8, i)
                D[vi] = Bt[vi] + Ct[vi]

    sch = _sch(joined)
    (c_loop,) = sch.get_loops("C")
    with pytest.raises(T.ScheduleError, match="requires all the producers of block 'D'"):
        sch.reverse_compute_at("D", c_loop)


def test_compute_inline_also_rewrites_a_guard_that_reads_the_inlined_buffer():
    @T.prim_func
    def guarded(A: T.Buffer((6, 6), "float32"), C: T.Buffer((6, 6), "float32")):
        Bt = T.alloc_buffer((6, 6))
        for i, j in T.grid(6, 6):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                Bt[vi, vj] = A[vi, vj] - 0.5
        for i, j in T.grid(6, 6):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.where(Bt[i, j] < 0.0)
                C[vi, vj] = Bt[vi, vj] * 3.0

    @T.prim_func
    def expected(A: T.Buffer((6, 6), "float32"), C: T.Buffer((6, 6), "float32")):
        for i, j in T.grid(6, 6):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.where(A[i, j] - 0.5 < 0.0)
                C[vi, vj] = (A[vi, vj] - 0.5) * 3.0

    sch = _sch(guarded)
    sch.compute_inline("B")
    assert_schedule(guarded, sch, expected)
