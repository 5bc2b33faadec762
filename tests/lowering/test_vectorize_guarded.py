"""``vectorize_loop`` forms exact only under a run-time guard: the ``T.where`` predicate of a
non-dividing split (true on every lane but the last vector's) and the ``//`` / ``%`` of a
fused index whose lanes stay inside one row. The vector form runs when the guard holds, the
lanes one by one otherwise; the numbers are the interpreter's either way."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import lowering
import tvmscript
from irbuilder.ir import For, ForKind, IfThenElse, PrimFunc, Ramp
from irbuilder.ir.functor import post_order_visit
from lowering.target import Target
from tvmscript import tir as T

sys.path.insert(0, str(Path(__file__).parent / "late"))
from late_kit import agrees_with_interpreter, pinned_targets, standard_normal


@T.prim_func
def add_where(A: T.Buffer((37, 29), "float32"), B: T.Buffer((29,), "float32"),
              O: T.Buffer((37, 29), "float32")):
    # a fused (37 * 29 = 1073) loop split by 32, the last piece cut by the predicate; f1
    # read on its own too, so merge_split_loops keeps the split and the vectors take it
    for f0 in T.parallel(34):
        for f1 in T.vectorized(32):
            if f0 * 32 + f1 < 1073:
                O[(f0 * 32 + f1) // 29, (f0 * 32 + f1) % 29] = A[
                    (f0 * 32 + f1) // 29, (f0 * 32 + f1) % 29
                ] + B[(f0 * 32 + f1) % 29] * T.Cast("float32", f1)


@T.prim_func
def pool_where(X: T.Buffer((4, 30), "float32"), P: T.Buffer((4, 14), "float32")):
    for c, w0 in T.grid(4, 2):
        for r in range(3):
            for w1 in T.vectorized(8):
                with T.block("pool"):
                    vc = T.axis.spatial(4, c)
                    vw = T.axis.spatial(14, w0 * 8 + w1)
                    vr = T.axis.reduce(3, r)
                    T.where(w0 * 8 + w1 < 14)
                    with T.init():
                        P[vc, vw] = T.float32(-3.4e38)
                    P[vc, vw] = T.max(P[vc, vw], X[vc, vw * 2 + vr])


@T.prim_func
def inner_var_predicate(A: T.Buffer((16,), "float32"), O: T.Buffer((16,), "float32")):
    for i in T.vectorized(16):
        for k in range(4):
            if i + k < 13:  # decided per inner iteration: no guard outside can test it
                O[i] = O[i] + A[i] * T.float32(0.5)


def _lowered(func: PrimFunc, target: Target) -> PrimFunc:
    return lowering.lower(func, target=target)


def _guarded_vector_stores(func: PrimFunc) -> int:
    """Vector stores under an ``if`` whose else runs a serial lane loop."""
    found = 0

    def visit(node: object) -> None:
        nonlocal found
        if (isinstance(node, IfThenElse) and isinstance(node.else_case, For)
                and node.else_case.loop_var.name.endswith("_lane")):
            stores: list[object] = []
            post_order_visit(node.then_case, lambda n: stores.append(n) if (
                type(n).__name__ == "BufferStore" and isinstance(n.indices[-1], Ramp)  # type: ignore[attr-defined]
            ) else None)
            found += bool(stores)

    post_order_visit(func.body, visit)
    return found


@pytest.mark.parametrize("target", pinned_targets())
def test_a_where_split_runs_in_vectors(target: Target) -> None:
    after = _lowered(add_where, target)
    assert _guarded_vector_stores(after) >= 1
    text = after.script()
    # the fused index is back to one ramp (29 * (f // 29) + f % 29 is f), B's a ramp from f % 29
    assert "// 29 * 29" not in text


@pytest.mark.parametrize("target", pinned_targets())
@pytest.mark.parametrize("func", [add_where, pool_where, inner_var_predicate],
                         ids=lambda f: f.name)
def test_guarded_vectors_give_the_interpreters_numbers(target: Target, func: PrimFunc) -> None:
    for seed in range(3):
        agrees_with_interpreter(func, lambda s=seed: standard_normal(func, s), target, runs=2)


def test_a_guard_on_an_inner_loop_variable_is_not_taken() -> None:
    after = _lowered(inner_var_predicate, Target("llvm -mcpu=znver3"))
    assert _guarded_vector_stores(after) == 0
    kinds = []
    post_order_visit(after.body, lambda n: kinds.append(n.kind) if isinstance(n, For) else None)
    assert ForKind.VECTORIZED not in kinds


@pytest.mark.parametrize("target", pinned_targets())
def test_the_last_partial_vector_stops_at_the_predicate(target: Target) -> None:
    # the output is one element longer than the predicate allows: that element stays put
    @T.prim_func
    def copy_where(A: T.Buffer((50,), "float32"), O: T.Buffer((51,), "float32")):
        for i0 in range(4):
            for i1 in T.vectorized(16):
                with T.block("copy"):
                    v = T.axis.spatial(50, i0 * 16 + i1)
                    T.where(i0 * 16 + i1 < 50)
                    O[v] = A[v] * T.float32(2)

    kernel = tvmscript.build(copy_where, target=target, cache=False)
    A = np.arange(50, dtype="float32")
    O = np.full(51, -1.0, "float32")
    kernel(A, O)
    np.testing.assert_array_equal(O[:50], A * 2)
    assert O[50] == -1.0
