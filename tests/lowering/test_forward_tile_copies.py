"""``forward_tile_copies``: tiles a GPU-style schedule stages at every chunk of a reduction
(``cache_read`` into "shared" buffers) are read from their arrays and the copies go, behind
a run-time no-overlap test; copies it cannot prove (or that pack a layout) are kept. The
decomposed init then gets its own loops (``distribute_tile_consumers``). Numbers against
the interpreter, overlapping arguments included."""

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
    ForKind,
    IfThenElse,
    PrimFunc,
    SeqStmt,
    post_order_visit,
)
from lowering.target import Target
from lowering.transforms.forward_copies import forward_tile_copies
from tvmscript import tir as T

sys.path.insert(0, str(Path(__file__).parent / "late"))
from late_kit import AVX2, agrees_with_interpreter, one_storage, pinned_targets, standard_normal


@T.prim_func
def gemm_shared(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"),
                C: T.Buffer((64, 64), "float32")):
    # a GPU schedule run on the CPU: 16 x 16 tiles, A and B staged per 8 steps of k
    A_shared = T.alloc_buffer((64, 64))
    B_shared = T.alloc_buffer((64, 64))
    for i_0 in T.parallel(4):
        for j_0 in range(4):
            for i_1_init, j_1_init in T.grid(16, 16):
                with T.block("C_init"):
                    vi = T.axis.spatial(64, i_0 * 16 + i_1_init)
                    vj = T.axis.spatial(64, j_0 * 16 + j_1_init)
                    C[vi, vj] = T.float32(0)
            for k_0 in range(8):
                for ax0, ax1 in T.grid(16, 8):
                    with T.block("A_shared"):
                        v0 = T.axis.spatial(64, i_0 * 16 + ax0)
                        v1 = T.axis.spatial(64, k_0 * 8 + ax1)
                        A_shared[v0, v1] = A[v0, v1]
                for ax0 in range(8):
                    for ax1 in T.vectorized(16):
                        with T.block("B_shared"):
                            v0 = T.axis.spatial(64, k_0 * 8 + ax0)
                            v1 = T.axis.spatial(64, j_0 * 16 + ax1)
                            B_shared[v0, v1] = B[v0, v1]
                for k_1, i_1 in T.grid(8, 16):
                    for j_1 in T.vectorized(16):
                        with T.block("C_update"):
                            vi = T.axis.spatial(64, i_0 * 16 + i_1)
                            vj = T.axis.spatial(64, j_0 * 16 + j_1)
                            vk = T.axis.reduce(64, k_0 * 8 + k_1)
                            C[vi, vj] = C[vi, vj] + A_shared[vi, vk] * B_shared[vk, vj]


@T.prim_func
def gemm_shared_serial(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"),
                C: T.Buffer((64, 64), "float32")):
    # serial rows: with C overlapping A or B the program as written is still one order
    A_shared = T.alloc_buffer((64, 64))
    B_shared = T.alloc_buffer((64, 64))
    for i_0 in range(4):
        for j_0 in range(4):
            for i_1_init, j_1_init in T.grid(16, 16):
                with T.block("C_init"):
                    vi = T.axis.spatial(64, i_0 * 16 + i_1_init)
                    vj = T.axis.spatial(64, j_0 * 16 + j_1_init)
                    C[vi, vj] = T.float32(0)
            for k_0 in range(8):
                for ax0, ax1 in T.grid(16, 8):
                    with T.block("A_shared"):
                        v0 = T.axis.spatial(64, i_0 * 16 + ax0)
                        v1 = T.axis.spatial(64, k_0 * 8 + ax1)
                        A_shared[v0, v1] = A[v0, v1]
                for ax0 in range(8):
                    for ax1 in T.vectorized(16):
                        with T.block("B_shared"):
                            v0 = T.axis.spatial(64, k_0 * 8 + ax0)
                            v1 = T.axis.spatial(64, j_0 * 16 + ax1)
                            B_shared[v0, v1] = B[v0, v1]
                for k_1, i_1 in T.grid(8, 16):
                    for j_1 in T.vectorized(16):
                        with T.block("C_update"):
                            vi = T.axis.spatial(64, i_0 * 16 + i_1)
                            vj = T.axis.spatial(64, j_0 * 16 + j_1)
                            vk = T.axis.reduce(64, k_0 * 8 + k_1)
                            C[vi, vj] = C[vi, vj] + A_shared[vi, vk] * B_shared[vk, vj]


@T.prim_func
def packed_panel(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"),
                 C: T.Buffer((64, 64), "float32")):
    # a copy that packs a layout (B's columns into a panel): not a staged tile
    P = T.alloc_buffer((64, 16))
    for j_0 in range(4):
        for k, j_1 in T.grid(64, 16):
            with T.block("P"):
                vk, vj = T.axis.remap("SS", [k, j_1])
                P[vk, vj] = B[vk, j_0 * 16 + vj]
        for i, k, j_1 in T.grid(64, 64, 16):
            with T.block("C"):
                vi = T.axis.spatial(64, i)
                vj = T.axis.spatial(64, j_0 * 16 + j_1)
                vk = T.axis.reduce(64, k)
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * P[vk, j_1]


@T.prim_func
def reads_beyond_the_copy(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64,), "float32")):
    # the update reads one column past what this step copied (what the tile holds there is
    # undefined: it is kept, and not run)
    A_shared = T.alloc_buffer((64, 64))
    for k_0 in range(7):
        for ax0, ax1 in T.grid(64, 8):
            with T.block("A_shared"):
                v0 = T.axis.spatial(64, ax0)
                v1 = T.axis.spatial(64, k_0 * 8 + ax1)
                A_shared[v0, v1] = A[v0, v1]
        for i, k_1 in T.grid(64, 8):
            with T.block("B"):
                vi = T.axis.spatial(64, i)
                vk = T.axis.reduce(64, k_0 * 8 + k_1)
                B[vi] = B[vi] + A_shared[vi, vk + 1]


