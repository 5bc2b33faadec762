"""read_at / write_at on a tiled 1-d correlation (serial loops: checked by running) and on a
thread-bound transposed copy (checked by structure): the region the statements below the
loop use is staged in ``<buffer>_<scope>`` by an ``auto_copy`` block, widened over the
loops below and, for "shared", over the thread loops sharing it; the order checks and the
other refusals."""

from __future__ import annotations

import pytest
from extra_checks import assert_native_same, bindings, block_names, func_of, loop_shape, region_text
from sched_checks import assert_same_results, assert_structure
from test_trace_kinds import _replays

from tvmscript import tir as T


@T.prim_func
def correlate(K: T.Buffer((3, 3), "float32"), S: T.Buffer((3, 14), "float32"),
              Y: T.Buffer((3, 12), "float32")):
    for b, t0, k, t1 in T.grid(3, 3, 3, 4):
        with T.block("corr"):
            vb = T.axis.spatial(3, b)
            vt = T.axis.spatial(12, t0 * 4 + t1)
            vk = T.axis.reduce(3, k)
            with T.init():
                Y[vb, vt] = T.float32(0)
            Y[vb, vt] = Y[vb, vt] + K[vb, vk] * S[vb, vt + vk]


def _allocs(sch: T.Schedule) -> list[tuple[str, str]]:
    root = sch.get(sch.get_block("root"))
    return [(b.name, b.scope) for b in root.alloc_buffers]


def test_a_window_per_tile_and_an_output_row_per_batch():
    sch = T.Schedule(correlate, debug_mask="all")  # each step compared by running
    block = sch.get_block("corr")
    b, t0, _, _ = sch.get_loops(block)
    window = sch.read_at(t0, block, "S", "local")
    # one tile of 4 outputs reads 4 + 3 - 1 samples of its row
    win = sch.get(window)
    assert win.name_hint == "S_local" and win.annotations == {"auto_copy": True}
    assert bindings(sch, window) == ["v0=b", "v1=t0"]
    assert [region_text(r) for r in win.reads] == ["S[v0, (v1 * 4):(v1 * 4)+6]"]
    assert [region_text(r) for r in win.writes] == ["S_local[v0, (v1 * 4):(v1 * 4)+6]"]
    assert loop_shape(sch, window) == [("b", 0, 3), ("t0", 0, 3)]
    assert sch.get(t0).loop_var.name == "t0"  # the loop's handle still works
    row = sch.write_at(b, block, 0, "global")
    assert bindings(sch, row) == ["v0=b"]
    assert [region_text(r) for r in sch.get(row).reads] == ["Y_global[v0, 0:0+12]"]
    assert [region_text(r) for r in sch.get(row).writes] == ["Y[v0, 0:0+12]"]
    assert loop_shape(sch, row) == [("b", 0, 3)]
    assert _allocs(sch) == [("S_local", "local"), ("Y_global", "global")]
    corr = sch.get(block)
    assert [r.buffer.name for r in corr.reads] == ["K", "S_local"]
    assert [w.buffer.name for w in corr.writes] == ["Y_global"]
    # below b: the tiles (each its window then its sums), then the copy back
    assert block_names(func_of(sch)) == ["S_local", "corr", "Y_global"]
    assert_same_results(correlate, sch)
    assert_native_same(correlate, sch)
    assert (
        'b8 = sch.write_at(loop=l1, block=b0, write_buffer_index=0, storage_scope="global")'
        in sch.trace.as_python()
    )
    _replays(correlate, sch)


def test_a_read_and_a_write_staged_at_the_same_loop():
    sch = T.Schedule(correlate, debug_mask="all")
    block = sch.get_block("corr")
    b, t0, _, _ = sch.get_loops(block)
    sch.read_at(t0, block, "K", "local")
    out = sch.write_at(t0, block, "Y", "local")  # the loop handle survives the first copy
    assert sch.get(b).loop_var.name == "b" and sch.get(t0).loop_var.name == "t0"
    assert [region_text(r) for r in sch.get(out).writes] == ["Y[v0, (v1 * 4):(v1 * 4)+4]"]
    assert block_names(func_of(sch)) == ["K_local", "corr", "Y_local"]
    assert_same_results(correlate, sch)
    _replays(correlate, sch)


