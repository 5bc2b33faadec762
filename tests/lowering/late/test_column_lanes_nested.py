"""``vectorize_parallel_columns`` on the serial loop that is a parallel loop's body, with a
per-iteration scratch accumulator (``for i in T.parallel(m): for j in range(n): acc = 0;
for k: acc += A[i, k] * B[k, j]``, the way TVM users write a matmul): neighbouring ``j`` run
in vector lanes, each lane with its own copy of the scratch, behind a test that the arrays
do not overlap; the numbers are the interpreter's bit for bit (``fp_contract=False``), and
the loop as written runs when the arrays overlap."""

from __future__ import annotations

import re

import numpy as np
import pytest
from late_kit import (
    AVX2,
    AVX512,
    agrees_with_interpreter,
    before_late,
    one_storage,
    pinned_targets,
    run_pass,
    standard_normal,
    stmts,
)

import lowering
import tvmscript
from irbuilder.ir import Allocate, BufferStore, For, ForKind, IfThenElse, PrimFunc, Ramp
from irbuilder.ir.functor import post_order_visit
from lowering.target import Target
from tvmscript import tir as T


@T.prim_func
def matmul_local(A: T.Buffer((12, 33), "float32"), B: T.Buffer((33, 70), "float32"),
                 C: T.Buffer((12, 70), "float32")):
    for i in T.parallel(12):
        for j in range(70):
            acc = T.alloc_buffer((1,), "float32")
            acc[0] = T.float32(0)
            for k in range(33):
                acc[0] = acc[0] + A[i, k] * B[k, j]
            C[i, j] = acc[0]


@T.prim_func
def matmul_grid(A: T.Buffer((40, 33), "float32"), B: T.Buffer((33, 70), "float32"),
                C: T.Buffer((40, 70), "float32")):
    # large enough for parallelize_loops: the outer loop runs parallel on a no-overlap test
    for i, j in T.grid(40, 70):
        acc = T.alloc_buffer((1,), "float32")
        acc[0] = T.float32(0)
        for k in range(33):
            acc[0] = acc[0] + A[i, k] * B[k, j]
        C[i, j] = acc[0]


@T.prim_func
def sum_and_max(A: T.Buffer((12, 30, 50), "float32"), S: T.Buffer((12, 50), "float32"),
                M: T.Buffer((12, 50), "float32")):
    for b in T.parallel(12):
        for j in range(50):
            acc = T.alloc_buffer((2,), "float32")
            acc[0] = T.float32(0)
            acc[1] = T.float32(-3.0e38)
            for r in range(30):
                acc[0] = acc[0] + A[b, r, j]
                acc[1] = T.max(acc[1], A[b, r, j])
            S[b, j] = acc[0]
            M[b, j] = acc[1]


@T.prim_func
def conv_local(X: T.Buffer((1, 5, 9, 60), "float32"), W: T.Buffer((6, 5, 3, 3), "float32"),
               Y: T.Buffer((1, 6, 7, 58), "float32")):
    # a deeper nest: for y: for x, x 58 wide (AVX-512: groups of 32, 16 and 8, then 2)
    for f in T.parallel(6):
        for y in range(7):
            for x in range(58):
                acc = T.alloc_buffer((1,), "float32")
                acc[0] = T.float32(0)
                for c, ky, kx in T.grid(5, 3, 3):
                    acc[0] = acc[0] + X[0, c, y + ky, x + kx] * W[f, c, ky, kx]
                Y[0, f, y, x] = acc[0]


@T.prim_func
def lane_indexed(A: T.Buffer((12, 33, 70), "float32"), C: T.Buffer((12, 70), "float32")):
    # the scratch element depends on j: no copy per lane
    for i in T.parallel(12):
        for j in range(70):
            acc = T.alloc_buffer((2,), "float32")
            acc[j % 2] = T.float32(0)
            for k in range(33):
                acc[j % 2] = acc[j % 2] + A[i, k, j]
            C[i, j] = acc[j % 2]


LANES = [matmul_local, matmul_grid, sum_and_max, conv_local]


def _wide_stores(node: object) -> set[str]:
    names: set[str] = set()

    def visit(n: object) -> None:
        if isinstance(n, BufferStore) and any(isinstance(i, Ramp) for i in n.indices):
            names.add(n.buffer.name)

    post_order_visit(node, visit)
    return names


