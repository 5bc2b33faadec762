"""``distribute_tile_consumers``: a consumer a schedule computed at a reduction's tiles
(the TensorIR tutorial's ``reverse_compute_at`` of a ReLU) writes the reduction's result in
place and the loops they share are distributed, behind a run-time no-overlap test; what it
cannot prove is kept. Numbers against the interpreter, overlapping arguments included."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import lowering
from irbuilder.ir import (
    BufferLoad,
    BufferStore,
    For,
    IfThenElse,
    PrimFunc,
    SeqStmt,
    Var,
    post_order_visit,
)
from lowering.target import Target
from lowering.transforms.distribute_tiles import distribute_tile_consumers
from tvmscript import tir as T

sys.path.insert(0, str(Path(__file__).parent / "late"))
from late_kit import AVX2, agrees_with_interpreter, one_storage, pinned_targets, standard_normal


@T.prim_func
def mm_relu(A: T.Buffer((32, 32), "float32"), B: T.Buffer((32, 32), "float32"),
            C: T.Buffer((32, 32), "float32")):
    # the tutorial: split(j, [None, 4]), reorder(j_0, k, j_1), reverse_compute_at(C, j_0)
    Y = T.alloc_buffer((32, 32))
    for i, j_0 in T.grid(32, 8):
        for k, j_1 in T.grid(32, 4):
            with T.block("Y"):
                vi = T.axis.spatial(32, i)
                vj = T.axis.spatial(32, j_0 * 4 + j_1)
                vk = T.axis.reduce(32, k)
                with T.init():
                    Y[vi, vj] = T.float32(0)
                Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
        for ax0 in range(4):
            with T.block("C"):
                vi = T.axis.spatial(32, i)
                vj = T.axis.spatial(32, j_0 * 4 + ax0)
                C[vi, vj] = T.max(Y[vi, vj], T.float32(0))


@T.prim_func
def mm_relu_tiles(A: T.Buffer((32, 32), "float32"), B: T.Buffer((32, 32), "float32"),
                  C: T.Buffer((32, 32), "float32")):
    # a decomposed reduction (init block apart) over 4 x 16 tiles in a parallel row loop
    Y = T.alloc_buffer((32, 32))
    for i_0 in T.parallel(8):
        for j_0 in range(2):
            for i_1 in range(4):
                for j_1_init in T.vectorized(16):
                    with T.block("Y_init"):
                        vi = T.axis.spatial(32, i_0 * 4 + i_1)
                        vj = T.axis.spatial(32, j_0 * 16 + j_1_init)
                        Y[vi, vj] = T.float32(0)
            for k, i_1 in T.grid(32, 4):
                for j_1 in T.vectorized(16):
                    with T.block("Y_update"):
                        vi = T.axis.spatial(32, i_0 * 4 + i_1)
                        vj = T.axis.spatial(32, j_0 * 16 + j_1)
                        vk = T.axis.reduce(32, k)
                        Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
            for ax0 in range(4):
                for ax1 in T.vectorized(16):
                    with T.block("C"):
                        vi = T.axis.spatial(32, i_0 * 4 + ax0)
                        vj = T.axis.spatial(32, j_0 * 16 + ax1)
                        C[vi, vj] = T.max(Y[vi, vj], T.float32(0))


@T.prim_func
def mm_relu_lanes(A: T.Buffer((32, 32), "float32"), B: T.Buffer((32, 32), "float32"),
                  C: T.Buffer((32, 32), "float32")):
    # the MLC course's variant: init decomposed, the 4 columns of a tile T.vectorized
    Y = T.alloc_buffer((32, 32))
    for i in T.parallel(32):
        for j_0 in range(8):
            for j_1_init in T.vectorized(4):
                with T.block("Y_init"):
                    vi = T.axis.spatial(32, i)
                    vj = T.axis.spatial(32, j_0 * 4 + j_1_init)
                    Y[vi, vj] = T.float32(0)
            for k in range(32):
                for j_1 in T.vectorized(4):
                    with T.block("Y_update"):
                        vi = T.axis.spatial(32, i)
                        vj = T.axis.spatial(32, j_0 * 4 + j_1)
                        vk = T.axis.reduce(32, k)
                        Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
            for ax0 in T.vectorized(4):
                with T.block("C"):
                    vi = T.axis.spatial(32, i)
                    vj = T.axis.spatial(32, j_0 * 4 + ax0)
                    C[vi, vj] = T.max(Y[vi, vj], T.float32(0))


@T.prim_func
def mm_bias_scratch(A: T.Buffer((32, 32), "float32"), B: T.Buffer((32, 32), "float32"),
                    bias: T.Buffer((32,), "float32"), D: T.Buffer((32, 32), "float32")):
    # the consumer's output is itself the function's own buffer, read by a last nest
    Y = T.alloc_buffer((32, 32))
    Z = T.alloc_buffer((32, 32))
    for i, j_0 in T.grid(32, 8):
        for k, j_1 in T.grid(32, 4):
            with T.block("Y"):
                vi = T.axis.spatial(32, i)
                vj = T.axis.spatial(32, j_0 * 4 + j_1)
                vk = T.axis.reduce(32, k)
                with T.init():
                    Y[vi, vj] = T.float32(0)
                Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
        for ax0 in range(4):
            with T.block("Z"):
                vi = T.axis.spatial(32, i)
                vj = T.axis.spatial(32, j_0 * 4 + ax0)
                Z[vi, vj] = Y[vi, vj] + bias[vj]
    for i, j in T.grid(32, 32):
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = Z[vi, vj] * T.float32(2)


@T.prim_func
def packed_cache_write(A: T.Buffer((32, 32), "float32"), B: T.Buffer((32, 32), "float32"),
                       C: T.Buffer((32, 32), "float32")):
    # the GEMM tutorial's last step: B packed first, the tile in a "global" cache written
    # back after its reduction (the copy back becomes nothing: C[...] = C[...])
    packedB = T.alloc_buffer((2, 32, 16))
    C_global = T.alloc_buffer((32, 32))
    for x in T.parallel(2):
        for y in range(32):
            for z in T.vectorized(16):
                with T.block("packedB"):
                    vx, vy, vz = T.axis.remap("SSS", [x, y, z])
                    packedB[vx, vy, vz] = B[vy, vx * 16 + vz]
    for m_0 in T.parallel(2):
        for n_0 in range(2):
            for m_1_init in range(16):
                for n_1_init in T.vectorized(16):
                    with T.block("C_init"):
                        vm = T.axis.spatial(32, m_0 * 16 + m_1_init)
                        vn = T.axis.spatial(32, n_0 * 16 + n_1_init)
                        C_global[vm, vn] = T.float32(0)
            for k_0, m_1 in T.grid(8, 16):
                for k_1 in T.unroll(4):
                    for n_1 in T.vectorized(16):
                        with T.block("C_update"):
                            vm = T.axis.spatial(32, m_0 * 16 + m_1)
                            vn = T.axis.spatial(32, n_0 * 16 + n_1)
                            vk = T.axis.reduce(32, k_0 * 4 + k_1)
                            C_global[vm, vn] = (C_global[vm, vn]
                                                + A[vm, vk] * packedB[vn // 16, vk, vn % 16])
            for ax0 in range(16):
                for ax1 in T.vectorized(16):
                    with T.block("C_global"):
                        v0 = T.axis.spatial(32, m_0 * 16 + ax0)
                        v1 = T.axis.spatial(32, n_0 * 16 + ax1)
                        C[v0, v1] = C_global[v0, v1]


@T.prim_func
def reads_a_neighbour(A: T.Buffer((32, 32), "float32"), B: T.Buffer((32, 32), "float32"),
                      C: T.Buffer((32, 31), "float32")):
    # the consumer reads the tile one column over: not its own element
    Y = T.alloc_buffer((32, 32))
    for i, j_0 in T.grid(32, 8):
        for k, j_1 in T.grid(32, 4):
            with T.block("Y"):
                vi = T.axis.spatial(32, i)
                vj = T.axis.spatial(32, j_0 * 4 + j_1)
                vk = T.axis.reduce(32, k)
                with T.init():
                    Y[vi, vj] = T.float32(0)
                Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
        for ax0 in range(3):
            with T.block("C"):
                vi = T.axis.spatial(32, i)
                vj = T.axis.spatial(31, j_0 * 4 + ax0)
                C[vi, vj] = Y[vi, vj + 1]


@T.prim_func
def short_reduction(A: T.Buffer((32, 8), "float32"), B: T.Buffer((8, 32), "float32"),
                    C: T.Buffer((32, 32), "float32")):
    # 8 reduction steps: the late stage keeps such a tile as written
    Y = T.alloc_buffer((32, 32))
    for i, j_0 in T.grid(32, 8):
        for k, j_1 in T.grid(8, 4):
            with T.block("Y"):
                vi = T.axis.spatial(32, i)
                vj = T.axis.spatial(32, j_0 * 4 + j_1)
                vk = T.axis.reduce(8, k)
                with T.init():
                    Y[vi, vj] = T.float32(0)
                Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
        for ax0 in range(4):
            with T.block("C"):
                vi = T.axis.spatial(32, i)
                vj = T.axis.spatial(32, j_0 * 4 + ax0)
                C[vi, vj] = T.max(Y[vi, vj], T.float32(0))


@T.prim_func
def unrolled_tile(A: T.Buffer((32, 32), "float32"), B: T.Buffer((32, 32), "float32"),
                  C: T.Buffer((32, 32), "float32")):
    # an unrolled output loop inside the reduction: a register tile as written
    Y = T.alloc_buffer((32, 32))
    for i, j_0 in T.grid(32, 8):
        for k in range(32):
            for j_1 in T.unroll(4):
                with T.block("Y"):
                    vi = T.axis.spatial(32, i)
                    vj = T.axis.spatial(32, j_0 * 4 + j_1)
                    vk = T.axis.reduce(32, k)
                    with T.init():
                        Y[vi, vj] = T.float32(0)
                    Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
        for ax0 in range(4):
            with T.block("C"):
                vi = T.axis.spatial(32, i)
                vj = T.axis.spatial(32, j_0 * 4 + ax0)
                C[vi, vj] = T.max(Y[vi, vj], T.float32(0))


@T.prim_func
def tile_read_later(A: T.Buffer((32, 32), "float32"), B: T.Buffer((32, 32), "float32"),
                    C: T.Buffer((32, 32), "float32"), D: T.Buffer((32, 32), "float32")):
    # the tile is read again after the loop: it is not the consumer's alone
    Y = T.alloc_buffer((32, 32))
    for i, j_0 in T.grid(32, 8):
        for k, j_1 in T.grid(32, 4):
            with T.block("Y"):
                vi = T.axis.spatial(32, i)
                vj = T.axis.spatial(32, j_0 * 4 + j_1)
                vk = T.axis.reduce(32, k)
                with T.init():
                    Y[vi, vj] = T.float32(0)
                Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
        for ax0 in range(4):
            with T.block("C"):
                vi = T.axis.spatial(32, i)
                vj = T.axis.spatial(32, j_0 * 4 + ax0)
                C[vi, vj] = T.max(Y[vi, vj], T.float32(0))
    for i, j in T.grid(32, 32):
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = Y[vi, vj]


class _Capture:
    def __init__(self, name: str) -> None:
        self.name = name
        self.ir: PrimFunc | None = None

    def before_pass(self, name: str, ir: object) -> None:
        if name == self.name and self.ir is None:
            assert isinstance(ir, PrimFunc)
            self.ir = ir


def _before(func: PrimFunc, name: str = "distribute_tile_consumers") -> PrimFunc:
    capture = _Capture(name)
    lowering.lower(func, target=AVX2, instruments=[capture])
    assert capture.ir is not None
    return capture.ir


def _run(func: PrimFunc) -> PrimFunc:
    with lowering.PassContext(opt_level=3, target=AVX2):
        return distribute_tile_consumers(func)


def _stored(node: object) -> set[str]:
    names: set[str] = set()
    post_order_visit(node, lambda n: names.add(n.buffer.name)  # type: ignore[arg-type]
                     if isinstance(n, BufferStore) else None)
    return names


def _loaded(node: object) -> set[str]:
    names: set[str] = set()
    post_order_visit(node, lambda n: names.add(n.buffer.name)  # type: ignore[arg-type]
                     if isinstance(n, BufferLoad) else None)
    return names


def _version(func: PrimFunc) -> IfThenElse:
    found: list[IfThenElse] = []
    post_order_visit(func.body, lambda n: found.append(n) if isinstance(n, IfThenElse)
                     and isinstance(n.then_case, SeqStmt) else None)
    (version,) = found
    return version


def _chain(loop: For) -> list[str]:
    names = [loop.loop_var.name]
    while isinstance(loop.body, For):
        loop = loop.body
        names.append(loop.loop_var.name)
    return names


def test_the_tutorials_relu_is_computed_in_place_after_the_whole_matmul() -> None:
    after = _run(_before(mm_relu))
    version = _version(after)
    assert isinstance(version.then_case, SeqStmt)
    product, relu = version.then_case.seq
    assert isinstance(product, For) and isinstance(relu, For)
    # the shared i and j_0 loops distributed: two whole nests
    assert _chain(product)[:3] == ["i", "j_0", "k"]
    assert _chain(relu) == ["i", "j_0", "ax0"]
    # the product accumulates in C, the ReLU updates C in place; the tile is gone
    assert _stored(product) == {"C"} and _loaded(product) == {"A", "B", "C"}
    assert _stored(relu) == {"C"} and _loaded(relu) == {"C"}
    # the program as written when C overlaps A or B
    assert _stored(version.else_case) == {"Y", "C"}
    tested: set[str] = set()
    post_order_visit(version.condition,
                     lambda n: tested.add(n.name) if isinstance(n, Var) else None)
    assert tested == {"A_data", "B_data", "C_data"}


def test_a_decomposed_init_and_update_each_get_their_loop() -> None:
    after = _run(_before(mm_relu_tiles))
    version = _version(after)
    assert isinstance(version.then_case, SeqStmt)
    loops = version.then_case.seq
    # init, update and ReLU, each under its own copy of the parallel row loop
    assert len(loops) == 3
    assert all(isinstance(lp, For) and lp.kind.value == "parallel" for lp in loops)
    assert [_stored(lp) for lp in loops] == [{"C"}, {"C"}, {"C"}]


def test_vectorized_tile_columns_of_a_longer_row_are_distributed_and_sunk() -> None:
    after = _run(_before(mm_relu_lanes))
    version = _version(after)
    assert isinstance(version.then_case, SeqStmt)
    assert len(version.then_case.seq) == 3  # init, update, ReLU: a loop each
    sunk = _before(mm_relu_lanes, "merge_split_loops")
    chains: list[list[str]] = []
    post_order_visit(sunk.body, lambda n: chains.append(_chain(n)) if isinstance(n, For)
                     and n.kind.value == "serial" and n.loop_var.name.startswith("j_0")
                     else None)
    # the update's reduction below its 32 columns (j_0 walks on into j_1)
    assert any(c[-1].startswith("k") and len(c) == 3 for c in chains)


def test_an_own_buffer_as_the_output_needs_no_test() -> None:
    after = _run(_before(mm_bias_scratch))
    found: list[IfThenElse] = []
    post_order_visit(after.body, lambda n: found.append(n) if isinstance(n, IfThenElse)
                     and isinstance(n.then_case, SeqStmt) else None)
    assert not found
    # Z takes the matmul; the bias add runs in place in Z; Y is no longer used
    assert "Y" not in _stored(after.body) | _loaded(after.body)


def test_a_cache_writes_copy_back_goes_and_the_packed_operand_stays_shared() -> None:
    after = _run(_before(packed_cache_write))
    version = _version(after)
    assert isinstance(version.then_case, SeqStmt)
    init, update = version.then_case.seq  # no third nest: the copy back is gone
    assert _stored(init) == {"C"} and _stored(update) == {"C"}
    # the packed operand written before the versions is the one both read
    (packed,) = [b for b in _loaded(version.then_case) if b.startswith("packedB")]
    assert packed == "packedB" and "C_global" not in _loaded(version.then_case)


@pytest.mark.parametrize("func", [reads_a_neighbour, short_reduction, unrolled_tile,
                                  tile_read_later], ids=lambda f: f.name)
def test_tiles_it_cannot_prove_or_that_are_better_as_written_are_kept(func: PrimFunc) -> None:
    before = _before(func)
    assert _run(before) is before


@pytest.mark.parametrize("target", pinned_targets())
@pytest.mark.parametrize("func", [mm_relu, mm_relu_tiles, mm_relu_lanes, mm_bias_scratch,
                                  packed_cache_write,
                                  reads_a_neighbour, unrolled_tile, tile_read_later],
                         ids=lambda f: f.name)
def test_distributed_tiles_give_the_interpreters_numbers(func: PrimFunc, target: Target) -> None:
    for seed in range(2):
        agrees_with_interpreter(func, lambda s=seed: standard_normal(func, s), target, runs=2)


@pytest.mark.parametrize("target", pinned_targets())
@pytest.mark.parametrize("offsets", [(0, 2000, 600), (0, 1100, 100), (0, 1024, 0)],
                         ids=["C_over_B", "C_over_A", "C_is_A"])
def test_an_output_overlapping_an_input_runs_the_program_as_written(
        target: Target, offsets: tuple[int, int, int]) -> None:
    agrees_with_interpreter(
        mm_relu, lambda: one_storage(mm_relu, offsets, np.random.default_rng(5)), target,
        runs=2)
