"""Values a TVM user's script reads off the IR, in the forms TVM gives them: a buffer's
dtype compares equal to its name and numpy takes it, a SeqStmt is indexed like its list of
statements, and a region printed as ``B[m : m + e]`` parses back to the extent ``e`` (the
printed function of a schedule's result is structurally the same function)."""

from __future__ import annotations

import numpy as np
import pytest

import tvmscript
from irbuilder.ir import SeqStmt
from tvmscript import tir as T


@T.prim_func
def halve_then_add(A: T.Buffer((6,), "int16"), B: T.Buffer((6,), "float32")):
    H = T.alloc_buffer((6,), "float32")
    for i in range(6):
        with T.block("half"):
            vi = T.axis.remap("S", [i])
            H[vi] = T.Cast("float32", A[vi]) * T.float32(0.5)
    for i in range(6):
        with T.block("add"):
            vi = T.axis.remap("S", [i])
            B[vi] = H[vi] + T.float32(1)


def test_a_buffer_dtype_equals_its_name_and_numpy_takes_it():
    a, b = (halve_then_add.buffer_map[p] for p in halve_then_add.params)
    assert a.dtype == "int16" and "int16" == a.dtype and a.dtype != "int32"
    assert b.dtype == "float32" and b.dtype != "float"  # literal names, as TVM's strings
    assert {a.dtype: 1}["int16"] == 1  # equal values hash alike
    x = np.arange(6).astype(a.dtype)
    assert x.dtype == np.int16
    assert np.zeros(3, dtype=b.dtype).dtype == np.float32
    # numpy words the refusal its own way before 2.4 ("Cannot interpret ...")
    with pytest.raises(TypeError, match="float32x4 has no numpy dtype|Cannot interpret"):
        np.dtype(T.Buffer((4,), "float32x4").dtype)
    # the native callable takes arrays made that way
    out = np.zeros(6, dtype=b.dtype)
    tvmscript.build(halve_then_add, target="llvm -mcpu=znver3")(x, out)
    np.testing.assert_allclose(out, np.arange(6) * 0.5 + 1)


def test_a_seq_stmt_is_indexed_like_its_statements():
    body = T.Schedule(halve_then_add).mod["main"].body.block.body
    assert isinstance(body, SeqStmt) and len(body) == 2
    assert body[0] is body.seq[0] and body[-1] is body.seq[1]
    assert body[1].body.block.name_hint == "add"
    assert [s.body.block.name_hint for s in body] == ["half", "add"]


@T.prim_func
def gather(A: T.Buffer((4, 8), "float32"), B: T.Buffer((8, 8), "float32")):
    for i, j in T.grid(8, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi // 2, (vi + vj) % 8] + A[vi * 3 // 8, vj // 2]


def test_a_printed_region_parses_back_to_its_extent():
    # cache_index leaves the block's declared read region of A spanning two index forms:
    # min(x, y) : min(x, y) + (max(x, y) - min(x, y) + 1), whose extent must come back as
    # written, not as ``stop - start``
    sch = T.Schedule(gather)
    sch.cache_index("B", "global")
    func = sch.mod["main"]
    region = sch.get(sch.get_block("B")).reads[0].region[0]
    assert type(region.extent).__name__ == "Add"
    back = tvmscript.from_source(func.script())
    tvmscript.ir.assert_structural_equal(back, func)
    assert tvmscript.ir.structural_equal(back, func)
