"""The interchange_reductions rewrite: strided reduction nests get a vectorizable inner loop."""

from __future__ import annotations

import numpy as np
import pytest
from pinned import lower_before_late_stage, lower_for

import lowering
import tvmscript
from irbuilder.ir import AttrStmt, For, IfThenElse, PrimFunc, StmtExprVisitor, structural_equal
from lowering.late.alias_version import NOALIAS_ATTR
from lowering.late.interchange import MIN_INNER_TRIP_COUNT, interchange_reductions
from tvmscript import tir as T

M, K, N = 3, 40, 33  # fewer rows than a register tile has: the interchange, not the tiles


@T.prim_func
def matmul(
    A: T.Buffer((M, K), "float32"), B: T.Buffer((K, N), "float32"), C: T.Buffer((M, N), "float32")
):
    for i, j in T.grid(M, N):
        C[i, j] = T.float32(0)
        for k in range(K):
            C[i, j] = C[i, j] + A[i, k] * B[k, j]


@T.prim_func
def matmul_accumulate(
    A: T.Buffer((M, K), "int32"), B: T.Buffer((K, N), "int32"), C: T.Buffer((M, N), "int32")
):
    for i, j in T.grid(M, N):
        for k in range(K):
            C[i, j] = C[i, j] + A[i, k] * B[k, j]


@T.prim_func
def square(A: T.Buffer((N, N), "float32"), B: T.Buffer((N, N), "float32"),
           C: T.Buffer((N, N), "float32")):
    for i, j in T.grid(N, N):
        C[i, j] = T.float32(0)
        for k in range(N):
            C[i, j] = C[i, j] + A[i, k] * B[k, j]


@T.prim_func
def matmul_nt(
    A: T.Buffer((M, K), "float32"), B: T.Buffer((N, K), "float32"), C: T.Buffer((M, N), "float32")
):
    for i, j in T.grid(M, N):
        C[i, j] = T.float32(0)
        for k in range(K):
            C[i, j] = C[i, j] + A[i, k] * B[j, k]


@T.prim_func
def transposed_store(
    A: T.Buffer((M, K), "float32"), B: T.Buffer((K, N), "float32"), C: T.Buffer((N, M), "float32")
):
    for i, j in T.grid(M, N):
        C[j, i] = T.float32(0)
        for k in range(K):
            C[j, i] = C[j, i] + A[i, k] * B[k, j]


@T.prim_func
def reads_other_element(
    A: T.Buffer((M, K), "float32"), B: T.Buffer((K, N), "float32"), C: T.Buffer((M, N), "float32")
):
    for i, j in T.grid(M, N):
        C[i, j] = T.float32(1)
        for k in range(K):
            C[i, j] = C[i, j] + C[i, 0] * B[k, j] + A[i, k]


@T.prim_func
def may_trap(
    A: T.Buffer((M, K), "int32"), B: T.Buffer((K, N), "int32"), C: T.Buffer((M, N), "int32")
):
    for i, j in T.grid(M, N):
        C[i, j] = 0
        for k in range(K):
            C[i, j] = C[i, j] + A[i, k] // B[k, j]


@T.prim_func
def narrow(
    A: T.Buffer((M, K), "float32"), B: T.Buffer((K, 8), "float32"), C: T.Buffer((M, 8), "float32")
):
    for i, j in T.grid(M, 8):
        C[i, j] = T.float32(0)
        for k in range(K):
            C[i, j] = C[i, j] + A[i, k] * B[k, j]


@T.prim_func
def block_matmul(
    A: T.Buffer((M, K), "float32"), B: T.Buffer((K, N), "float32"), C: T.Buffer((M, N), "float32")
):
    for i, j, k in T.grid(M, N, K):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


@T.prim_func
def reset_at_second_step(
    A: T.Buffer((M, K), "float32"), B: T.Buffer((K, N), "float32"), C: T.Buffer((M, N), "float32")
):
    for i, j, k in T.grid(M, N, K):
        if k == 1:
            C[i, j] = T.float32(0)
        C[i, j] = C[i, j] + A[i, k] * B[k, j]


def _regions(func: PrimFunc) -> list[AttrStmt]:
    found: list[AttrStmt] = []

    class _Find(StmtExprVisitor):
        def visit_attr_stmt_(self, node: AttrStmt) -> None:
            if node.attr_key == NOALIAS_ATTR:
                found.append(node)
            self.generic_visit(node)

    _Find().visit_stmt(func.body)
    return found


def _interchanged(func: PrimFunc, prepared: PrimFunc | None = None) -> list[AttrStmt]:
    """No-overlap regions whose body is an interchanged nest (a k loop around a j loop)."""
    out = []
    if prepared is None:
        prepared = lower_for(func)
    for region in _regions(prepared):
        body = region.body
        loops = body.seq if hasattr(body, "seq") else (body,)
        last = loops[-1]
        if isinstance(last, For) and isinstance(last.body, For):
            out.append(region)
    return out


