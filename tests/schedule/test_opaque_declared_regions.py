"""A block reaching a buffer only through its data pointer (``B.access_ptr`` or ``B.data``
passed to a call) is seen by the schedule through the regions it declares for that buffer,
as TVM's primitives see it: compute_at computes only the declared rows, reverse_compute_at
maps the declared read back to the iter vars, and cache_write takes a block that declares
only ``T.writes(B[...])`` for a writer. Without a declaration of that buffer, the pointer
stays a read and a write of the whole buffer."""

from __future__ import annotations

import numpy as np
import pytest
from sched_checks import assert_schedule, scheduled

from lowering.schedule.analysis import block_access
from tvmscript import build
from tvmscript import tir as T

TARGET = "llvm -mcpu=znver3"


@T.prim_func
def row_copies(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16))
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * 2.0
    for i in range(16):
        with T.block("C"):
            vi = T.axis.spatial(16, i)
            T.reads(B[vi, 0:16])
            T.writes(C[vi, 0:16])
            T.evaluate(
                T.call_extern(
                    "handle",
                    "memcpy",
                    C.access_ptr("w", offset=vi * 16),
                    B.access_ptr("r", offset=vi * 16),
                    64,
                )
            )


@T.prim_func
def row_copies_computed_at(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16))
    for i in range(16):
        for ax0 in range(16):
            with T.block("B"):
                vi = T.axis.spatial(16, i)
                vj = T.axis.spatial(16, ax0)
                B[vi, vj] = A[vi, vj] * 2.0
        with T.block("C"):
            vi = T.axis.spatial(16, i)
            T.reads(B[vi, 0:16])
            T.writes(C[vi, 0:16])
            T.evaluate(
                T.call_extern(
                    "handle",
                    "memcpy",
                    C.access_ptr("w", offset=vi * 16),
                    B.access_ptr("r", offset=vi * 16),
                    64,
                )
            )


@T.prim_func
def row_copies_unit_loops(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16))
    for i in range(16):
        for ax0, ax1 in T.grid(1, 16):
            with T.block("B"):
                vi = T.axis.spatial(16, i + ax0)
                vj = T.axis.spatial(16, ax1)
                B[vi, vj] = A[vi, vj] * 2.0
        with T.block("C"):
            vi = T.axis.spatial(16, i)
            T.reads(B[vi, 0:16])
            T.writes(C[vi, 0:16])
            T.evaluate(
                T.call_extern(
                    "handle",
                    "memcpy",
                    C.access_ptr("w", offset=vi * 16),
                    B.access_ptr("r", offset=vi * 16),
                    64,
                )
            )


@T.prim_func
def row_copies_reverse(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16))
    for i in range(16):
        for j in range(16):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * 2.0
        with T.block("C"):
            vi = T.axis.spatial(16, i)
            T.reads(B[vi, 0:16])
            T.writes(C[vi, 0:16])
            T.evaluate(
                T.call_extern(
                    "handle",
                    "memcpy",
                    C.access_ptr("w", offset=vi * 16),
                    B.access_ptr("r", offset=vi * 16),
                    64,
                )
            )


def _run(func: object, a: np.ndarray) -> np.ndarray:
    c = np.zeros((16, 16), "float32")
    build(func, target=TARGET)(a, c)
    return c


def test_the_declared_region_stands_for_the_pointer():
    sch = T.Schedule(row_copies)
    access = block_access(sch.get(sch.get_block("C")))
    (read,) = access.reads
    assert read.buffer.name == "B" and read.region[0].min.name == "vi"  # type: ignore[attr-defined]
    assert read.region[1].extent.value == 16  # type: ignore[attr-defined]
    assert [r.buffer.name for r in access.writes] == ["C"]


def test_compute_at_computes_only_the_declared_row():
    sch = T.Schedule(row_copies, debug_mask="all")
    sch.compute_at(sch.get_block("B"), sch.get_loops("C")[0])
    assert_schedule(row_copies, sch, row_copies_computed_at)
    a = np.random.default_rng(1).standard_normal((16, 16)).astype("float32")
    np.testing.assert_array_equal(_run(scheduled(sch), a), a * 2)


def test_compute_at_keeps_the_unit_loop_when_asked():
    sch = T.Schedule(row_copies, debug_mask="all")
    sch.compute_at(sch.get_block("B"), sch.get_loops("C")[0], preserve_unit_loops=True)
    assert_schedule(row_copies, sch, row_copies_unit_loops)


def test_reverse_compute_at_maps_the_declared_read_back():
    sch = T.Schedule(row_copies, debug_mask="all")
    sch.reverse_compute_at(sch.get_block("C"), sch.get_loops("B")[0])
    assert_schedule(row_copies, sch, row_copies_reverse)
    a = np.random.default_rng(2).standard_normal((16, 16)).astype("float32")
    np.testing.assert_array_equal(_run(scheduled(sch), a), a * 2)


def test_reverse_compute_at_refuses_a_declared_range_reaching_later_rows():
    # each instance reads a column: all rows, written over all iterations of B's loop
    @T.prim_func
    def columns(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
        B = T.alloc_buffer((16, 16))
        for i, j in T.grid(16, 16):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj]
        for j in range(16):
            with T.block("C"):
                vj = T.axis.spatial(16, j)
                T.reads(B[0:16, vj])
                T.writes(C[0:16, vj])
                T.evaluate(T.call_extern("int32", "column", B.data, C.data, vj))

    sch = T.Schedule(columns, debug_mask="all")
    with pytest.raises(T.ScheduleError, match="dimension 0 is not inside what one iteration"):
        sch.reverse_compute_at(sch.get_block("C"), sch.get_loops("B")[0])


