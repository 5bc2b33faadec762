"""Panel-major order (``vectorize_parallel_columns``, ``lowering/late/panel_order.py``): a
plain dense layer whose every parallel row block would stream the whole (transposed) weight
runs its column groups in parallel and the row blocks inside them, so each panel of the
weight is reused from a cache; the numbers stay those of the loops as written."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from late_kit import AVX2, AVX512, pinned_targets

import lowering
import tvmscript
from irbuilder.ir import For, ForKind, IfThenElse, PrimFunc, post_order_visit
from lowering.target import Target
from tvmscript import tir as T


@T.prim_func
def dense_wide(X: T.Buffer((64, 1024), "float32"), W: T.Buffer((1044, 1024), "float32"),
               B: T.Buffer((1044,), "float32"), O: T.Buffer((64, 1044), "float32")):
    for i in T.parallel(64):
        for j in range(1044):
            acc = T.alloc_buffer((1,), "float32")
            acc[0] = T.float32(0)
            for k in range(1024):
                acc[0] = acc[0] + X[i, k] * W[j, k]
            O[i, j] = acc[0] + B[j]


@T.prim_func
def dense_small(X: T.Buffer((64, 256), "float32"), W: T.Buffer((1044, 256), "float32"),
                B: T.Buffer((1044,), "float32"), O: T.Buffer((64, 1044), "float32")):
    for i in T.parallel(64):
        for j in range(1044):
            acc = T.alloc_buffer((1,), "float32")
            acc[0] = T.float32(0)
            for k in range(256):
                acc[0] = acc[0] + X[i, k] * W[j, k]
            O[i, j] = acc[0] + B[j]


def _lowered(func: PrimFunc, target: Target, panel_major: bool = True) -> PrimFunc:
    config = {"vectorize_parallel_columns": {"panel_major": panel_major}}
    with lowering.PassContext(opt_level=3, config=config):
        return lowering.lower(func, opt_level=3, target=target)


def _fast_path(func: PrimFunc) -> Any:
    """The then-branch of the column lanes' no-overlap test (the branch holding lanes)."""
    found: list[IfThenElse] = []
    post_order_visit(func.body, lambda n: found.append(n) if isinstance(n, IfThenElse)
                     and "j_lanes" in _loop_names(n.then_case) else None)
    return found[0].then_case  # the innermost such test (post order)


def _loop_names(stmt: Any) -> list[str]:
    names: list[str] = []
    post_order_visit(stmt, lambda n: names.append(n.loop_var.name) if isinstance(n, For)
                     else None)
    return names


def _parallel_nests(stmt: Any) -> list[tuple[str, list[str]]]:
    """Each parallel loop's variable and the serial loops directly nested in it."""
    out: list[tuple[str, list[str]]] = []

    def visit(node: object) -> None:
        if isinstance(node, For) and node.kind is ForKind.PARALLEL:
            inner: list[str] = []
            post_order_visit(node.body, lambda n: inner.append(n.loop_var.name)
                             if isinstance(n, For) and n.kind is ForKind.SERIAL else None)
            out.append((node.loop_var.name, inner))

    post_order_visit(stmt, visit)
    return out


@pytest.mark.parametrize("target", [AVX2, AVX512], ids=["znver3", "znver4"])
def test_a_weight_too_large_for_a_cache_is_read_panel_by_panel(target: Target) -> None:
    nests = _parallel_nests(_fast_path(_lowered(dense_wide, target)))
    # the column groups run in parallel, the row blocks inside each (one panel reused),
    # then the leftover columns as a loop over the rows
    assert nests[0][0] == "j_lanes" and any(name.startswith("i") for name in nests[0][1])
    assert nests[1][0].startswith("i")
    # switched off: the rows stay the parallel loop, each streaming the whole weight
    unordered = _parallel_nests(_fast_path(_lowered(dense_wide, target, panel_major=False)))
    assert all(not name.startswith("j") for name, _ in unordered)


def test_a_weight_that_stays_in_a_cache_keeps_the_row_order() -> None:
    # 1044 x 256 float32 (1 MB) is re-read by each row block from a cache
    nests = _parallel_nests(_fast_path(_lowered(dense_small, AVX2)))
    assert all(not name.startswith("j") for name, _ in nests)


def _sequential_dense(X: np.ndarray, W: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Every output summed over k in source order, in float32 (the loops as written)."""
    acc = np.zeros((X.shape[0], W.shape[0]), np.float32)
    for k in range(X.shape[1]):
        acc = acc + X[:, k, None] * W[None, :, k]
    return (acc + B[None, :]).astype(np.float32)


@pytest.mark.parametrize("target", pinned_targets())
def test_panel_major_order_computes_the_loops_numbers(target: Target) -> None:
    """Bit for bit the sequential sums (no multiply-add contraction), on all cores, three
    runs; with contraction, within rounding of them."""
    rng = np.random.default_rng(11)
    X = rng.standard_normal((64, 1024)).astype(np.float32)
    W = rng.standard_normal((1044, 1024)).astype(np.float32)
    B = rng.standard_normal(1044).astype(np.float32)
    want = _sequential_dense(X, W, B)
    exact = tvmscript.build(dense_wide, target=target, fp_contract=False, cache=False)
    contracted = tvmscript.build(dense_wide, target=target, cache=False)
    for _ in range(3):
        got = np.zeros((64, 1044), np.float32)
        exact(X, W, B, got)
        np.testing.assert_array_equal(got, want)
        got = np.zeros((64, 1044), np.float32)
        contracted(X, W, B, got)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
