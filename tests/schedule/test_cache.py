"""cache_read, cache_write, set_scope."""

from __future__ import annotations

import pytest
from sched_checks import assert_same_results, assert_schedule

from irbuilder.ir import Block, post_order_visit
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
    with pytest.raises(T.ScheduleError, match="written by 2 blocks of the scope"):
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
        for i, j in T.grid(16, 8):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B_local[vi, vj] + 1.0
        for ax0, ax1 in T.grid(16, 8):
            with T.block("B_local"):
                v0, v1 = T.axis.remap("SS", [ax0, ax1])
                B[v0, v1] = B_local[v0, v1]

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

    @T.prim_func
    def partial(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
        B = T.alloc_buffer((8,))
        for i in range(4):
            with T.block("B1"):
                vi = T.axis.spatial(4, i)
                B[vi] = A[vi] * 2.0
        for i in range(8):
            with T.block("C"):
                vi = T.axis.spatial(8, i)
                C[vi] = B[vi]

    sch = _sch(rewritten)
    with pytest.raises(T.ScheduleError, match="'B' is written by 2 blocks of the scope"):
        sch.cache_write(sch.get_block("B0"), 0, "local", consumer_blocks=[sch.get_block("C")])
    sch = _sch(partial)
    with pytest.raises(T.ScheduleError, match="may read 'B' outside what 'B1' produces"):
        sch.cache_write(sch.get_block("B1"), 0, "local", consumer_blocks=[sch.get_block("C")])


@T.prim_func
def tiled_pipeline(A: T.Buffer((32,), "float32"), D: T.Buffer((32,), "float32")):
    B = T.alloc_buffer((32,))
    C = T.alloc_buffer((32,))
    for t in range(4):
        for e in range(8):
            with T.block("B"):
                vb = T.axis.spatial(32, t * 8 + e)
                B[vb] = A[vb] + 1.0
        for e in range(8):
            with T.block("C"):
                vc = T.axis.spatial(32, t * 8 + e)
                C[vc] = B[vc] * 3.0
    for k in range(32):
        with T.block("D"):
            vd = T.axis.spatial(32, k)
            D[vd] = B[vd] - C[vd]


def test_cache_read_goes_after_its_producer_inside_the_shared_loop():
    @T.prim_func
    def expected(A: T.Buffer((32,), "float32"), D: T.Buffer((32,), "float32")):
        B = T.alloc_buffer((32,))
        C = T.alloc_buffer((32,))
        B_local = T.alloc_buffer((32,), scope="local")
        for t in range(4):
            for e in range(8):
                with T.block("B"):
                    vb = T.axis.spatial(32, t * 8 + e)
                    B[vb] = A[vb] + 1.0
            for ax0 in range(8):
                with T.block("B_local"):
                    v0 = T.axis.spatial(32, t * 8 + ax0)
                    B_local[v0] = B[v0]
            for e in range(8):
                with T.block("C"):
                    vc = T.axis.spatial(32, t * 8 + e)
                    C[vc] = B_local[vc] * 3.0
        for k in range(32):
            with T.block("D"):
                vd = T.axis.spatial(32, k)
                D[vd] = B_local[vd] - C[vd]

    sch = _sch(tiled_pipeline)
    sch.cache_read(sch.get_block("C"), 0, "local")
    assert_schedule(tiled_pipeline, sch, expected)


def test_cache_read_of_only_the_named_consumers():
    # consumer_blocks names exactly the blocks that read the cache: C keeps reading B,
    # and the copy goes after the producer's loop, before D
    sch = _sch(tiled_pipeline)
    sch.cache_read(sch.get_block("C"), 0, "local", consumer_blocks=[sch.get_block("D")])
    func = sch.mod["main"]
    root = func.body.block.body
    assert [type(s).__name__ for s in root.seq] == ["For", "For", "For"]
    assert "B_local[v0] = B[v0]" in func.script()
    assert "C[vc] = B[vc] * T.float32(3" in func.script()
    assert "D[vd] = B_local[vd] - C[vd]" in func.script()


def test_cache_write_copies_back_before_the_first_reader_in_the_loop():
    @T.prim_func
    def expected(A: T.Buffer((32,), "float32"), D: T.Buffer((32,), "float32")):
        B = T.alloc_buffer((32,))
        C = T.alloc_buffer((32,))
        B_local = T.alloc_buffer((32,), scope="local")
        for t in range(4):
            for e in range(8):
                with T.block("B"):
                    vb = T.axis.spatial(32, t * 8 + e)
                    B_local[vb] = A[vb] + 1.0
            for ax0 in range(8):
                with T.block("B_local"):
                    v0 = T.axis.spatial(32, t * 8 + ax0)
                    B[v0] = B_local[v0]
            for e in range(8):
                with T.block("C"):
                    vc = T.axis.spatial(32, t * 8 + e)
                    C[vc] = B[vc] * 3.0
        for k in range(32):
            with T.block("D"):
                vd = T.axis.spatial(32, k)
                D[vd] = B[vd] - C[vd]

    sch = _sch(tiled_pipeline)
    sch.cache_write(sch.get_block("B"), 0, "local")
    assert_schedule(tiled_pipeline, sch, expected)


def test_cache_of_a_buffer_with_two_producers_is_refused():
    @T.prim_func
    def two_writers(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
        B = T.alloc_buffer((8,))
        for i in range(8):
            with T.block("B0"):
                vi = T.axis.spatial(8, i)
                B[vi] = A[vi]
        for i in range(8):
            with T.block("B1"):
                vi = T.axis.spatial(8, i)
                B[vi] = B[vi] * 2.0
        for i in range(8):
            with T.block("C"):
                vi = T.axis.spatial(8, i)
                C[vi] = B[vi]

    sch = _sch(two_writers)
    with pytest.raises(T.ScheduleError, match="'B' is written by 2 blocks of the scope"):
        sch.cache_read(sch.get_block("C"), 0, "local")
    with pytest.raises(T.ScheduleError, match="'B' is written by 2 blocks of the scope"):
        sch.cache_write(sch.get_block("B0"), 0, "local")


def test_cache_read_of_an_input_read_before_its_producer():
    @T.prim_func
    def swap_in(X: T.Buffer((8,), "int32"), Y: T.Buffer((8,), "int32")):
        for i in range(8):
            with T.block("load"):
                vi = T.axis.spatial(8, i)
                Y[vi] = X[vi]
        for i in range(8):
            with T.block("store"):
                vi = T.axis.spatial(8, i)
                X[vi] = Y[vi] + 1

    sch = _sch(swap_in)
    sch.cache_read(sch.get_block("load"), 0, "local")
    text = sch.mod["main"].script()
    assert text.index("X_local[v0] = X[v0]") < text.index("Y[vi] = X_local[vi]")
    assert_same_results(swap_in, sch)


def test_cache_write_refuses_a_writer_that_skips_elements_of_its_span():
    @T.prim_func
    def strided(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
        B = T.alloc_buffer((16,))
        for i in range(8):
            with T.block("B"):
                vi = T.axis.spatial(16, i * 2)
                B[vi] = A[vi]
        for i in range(16):
            with T.block("C"):
                vi = T.axis.spatial(16, i)
                C[vi] = B[vi]

    sch = _sch(strided)
    with pytest.raises(T.ScheduleError, match="must write every element"):
        sch.cache_write(sch.get_block("B"), 0, "local")


def test_cache_copies_of_int64_buffers_loop_in_int64():
    @T.prim_func
    def wide(A: T.Buffer((T.int64(8),), "float32"), C: T.Buffer((T.int64(8),), "float32")):
        for i in range(8):
            with T.block("C"):
                vi = T.axis.spatial(8, i)
                C[vi] = A[vi] * 2.0

    sch = _sch(wide)
    sch.cache_read(sch.get_block("C"), 0, "local")
    loop = sch.mod["main"].body.block.body.seq[0]
    assert str(loop.loop_var.dtype) == "int64"
    assert_same_results(wide, sch)


@T.prim_func
def tiles(A: T.Buffer((16, 8), "float32"), C: T.Buffer((16, 8), "float32")):
    for t in range(4):
        with T.block("tile"):
            vt = T.axis.spatial(4, t)
            for r, c in T.grid(4, 8):
                with T.block("C"):
                    vr, vc = T.axis.remap("SS", [r, c])
                    C[vt * 4 + vr, vc] = A[vt * 4 + vr, vc] * 2.0


def test_cache_read_under_a_block_has_the_shape_of_the_region_read():
    @T.prim_func
    def expected(A: T.Buffer((16, 8), "float32"), C: T.Buffer((16, 8), "float32")):
        for t in range(4):
            with T.block("tile"):
                vt = T.axis.spatial(4, t)
                A_local = T.alloc_buffer((4, 8), scope="local")
                for ax0, ax1 in T.grid(4, 8):
                    with T.block("A_local"):
                        v0, v1 = T.axis.remap("SS", [ax0, ax1])
                        A_local[v0, v1] = A[vt * 4 + v0, v1]
                for r, c in T.grid(4, 8):
                    with T.block("C"):
                        vr, vc = T.axis.remap("SS", [r, c])
                        C[vt * 4 + vr, vc] = A_local[vr, vc] * 2.0

    sch = _sch(tiles)
    sch.cache_read(sch.get_block("C"), 0, "local")
    assert_schedule(tiles, sch, expected)


def test_cache_write_under_a_block_has_the_shape_of_the_region_written():
    @T.prim_func
    def expected(A: T.Buffer((16, 8), "float32"), C: T.Buffer((16, 8), "float32")):
        for t in range(4):
            with T.block("tile"):
                vt = T.axis.spatial(4, t)
                C_local = T.alloc_buffer((4, 8), scope="local")
                for r, c in T.grid(4, 8):
                    with T.block("C"):
                        vr, vc = T.axis.remap("SS", [r, c])
                        C_local[vr, vc] = A[vt * 4 + vr, vc] * 2.0
                for ax0, ax1 in T.grid(4, 8):
                    with T.block("C_local"):
                        v0, v1 = T.axis.remap("SS", [ax0, ax1])
                        C[vt * 4 + v0, v1] = C_local[v0, v1]

    sch = _sch(tiles)
    sch.cache_write(sch.get_block("C"), 0, "local")
    assert_schedule(tiles, sch, expected)


def test_cache_read_by_default_leaves_the_producer_reading_the_buffer():
    @T.prim_func
    def row_sum(A: T.Buffer((8, 4), "float32"), C: T.Buffer((8,), "float32")):
        B = T.alloc_buffer((8,))
        for i, k in T.grid(8, 4):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vk]
        for i in range(8):
            with T.block("C"):
                vi = T.axis.spatial(8, i)
                C[vi] = B[vi] * 2.0

    sch = _sch(row_sum)
    sch.cache_read(sch.get_block("C"), 0, "local")
    text = sch.mod["main"].script()
    assert "B[vi] = B[vi] + A[vi, vk]" in text
    assert "B_local[v0] = B[v0]" in text
    assert_same_results(row_sum, sch)


def test_cache_write_of_a_guarded_split_copies_back_the_guarded_range():
    @T.prim_func
    def guarded(A: T.Buffer((10,), "float32"), C: T.Buffer((10,), "float32")):
        for o, e in T.grid(3, 4):
            with T.block("C"):
                T.where(o * 4 + e < 10)
                vc = T.axis.spatial(10, o * 4 + e)
                C[vc] = A[vc] + 1.0

    @T.prim_func
    def expected(A: T.Buffer((10,), "float32"), C: T.Buffer((10,), "float32")):
        C_local = T.alloc_buffer((10,), scope="local")
        for o, e in T.grid(3, 4):
            with T.block("C"):
                T.where(o * 4 + e < 10)
                vc = T.axis.spatial(10, o * 4 + e)
                C_local[vc] = A[vc] + 1.0
        for ax0 in range(10):
            with T.block("C_local"):
                v0 = T.axis.spatial(10, ax0)
                C[v0] = C_local[v0]

    sch = _sch(guarded)
    sch.cache_write(sch.get_block("C"), 0, "local")
    assert_schedule(guarded, sch, expected)


def test_cache_write_refuses_a_predicate_that_skips_elements():
    @T.prim_func
    def holes(A: T.Buffer((12,), "float32"), C: T.Buffer((12,), "float32")):
        for o, e in T.grid(3, 4):
            with T.block("C"):
                T.where(e < 2)
                vc = T.axis.spatial(12, o * 4 + e)
                C[vc] = A[vc] + 1.0

    sch = _sch(holes)
    with pytest.raises(T.ScheduleError, match="must write every element"):
        sch.cache_write(sch.get_block("C"), 0, "local")


def test_cache_write_refuses_a_reader_of_the_next_iteration_before_the_copy_back():
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
                    vt, vi = T.axis.remap("SS", [t, i])
                    B[vi] = A[vt, vi]

    sch = _sch(carried)
    with pytest.raises(T.ScheduleError, match="'R' reads 'B' in a loop shared with 'W'"):
        sch.cache_write(sch.get_block("W"), 0, "local")


def test_cache_read_refuses_a_copy_its_consumers_guard() -> None:
    """Under split loops with a T.where guard, the per-iteration copy of A would read past
    the buffer where the guard skips the consumer: refused (it used to reach the internal
    check, with an out-of-bounds read)."""
    from tvmscript import from_source
    from tvmscript import tir as TT

    text = '''
@T.prim_func
def guarded(A: T.Buffer((8, 6), "int32"), OUT: T.Buffer((8, 6), "int32")):
    for i, j in T.grid(8, 6):
        with T.block("b0c"):
            vi, vj = T.axis.remap("SS", [i, j])
            A[vi, vj] = A[vi, vj] + 1
    for i, j in T.grid(8, 6):
        with T.block("b0"):
            vi, vj = T.axis.remap("SS", [i, j])
            OUT[vi, vj] = A[vi, vj] + A[vi, vj]
'''
    sch = TT.Schedule(from_source(text), debug_mask="all")
    b0 = sch.get_block("b0")
    sch.reverse_compute_at(b0, sch.get_loops(sch.get_block("b0c"))[1])
    sch.split(sch.get_loops(sch.get_block("b0"))[1], factors=[2, None, 2])
    before = sch.mod["main"]
    with pytest.raises(TT.ScheduleError, match=r"may fall outside the buffer \(extent 6\)"):
        sch.cache_read(sch.get_block("b0"), 0, "global")
    from tvmscript.ir import structural_equal

    assert structural_equal(sch.mod["main"], before)


@T.prim_func
def one_block_scope(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32")):
    # a block realized right under the root, no loop around it (a blockized stage)
    with T.block("outer"):
        vo = T.axis.spatial(1, 0)
        for i, j in T.grid(16, 16):
            with T.block("inner"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * T.float32(3)


@T.prim_func
def summed_rows(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16,), "float32")):
    with T.block("outer"):
        vk = T.axis.reduce(1, 0)
        with T.init():
            for i in range(16):
                with T.block("zero"):
                    vi = T.axis.spatial(16, i)
                    B[vi] = T.float32(0)
        for k, i in T.grid(16, 16):
            with T.block("sum"):
                vkk, vi = T.axis.remap("RS", [k, i])
                B[vi] = B[vi] + A[vi, vkk]


@pytest.mark.parametrize("primitive", ["cache_read", "cache_write"])
def test_caches_of_a_block_with_no_loop_around_it(primitive: str) -> None:
    sch = T.Schedule(one_block_scope, debug_mask="all")
    getattr(sch, primitive)(sch.get_block("outer"), 0, "local")
    names: list[str] = []
    post_order_visit(sch.mod["main"].body,
                     lambda n: names.append(n.name_hint) if isinstance(n, Block) else None)
    assert ("A_local" if primitive == "cache_read" else "B_local") in names


def test_reindex_of_a_block_in_an_init_is_refused() -> None:
    sch = T.Schedule(summed_rows, debug_mask="all")
    with pytest.raises(T.ScheduleError, match="block 'zero' is inside the init of block 'outer'"):
        sch.reindex(sch.get_block("zero"), ("write", 0))


@T.prim_func
def framed_rows(x: T.Buffer((5, 5), "float32"), P: T.Buffer((7, 7), "float32")):
    for i in range(7):
        with T.block("row"):
            T.reads(x[0:5, 0:5])
            T.writes(P[i, 0:7])
            for j in range(7):
                with T.block("frame"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    P[vi, vj] = T.if_then_else(
                        1 <= vi and vi < 6 and 1 <= vj and vj < 6, x[vi - 1, vj - 1], T.float32(-1)
                    )


def test_cache_read_refuses_a_copy_a_padding_expression_guards() -> None:
    """The load of x runs only where T.if_then_else's condition holds; a copy of row i - 1
    inside the opaque block "row" would read row -1 at i = 0 (it was accepted: the copy's
    bound check only knew T.where and if statements as guards)."""
    sch = _sch(framed_rows)
    with pytest.raises(
        T.ScheduleError,
        match=r"the region of 'x' to copy, \[\(i - 1\), i\) on axis 0, may fall outside the "
        r"buffer \(extent 5\) where the accesses it stands for are guarded",
    ):
        sch.cache_read(sch.get_block("frame"), 0, "global")
    assert_same_results(framed_rows, sch)  # refused: the function is unchanged


@T.prim_func
def framed(x: T.Buffer((5, 5), "float32"), P: T.Buffer((7, 7), "float32")):
    for i, j in T.grid(7, 7):
        with T.block("frame"):
            vi, vj = T.axis.remap("SS", [i, j])
            P[vi, vj] = T.if_then_else(
                1 <= vi and vi < 6 and 1 <= vj and vj < 6, x[vi - 1, vj - 1], T.float32(-1)
            )


def test_cache_read_of_a_padding_read_at_the_root_copies_the_buffer() -> None:
    # at the root scope the copy spans every row and column the guard lets through
    sch = _sch(framed)
    sch.cache_read(sch.get_block("frame"), 0, "global")
    (cache,) = sch.get(sch.get_block("root")).alloc_buffers
    assert [int(d.value) for d in cache.shape] == [5, 5]
    assert_same_results(framed, sch)


@T.prim_func
def wrapped_guarded_tiles(A: T.Buffer((20,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((18,))
    for t in range(2):
        with T.block("wrap"):
            T.reads()
            T.writes()
            for u in range(11):
                with T.block("B"):
                    vb = T.axis.spatial(18, t * 8 + u)
                    T.where(t * 8 + u < 18)
                    B[vb] = A[vb] + A[vb + 2]
        for u, k in T.grid(4, 3):
            with T.block("C"):
                vc = T.axis.spatial(8, t * 4 + u)
                vk = T.axis.reduce(3, k)
                with T.init():
                    C[vc] = T.float32(0)
                C[vc] = C[vc] + B[vc * 2 + vk]


def test_cache_read_refuses_a_copy_of_what_a_guarded_inner_block_writes() -> None:
    """The producer at the consumer's scope is an opaque block whose inner block is guarded
    (the form loop_partition leaves): the copy of its 11-wide tile read and wrote B[18] in
    the last tile (it was accepted: only guards on or around the producer were looked at)."""
    sch = _sch(wrapped_guarded_tiles)
    with pytest.raises(
        T.ScheduleError,
        match=r"the region of 'B' to copy, \[\(t \* 8\), \(\(t \* 8\) \+ 11\)\) on axis 0, may "
        r"fall outside the buffer \(extent 18\)",
    ):
        sch.cache_read(sch.get_block("C"), 0, "global")
    assert_same_results(wrapped_guarded_tiles, sch)
