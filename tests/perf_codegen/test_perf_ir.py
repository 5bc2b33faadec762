"""IR properties the benchmark suite's speed depends on (checked on the IR, never on timings)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pytest
from pinned import (
    AVX2,
    BOTH,
    lower_before_late_stage,
    lower_for,
    optimized_ir,
)

import lowering
import tvmscript
from backend.codegen import CodegenOptions, generate
from benchmarks import ib_kernels
from irbuilder import IRBuilder
from irbuilder import tir as T
from irbuilder.ir import (
    BufferStore,
    For,
    PrimFunc,
    Ramp,
    SeqStmt,
    Stmt,
    StmtExprVisitor,
)
from lowering.target import Target


@contextmanager
def kernel(name: str, out: list[PrimFunc]) -> Iterator[None]:
    with IRBuilder() as ib:
        with T.prim_func():
            T.func_name(name)
            yield
    func = ib.get()
    assert isinstance(func, PrimFunc)
    out.append(func)


def function_text(ll: str, name: str) -> str:
    """The text of ``define ... @name(...) { ... }`` in an LLVM module."""
    match = re.search(r"^define [^\n]*@\"?" + re.escape(name) + r"\"?\(.*?^}", ll, re.M | re.S)
    assert match is not None, f"no function {name} in the module"
    return match.group(0)


class _Collect(StmtExprVisitor):
    def __init__(self) -> None:
        self.stores: list[BufferStore] = []
        self.loops: list[For] = []

    def visit_buffer_store_(self, node: BufferStore) -> None:
        self.stores.append(node)
        self.generic_visit(node)

    def visit_for_(self, node: For) -> None:
        self.loops.append(node)
        self.generic_visit(node)


def collect(stmt: Stmt) -> _Collect:
    found = _Collect()
    found.visit_stmt(stmt)
    return found


# ---------------------------------------------------------------------------
# vector math
# ---------------------------------------------------------------------------


@BOTH
def test_fused_vector_loop_calls_the_vector_exp(target: Target) -> None:
    body = function_text(optimized_ir(ib_kernels.fused(), target), "fused__par_0")
    widest = (
        r"call <16 x float> @_ZGVeN16v_expf"
        if target.has_feature("avx512f")
        else r"call <8 x float> @_ZGVdN8v_expf"
    )
    assert re.search(widest, body)
    assert not re.search(r"call float @(tvms_)?expf\b", body)
    if not target.has_feature("avx512f"):
        assert "_ZGVe" not in body  # no AVX-512 variant for an AVX2 machine


def test_softmax_exp_loop_is_vectorized_after_distribution() -> None:
    ll = tvmscript.build(ib_kernels.softmax()).get_source("ll")
    body = function_text(ll, "softmax__par_0")
    assert re.search(r"call <\d+ x float> @_ZGV\w+_expf", body)


def _small_softmax(rows: int, cols: int) -> PrimFunc:
    out: list[PrimFunc] = []
    with kernel("small_softmax", out):
        A = T.arg("A", T.Buffer((rows, cols), "float32"))
        B = T.arg("B", T.Buffer((rows, cols), "float32"))
        with T.parallel(rows) as i:
            with T.decl_buffer((1,), "float32") as m, T.decl_buffer((1,), "float32") as s:
                T.buffer_store(m, A[i, 0], [0])
                with T.serial(cols) as j:
                    T.buffer_store(m, T.max(m[0], A[i, j]), [0])
                T.buffer_store(s, T.float32(0), [0])
                with T.serial(cols) as j:
                    T.buffer_store(B, T.exp(A[i, j] - m[0]), [i, j])
                    T.buffer_store(s, s[0] + B[i, j], [0])
                with T.vectorized(cols) as j:
                    T.buffer_store(B, B[i, j] / s[0], [i, j])
    return out[0]


def test_distributed_softmax_values() -> None:
    rng = np.random.default_rng(1)
    a = rng.standard_normal((7, 45)).astype(np.float32)
    b = np.zeros_like(a)
    tvmscript.build(_small_softmax(7, 45))(a, b)
    e = np.exp(a - a.max(axis=1, keepdims=True))
    np.testing.assert_allclose(b, e / e.sum(axis=1, keepdims=True), rtol=1e-5)


def test_distributed_softmax_in_place() -> None:
    """A and B the same array: the distributed loops still follow the sequential semantics."""
    rng = np.random.default_rng(2)
    a = rng.standard_normal((3, 37)).astype(np.float32)
    expected = np.exp(a - a.max(axis=1, keepdims=True))
    expected /= expected.sum(axis=1, keepdims=True)
    tvmscript.build(_small_softmax(3, 37))(a, a)
    np.testing.assert_allclose(a, expected, rtol=1e-5)


# ---------------------------------------------------------------------------
# alignment and registers
# ---------------------------------------------------------------------------

_MEM = re.compile(r"(?:load|store) (<\d+ x float>|float)[^\n]*?, align (\d+)")


@pytest.mark.parametrize("name", ["vadd", "stencil", "conv2d", "fused", "transpose"])
def test_user_buffer_accesses_claim_only_element_alignment(name: str) -> None:
    ll = tvmscript.build(ib_kernels.BUILDERS[name]()).get_source("ll")
    body = function_text(ll, f"{name}__par_0")
    # Streaming stores (backend/codegen/streaming.py) claim 16 bytes, behind a run-time test
    # of the address, and the head/tail temporaries of lowering/late/align_streams.py are our own
    # allocations; every access to a user's array claims only the element's alignment.
    plain = "\n".join(
        line for line in body.splitlines()
        if "!nontemporal" not in line and "ptr %stream_" not in line
    )
    aligns = [int(a) for _, a in _MEM.findall(plain)]
    assert aligns, "expected float loads/stores in the parallel body"
    assert max(aligns) == 4


def test_matmul_accumulator_tile_lives_in_registers() -> None:
    ll = tvmscript.build(ib_kernels.matmul_tiled()).get_source("ll")
    body = function_text(ll, "matmul_tiled__par_0")
    assert "alloca" not in body
    assert re.search(r"fmul (?:contract )?<16 x float>", body)
    assert re.search(r"fadd (?:contract )?<16 x float>", body)


@pytest.mark.parametrize("make", [ib_kernels.matmul_tiled, ib_kernels.matmul_tiled_packed])
def test_tiled_matmul_schedules_match_numpy(make: Any) -> None:
    rng = np.random.default_rng(7)
    a = rng.random((1024, 1024), dtype=np.float32)
    b = rng.random((1024, 1024), dtype=np.float32)
    c = np.full_like(a, np.nan)
    tvmscript.build(make())(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=2e-5)


def test_register_blocked_conv2d_matches_numpy() -> None:
    rng = np.random.default_rng(8)
    x = rng.standard_normal((1, 64, 58, 58)).astype(np.float32)
    w = rng.standard_normal((64, 64, 3, 3)).astype(np.float32)
    y = np.full((1, 64, 56, 56), np.nan, np.float32)
    tvmscript.build(ib_kernels.conv2d())(x, w, y)
    windows = np.lib.stride_tricks.sliding_window_view(x[0], (3, 3), axis=(1, 2))
    expected = np.einsum("cijab,kcab->kij", windows, w)
    np.testing.assert_allclose(y[0], expected, rtol=1e-4, atol=1e-3)


def test_index_arithmetic_is_i64_nsw_with_inbounds_geps() -> None:
    lowered = lowering.lower(ib_kernels.transpose())
    text = generate([lowered], CodegenOptions()).text
    body = function_text(text, "transpose__par_0")
    assert re.search(r"mul nsw i64", body)
    assert re.search(r"getelementptr inbounds float, ptr %\S+, i64", body)
    assert not re.search(r"getelementptr inbounds float, ptr %\S+, i32", body)


# ---------------------------------------------------------------------------
# vectorized remainders
# ---------------------------------------------------------------------------


def _axpy(extent: int) -> PrimFunc:
    out: list[PrimFunc] = []
    with kernel("axpy_rem", out):
        X = T.arg("X", T.Buffer((4, extent), "float32"))
        Y = T.arg("Y", T.Buffer((4, extent), "float32"))
        with T.serial(4) as i, T.vectorized(extent) as j:
            T.buffer_store(Y, Y[i, j] + T.float32(2) * X[i, j], [i, j])
    return out[0]


def test_constant_remainder_becomes_narrow_vectors() -> None:
    prepared = lower_for(_axpy(23))  # 16 + 4 + 2 + 1
    found = collect(prepared.body)
    lanes = sorted(
        s.indices[0].lanes if isinstance(s.indices[0], Ramp) else 1 for s in found.stores
    )
    assert lanes == [1, 2, 4, 16]
    assert not any("vectorize_remainders" in loop.annotations for loop in found.loops)


@pytest.mark.parametrize("extent", [23, 56, 31, 3])
def test_remainder_values(extent: int) -> None:
    rng = np.random.default_rng(extent)
    x = rng.random((4, extent), dtype=np.float32)
    y = rng.random((4, extent), dtype=np.float32)
    expected = y + np.float32(2) * x
    tvmscript.build(_axpy(extent))(x, y)
    np.testing.assert_allclose(y, expected, rtol=1e-6)


def test_conv2d_has_an_8_lane_tail() -> None:
    ll = tvmscript.build(ib_kernels.conv2d()).get_source("ll")
    body = function_text(ll, "conv2d__par_0")
    assert "store <8 x float>" in body
    assert not re.search(r"store float ", body)


# ---------------------------------------------------------------------------
# loop distribution legality
# ---------------------------------------------------------------------------


def _mixed(reduction_first: bool, reduce_other: bool) -> PrimFunc:
    out: list[PrimFunc] = []
    with kernel("mixed", out):
        A = T.arg("A", T.Buffer((64,), "float32"))
        B = T.arg("B", T.Buffer((64,), "float32"))
        S = T.arg("S", T.Buffer((1,), "float32"))
        with T.decl_buffer((1,), "float32") as s:
            T.buffer_store(s, T.float32(0), [0])
            with T.serial(64) as j:
                source: Any = A[j] if reduce_other else B[j]
                if reduction_first:
                    T.buffer_store(s, s[0] + source, [0])
                    T.buffer_store(B, T.exp(A[j]), [j])
                else:
                    T.buffer_store(B, T.exp(A[j]), [j])
                    T.buffer_store(s, s[0] + source, [0])
            T.buffer_store(S, s[0], [0])
    return out[0]


def _serial_loops_with_two_stores(func: PrimFunc) -> int:
    return sum(
        1 for loop in collect(func.body).loops
        if isinstance(loop.body, SeqStmt) and len(loop.body.seq) == 2
    )


def test_distribution_applies_to_writer_then_reduction() -> None:
    lowered = lower_before_late_stage(_mixed(False, False))
    assert _serial_loops_with_two_stores(lowered) == 1
    assert _serial_loops_with_two_stores(lower_for(_mixed(False, False))) == 0


@pytest.mark.parametrize(
    ("reduction_first", "reduce_other"),
    [(True, False), (False, True)],
    ids=["reads-before-write", "reads-possibly-aliased-param"],
)
def test_distribution_refuses_unsafe_loops(reduction_first: bool, reduce_other: bool) -> None:
    lowered = lower_for(_mixed(reduction_first, reduce_other))
    assert _serial_loops_with_two_stores(lowered) == 1


@pytest.mark.parametrize("reduction_first", [False, True])
def test_mixed_loop_values_with_aliasing(reduction_first: bool) -> None:
    """B is A (in place): results follow the sequential order either way."""
    base = np.linspace(-1, 1, 64, dtype=np.float32)
    a = base.copy()
    s = np.zeros(1, np.float32)
    tvmscript.build(_mixed(reduction_first, False))(a, a, s)
    ref_b = base.copy()
    total = np.float32(0)
    for j in range(64):
        if reduction_first:
            total = np.float32(total + ref_b[j])
            ref_b[j] = np.exp(ref_b[j])
        else:
            ref_b[j] = np.exp(ref_b[j])
            total = np.float32(total + ref_b[j])
    np.testing.assert_allclose(a, ref_b, rtol=1e-6)
    np.testing.assert_allclose(s[0], total, rtol=1e-5)


# ---------------------------------------------------------------------------
# interleaved parallel reductions
# ---------------------------------------------------------------------------


def _rowsum(rows: int, cols: int) -> PrimFunc:
    out: list[PrimFunc] = []
    with kernel("small_rowsum", out):
        A = T.arg("A", T.Buffer((rows, cols), "float32"))
        B = T.arg("B", T.Buffer((rows,), "float32"))
        with T.parallel(rows) as i:
            with T.decl_buffer((1,), "float32") as acc:
                T.buffer_store(acc, T.float32(0), [0])
                with T.serial(cols) as j:
                    T.buffer_store(acc, acc[0] + A[i, j], [0])
                T.buffer_store(B, acc[0], [i])
    return out[0]


def _parallel_loops(func: PrimFunc) -> list[For]:
    return [loop for loop in collect(func.body).loops if loop.kind.name == "PARALLEL"]


def _without_row_lanes() -> lowering.PassContext:
    """Jamming is tested on its own: vectorize_row_reductions (which runs first) disabled."""
    return lowering.PassContext(disabled_passes={"vectorize_row_reductions"})


def test_rowsum_parallel_loop_is_jammed_by_four() -> None:
    with _without_row_lanes():
        prepared = lower_for(_rowsum(64, 33))
    (loop,) = _parallel_loops(prepared)
    assert loop.extent.value == 16  # type: ignore[attr-defined]
    inner = [x for x in collect(loop.body).loops]
    assert len(inner) == 1  # one j loop carrying the four chains
    assert len(collect(inner[0].body).stores) == 4


@pytest.mark.parametrize("rows", [64, 10])
def test_jammed_rowsum_is_bit_exact(rows: int) -> None:
    rng = np.random.default_rng(rows)
    a = rng.standard_normal((rows, 300)).astype(np.float32)
    b = np.zeros(rows, np.float32)
    tvmscript.build(_rowsum(rows, 300))(a, b)
    acc = np.zeros(rows, np.float32)
    for j in range(a.shape[1]):  # the kernel's sequential order, in float32
        acc = (acc + a[:, j]).astype(np.float32)
    np.testing.assert_array_equal(b, acc)


def test_parallel_loop_with_uneven_trip_count_is_not_jammed() -> None:
    with _without_row_lanes():
        prepared = lower_for(_rowsum(10, 8))
    (loop,) = _parallel_loops(prepared)
    assert loop.extent.value == 10  # type: ignore[attr-defined]


def test_register_tile_is_not_jammed() -> None:
    prepared = lower_for(ib_kernels.matmul_tiled())
    (loop,) = _parallel_loops(prepared)
    assert loop.extent.value == 32  # type: ignore[attr-defined]


# ---------------------------------------------------------------------------
# accumulators promoted to registers (versioned on an overlap test)
# ---------------------------------------------------------------------------


def _naive_matmul(n: int) -> PrimFunc:
    out: list[PrimFunc] = []
    with kernel("naive_mm", out):
        A = T.arg("A", T.Buffer((n, n), "float32"))
        B = T.arg("B", T.Buffer((n, n), "float32"))
        C = T.arg("C", T.Buffer((n, n), "float32"))
        with T.serial(n) as i, T.serial(n) as j:
            T.buffer_store(C, T.float32(0), [i, j])
            with T.serial(n) as k:
                T.buffer_store(C, C[i, j] + A[i, k] * B[k, j], [i, j])
    return out[0]


def _reference_mm(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> None:
    """The kernel's sequential semantics on (possibly aliased) arrays, in float32."""
    n = a.shape[0]
    for i in range(n):
        for j in range(n):
            c[i, j] = 0
            for k in range(n):
                c[i, j] = np.float32(c[i, j] + np.float32(a[i, k] * b[k, j]))