def test_naive_matmul_is_interchanged_and_versioned() -> None:
    prepared = lower_for(matmul)
    (region,) = _interchanged(matmul, prepared)
    names = [v.name.removesuffix("_data") for v in region.node]
    assert names[0] == "C" and sorted(names[1:]) == ["A", "B"]
    init, nest = region.body.seq  # type: ignore[attr-defined]
    assert isinstance(init, For) and init.extent.value == N  # type: ignore[attr-defined]
    assert nest.extent.value == K and nest.body.extent.value == N
    lowering.verify_well_formed(prepared, lowered=True)

    branches: list[IfThenElse] = []

    class _Ifs(StmtExprVisitor):
        def visit_if_then_else_(self, node: IfThenElse) -> None:
            branches.append(node)
            self.generic_visit(node)

    _Ifs().visit_stmt(prepared.body)
    (versioned,) = [b for b in branches if b.then_case is region]
    assert versioned.else_case is not None  # the original nest for overlapping arrays


def test_rewrite_is_idempotent() -> None:
    once = interchange_reductions(lower_before_late_stage(matmul))
    assert structural_equal(once, interchange_reductions(once))


def test_naive_matmul_source_shows_vector_code() -> None:
    ll = tvmscript.build(square).get_source("ll")
    assert "tvms.noalias_region" not in ll
    assert "!alias.scope" in ll
    assert "x float>" in ll  # the interchanged inner loop vectorized


@pytest.mark.parametrize(
    "func",
    [matmul_nt, transposed_store, reads_other_element, may_trap, reset_at_second_step],
    ids=["contiguous-in-k", "strided-store", "reads-other-element", "may-trap",
         "reset-later"],
)
def test_nests_that_are_not_interchanged(func: PrimFunc) -> None:
    assert _interchanged(func) == []


def test_narrow_threshold_matches_the_kernel() -> None:
    assert MIN_INNER_TRIP_COUNT > 8


def test_a_narrow_row_is_interchanged_with_the_rows_around_it() -> None:
    # 8 columns are too few for a row of their own; C's M rows of 8 continue one another,
    # so the (i, j) group of M * 8 elements goes below k, the 8 columns one vector
    (region,) = _interchanged(narrow)
    init, nest = region.body.seq  # type: ignore[attr-defined]
    assert isinstance(init, For) and init.extent.value == M  # type: ignore[attr-defined]
    assert nest.extent.value == K and nest.body.extent.value == M
    assert nest.body.body.value.dtype.lanes == 8


def test_block_with_init_is_interchanged_too() -> None:
    (region,) = _interchanged(block_matmul)
    init, nest = region.body.seq  # type: ignore[attr-defined]
    assert isinstance(init, For) and init.extent.value == N  # type: ignore[attr-defined]
    assert nest.extent.value == K and nest.body.extent.value == N


@pytest.mark.parametrize(
    "func",
    [matmul, block_matmul, matmul_nt, transposed_store, reads_other_element, narrow,
     reset_at_second_step],
    ids=["matmul", "block", "nt", "strided-store", "reads-other-element", "narrow",
         "reset-later"],
)
def test_results_are_bit_identical_to_the_interpreter(func: PrimFunc) -> None:
    rng = np.random.default_rng(3)
    shapes = [tuple(int(d) for d in b.shape) for b in func.buffer_map.values()]
    args = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    expected = [a.copy() for a in args]
    tvmscript.build(func, target="interp")(*expected)
    tvmscript.build(func, fp_contract=False)(*args)
    for got, want in zip(args, expected):
        np.testing.assert_array_equal(got, want)


def test_integer_accumulation_into_existing_values() -> None:
    assert len(_interchanged(matmul_accumulate)) == 1
    rng = np.random.default_rng(4)
    a = rng.integers(-1000, 1000, (M, K), dtype=np.int32)
    b = rng.integers(-1000, 1000, (K, N), dtype=np.int32)
    c = rng.integers(-1000, 1000, (M, N), dtype=np.int32)
    expected = c + a @ b
    tvmscript.build(matmul_accumulate)(a, b, c)
    np.testing.assert_array_equal(c, expected)


@pytest.mark.parametrize("alias", ["C_is_A", "C_is_B", "C_overlaps_B"])
def test_overlapping_arrays_run_the_original_nest(alias: str) -> None:
    rng = np.random.default_rng(5)
    base = rng.standard_normal((2 * N, N)).astype(np.float32)
    other = rng.standard_normal((N, N)).astype(np.float32)

    def arrays(store: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if alias == "C_is_A":
            c = store[:N]
            return c, other.copy(), c
        if alias == "C_is_B":
            c = store[:N]
            return other.copy(), c, c
        return other.copy(), store[:N], store[N // 2 : N // 2 + N]

    want_store = base.copy()
    tvmscript.build(square, target="interp")(*arrays(want_store))
    got_store = base.copy()
    tvmscript.build(square, fp_contract=False)(*arrays(got_store))
    np.testing.assert_array_equal(got_store, want_store)