@T.prim_func
def transpose_threads(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32")):
    for bx in T.thread_binding(2, thread="blockIdx.x"):
        for tx in T.thread_binding(8, thread="threadIdx.x"):
            for j0, j1 in T.grid(4, 4):
                with T.block("t"):
                    vi = T.axis.spatial(16, bx * 8 + tx)
                    vj = T.axis.spatial(16, j0 * 4 + j1)
                    B[vi, vj] = A[vj, vi] * T.float32(2)


@pytest.mark.parametrize(
    "scope, read_binds, read_region, write_binds, write_region",
    [
        # shared memory is the thread block's: the copies cover every thread's part
        ("shared", ["v0=j0", "v1=bx"], "A[(v0 * 4):(v0 * 4)+4, (v1 * 8):(v1 * 8)+8]",
         ["v0=bx"], "B[(v0 * 8):(v0 * 8)+8, 0:0+16]"),
        # local memory is the thread's own: only its column / its row
        ("local", ["v0=j0", "v1=bx", "v2=tx"], "A[(v0 * 4):(v0 * 4)+4, ((v1 * 8) + v2)]",
         ["v0=bx", "v1=tx"], "B[((v0 * 8) + v1), 0:0+16]"),
    ],
)
def test_thread_loops_are_relaxed_by_scope(scope, read_binds, read_region, write_binds,
                                           write_region):
    # a GPU program: checked by structure (the CPU backends do not run thread bindings)
    sch = T.Schedule(transpose_threads)
    block = sch.get_block("t")
    _, tx, j0, _ = sch.get_loops(block)
    staged = sch.read_at(j0, block, 0, scope)
    back = sch.write_at(tx, block, 0, scope)
    assert sch.get(staged).name_hint == f"A_{scope}"
    assert sch.get(back).name_hint == f"B_{scope}"
    assert bindings(sch, staged) == read_binds
    assert [region_text(r) for r in sch.get(staged).reads] == [read_region]
    assert bindings(sch, back) == write_binds
    assert [region_text(r) for r in sch.get(back).writes] == [write_region]
    assert _allocs(sch) == [(f"A_{scope}", scope), (f"B_{scope}", scope)]
    # the copy back runs in each thread, after its j0 loop
    assert [name for name, _, _ in loop_shape(sch, back)] == ["bx", "tx"]
    assert [name for name, _, _ in loop_shape(sch, staged)] == ["bx", "tx", "j0"]
    _replays(transpose_threads, sch)


@T.prim_func
def rows_then_use(A: T.Buffer((6, 5), "int32"), C: T.Buffer((6, 5), "int32")):
    B = T.alloc_buffer((6, 5), "int32")
    for r in range(6):
        for c in range(5):
            with T.block("make"):
                vr, vc = T.axis.remap("SS", [r, c])
                B[vr, vc] = A[vr, vc] * 3
        for c in range(5):
            with T.block("use"):
                vr, vc = T.axis.remap("SS", [r, c])
                C[vr, vc] = B[vr, 4 - vc] + 1


def test_the_staged_copy_sits_between_the_last_write_and_the_first_read():
    sch = T.Schedule(rows_then_use, debug_mask="all")
    use = sch.get_block("use")
    (r, _) = sch.get_loops(use)
    sch.read_at(r, use, "B", "local")
    assert block_names(func_of(sch)) == ["make", "B_local", "use"]
    assert [region_text(x) for x in sch.get(sch.get_block("B_local")).reads] == [
        "B[v0, 0:0+5]"
    ]
    assert_same_results(rows_then_use, sch)
    # the producer's own write_at at r would copy back after 'make', but 'use' reads B
    # after that last write below r: the copy back would come too late
    make = sch.get_block("make")
    with pytest.raises(T.ScheduleError, match="'B' is read below loop 'r' after its last write"):
        sch.write_at(r, make, 0, "local")


@T.prim_func
def use_then_rows(A: T.Buffer((6, 5), "int32"), C: T.Buffer((6, 5), "int32")):
    B = T.alloc_buffer((6, 5), "int32")
    for r in range(6):
        for c in range(5):
            with T.block("use"):
                vr, vc = T.axis.remap("SS", [r, c])
                C[vr, vc] = B[vr, vc] + 1
        for c in range(5):
            with T.block("make"):
                vr, vc = T.axis.remap("SS", [r, c])
                B[vr, vc] = A[vr, vc] * 3


@T.prim_func
def partial_producer(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,))
    for i in range(4):
        with T.block("head"):
            vi = T.axis.spatial(4, i)
            B[vi] = A[vi]
    for i in range(8):
        with T.block("all"):
            vi = T.axis.spatial(8, i)
            C[vi] = B[vi] + A[vi]


def test_refusals():
    sch = T.Schedule(use_then_rows, debug_mask="all")
    use = sch.get_block("use")
    with pytest.raises(T.ScheduleError,
                       match="'B' is written below loop 'r' at or after its first read"):
        sch.read_at(sch.get_loops(use)[0], use, 0, "local")
    assert_structure(sch, use_then_rows)

    sch = T.Schedule(correlate, debug_mask="all")
    block = sch.get_block("corr")
    _, t0, _, _ = sch.get_loops(block)
    with pytest.raises(T.ScheduleError, match="is not a storage scope"):
        sch.read_at(t0, block, "K", "registers")
    with pytest.raises(T.ScheduleError, match="is not a storage scope"):
        sch.write_at(t0, block, "Y", "global_")
    assert_structure(sch, correlate)

    sch = T.Schedule(rows_then_use, debug_mask="all")
    make, use = sch.get_block("make"), sch.get_block("use")
    with pytest.raises(T.ScheduleError, match="no block below loop 'c' reads 'B'"):
        sch.read_at(sch.get_loops(make)[1], use, 0, "local")
    with pytest.raises(T.ScheduleError, match="no block below loop 'c' writes 'B'"):
        sch.write_at(sch.get_loops(use)[1], make, 0, "local")
    assert_structure(sch, rows_then_use)

    sch = T.Schedule(partial_producer, debug_mask="all")
    whole = sch.get_block("all")
    with pytest.raises(T.ScheduleError, match=r"block 'root'\) is not a stage pipeline"):
        sch.read_at(sch.get_loops(whole)[0], whole, 0, "local")
    assert_structure(sch, partial_producer)