@T.prim_func
def pointer_writer(A: T.Buffer((16,), "float32"), D: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((16,))
    for i in range(4):
        with T.block("copy"):
            vi = T.axis.spatial(4, i)
            T.reads(A[vi * 4 : vi * 4 + 4])
            T.writes(B[vi * 4 : vi * 4 + 4])
            T.evaluate(
                T.call_extern(
                    "handle",
                    "memcpy",
                    B.access_ptr("w", offset=vi * 4),
                    A.access_ptr("r", offset=vi * 4),
                    16,
                )
            )
    for i in range(16):
        with T.block("D"):
            vi = T.axis.spatial(16, i)
            D[vi] = B[vi] + 1.0


@T.prim_func
def pointer_writer_cached(A: T.Buffer((16,), "float32"), D: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((16,))
    B_global = T.alloc_buffer((16,))
    for i in range(4):
        with T.block("copy"):
            vi = T.axis.spatial(4, i)
            T.reads(A[vi * 4 : vi * 4 + 4])
            T.writes(B_global[vi * 4 : vi * 4 + 4])
            T.evaluate(
                T.call_extern(
                    "handle",
                    "memcpy",
                    B_global.access_ptr("w", offset=vi * 4),
                    A.access_ptr("r", offset=vi * 4),
                    16,
                )
            )
    for ax0 in range(16):
        with T.block("B_global"):
            v0 = T.axis.spatial(16, ax0)
            B[v0] = B_global[v0]
    for i in range(16):
        with T.block("D"):
            vi = T.axis.spatial(16, i)
            D[vi] = B[vi] + 1.0


def test_cache_write_of_a_declared_pointer_writer():
    sch = T.Schedule(pointer_writer, debug_mask="all")
    sch.cache_write(sch.get_block("copy"), 0, "global")
    assert_schedule(pointer_writer, sch, pointer_writer_cached)
    a = np.arange(16, dtype="float32")
    d = np.zeros(16, "float32")
    build(scheduled(sch), target=TARGET)(a, d)
    np.testing.assert_array_equal(d, a + 1)


def test_cache_write_of_a_bare_data_pointer_declared_as_written():
    # B.data alone says nothing of the direction: the declaration makes the block a writer
    @T.prim_func
    def whole(A: T.Buffer((16,), "float32"), D: T.Buffer((16,), "float32")):
        B = T.alloc_buffer((16,))
        with T.block("copy"):
            T.reads(A[0:16])
            T.writes(B[0:16])
            T.evaluate(T.call_extern("handle", "memcpy", B.data, A.data, 64))
        for i in range(16):
            with T.block("D"):
                vi = T.axis.spatial(16, i)
                D[vi] = B[vi] * 3.0

    sch = T.Schedule(whole, debug_mask="all")
    sch.cache_write(sch.get_block("copy"), 0, "global")
    text = scheduled(sch).script()
    assert "T.call_extern(\"handle\", \"memcpy\", B_global.data, A.data, 64)" in text
    a = np.arange(16, dtype="float32")
    d = np.zeros(16, "float32")
    build(scheduled(sch), target=TARGET)(a, d)
    np.testing.assert_array_equal(d, a * 3)


def test_an_undeclared_pointer_stays_the_whole_buffer():
    # the consumer declares nothing of B: its pointer reads (and may write) all of B
    @T.prim_func
    def undeclared(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
        B = T.alloc_buffer((16, 16))
        for i, j in T.grid(16, 16):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * 2.0
        for i in range(16):
            with T.block("C"):
                vi = T.axis.spatial(16, i)
                T.evaluate(
                    T.call_extern(
                        "handle",
                        "memcpy",
                        C.access_ptr("w", offset=vi * 16),
                        B.access_ptr("r", offset=vi * 16),
                        64,
                    )
                )

    sch = T.Schedule(undeclared, debug_mask="all")
    sch.compute_at(sch.get_block("B"), sch.get_loops("C")[0])
    text = scheduled(sch).script()
    assert "for ax0, ax1 in T.grid(16, 16):" in text
    a = np.random.default_rng(3).standard_normal((16, 16)).astype("float32")
    np.testing.assert_array_equal(_run(scheduled(sch), a), a * 2)


def test_a_bare_pointer_of_an_undeclared_buffer_is_read_and_written_whole():
    # the declarations name other buffers: B.data may read and write all of B
    @T.prim_func
    def hidden(A: T.Buffer((16,), "float32"), D: T.Buffer((16,), "float32")):
        B = T.alloc_buffer((16,))
        with T.block("copy"):
            T.reads(A[0:16])
            T.writes(D[0:16])
            T.evaluate(T.call_extern("handle", "memcpy", B.data, A.data, 64))
            D[0] = T.float32(0)

    sch = T.Schedule(hidden)
    access = block_access(sch.get(sch.get_block("copy")))
    for regions in (access.reads, access.writes):
        (whole,) = [r for r in regions if r.buffer.name == "B"]
        assert [(r.min.value, r.extent.value) for r in whole.region] == [(0, 16)]  # type: ignore[attr-defined]
