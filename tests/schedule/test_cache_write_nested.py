"""cache_write of a block holding blocks: one nested block writes the tile the block writes,
nested reads of the buffer read only what was written before them in the instance."""

from __future__ import annotations

import pytest
from sched_checks import assert_same_results

from tvmscript import tir as T


@T.prim_func
def tiles(B: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    A = T.alloc_buffer((16, 16))
    for i0, j0 in T.grid(4, 4):
        with T.block("tile"):
            i, j = T.axis.remap("SS", [i0, j0])
            for x, y in T.grid(4, 4):
                with T.block("A"):
                    vi = T.axis.spatial(16, i * 4 + x)
                    vj = T.axis.spatial(16, j * 4 + y)
                    A[vi, vj] = T.Cast("float32", vi * 16 + vj)
            for x, y in T.grid(4, 4):
                with T.block("B"):
                    vi = T.axis.spatial(16, i * 4 + x)
                    vj = T.axis.spatial(16, j * 4 + y)
                    B[vi, vj] = A[vi, vj] + 1.0
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj] * 2.0


def test_the_tile_block_writes_a_cache_copied_back_after_its_nest():
    sch = T.Schedule(tiles, debug_mask="all")
    copy = sch.cache_write(sch.get_block("tile"), 0, "global")
    assert_same_results(tiles, sch)
    text = sch.mod["main"].script()
    assert sch.get(copy).name_hint == "A_global"
    # B reads the cache inside the tile; C reads A after the copy back
    assert "B[vi, vj] = A_global[vi, vj] + T.float32(1)" in text
    assert text.index('T.block("A_global")') < text.index('T.block("C")')


def test_a_nested_read_before_the_nested_write_is_refused():
    @T.prim_func
    def read_first(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
        for i0 in range(4):
            with T.block("tile"):
                i = T.axis.spatial(4, i0)
                for x in range(4):
                    with T.block("B"):
                        vi = T.axis.spatial(16, i * 4 + x)
                        B[vi] = A[vi]
                for x in range(4):
                    with T.block("A"):
                        vi = T.axis.spatial(16, i * 4 + x)
                        A[vi] = T.float32(1)

    sch = T.Schedule(read_first, debug_mask="all")
    with pytest.raises(T.ScheduleError, match="where no earlier block inside 'tile' wrote"):
        sch.cache_write(sch.get_block("tile"), "A", "global")


def test_a_partial_nested_writer_is_refused():
    # two nested writers (each half of the tile): not shown to write the tile exactly
    @T.prim_func
    def two_writers(A: T.Buffer((16,), "float32")):
        for i0 in range(4):
            with T.block("tile"):
                i = T.axis.spatial(4, i0)
                for x in range(2):
                    with T.block("lo"):
                        vi = T.axis.spatial(16, i * 4 + x)
                        A[vi] = T.float32(1)
                for x in range(2):
                    with T.block("hi"):
                        vi = T.axis.spatial(16, i * 4 + 2 + x)
                        A[vi] = T.float32(2)

    sch = T.Schedule(two_writers, debug_mask="all")
    with pytest.raises(T.ScheduleError, match="needs exactly one of them writing it"):
        sch.cache_write(sch.get_block("tile"), 0, "global")