def test_accumulator_loop_is_versioned() -> None:
    from irbuilder.ir import IfThenElse

    prepared = lower_for(_naive_matmul(16))  # promote_accumulators.MIN_TRIP_COUNT
    found: list[IfThenElse] = []

    class _Ifs(StmtExprVisitor):
        def visit_if_then_else_(self, node: IfThenElse) -> None:
            found.append(node)
            self.generic_visit(node)

    _Ifs().visit_stmt(prepared.body)
    # at this size the matmul is also interchanged and panel-tiled under their own tests
    promoted = [
        f for f in found if any(s.buffer.name.endswith("_acc") for s in collect(f.then_case).stores)
    ]
    assert promoted and all(f.else_case is not None for f in promoted)


def test_promoted_accumulator_values() -> None:
    rng = np.random.default_rng(5)
    a = rng.random((9, 9), dtype=np.float32)
    b = rng.random((9, 9), dtype=np.float32)
    c = np.empty_like(a)
    # Rounding after every operation, as the reference does: the rewrite is bit-exact.
    tvmscript.build(_naive_matmul(9), fp_contract=False)(a, b, c)
    ref = np.empty_like(a)
    _reference_mm(a, b, ref)
    np.testing.assert_array_equal(c, ref)


def test_overlapping_arrays_take_the_original_loop() -> None:
    rng = np.random.default_rng(6)
    base = rng.random((6, 6), dtype=np.float32)
    b = rng.random((6, 6), dtype=np.float32)
    a = base.copy()
    # C is A: each C[i, j] feeds later A[i, k]
    tvmscript.build(_naive_matmul(6), fp_contract=False)(a, b, a)
    ref = base.copy()
    _reference_mm(ref, b, ref)
    np.testing.assert_array_equal(a, ref)


def test_late_stage_is_off_at_opt_level_0() -> None:
    # 16 + a remainder of 8: only the vectorize_remainders rewrite makes <8 x float> stores
    on = generate([lower_for(_axpy(24))], CodegenOptions(target=AVX2)).text
    off = generate([lower_for(_axpy(24), opt_level=0)], CodegenOptions(target=AVX2)).text
    assert "store <8 x float>" in on
    assert "store <8 x float>" not in off
