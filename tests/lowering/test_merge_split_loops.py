"""``merge_split_loops``: a fused loop that a schedule split again (``T.where`` on the last
piece) is one loop again when it is read through divisions, and the late stage then runs it
as rows; splits read otherwise are kept as written. Numbers against the interpreter."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import lowering
import tvmscript
from irbuilder.ir import For, ForKind, PrimFunc, post_order_visit
from lowering.target import Target
from lowering.transforms.merge_split import merge_split_loops
from tvmscript import tir as T

sys.path.insert(0, str(Path(__file__).parent / "late"))
from late_kit import AVX2, agrees_with_interpreter, pinned_targets, standard_normal


@T.prim_func
def add_where(A: T.Buffer((37, 29), "float32"), B: T.Buffer((29,), "float32"),
              C: T.Buffer((37, 29), "float32")):
    for f0 in T.parallel(34):
        for f1 in T.vectorized(32):
            with T.block("add"):
                v0 = T.axis.spatial(37, (f0 * 32 + f1) // 29)
                v1 = T.axis.spatial(29, (f0 * 32 + f1) % 29)
                T.where(f0 * 32 + f1 < 1073)
                C[v0, v1] = A[v0, v1] + B[v1]


@T.prim_func
def scale_dividing(A: T.Buffer((64, 48), "float32"), S: T.Buffer((64,), "float32"),
                   C: T.Buffer((64, 48), "float32")):
    for f0 in range(48):  # 64 * 48 = 3072 = 48 * 64: the split divides, no T.where
        for f1 in T.vectorized(64):
            with T.block("scale"):
                v0 = T.axis.spatial(64, (f0 * 64 + f1) // 48)
                v1 = T.axis.spatial(48, (f0 * 64 + f1) % 48)
                C[v0, v1] = A[v0, v1] * S[v0]


@T.prim_func
def plain_split(A: T.Buffer((1024,), "float32"), C: T.Buffer((1024,), "float32")):
    for f0 in T.parallel(16):  # nothing divides the index: the user's split stays
        for f1 in T.vectorized(64):
            C[f0 * 64 + f1] = A[f0 * 64 + f1] * T.float32(2)


@T.prim_func
def uses_the_pieces(A: T.Buffer((1073,), "float32"), C: T.Buffer((1088,), "float32")):
    for f0 in T.parallel(34):
        for f1 in T.vectorized(32):
            # f1 on its own: not a function of f0 * 32 + f1 alone
            C[f0 * 32 + f1] = A[(f0 * 32 + f1) % 29] + T.Cast("float32", f1)


class _Capture:
    """Keeps the IR this pass receives in a full lowering."""

    def __init__(self) -> None:
        self.ir: PrimFunc | None = None

    def before_pass(self, name: str, ir: object) -> None:
        if name == "merge_split_loops":
            assert isinstance(ir, PrimFunc)
            self.ir = ir


@T.prim_func
def rowmax_where(A: T.Buffer((8, 100), "float32"), M: T.Buffer((8,), "float32")):
    for i in T.parallel(8):
        for k_0 in range(7):
            for k_1 in T.vectorized(16):
                with T.block("max"):
                    vi = T.axis.spatial(8, i)
                    vk = T.axis.reduce(100, k_0 * 16 + k_1)
                    T.where(k_0 * 16 + k_1 < 100)
                    with T.init():
                        M[vi] = T.float32(-3.4e38)
                    M[vi] = T.max(M[vi], A[vi, vk])


@T.prim_func
def rowsum_where(A: T.Buffer((8, 100), "float32"), S: T.Buffer((8,), "float32")):
    for i in T.parallel(8):
        for k_0, k_1 in T.grid(7, 16):
            with T.block("sum"):
                vi = T.axis.spatial(8, i)
                vk = T.axis.reduce(100, k_0 * 16 + k_1)
                T.where(k_0 * 16 + k_1 < 100)
                with T.init():
                    S[vi] = T.float32(0)
                S[vi] = S[vi] + A[vi, vk]


@T.prim_func
def serial_pieces_in_order(A: T.Buffer((1073,), "float32"), C: T.Buffer((1073,), "float32")):
    for f0 in T.parallel(34):
        for f1 in range(32):  # serial: each piece of 32 runs in order, reading C back
            if f0 * 32 + f1 < 1073:
                C[f0 * 32 + f1] = A[(f0 * 32 + f1) % 29] + C[(f0 * 32 + f1) // 58]


@T.prim_func
def serial_pieces_apart(A: T.Buffer((1073,), "float32"), C: T.Buffer((1073,), "float32")):
    for f0 in T.parallel(34):
        for f1 in range(32):  # serial, but every iteration writes its own element only
            if f0 * 32 + f1 < 1073:
                C[f0 * 32 + f1] = A[(f0 * 32 + f1) % 29]


def _before(func: PrimFunc) -> PrimFunc:
    """``func`` lowered up to this pass (the race check off: a kernel here reads back what
    its serial pieces wrote, which it cannot prove apart)."""
    capture = _Capture()
    with lowering.PassContext(config={"check_parallel_races": {"enabled": False}}):
        lowering.lower(func, target=AVX2, instruments=[capture])
    assert capture.ir is not None
    return capture.ir


def _run(func: PrimFunc) -> PrimFunc:
    with lowering.PassContext(opt_level=3, target=AVX2):
        return merge_split_loops(func)


def _loops(func: PrimFunc) -> list[For]:
    out: list[For] = []
    post_order_visit(func.body, lambda n: out.append(n) if isinstance(n, For) else None)
    return out[::-1]


def test_a_where_split_becomes_the_fused_loop() -> None:
    after = _run(_before(add_where))
    (loop,) = _loops(after)
    assert loop.kind is ForKind.PARALLEL and int(loop.extent) == 1073
    text = after.script()
    assert "if " not in text and "% 29" in text


def test_a_parallel_loop_of_serial_pieces_writing_apart_merges() -> None:
    (loop,) = _loops(_run(_before(serial_pieces_apart)))
    assert loop.kind is ForKind.PARALLEL and int(loop.extent) == 1073


def test_a_dividing_split_becomes_the_fused_loop() -> None:
    after = _run(_before(scale_dividing))
    (loop,) = _loops(after)
    assert loop.kind is ForKind.SERIAL and int(loop.extent) == 3072
    assert "// 48" in after.script()


@pytest.mark.parametrize("func", [plain_split, uses_the_pieces, serial_pieces_in_order],
                         ids=lambda f: f.name)
def test_other_splits_are_kept(func: PrimFunc) -> None:
    before = _before(func)
    assert _run(before) is before


@pytest.mark.parametrize("func", [rowmax_where, rowsum_where], ids=lambda f: f.name)
def test_a_split_reduction_becomes_one_declared_reduction_loop(func: PrimFunc) -> None:
    after = _run(_before(func))
    inner = [f for f in _loops(after) if f.kind is ForKind.SERIAL]
    assert len(inner) == 1 and int(inner[0].extent) == 100
    assert "tvmscript.reduction" in inner[0].annotations
    text = after.script()
    assert "k_0_k_1 == 0:" in text and "< 100" not in text


@pytest.mark.parametrize("target", pinned_targets())
def test_a_split_max_gives_the_interpreters_numbers(target: Target) -> None:
    for seed in range(3):
        agrees_with_interpreter(rowmax_where, lambda s=seed: standard_normal(rowmax_where, s),
                                target, runs=2)


@pytest.mark.parametrize("target", pinned_targets())
def test_a_split_sum_is_within_the_reductions_bound(target: Target) -> None:
    # a declared sum runs in lanes (its documented order): close to the float64 sum
    kernel = tvmscript.build(rowsum_where, target=target, cache=False)
    A = np.random.default_rng(5).standard_normal((8, 100)).astype("float32")
    S = np.zeros(8, "float32")
    kernel(A, S)
    np.testing.assert_allclose(S, A.astype("float64").sum(1), rtol=1e-5, atol=1e-5)


def test_the_late_stage_runs_the_merged_loop_as_rows() -> None:
    lowered = lowering.lower(add_where, target=AVX2)
    found = {(f.kind, int(f.extent)) for f in _loops(lowered)}
    assert (ForKind.PARALLEL, 37) in found and (ForKind.SERIAL, 29) in found
    assert "% 29" not in lowered.script()


@pytest.mark.parametrize("target", pinned_targets())
@pytest.mark.parametrize("func", [add_where, scale_dividing, plain_split, uses_the_pieces],
                         ids=lambda f: f.name)
def test_merged_loops_give_the_interpreters_numbers(target: Target, func: PrimFunc) -> None:
    for seed in range(3):
        agrees_with_interpreter(func, lambda s=seed: standard_normal(func, s), target, runs=2)
