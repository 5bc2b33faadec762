"""``sink_reduction_loops``: a reduction nest whose schedule put output loops inside its
reduction loops (TVM's GEMM tutorial) gets its reduction loops innermost again, behind a
run-time no-overlap test; nests it cannot prove safe are kept. Numbers against the
interpreter, overlapping arguments included."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import lowering
from irbuilder.ir import (
    For,
    ForKind,
    IfThenElse,
    IntImm,
    PrimFunc,
    Var,
    post_order_visit,
    structural_equal,
)
from lowering.target import Target
from lowering.transforms.sink_reductions import sink_reduction_loops
from tvmscript import tir as T

sys.path.insert(0, str(Path(__file__).parent / "late"))
from late_kit import AVX2, agrees_with_interpreter, one_storage, pinned_targets, standard_normal


@T.prim_func
def gemm_permuted(A: T.Buffer((64, 48), "float32"), B: T.Buffer((48, 64), "float32"),
                  C: T.Buffer((64, 64), "float32")):
    # the tutorial's blocking by 16 and loop permutation: m_1 between k_0 and k_1
    for m_0 in T.parallel(4):
        for n_0, k_0, m_1, k_1 in T.grid(4, 12, 16, 4):
            for n_1 in T.vectorized(16):
                with T.block("C"):
                    vm = T.axis.spatial(64, m_0 * 16 + m_1)
                    vn = T.axis.spatial(64, n_0 * 16 + n_1)
                    vk = T.axis.reduce(48, k_0 * 4 + k_1)
                    with T.init():
                        C[vm, vn] = T.float32(0)
                    C[vm, vn] = C[vm, vn] + A[vm, vk] * B[vk, vn]


@T.prim_func
def gemm_permuted_serial(A: T.Buffer((64, 48), "float32"), B: T.Buffer((48, 64), "float32"),
                         C: T.Buffer((64, 64), "float32")):
    # serial rows: with C overlapping A or B the nest as written is still one order
    for m_0, n_0, k_0, m_1, k_1 in T.grid(4, 4, 12, 16, 4):
        for n_1 in T.vectorized(16):
            with T.block("C"):
                vm = T.axis.spatial(64, m_0 * 16 + m_1)
                vn = T.axis.spatial(64, n_0 * 16 + n_1)
                vk = T.axis.reduce(48, k_0 * 4 + k_1)
                with T.init():
                    C[vm, vn] = T.float32(0)
                C[vm, vn] = C[vm, vn] + A[vm, vk] * B[vk, vn]


@T.prim_func
def gemm_packed(A: T.Buffer((32, 64), "float32"), B: T.Buffer((64, 64), "float32"),
                C: T.Buffer((32, 64), "float32")):
    packed = T.alloc_buffer((2, 64, 32))
    for x in T.parallel(2):
        for y in range(64):
            for z in T.vectorized(32):
                with T.block("packed"):
                    vx, vy, vz = T.axis.remap("SSS", [x, y, z])
                    packed[vx, vy, vz] = B[vy, vx * 32 + vz]
    for m_0 in T.parallel(2):
        for n_0, k_0, m_1, k_1 in T.grid(2, 16, 16, 4):
            for n_1 in T.vectorized(32):
                with T.block("C"):
                    vm = T.axis.spatial(32, m_0 * 16 + m_1)
                    vn = T.axis.spatial(64, n_0 * 32 + n_1)
                    vk = T.axis.reduce(64, k_0 * 4 + k_1)
                    with T.init():
                        C[vm, vn] = T.float32(0)
                    C[vm, vn] = C[vm, vn] + A[vm, vk] * packed[vn // 32, vk, vn % 32]


@T.prim_func
def loops_k_outside(A: T.Buffer((24, 40), "float32"), B: T.Buffer((40, 32), "float32"),
                    C: T.Buffer((24, 32), "float32")):
    # plain loops, init before the nest: k outermost, then the rows and columns
    for i, j in T.grid(24, 32):
        C[i, j] = T.float32(0)
    for k, i, j in T.grid(40, 24, 32):
        C[i, j] = C[i, j] + A[i, k] * B[k, j]


@T.prim_func
def unrolled_k(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"),
               C: T.Buffer((16, 16), "float32")):
    for k_0, i in T.grid(4, 16):
        for k_1 in T.unroll(4):  # the tutorial's unrolled k_1: sinks, serial
            for j in range(16):
                C[i, j] = C[i, j] + A[i, k_0 * 4 + k_1] * B[k_0 * 4 + k_1, j]


@T.prim_func
def local_accumulator(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"),
                      C: T.Buffer((16, 16), "float32")):
    acc = T.alloc_buffer((16, 16))  # the function's own accumulator: sunk, with no test
    for i, j in T.grid(16, 16):
        acc[i, j] = T.float32(0)
    for k, i, j in T.grid(16, 16, 16):
        acc[i, j] = acc[i, j] + A[i, k] * B[k, j]
    for i, j in T.grid(16, 16):
        C[i, j] = acc[i, j]


@T.prim_func
def unrolled_columns(D: T.Buffer((64, 16), "float32"), K: T.Buffer((64, 16), "float32"),
                     O: T.Buffer((8, 16), "float32")):
    # x86 conv2d_NCHWc's schedule: 8 output columns unrolled inside the reduction loops,
    # its register tile: kept
    for ic in range(64):
        for ow in T.unroll(8):
            for oc in T.vectorized(16):
                O[ow, oc] = O[ow, oc] + D[ic, ow] * K[ic, oc]


@T.prim_func
def rows_meet(A: T.Buffer((16, 16), "float32"), C: T.Buffer((31,), "float32")):
    for k, i, j in T.grid(16, 16, 16):  # i + j: two (i, j) write one element
        C[i + j] = C[i + j] + A[i, k] * A[k, j]


@T.prim_func
def reads_a_neighbour(A: T.Buffer((16, 16), "float32"), C: T.Buffer((17, 16), "float32")):
    for k, i, j in T.grid(16, 16, 16):  # reads the row another i writes
        C[i, j] = C[i + 1, j] + A[i, k]


@T.prim_func
def columns_vectorized(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"),
                       C: T.Buffer((16, 16), "float32")):
    for i, k in T.grid(16, 16):  # the usual i-k-j order: nothing to sink
        for j in T.vectorized(16):
            C[i, j] = C[i, j] + A[i, k] * B[k, j]


class _Capture:
    def __init__(self) -> None:
        self.ir: PrimFunc | None = None

    def before_pass(self, name: str, ir: object) -> None:
        if name == "sink_reduction_loops":
            assert isinstance(ir, PrimFunc)
            self.ir = ir


def _before(func: PrimFunc) -> PrimFunc:
    capture = _Capture()
    lowering.lower(func, target=AVX2, instruments=[capture])
    assert capture.ir is not None
    return capture.ir


def _run(func: PrimFunc) -> PrimFunc:
    with lowering.PassContext(opt_level=3, target=AVX2):
        return sink_reduction_loops(func)


def _chain(loop: For) -> list[For]:
    out = [loop]
    while isinstance(out[-1].body, For):
        out.append(out[-1].body)
    return out


def _versions(func: PrimFunc) -> list[IfThenElse]:
    found: list[IfThenElse] = []
    post_order_visit(func.body, lambda n: found.append(n) if isinstance(n, IfThenElse)
                     and isinstance(n.then_case, For) else None)
    return found


@pytest.mark.parametrize("func", [gemm_permuted, gemm_packed], ids=lambda f: f.name)
def test_the_tutorials_rows_leave_the_reduction_loops(func: PrimFunc) -> None:
    after = _run(_before(func))
    (version,) = _versions(after)
    sunk = version.then_case
    assert isinstance(sunk, For)
    names = [lp.loop_var.name for lp in _chain(sunk)]
    if func is gemm_permuted:
        # row-major: n_0 walks on into n_1, a row of 64 columns instead of 16; the parallel
        # blocks of 16 rows and the rows in them are one parallel loop over the 64 rows
        assert names == ["m_0_m_1", "n_0", "n_1", "k_0", "k_1"]
        assert sunk.kind is ForKind.PARALLEL and structural_equal(sunk.extent, IntImm(
            sunk.extent.dtype, 64))
        nest = _chain(sunk)[1:]
        original = _chain(version.else_case)[1:]  # below the parallel blocks of rows
    else:
        # the packed operand's panel loop n_0 stays outside the rows (the row is 32 either
        # way), so the parallel row blocks stay apart from the rows
        assert names == ["n_0", "m_1", "n_1", "k_0", "k_1"]
        nest, original = _chain(sunk), _chain(version.else_case)
    kinds = [lp.kind for lp in nest]
    assert ForKind.VECTORIZED not in kinds  # the late stage vectorizes the columns
    assert all("tvmscript.reduction" in lp.annotations for lp in nest[-2:])
    # the original nest, for overlapping arguments
    assert [lp.loop_var.name for lp in original] == ["n_0", "k_0", "m_1", "k_1", "n_1"]
    tested: set[str] = set()
    post_order_visit(version.condition,
                     lambda n: tested.add(n.name) if isinstance(n, Var) else None)
    # the packed copy is the function's own allocation: it needs no test
    want = {"A_data", "B_data", "C_data"} if func is gemm_permuted else {"A_data", "C_data"}
    assert tested == want


def test_plain_loops_with_k_outermost_sink() -> None:
    after = _run(_before(loops_k_outside))
    (version,) = _versions(after)
    assert [lp.loop_var.name for lp in _chain(version.then_case)] == ["i", "j", "k"]


def test_an_unrolled_reduction_loop_sinks_as_a_serial_loop() -> None:
    after = _run(_before(unrolled_k))
    (version,) = _versions(after)
    chain = _chain(version.then_case)
    assert [lp.loop_var.name for lp in chain] == ["i", "j", "k_0", "k_1"]
    assert all(lp.kind is ForKind.SERIAL for lp in chain)


@pytest.mark.parametrize("func", [unrolled_columns, rows_meet,
                                  reads_a_neighbour, columns_vectorized], ids=lambda f: f.name)
def test_nests_it_cannot_prove_are_kept(func: PrimFunc) -> None:
    before = _before(func)
    assert _run(before) is before


@pytest.mark.parametrize("target", pinned_targets())
@pytest.mark.parametrize("func", [gemm_permuted, gemm_packed, loops_k_outside, unrolled_k,
                                  local_accumulator], ids=lambda f: f.name)
def test_sunk_nests_give_the_interpreters_numbers(func: PrimFunc, target: Target) -> None:
    for seed in range(2):
        agrees_with_interpreter(func, lambda s=seed: standard_normal(func, s), target, runs=2)


@pytest.mark.parametrize("target", pinned_targets())
@pytest.mark.parametrize("offsets", [(0, 4000, 4100), (0, 5000, 100)],
                         ids=["C_over_B", "C_over_A"])
def test_an_output_overlapping_an_input_runs_the_nest_as_written(
        target: Target, offsets: tuple[int, int, int]) -> None:
    func = gemm_permuted_serial
    agrees_with_interpreter(
        func, lambda: one_storage(func, offsets, np.random.default_rng(7)), target, runs=2)


_SPLIT_LOOPS = {"m_0": 2, "m_1": 4, "n_0": 2, "n_1": 16, "k_0": 4, "k_1": 8}


def _permuted_matmul(order: list[str], vectorize: bool) -> PrimFunc:
    """A 8 x 32 x 32 block matmul over the six loops of its three splits in ``order``, the
    innermost ``T.vectorized`` when ``vectorize`` (and it is ``n_1``)."""
    import tvmscript

    head, last = order[:-1], order[-1]
    kind = "T.vectorized" if vectorize and last == "n_1" else "range"
    text = f'''
@T.prim_func
def permuted(A: T.Buffer((8, 32), "float32"), B: T.Buffer((32, 32), "float32"),
             C: T.Buffer((8, 32), "float32")):
    for {", ".join(head)} in T.grid({", ".join(str(_SPLIT_LOOPS[n]) for n in head)}):
        for {last} in {kind}({_SPLIT_LOOPS[last]}):
            with T.block("C"):
                vm = T.axis.spatial(8, m_0 * 4 + m_1)
                vn = T.axis.spatial(32, n_0 * 16 + n_1)
                vk = T.axis.reduce(32, k_0 * 8 + k_1)
                with T.init():
                    C[vm, vn] = T.float32(0)
                C[vm, vn] = C[vm, vn] + A[vm, vk] * B[vk, vn]
'''
    func = tvmscript.from_source(text)
    assert isinstance(func, PrimFunc)
    return func


def _orders(count: int) -> list[list[str]]:
    """Random orders of the six loops."""
    rng = np.random.default_rng(11)
    names = list(_SPLIT_LOOPS)
    return [[str(n) for n in rng.permutation(names)] for _ in range(count)]


def _interleaved() -> list[list[str]]:
    """The output loops in row-major order, ``k_0`` before ``k_1``, both placed among
    ``m_0, m_1, n_0`` (not both right above the vectorized ``n_1``, the usual order): every
    such nest is one the pass sinks."""
    orders = []
    for first in range(4):
        for second in range(first, 4):
            if first == second == 3:
                continue
            order = ["m_0", "m_1", "n_0"]
            order.insert(second, "k_1")
            order.insert(first, "k_0")
            orders.append([*order, "n_1"])
    return orders


@pytest.mark.parametrize("order", _interleaved(), ids=lambda o: "-".join(o))
def test_interleaved_reduction_loops_sink(order: list[str]) -> None:
    after = _run(_before(_permuted_matmul(order, vectorize=True)))
    (version,) = _versions(after)
    assert [lp.loop_var.name for lp in _chain(version.then_case)][-2:] == ["k_0", "k_1"]


@pytest.mark.parametrize("target", pinned_targets())
@pytest.mark.parametrize("order", _orders(8) + _interleaved(), ids=lambda o: "-".join(o))
def test_any_loop_order_gives_the_interpreters_numbers(order: list[str],
                                                       target: Target) -> None:
    func = _permuted_matmul(order, vectorize=True)
    agrees_with_interpreter(func, lambda: standard_normal(func, 3), target, runs=2)


def test_the_functions_own_accumulator_is_sunk_without_a_test() -> None:
    """A function-local accumulator overlaps no parameter: its nest gets the output loops
    outside the reduction loop with no run-time overlap test around it."""
    before = _before(local_accumulator)
    after = _run(before)
    assert after is not before
    found: list[object] = []
    post_order_visit(after.body, lambda n: found.append(n) if isinstance(n, IfThenElse) else None)
    assert not found, after.script()
    assert "for i, j, k in T.grid(16, 16, 16):" in after.script()
