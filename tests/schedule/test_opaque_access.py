"""Blocks using a buffer by its data pointer: ``T.tvm_access_ptr`` with a constant mask is a
read (1) or a write (2) of the whole buffer, seen by every legality check, and cache_read
redirects such a reader to the cache."""

from __future__ import annotations

import pytest
from sched_checks import scheduled

from irbuilder.ir import assert_structural_equal
from lowering.schedule.analysis import block_access
from tvmscript import tir as T


@T.prim_func
def opaque_reader(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((16,))
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            B[vi] = A[vi] * 2.0
    for i in range(4):
        with T.block("use"):
            vi = T.axis.spatial(4, i)
            T.reads(B[vi * 4 : vi * 4 + 4])
            T.writes(C[vi * 4 : vi * 4 + 4])
            T.evaluate(
                T.call_extern(
                    "int32",
                    "copy4",
                    T.tvm_access_ptr(T.type_annotation("float32"), C.data, vi * 4, 4, 2),
                    T.tvm_access_ptr(T.type_annotation("float32"), B.data, vi * 4, 4, 1),
                )
            )


@T.prim_func
def opaque_reader_cached(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((16,))
    B_global = T.alloc_buffer((16,))
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            B[vi] = A[vi] * 2.0
    for ax0 in range(16):
        with T.block("B_global"):
            v0 = T.axis.spatial(16, ax0)
            B_global[v0] = B[v0]
    for i in range(4):
        with T.block("use"):
            vi = T.axis.spatial(4, i)
            T.reads(B_global[vi * 4 : vi * 4 + 4])
            T.writes(C[vi * 4 : vi * 4 + 4])
            T.evaluate(
                T.call_extern(
                    "int32",
                    "copy4",
                    T.tvm_access_ptr(T.type_annotation("float32"), C.data, vi * 4, 4, 2),
                    T.tvm_access_ptr(T.type_annotation("float32"), B_global.data, vi * 4, 4, 1),
                )
            )


def _regions(regions):
    return {r.buffer.name: [(str(x.min), str(x.extent)) for x in r.region] for r in regions}


def test_the_mask_says_read_or_write_of_the_whole_buffer():
    # without a declaration of the buffer; declared regions stand for the pointer instead
    # (test_opaque_declared_regions.py)
    @T.prim_func
    def undeclared(B: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
        for i in range(4):
            with T.block("use"):
                vi = T.axis.spatial(4, i)
                T.evaluate(
                    T.call_extern(
                        "int32",
                        "copy4",
                        T.tvm_access_ptr(T.type_annotation("float32"), C.data, vi * 4, 4, 2),
                        T.tvm_access_ptr(T.type_annotation("float32"), B.data, vi * 4, 4, 1),
                    )
                )

    sch = T.Schedule(undeclared)
    access = block_access(sch.get(sch.get_block("use")))
    whole = [("IntImm(int32, 0)", "IntImm(int32, 16)")]
    assert _regions(access.reads) == {"B": whole}
    assert _regions(access.writes) == {"C": whole}


def test_inlining_a_producer_of_an_opaque_reader_is_refused():
    # "use" reads B through its pointer: B's values must exist in memory
    sch = T.Schedule(opaque_reader, debug_mask="all")
    with pytest.raises(T.ScheduleError, match="uses 'B' by its data pointer"):
        sch.compute_inline(sch.get_block("B"))


def test_cache_read_redirects_the_pointer():
    sch = T.Schedule(opaque_reader, debug_mask="all")
    sch.cache_read(sch.get_block("use"), 0, "global")
    got = scheduled(sch)
    assert_structural_equal(got, opaque_reader_cached.with_attr("global_symbol", got.name))


def test_a_strided_buffer_keeps_its_pointer():
    # flat offsets of a strided parameter do not name the same elements of a dense cache
    @T.prim_func
    def strided(A: T.Buffer((4, 4), "float32", strides=(8, 1)), C: T.Buffer((16,), "float32")):
        for i in range(4):
            with T.block("use"):
                vi = T.axis.spatial(4, i)
                T.evaluate(
                    T.call_extern(
                        "int32",
                        "copy4",
                        T.tvm_access_ptr(T.type_annotation("float32"), C.data, vi * 4, 4, 2),
                        T.tvm_access_ptr(T.type_annotation("float32"), A.data, vi * 8, 4, 1),
                    )
                )

    sch = T.Schedule(strided)  # the interpreter check makes contiguous inputs
    sch.cache_read(sch.get_block("use"), 0, "global")
    text = scheduled(sch).script()
    assert 'A_global = T.alloc_buffer((4, 4), "float32")' in text
    # the parameter prints as A_1 (its handle is A); the pointer is still the parameter's
    assert "A_1.data, vi * 8, 4, 1" in text and "A_global.data" not in text