@T.prim_func
def per_output_tile(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32")):
    # a copy per output tile (nothing accumulates across the loop): kept
    A_shared = T.alloc_buffer((64, 64))
    for i_0 in range(4):
        for ax0, ax1 in T.grid(16, 64):
            with T.block("A_shared"):
                v0 = T.axis.spatial(64, i_0 * 16 + ax0)
                v1 = T.axis.spatial(64, ax1)
                A_shared[v0, v1] = A[v0, v1]
        for i_1, j in T.grid(16, 64):
            with T.block("B"):
                vi = T.axis.spatial(64, i_0 * 16 + i_1)
                vj = T.axis.spatial(64, j)
                B[vi, vj] = A_shared[vi, vj] * T.float32(2)


@T.prim_func
def source_written(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64,), "float32")):
    # the loop writes the array it copies from after the copy: the tile keeps old values
    A_shared = T.alloc_buffer((64, 64))
    for k_0 in range(8):
        for ax0, ax1 in T.grid(64, 8):
            with T.block("A_shared"):
                v0 = T.axis.spatial(64, ax0)
                v1 = T.axis.spatial(64, k_0 * 8 + ax1)
                A_shared[v0, v1] = A[v0, v1]
        for i, k_1 in T.grid(64, 8):
            with T.block("A"):
                vi = T.axis.spatial(64, i)
                vk = T.axis.spatial(64, k_0 * 8 + k_1)
                A[vi, vk] = T.float32(0)
        for i, k_1 in T.grid(64, 8):
            with T.block("B"):
                vi = T.axis.spatial(64, i)
                vk = T.axis.reduce(64, k_0 * 8 + k_1)
                B[vi] = B[vi] + A_shared[vi, vk]


class _Capture:
    def __init__(self, name: str) -> None:
        self.name = name
        self.ir: PrimFunc | None = None

    def before_pass(self, name: str, ir: object) -> None:
        if name == self.name and self.ir is None:
            assert isinstance(ir, PrimFunc)
            self.ir = ir


def _before(func: PrimFunc, name: str = "forward_tile_copies") -> PrimFunc:
    capture = _Capture(name)
    lowering.lower(func, target=AVX2, instruments=[capture])
    assert capture.ir is not None
    return capture.ir


def _run(func: PrimFunc) -> PrimFunc:
    with lowering.PassContext(opt_level=3, target=AVX2):
        return forward_tile_copies(func)


def _names(node: object, kind: type) -> set[str]:
    names: set[str] = set()
    post_order_visit(node, lambda n: names.add(n.buffer.name)  # type: ignore[arg-type]
                     if isinstance(n, kind) else None)
    return names


def test_staged_tiles_are_read_from_their_arrays() -> None:
    after = _run(_before(gemm_shared))
    found: list[IfThenElse] = []
    post_order_visit(after.body, lambda n: found.append(n) if isinstance(n, IfThenElse)
                     and isinstance(n.then_case, For) else None)
    (version,) = found
    # the copies are gone and the update reads A and B
    assert _names(version.then_case, BufferStore) == {"C"}
    assert _names(version.then_case, BufferLoad) == {"A", "B", "C"}
    # the program as written when C overlaps A or B
    assert _names(version.else_case, BufferStore) == {"A_shared", "B_shared", "C"}


def test_the_init_and_the_update_then_get_loops_of_their_own() -> None:
    after = _before(gemm_shared, "parallelize_loops")
    found: list[IfThenElse] = []
    post_order_visit(after.body, lambda n: found.append(n) if isinstance(n, IfThenElse)
                     and isinstance(n.then_case, SeqStmt) else None)
    (distributed,) = found
    assert isinstance(distributed.then_case, SeqStmt)
    init, update = distributed.then_case.seq
    assert isinstance(init, For) and isinstance(update, For)
    assert init.kind is ForKind.PARALLEL and update.kind is ForKind.PARALLEL
    assert _names(init, BufferLoad) == set() and _names(init, BufferStore) == {"C"}
    assert _names(update, BufferLoad) == {"A", "B", "C"}


@pytest.mark.parametrize("func", [packed_panel, reads_beyond_the_copy, per_output_tile,
                                  source_written], ids=lambda f: f.name)
def test_copies_it_cannot_forward_are_kept(func: PrimFunc) -> None:
    before = _before(func)
    assert _run(before) is before


@pytest.mark.parametrize("target", pinned_targets())
@pytest.mark.parametrize("func", [gemm_shared, packed_panel, per_output_tile, source_written],
                         ids=lambda f: f.name)
def test_forwarded_tiles_give_the_interpreters_numbers(func: PrimFunc, target: Target) -> None:
    for seed in range(2):
        agrees_with_interpreter(func, lambda s=seed: standard_normal(func, s), target, runs=2)


@pytest.mark.parametrize("target", pinned_targets())
@pytest.mark.parametrize("offsets", [(0, 6000, 1000), (0, 4100, 2000), (0, 4096, 0)],
                         ids=["C_over_B", "C_over_A", "C_is_A"])
def test_an_output_overlapping_an_input_runs_the_program_as_written(
        target: Target, offsets: tuple[int, int, int]) -> None:
    func = gemm_shared_serial
    agrees_with_interpreter(
        func, lambda: one_storage(func, offsets, np.random.default_rng(3)), target, runs=2)
