"""The align_streams rewrite: vector loops writing streams move onto cache-line boundaries."""

from __future__ import annotations

import numpy as np
import pytest
from pinned import BOTH, lower_before_late_stage, lower_for
from stream_checks import random_inputs, run_misaligned

import lowering
import lowering.late.align_streams as align
import tvmscript
from irbuilder.ir import (
    Allocate,
    For,
    IfThenElse,
    LetStmt,
    PrimFunc,
    Ramp,
    StmtExprVisitor,
    structural_equal,
)
from lowering.late.alias_version import NOALIAS_ATTR
from lowering.target import Target
from tvmscript import tir as T

R, C = 6, 200  # small arrays: the tests lower the streaming threshold


pytestmark = pytest.mark.usefixtures("small_streams")


@T.prim_func
def stencil(A: T.Buffer((R, C), "float32"), B: T.Buffer((R, C), "float32")):
    for i in range(R - 2):
        for j in T.vectorized(C - 2):
            B[i + 1, j + 1] = T.float32(0.2) * (
                A[i + 1, j + 1] + A[i, j + 1] + A[i + 2, j + 1] + A[i + 1, j] + A[i + 1, j + 2]
            )


@T.prim_func
def convert(A: T.Buffer((R * C,), "int32"), B: T.Buffer((R * C,), "float32")):
    for j in T.vectorized(R * C - 3):
        x = T.Cast("float32", A[j])
        B[j + 3] = x * T.float32(0.5) + T.exp(x * T.float32(0.01))


@T.prim_func
def gathered(A: T.Buffer((R * C,), "float32"), Idx: T.Buffer((R * C,), "int32"),
             B: T.Buffer((R * C,), "float32")):
    for j in T.vectorized(R * C):
        B[j] = A[Idx[j]]


@T.prim_func
def quads(A: T.Buffer((R * C,), "float32"), B: T.Buffer((R * C,), "float32")):
    for j in range(R * C // 4):
        for k in T.vectorized(4):  # 16-byte vectors: not whole cache lines
            B[j * 4 + k] = A[j * 4 + k] * T.float32(2)


def _shifts(func: PrimFunc) -> list[LetStmt]:
    found: list[LetStmt] = []

    class _Find(StmtExprVisitor):
        def visit_let_stmt_(self, node: LetStmt) -> None:
            if node.var.name == align.SHIFT_NAME:
                found.append(node)
            self.generic_visit(node)

    _Find().visit_stmt(func.body)
    return found


def test_stencil_rows_get_head_aligned_vectors_and_tail() -> None:
    prepared = lower_for(stencil)
    lowering.verify_well_formed(prepared, lowered=True)
    (shift,) = _shifts(prepared)
    branch = shift.body
    assert isinstance(branch, IfThenElse) and isinstance(branch.else_case, For)  # the original
    vectors = branch.then_case
    assert isinstance(vectors, LetStmt)
    rest = vectors.body
    assert isinstance(rest, LetStmt)
    head, main, tail = rest.body.seq  # type: ignore[attr-defined]
    assert isinstance(head, Allocate) and isinstance(tail, Allocate)  # whole-vector temporaries
    head_copy = head.body.body.seq[1]  # type: ignore[attr-defined]
    assert isinstance(head_copy, For) and head_copy.extent is shift.var
    assert isinstance(main, For) and main.extent is vectors.var
    assert isinstance(main.body.indices[0], Ramp)  # type: ignore[attr-defined]


def test_rewrite_is_idempotent() -> None:
    once = align.align_streams(lower_before_late_stage(stencil))
    assert len(_shifts(once)) == 1
    assert structural_equal(once, align.align_streams(once))


@BOTH
def test_gathers_are_aligned_and_small_vectors_left_alone(target: Target) -> None:
    # A gather's lane u reads at lane u of its index: still a function of the position.
    prepared = lower_for(gathered, target)
    regions = prepared.script().count(NOALIAS_ATTR)
    if target.has_feature("avx512f"):
        # the gather fast path first versions the loop; both copies are then aligned
        assert (regions, len(_shifts(prepared))) == (1, 2)
    else:
        assert (regions, len(_shifts(prepared))) == (0, 1)
    assert _shifts(lower_for(quads, target)) == []


@pytest.mark.parametrize("offset", range(8), ids=lambda o: f"offset{o}")
@pytest.mark.parametrize(
    "func", [stencil, convert, gathered], ids=["stencil", "convert", "gather"]
)
def test_results_for_every_alignment(func: PrimFunc, offset: int) -> None:
    assert _shifts(lower_for(func))
    low = 0 if func is gathered else -300  # a gather's indices stay in bounds
    inputs = random_inputs(func, np.random.default_rng(offset), low, 300)
    out, expected = run_misaligned(func, inputs, offset, -7.0)
    np.testing.assert_allclose(out, expected, rtol=1e-6, atol=1e-6)


def test_overlapping_arrays_take_the_original_loop() -> None:
    rng = np.random.default_rng(11)
    base = rng.standard_normal((R + 1, C)).astype(np.float32)
    want = base.copy()
    tvmscript.build(stencil, target="interp")(want[:R], want[1:])
    got = base.copy()
    tvmscript.build(stencil)(got[:R], got[1:])
    np.testing.assert_array_equal(got, want)
