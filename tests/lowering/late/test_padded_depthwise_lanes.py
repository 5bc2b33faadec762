"""A depthwise 3 x 3 convolution in NHWC as TVM's TE prints it (a padding block into
``pad_temp``, then a reduction block over ``di, dj``): ``inline_padding`` reads the input
behind ``T.if_then_else`` on the row and column tests, ``partition_loops`` cuts the column
loop into the first column, the middle and the last, and ``vectorize_parallel_columns`` runs
the channels of each of the three nests in vector lanes, the tests (the same for every
channel) kept as one branch per tap. The numbers are the interpreter's bit for bit
(``fp_contract=False``), for channel counts that the vector width divides and that it does
not, and with overlapping arrays (the loop as written)."""

from __future__ import annotations

import numpy as np
import pytest
from late_kit import (
    AVX2,
    AVX512,
    agrees_with_interpreter,
    one_storage,
    pinned_targets,
    standard_normal,
    stmts,
)

import lowering
import tvmscript
from irbuilder.ir import BufferStore, Call, For, ForKind, IntImm, PrimFunc, Ramp
from irbuilder.ir.functor import post_order_visit
from lowering.target import Target
from tvmscript import tir as T

_SOURCE = """
@T.prim_func
def dwconv(data: T.Buffer((1, {h}, {w}, {c}), "float32"),
           kernel: T.Buffer((3, 3, {c}, 1), "float32"),
           out: T.Buffer((1, {h}, {w}, {c}), "float32")):
    pad_temp = T.alloc_buffer((1, {h2}, {w2}, {c}))
    for i0, i1, i2, i3 in T.grid(1, {h2}, {w2}, {c}):
        with T.block("pad_temp"):
            v0, v1, v2, v3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
            pad_temp[v0, v1, v2, v3] = T.if_then_else(
                1 <= v1 and v1 < {h1} and 1 <= v2 and v2 < {w1},
                data[v0, v1 - 1, v2 - 1, v3], T.float32(0))
    for b, i, j, c, di, dj in T.grid(1, {h}, {w}, {c}, 3, 3):
        with T.block("depthwise"):
            vb, vi, vj, vc, vdi, vdj = T.axis.remap("SSSSRR", [b, i, j, c, di, dj])
            with T.init():
                out[vb, vi, vj, vc] = T.float32(0)
            out[vb, vi, vj, vc] = out[vb, vi, vj, vc] \\
                + pad_temp[vb, vi + vdi, vj + vdj, vc] * kernel[vdi, vdj, vc, 0]
"""


def dwconv(h: int, w: int, c: int) -> PrimFunc:
    """The convolution of an ``h x w`` image of ``c`` channels (large enough for
    ``parallelize_loops`` to run its rows in parallel)."""
    text = _SOURCE.format(h=h, w=w, c=c, h1=h + 1, w1=w + 1, h2=h + 2, w2=w + 2)
    func = tvmscript.from_source("from tvmscript import tir as T\n" + text)
    assert isinstance(func, PrimFunc)
    return func


# 32 channels: whole vectors on both targets; 20: a 16-lane group and 4 left over;
# 12: AVX2's 8 lanes and 4 left over, fewer than AVX-512's 16 (no lanes there)
SIZES = [(24, 16, 32), (24, 16, 20), (20, 18, 12)]


def _lane_stores(func: PrimFunc) -> list[BufferStore]:
    """The vector stores into ``out`` whose value reads the input behind a branch that is
    the same for every lane (a vector ``if_then_else`` with a scalar condition)."""
    found = []
    for s in stmts(func):
        if not (isinstance(s, BufferStore) and s.buffer.name == "out_flat"
                and isinstance(s.indices[0], Ramp)):
            continue
        calls = [n for n in _nodes(s.value) if isinstance(n, Call) and n.op == "if_then_else"]
        if any(c.dtype.lanes > 1 and c.args[0].dtype.lanes == 1 for c in calls):
            found.append(s)
    return found


@pytest.mark.parametrize("target", [AVX2, AVX512], ids=["znver3", "znver4"])
def test_channels_run_in_lanes_with_the_padding_inlined(target: Target) -> None:
    lowered = lowering.lower(dwconv(24, 16, 32), opt_level=3, target=target)
    stores = _lane_stores(lowered)
    # the first column, the middle columns and the last: one vector nest each, all 32
    # channels in one group, inside the parallel loop over the rows
    assert len(stores) == 3
    assert {s.indices[0].dtype.lanes for s in stores} == {32}
    rows = [s for s in stmts(lowered) if isinstance(s, For) and s.kind is ForKind.PARALLEL
            and s.loop_var.name == "i"]
    inside = [x for r in rows for x in _nodes(r.body)]
    assert all(any(x is s for x in inside) for s in stores)


def _nodes(node: object) -> list[object]:
    found: list[object] = []
    post_order_visit(node, found.append)
    return found


def test_channels_the_vector_width_does_not_divide_leave_a_scalar_rest() -> None:
    lowered = lowering.lower(dwconv(24, 16, 20), opt_level=3, target=AVX2)
    assert {s.indices[0].dtype.lanes for s in _lane_stores(lowered)} == {16}
    assert any(isinstance(s, For) and s.loop_var.name == "c_rest"
               and isinstance(s.extent, IntImm) and s.extent.value == 4
               for s in stmts(lowered))


@pytest.mark.parametrize("target", pinned_targets())
@pytest.mark.parametrize("size", SIZES, ids=[f"{h}x{w}x{c}" for h, w, c in SIZES])
def test_bit_identical_to_the_interpreter(size: tuple[int, int, int], target: Target) -> None:
    func = dwconv(*size)
    agrees_with_interpreter(func, lambda: standard_normal(func, 3), target, runs=2)


@pytest.mark.parametrize("target", pinned_targets())
def test_overlapping_arrays_run_the_loop_as_written(target: Target) -> None:
    func = dwconv(20, 18, 12)
    n = 20 * 18 * 12
    # the output over the input, shifted by a row: results land where later rows read
    agrees_with_interpreter(
        func, lambda: one_storage(func, [0, 2 * n, 18 * 12],
                                  np.random.default_rng(4)), target, runs=1)


@T.prim_func
def shifted_rows(A: T.Buffer((6, 16), "float32"), B: T.Buffer((6, 16), "float32")):
    # the row above, zero for the first row: the test is the same for every lane of j
    for i in range(6):
        for j in T.vectorized(16):
            B[i, j] = T.if_then_else(i > 0, A[i - 1, j], T.float32(0))


def test_a_vectorized_loop_keeps_a_lane_invariant_choice_as_one_branch() -> None:
    lowered = lowering.lower(shifted_rows, opt_level=3, target=AVX2)
    calls = [n for n in _nodes(lowered.body) if isinstance(n, Call) and n.op == "if_then_else"]
    assert calls and all(c.dtype.lanes == 16 and c.args[0].dtype.lanes == 1 for c in calls)
    assert not any(isinstance(s, For) and s.loop_var.name == "j" for s in stmts(lowered))


@pytest.mark.parametrize("target", pinned_targets())
def test_the_lane_invariant_choice_agrees_with_the_interpreter(target: Target) -> None:
    agrees_with_interpreter(shifted_rows, lambda: standard_normal(shifted_rows, 1), target)