@pytest.mark.parametrize("func", LANES, ids=[f.name for f in LANES])
@pytest.mark.parametrize("target", [AVX2, AVX512], ids=["znver3", "znver4"])
def test_neighbouring_iterations_run_in_lanes_behind_a_no_overlap_test(
    func: PrimFunc, target: Target
) -> None:
    after = run_pass("vectorize_parallel_columns", before_late(func, target), target)
    (version,) = [s for s in stmts(after) if isinstance(s, IfThenElse)
                  and _wide_stores(s.then_case)]
    assert not _wide_stores(version.else_case)  # the loop as written
    outer = version.then_case
    assert isinstance(outer, For) and outer.kind is ForKind.PARALLEL
    inside: list[object] = []
    post_order_visit(outer.body, inside.append)
    groups = [s for s in inside if isinstance(s, For) and s.loop_var.name.endswith("_lanes")]
    assert groups and all(g.kind is ForKind.SERIAL for g in groups)
    # one scratch copy per lane, allocated per group
    for g in groups:
        assert isinstance(g.body, Allocate) and g.body.buffer_var.name.startswith("acc_lanes")


def test_leftover_columns_run_in_narrower_groups() -> None:
    after = run_pass("vectorize_parallel_columns", before_late(conv_local, AVX512), AVX512)
    widths = sorted({len(s.buffer.shape) and int(s.indices[0].lanes) for s in stmts(after)
                     if isinstance(s, BufferStore) and s.buffer.name == "Y_flat"
                     and isinstance(s.indices[0], Ramp)})
    assert widths == [8, 16, 32]  # 58 = 32 + 16 + 8 + 2 (the last two as written)


def test_scratch_indexed_by_the_lane_variable_is_left_alone() -> None:
    after = run_pass("vectorize_parallel_columns", before_late(lane_indexed, AVX2), AVX2)
    assert not _wide_stores(after.body)


@pytest.mark.parametrize("target", pinned_targets())
@pytest.mark.parametrize("func", [*LANES, lane_indexed],
                         ids=[f.name for f in [*LANES, lane_indexed]])
def test_bit_identical_to_the_interpreter(func: PrimFunc, target: Target) -> None:
    for seed in range(2):
        agrees_with_interpreter(func, lambda seed=seed: standard_normal(func, seed), target)


@pytest.mark.parametrize("target", pinned_targets())
@pytest.mark.parametrize("offset", [0, 500, 1000, None])
def test_overlapping_arrays_run_the_loop_as_written(target: Target, offset: int | None) -> None:
    # C inside B: a result lands where later iterations read (None: C just past A and B).
    # matmul_grid's loops are serial in the source: overlapping arguments are well defined.
    sizes = [40 * 33, 33 * 70]
    offsets = [0, sizes[0], sizes[0] + (sum(sizes) - sizes[0] if offset is None else offset)]
    agrees_with_interpreter(
        matmul_grid, lambda: one_storage(matmul_grid, offsets, np.random.default_rng(7)), target)


@T.prim_func
def matmul_jammed(A: T.Buffer((64, 33), "float32"), B: T.Buffer((33, 256), "float32"),
                  C: T.Buffer((64, 256), "float32")):
    for i in T.parallel(64):
        for j in range(256):
            acc = T.alloc_buffer((1,), "float32")
            acc[0] = T.float32(0)
            for k in range(33):
                acc[0] = acc[0] + A[i, k] * B[k, j]
            C[i, j] = acc[0]


@pytest.mark.parametrize("target, lanes", [(AVX2, 16), (AVX512, 64)], ids=["avx2", "avx512"])
def test_groups_keep_their_accumulators_in_half_the_registers(target: Target,
                                                             lanes: int) -> None:
    # jam_parallel_reductions gives each column four accumulators (four rows): 16 lanes
    # are 8 of AVX2's 16 registers (64 lanes would be 32: spilled), 64 lanes 16 of
    # AVX-512's 32
    tir = lowering.lower(matmul_jammed, opt_level=3, target=target).script()
    assert "i_jam" in tir
    widths = set(re.findall(r"acc_lanes(?:_\d+)? = T.decl_buffer\(\((\d+),\)", tir))
    assert widths == {str(lanes)}


@pytest.mark.parametrize("target", pinned_targets())
def test_jammed_accumulators_agree_with_the_interpreter(target: Target) -> None:
    agrees_with_interpreter(matmul_jammed, lambda: standard_normal(matmul_jammed, 5), target)
