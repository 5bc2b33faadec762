"""``bounds_check=True`` validates data-dependent indices a chunk at a time
(lowering.checks.bounds_validate) and checks vector gather indices lane by lane.

The IR tests pin a Target; the run tests compare a checked build with the per-access
reference (``hoist`` and ``validate`` off): the same IndexError message after the same
writes, or the same results.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import lowering
import tvmscript
from irbuilder.ir import (
    Allocate,
    AssertStmt,
    AttrStmt,
    BufferStore,
    Call,
    For,
    ForKind,
    IfThenElse,
    PrimFunc,
    StringImm,
    assert_structural_equal,
    post_order_visit,
)
from lowering.checks.bounds_check import PIPELINE_POSITION, insert_bounds_checks
from lowering.checks.bounds_validate import FLAG_NAME
from lowering.late.versioning import NOALIAS_ATTR
from lowering.target import Target
from tvmscript import tir as T

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "perf_codegen"))
from pinned import AVX2, AVX512, BOTH, needs_host_features

PER_ACCESS = {"insert_bounds_checks": {"hoist": False, "validate": False}}


@T.prim_func
def gather(Tb: T.Buffer((4096,), "float32"), Idx: T.Buffer((65536,), "int32"),
           Out: T.Buffer((65536,), "float32")):
    for i in range(65536):
        Out[i] = Tb[Idx[i]]


BIG = 1 << 20


@T.prim_func
def gather_big(Tb: T.Buffer((4096,), "float32"), Idx: T.Buffer((BIG,), "int32"),
               Out: T.Buffer((BIG,), "float32")):
    for i in range(BIG):
        Out[i] = Tb[Idx[i]]


@T.prim_func
def gather_big_int(Tb: T.Buffer((64,), "int32"), Idx: T.Buffer((BIG,), "int32"),
                   Out: T.Buffer((BIG,), "int32")):
    for i in range(BIG):
        Out[i] = Tb[Idx[i]]


@T.prim_func
def gather_sym(a: T.handle, b: T.handle, c: T.handle):
    n = T.int32()
    Tb = T.match_buffer(a, (4096,), "float32")
    Idx = T.match_buffer(b, (n,), "int32")
    Out = T.match_buffer(c, (n,), "float32")
    for i in range(n):
        Out[i] = Tb[Idx[i] + 1]


@T.prim_func
def gather_int(a: T.handle, b: T.handle, c: T.handle):
    n = T.int32()
    Tb = T.match_buffer(a, (64,), "int32")
    Idx = T.match_buffer(b, (n,), "int32")
    Out = T.match_buffer(c, (n,), "int32")
    for i in range(n):
        Out[i] = Tb[Idx[i]]


@T.prim_func
def writes_its_indices(Tb: T.Buffer((64,), "int32"), Idx: T.Buffer((100,), "int32"),
                       Out: T.Buffer((99,), "int32")):
    for i in range(99):
        Idx[i + 1] = Tb[Idx[i]]
        Out[i] = Idx[i + 1]


@T.prim_func
def histogram(D: T.Buffer((1000,), "int32"), H: T.Buffer((16,), "int32")):
    for i in range(1000):
        H[D[i]] = H[D[i]] + 1


@T.prim_func
def vector_gather(Tb: T.Buffer((4096,), "float32"), Idx: T.Buffer((300,), "int32"),
                  Out: T.Buffer((300,), "float32")):
    for i in T.vectorized(300):
        Out[i] = Tb[Idx[i]]


def _checked(func: PrimFunc, target: Target) -> PrimFunc:
    """``func`` lowered for ``target`` as ``build(..., bounds_check=True)`` lowers it."""
    return lowering.lower(func, target=target, verify_each=True,
                          extra_passes=[(insert_bounds_checks, PIPELINE_POSITION)])


def _index_asserts(node: Any) -> list[AssertStmt]:
    def message(check: AssertStmt) -> str:
        msg = check.message
        text = msg.args[0] if isinstance(msg, Call) else msg
        return text.value if isinstance(text, StringImm) else ""

    found: list[AssertStmt] = []
    post_order_visit(node, lambda n: found.append(n) if isinstance(n, AssertStmt)
                     and message(n).startswith("IndexError: ") else None)
    return found


def _chunks(func: PrimFunc) -> list[Allocate]:
    found: list[Allocate] = []
    post_order_visit(func.body, lambda n: found.append(n) if isinstance(n, Allocate)
                     and n.buffer_var.name == FLAG_NAME else None)
    return found


def _chunk_parts(chunk: Allocate) -> tuple[For, IfThenElse]:
    """The validation loop and the fast/checked branch of one chunk."""
    loops: list[For] = []
    branches: list[IfThenElse] = []
    post_order_visit(chunk.body, lambda n: loops.append(n) if isinstance(n, For)
                     and isinstance(n.body, BufferStore)
                     and n.body.buffer.data is chunk.buffer_var else None)
    post_order_visit(chunk.body, lambda n: branches.append(n) if isinstance(n, IfThenElse)
                     and n.else_case is not None and _index_asserts(n.else_case)
                     and not _index_asserts(n.then_case) else None)
    assert len(loops) == 1 and len(branches) == 1
    return loops[0], branches[0]


def _has_noalias_region(node: Any) -> bool:
    found: list[AttrStmt] = []
    post_order_visit(node, lambda n: found.append(n)
                     if isinstance(n, AttrStmt) and n.attr_key == NOALIAS_ATTR else None)
    return bool(found)


@BOTH
def test_a_gather_runs_validated_chunks_without_per_element_asserts(target: Target) -> None:
    lowered = _checked(gather, target)
    chunks = _chunks(lowered)
    assert chunks
    for chunk in chunks:
        validation, branch = _chunk_parts(chunk)
        assert not _index_asserts(validation)  # branch-free: it only accumulates the flag
        assert len(_index_asserts(branch.else_case)) == 1
        # The unchecked copy gets the late stage's gather fast path where the target has one.
        assert _has_noalias_region(branch.then_case) == (target is AVX512)


@BOTH
def test_a_parallel_gather_is_validated_whole_and_stays_parallel(target: Target) -> None:
    lowered = _checked(gather_big, target)
    validation: list[For] = []
    post_order_visit(lowered.body, lambda n: validation.append(n)
                     if isinstance(n, For) and n.kind is ForKind.PARALLEL
                     and "tvmscript.parallel_if" not in n.annotations else None)
    (sweep,) = validation
    assert not _index_asserts(sweep)
    runs: list[IfThenElse] = []
    post_order_visit(lowered.body, lambda n: runs.append(n) if isinstance(n, IfThenElse)
                     and isinstance(n.then_case, For) and n.else_case is not None
                     and _index_asserts(n.else_case) else None)
    (run,) = runs
    fast = run.then_case
    assert isinstance(fast, For) and fast.kind is ForKind.PARALLEL
    assert not _index_asserts(fast)
    assert isinstance(run.else_case, For) and run.else_case.kind is ForKind.SERIAL


@needs_host_features(AVX512)
@pytest.mark.parametrize("bad", [None, 0, 300000, BIG - 1])
def test_a_parallel_gather_fails_exactly_like_the_serial_checks(bad: int | None) -> None:
    idx = np.random.default_rng(2).integers(0, 4096, BIG, dtype="int32")
    if bad is not None:
        idx[bad] = -5
    args = (np.arange(4096, dtype="float32"), idx, np.full(BIG, -1, "float32"))
    got = _outcome(tvmscript.build(gather_big, bounds_check=True, target=AVX512), *args)
    assert got == _outcome(_reference(gather_big), *args)
    if bad is None:
        assert got[0] is None and got[1][2] == idx.astype("float32").tolist()
    else:
        assert got[0] is not None and "= -5 out of bounds for shape (4096,)" in got[0]


@BOTH
def test_the_checked_ir_prints_and_reparses(target: Target) -> None:
    for func in (gather, gather_big, gather_sym, vector_gather):
        lowered = _checked(func, target)
        assert_structural_equal(tvmscript.from_source(lowered.script()), lowered)


@BOTH
def test_symbolic_gathers_are_validated_too(target: Target) -> None:
    for func in (gather_sym, gather_int):
        lowered = _checked(func, target)
        for chunk in _chunks(lowered):
            _chunk_parts(chunk)
        assert len(_chunks(lowered)) == 2  # the whole chunks and the rest


def test_loops_writing_their_indices_and_scatters_keep_per_element_asserts() -> None:
    for func in (writes_its_indices, histogram):
        lowered = _checked(func, AVX2)
        assert not _chunks(lowered)
        assert _index_asserts(lowered.body)


def _outcome(kernel: Any, *args: np.ndarray) -> tuple[str | None, list[list[Any]]]:
    copies = [a.copy() for a in args]
    try:
        kernel(*copies)
        error = None
    except IndexError as exc:
        error = str(exc)
    return error, [c.tolist() for c in copies]


def _reference(func: PrimFunc) -> Any:
    with lowering.PassContext(opt_level=3, config=PER_ACCESS):
        return tvmscript.build(func, bounds_check=True, cache=False)


@needs_host_features(AVX2)
@pytest.mark.parametrize("n", [0, 1, 17, 4096, 4097, 10000])
@pytest.mark.parametrize("bad", [None, 0, 5, 4095, 4096, 9999])
@pytest.mark.parametrize("value", [-2, 4095])
def test_symbolic_gather_raises_the_per_access_error_after_the_same_writes(
    n: int, bad: int | None, value: int
) -> None:
    # Index value 4095 + 1 and -2 + 1 = -1 are each one past an end of Tb.
    tb = np.arange(4096, dtype="float32")
    idx = np.random.default_rng(n).integers(0, 4095, n, dtype="int32")
    if bad is not None and bad < n:
        idx[bad] = value
    args = (tb, idx, np.full(n, -7, "float32"))
    got = _outcome(tvmscript.build(gather_sym, bounds_check=True, target=AVX2), *args)
    assert got == _outcome(_reference(gather_sym), *args)
    if bad is not None and bad < n:
        assert got[0] == f"Tb: index Idx[i] + 1 = {value + 1} out of bounds for shape (4096,)"
    else:
        assert got[0] is None and got[1][2] == tb[idx + 1].tolist()


def test_indices_changed_by_the_loops_own_writes_are_checked_when_read() -> None:
    # O and I are views of one array, O one element ahead: each store writes the next
    # index. Validating I ahead would see the old, valid values; the run-time no-overlap
    # test sends the loop to its checked copy, which raises at the bad index.
    tb = np.arange(1, 65, dtype="int32")
    tb[5] = 1000
    memory = np.zeros(101, "int32")
    kernel = tvmscript.build(gather_int, bounds_check=True)
    message = r"^Tb: index Idx\[i\] = 1000 out of bounds for shape \(64,\)$"
    with pytest.raises(IndexError, match=message):
        kernel(tb, memory[:100], memory[1:])
    assert memory[:7].tolist() == [0, 1, 2, 3, 4, 5, 1000]
    again = np.zeros(101, "int32")
    with pytest.raises(IndexError):
        _reference(gather_int)(tb, again[:100], again[1:])
    assert again.tolist() == memory.tolist()


def test_a_parallel_loop_over_overlapping_views_raises_at_the_changed_index() -> None:
    assert "bounds_flags" in _checked(gather_big_int, AVX2).script()  # validated whole
    tb = np.arange(1, 65, dtype="int32")
    tb[5] = 1000
    outcomes = []
    for kernel in (tvmscript.build(gather_big_int, bounds_check=True),
                   _reference(gather_big_int)):
        memory = np.zeros(BIG + 1, "int32")
        with pytest.raises(IndexError, match=r"= 1000 out of bounds for shape \(64,\)$"):
            kernel(tb, memory[:BIG], memory[1:])
        outcomes.append(memory.tolist())
    assert outcomes[0] == outcomes[1]


def test_a_loop_writing_its_own_indices_raises_at_the_bad_one() -> None:
    tb = np.arange(1, 65, dtype="int32")
    tb[9] = 64
    kernel = tvmscript.build(writes_its_indices, bounds_check=True)
    args = (tb, np.zeros(100, "int32"), np.zeros(99, "int32"))
    got = _outcome(kernel, *args)
    assert got == _outcome(_reference(writes_its_indices), *args)
    assert got[0] == "Tb: index Idx[i] = 64 out of bounds for shape (64,)"


@needs_host_features(AVX512)
def test_the_suite_gather_fails_in_its_middle_exactly_on_avx512() -> None:
    idx = np.random.default_rng(1).integers(0, 4096, 65536, dtype="int32")
    idx[40000] = 4096
    args = (np.ones(4096, "float32"), idx, np.zeros(65536, "float32"))
    got = _outcome(tvmscript.build(gather, bounds_check=True, target=AVX512), *args)
    assert got == _outcome(_reference(gather), *args)
    assert got[0] is not None and "= 4096 out of bounds for shape (4096,)" in got[0]
    assert got[1][2][39999] == 1.0 and got[1][2][40000] == 0.0


@BOTH
def test_a_vector_gather_checks_every_lane_before_loading(target: Target) -> None:
    lowered = _checked(vector_gather, target)
    assert _index_asserts(lowered.body)
    if target.missing_on_host():
        pytest.skip(f"the host lacks {', '.join(target.missing_on_host())}")
    kernel = tvmscript.build(vector_gather, bounds_check=True, target=target)
    tb = np.arange(4096, dtype="float32")
    idx = np.arange(300, dtype="int32")
    out = np.zeros(300, "float32")
    kernel(tb, idx, out)
    np.testing.assert_array_equal(out, idx.astype("float32"))
    idx[37], idx[40] = 5000, -1  # lane 5 of the vector at 32 fails first
    out[:] = 0
    with pytest.raises(IndexError, match=r"^Tb: index Idx\[.*\] = 5000 \(lane 5\) out of "
                       r"bounds for shape \(4096,\)$"):
        kernel(tb, idx, out)
    assert not out[32:48].any()  # the failing vector stored nothing
