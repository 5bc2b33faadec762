"""Primitives on blocks that break TVM's block rules (non-affine reduction bindings, a
reduction var indexing the output, out-of-range reindex, ...): each either keeps the
numbers or refuses with a ScheduleError that says why."""

from __future__ import annotations

import pytest
from sched_checks import assert_same_results

from tvmscript import tir as T


@T.prim_func
def colsum_squared_index(A: T.Buffer((8, 32), "float32"), B: T.Buffer((8,), "float32")):
    # vr = r * r // 4 takes the value 0 at r = 0 and r = 1: the init runs twice per row
    for i, r in T.grid(8, 8):
        with T.block("S"):
            vi = T.axis.spatial(8, i)
            vr = T.axis.reduce(32, (r * r) // 4)
            with T.init():
                B[vi] = T.float32(1)
            B[vi] = B[vi] * T.float32(0.5) + A[vi, vr]


def test_decompose_reduction_refuses_non_affine_binding():
    sch = T.Schedule(colsum_squared_index)
    with pytest.raises(T.ScheduleError, match="not an affine map"):
        sch.decompose_reduction("S", sch.get_loops("S")[0])
    # the refusal leaves the function as it was
    assert_same_results(colsum_squared_index, sch)


@T.prim_func
def shifted_copy(A: T.Buffer((12,), "float32"), B: T.Buffer((12,), "float32")):
    # vi runs over [0, 12) but is bound to 4..11 only: A[vi - 4] is in bounds where the
    # block runs, not over vi's whole domain (which the reindex stage copies)
    for i in range(8):
        with T.block("tail"):
            vi = T.axis.spatial(12, i + 4)
            B[vi] = A[vi - 4] + T.float32(1)


def test_reindex_read_refuses_index_outside_the_buffer_over_the_domain():
    sch = T.Schedule(shifted_copy)
    with pytest.raises(T.ScheduleError, match=r"index \(vi - 4\) of 'A' .*out of bounds"):
        sch.reindex("tail", ("read", 0))


@T.prim_func
def guarded_store(A: T.Buffer((10, 10), "float32"), C: T.Buffer((9, 10), "float32")):
    for i, j in T.grid(10, 10):
        with T.block("G"):
            vi, vj = T.axis.remap("SS", [i, j])
            if vi < 9:
                C[vi, vj] = A[vi, vj] * T.float32(3)


@T.prim_func
def guarded_store_in_bounds(A: T.Buffer((10, 10), "float32"), C: T.Buffer((10, 10), "float32")):
    for i, j in T.grid(10, 10):
        with T.block("G"):
            vi, vj = T.axis.remap("SS", [i, j])
            if vj < 9:
                C[vi, vj] = A[vi, vj] * T.float32(3)


def test_reindex_write_refuses_out_of_bounds_and_conditional_stores():
    sch = T.Schedule(guarded_store)
    with pytest.raises(T.ScheduleError, match=r"index vi of 'C' .*out of bounds"):
        sch.reindex("G", ("write", 0))
    sch = T.Schedule(guarded_store_in_bounds)
    with pytest.raises(T.ScheduleError, match="stores 'C' only under a condition"):
        sch.reindex("G", ("write", 0))


def test_reindex_in_bounds_read_still_applies():
    sch = T.Schedule(guarded_store_in_bounds)
    sch.reindex("G", ("read", 0))
    assert_same_results(guarded_store_in_bounds, sch)


@T.prim_func
def accumulate_by_reduce_index(A: T.Buffer((6, 10), "float32"), B: T.Buffer((10,), "float32")):
    # the init runs only at vr == 0; B[1:10] accumulate onto B's earlier values
    for i, r in T.grid(6, 10):
        with T.block("acc"):
            vi, vr = T.axis.remap("SR", [i, r])
            with T.init():
                B[vr] = T.float32(0)
            B[vr] = B[vr] + A[vi, vr]


@pytest.mark.parametrize(
    "apply",
    [
        lambda s: s.cache_write("acc", 0, "local"),
        lambda s: s.reindex("acc", ("write", 0)),
    ],
    ids=["cache_write", "reindex_write"],
)
def test_write_caches_refuse_reads_the_init_does_not_start(apply):
    sch = T.Schedule(accumulate_by_reduce_index)
    with pytest.raises(T.ScheduleError, match="reads 'B' at indices using a reduction iter var"):
        apply(sch)
    assert_same_results(accumulate_by_reduce_index, sch)


@T.prim_func
def pointer_copy_then_scale(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    S = T.alloc_buffer((64,), "float32")
    with T.block("copy"):
        T.reads(A[0:32])
        T.writes(S[0:32])
        T.evaluate(
            T.call_extern(
                "int32", "memcpy", S.access_ptr("w", extent=32), A.access_ptr("r", extent=32), 128
            )
        )
    for i in range(32):
        with T.block("scale"):
            vi = T.axis.spatial(32, i)
            B[vi] = S[vi] * T.float32(2)


def test_set_scope_moves_the_data_pointer_uses_too():
    sch = T.Schedule(pointer_copy_then_scale)
    sch.set_scope("copy", 0, "local")
    text = sch.mod["main"].script()
    assert "S_data" not in text
    assert 'scope="local"' in text
    assert_same_results(pointer_copy_then_scale, sch)


@pytest.mark.parametrize("buffer", [("read", 0), "S"], ids=["from_reader", "by_name"])
def test_transform_layout_refuses_a_buffer_accessed_through_its_pointer(buffer):
    """The memcpy writes S through its pointer in the present layout: a new layout (even the
    identity, which made a new allocation the pointer no longer named) is refused."""
    sch = T.Schedule(pointer_copy_then_scale)
    block = "scale" if buffer != "S" else "copy"
    with pytest.raises(T.ScheduleError, match=r"'S' is accessed through its data pointer in "
                       r"block 'copy'"):
        sch.transform_layout(block, buffer, lambda i: (i // 8, i % 8))
    with pytest.raises(T.ScheduleError, match="data pointer"):
        sch.transform_layout(block, buffer, lambda i: (i,))
    # the function is unchanged and still computes what it did
    assert_same_results(pointer_copy_then_scale, sch)


def test_blockize_refuses_an_init_using_a_reduction_iter_var():
    sch = T.Schedule(accumulate_by_reduce_index)
    _, r = sch.get_loops("acc")
    with pytest.raises(T.ScheduleError, match="uses the reduction iter var 'vr'"):
        sch.blockize(r)
    assert_same_results(accumulate_by_reduce_index, sch)


@T.prim_func
def int64_shapes_int32_iters(
    A: T.Buffer((T.int64(24), T.int64(10)), "float32"),
    C: T.Buffer((T.int64(24), T.int64(10)), "float32"),
):
    B = T.alloc_buffer((T.int64(24), T.int64(10)), "float32")
    for i, j in T.grid(24, 10):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] + T.float32(3)
    for i, j in T.grid(24, 10):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] * T.float32(2)


def test_compute_at_with_int64_buffer_shapes_and_int32_iter_vars():
    sch = T.Schedule(int64_shapes_int32_iters)
    sch.compute_at("B", sch.get_loops("C")[0])
    assert_same_results(int64_shapes_int32_iters, sch)
    sch = T.Schedule(int64_shapes_int32_iters)
    sch.reverse_compute_at("C", sch.get_loops("B")[0])
    assert_same_results(int64_shapes_int32_iters, sch)


@T.prim_func
def three_stages(A: T.Buffer((12, 8), "int32"), OUT: T.Buffer((12, 8), "int32")):
    S = T.alloc_buffer((12, 8), "int32")
    for i, j in T.grid(12, 8):
        with T.block("s"):
            vi, vj = T.axis.remap("SS", [i, j])
            S[vi, vj] = A[vi, vj] * 3
    for i, j in T.grid(12, 8):
        with T.block("out"):
            vi, vj = T.axis.remap("SS", [i, j])
            OUT[vi, vj] = S[vi, vj] + 1


def test_inlining_refuses_a_buffer_used_outside_the_blocks_scope():
    """After loop_partition the producer's two parts sit in scopes of their own: inlining
    one part rewrote its scope's readers (none) and removed it, so "out" read rows nobody
    wrote (silently, without debug_mask)."""
    sch = T.Schedule(three_stages)
    sch.loop_partition(sch.get_loops("s")[0], [None, 2])
    with pytest.raises(T.ScheduleError, match=r"block 's_i1', outside the scope of 's_i0' "
                       r"\('s_i0_partition'\), also uses 'S'"):
        sch.compute_inline("s_i0")
    assert_same_results(three_stages, sch)
    # a part of the consumer has no producer in its scope: refused before
    other = T.Schedule(three_stages)
    other.loop_partition(other.get_loops("out")[0], [None, 2])
    with pytest.raises(T.ScheduleError, match="must have exactly one producer in its scope"):
        other.reverse_compute_inline("out_i0")
