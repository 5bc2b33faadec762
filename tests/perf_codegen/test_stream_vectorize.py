"""The vectorize_streams rewrite: serial loops filling large write-only arrays become vector
loops (so their stores can stream), versioned on a no-overlap test."""

from __future__ import annotations

import numpy as np
import pytest
from pinned import AVX2, AVX512, BOTH, assembly, lower_before_late_stage, lower_for
from stream_checks import random_inputs, run_misaligned

import lowering
import lowering.late.align_streams as align
import lowering.late.stream_vectorize as sv
import tvmscript
from irbuilder.ir import (
    BufferStore,
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

N = 1203  # not a multiple of any vector width: every rewrite has a remainder


pytestmark = pytest.mark.usefixtures("small_streams")


@T.prim_func
def gather(Tb: T.Buffer((256,), "float32"), I: T.Buffer((N,), "int32"),
           O: T.Buffer((N,), "float32")):
    for i in range(N):
        O[i] = Tb[I[i]]


@T.prim_func
def shifted_scale(A: T.Buffer((N + 8,), "float64"), B: T.Buffer((N + 8,), "float64")):
    for i in range(N):
        x = A[i + 5] + T.float64(0.5)  # no multiply-add to contract: bit-exact
        B[i + 3] = x * x


@T.prim_func
def narrow(A: T.Buffer((N,), "int32"), B: T.Buffer((N,), "int8")):
    for i in range(N):
        B[i] = T.Cast("int8", A[i] * 3)


@T.prim_func
def iota(B: T.Buffer((N,), "float32")):
    for i in range(N):
        B[i] = T.Cast("float32", i) * T.float32(0.25)


@T.prim_func
def divides(A: T.Buffer((N,), "int32"), D: T.Buffer((N,), "int32"), B: T.Buffer((N,), "int32")):
    for i in range(N):
        B[i] = A[i] // D[i]


@T.prim_func
def guarded(Tb: T.Buffer((256,), "float32"), I: T.Buffer((N,), "int32"),
            O: T.Buffer((N,), "float32")):
    for i in range(N):  # the load runs only where the index is valid: never speculated
        O[i] = T.if_then_else(I[i] >= 0, Tb[I[i]], T.float32(0))


@T.prim_func
def short(A: T.Buffer((32,), "float32"), B: T.Buffer((32,), "float32")):
    for i in range(32):
        B[i] = A[i] + T.float32(1)


@T.prim_func
def strided_store(A: T.Buffer((N,), "float32"), B: T.Buffer((2 * N,), "float32")):
    for i in range(N):
        B[2 * i] = A[i]


@T.prim_func
def read_back(A: T.Buffer((N,), "float32"), B: T.Buffer((N,), "float32")):
    for i in range(N):
        B[i] = A[i] + T.float32(1)
    for i in range(N - 1):
        B[i] = B[i + 1]


def _lets(func: PrimFunc, name: str) -> list[LetStmt]:
    found: list[LetStmt] = []

    class _Find(StmtExprVisitor):
        def visit_let_stmt_(self, node: LetStmt) -> None:
            if node.var.name == name:
                found.append(node)
            self.generic_visit(node)

    _Find().visit_stmt(func.body)
    return found


def _vector_store_lanes(stmt: object) -> set[int]:
    lanes: set[int] = set()

    class _Find(StmtExprVisitor):
        def visit_buffer_store_(self, node: BufferStore) -> None:
            if isinstance(node.indices[0], Ramp):
                lanes.add(node.indices[0].lanes)
            self.generic_visit(node)

    _Find().visit_stmt(stmt)  # type: ignore[arg-type]
    return lanes


@BOTH
def test_serial_gather_becomes_a_versioned_aligned_vector_loop(target: Target) -> None:
    prepared = lower_for(gather, target)
    lowering.verify_well_formed(prepared, lowered=True)
    (version,) = _lets(prepared, sv.VERSION_NAME)
    branch = version.body
    assert isinstance(branch, IfThenElse)
    original = branch.else_case
    # the original loop (on AVX-512 itself versioned by the gather fast path) stays scalar
    assert isinstance(original, For if target is AVX2 else IfThenElse)
    assert _vector_store_lanes(original) == set()
    assert max(_vector_store_lanes(branch.then_case)) == 16  # one 64-byte line of float32
    shifts = len(_lets(prepared, align.SHIFT_NAME))  # then moved onto line boundaries
    regions = prepared.script().count(NOALIAS_ATTR)
    if target.has_feature("avx512f"):
        # the gather fast path versions the vector loop (aligned in both copies) and the
        # scalar original
        assert (shifts, regions) == (2, 2)
    else:
        assert (shifts, regions) == (1, 0)


def test_lanes_fill_one_cache_line() -> None:
    for func, lanes in ((shifted_scale, 8), (narrow, 64)):
        out = sv.vectorize_streams(lower_before_late_stage(func))
        (version,) = _lets(out, sv.VERSION_NAME)
        assert isinstance(version.body, IfThenElse)
        assert lanes in _vector_store_lanes(version.body.then_case)


def test_a_loop_reading_no_parameter_needs_no_test() -> None:
    out = sv.vectorize_streams(lower_before_late_stage(iota))
    assert _lets(out, sv.VERSION_NAME) == []
    assert _vector_store_lanes(out.body) == {16}


def test_rewrite_is_idempotent() -> None:
    once = sv.vectorize_streams(lower_before_late_stage(gather))
    assert len(_lets(once, sv.VERSION_NAME)) == 1
    assert structural_equal(once, sv.vectorize_streams(once))


@pytest.mark.parametrize(
    "func",
    [divides, guarded, short, strided_store, read_back],
    ids=["may-trap", "guarded-load", "short", "strided-store", "array-read-back"],
)
def test_loops_it_must_not_touch(func: PrimFunc) -> None:
    lowered = lowering.lower(func)
    assert structural_equal(sv.vectorize_streams(lowered), lowered)


@pytest.mark.parametrize("offset", range(8), ids=lambda o: f"offset{o}")
@pytest.mark.parametrize(
    "func", [gather, shifted_scale, narrow, iota], ids=["gather", "let", "int8", "iota"]
)
def test_results_for_every_alignment(func: PrimFunc, offset: int) -> None:
    inputs = random_inputs(func, np.random.default_rng(offset), 0, 256)
    out, expected = run_misaligned(func, inputs, offset, 7)
    np.testing.assert_array_equal(out, expected)


def test_overlapping_arrays_take_the_original_loop() -> None:
    # B[i + 3] = f(A[i + 5]) with B four elements past A in one array: iteration i reads
    # what iteration i - 2 wrote, so a vector copy (loads before stores) would read stale
    # values.
    rng = np.random.default_rng(5)
    base = rng.standard_normal(N + 12)
    want = base.copy()
    tvmscript.build(shifted_scale, target="interp")(want[: N + 8], want[4:])
    x = base[5 : N + 5] + 0.5
    assert not np.array_equal(want[7 : N + 7], x * x)  # the one-shot result differs
    got = base.copy()
    tvmscript.build(shifted_scale)(got[: N + 8], got[4:])
    np.testing.assert_array_equal(got, want)


def test_a_guarded_gather_with_wild_indices_runs() -> None:
    idx = np.full(N, -(10**9), np.int32)
    idx[::3] = 5
    out = np.empty(N, np.float32)
    tvmscript.build(guarded)(np.arange(256, dtype=np.float32), idx, out)
    assert out[:6].tolist() == [5, 0, 0, 5, 0, 0]


def test_gather_stores_stream() -> None:
    asm = assembly(gather, AVX512)
    assert "movnt" in asm
