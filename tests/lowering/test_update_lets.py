"""A reduction block whose new values are bound by ``let`` before they are stored (TOPI's
tuple reductions): the bindings are substituted into the stores when that reads the same
numbers, so the loop is a declared reduction; otherwise the block stays as written."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import lowering
import tvmscript
from irbuilder.ir import LetStmt, PrimFunc, post_order_visit
from lowering.transforms.lower_blocks import REDUCTION_ANNOTATION
from tvmscript import tir as T

sys.path.insert(0, str(Path(__file__).parent / "late"))
from late_kit import pinned_targets, run_reference  # noqa: E402


@T.prim_func
def layer_norm_stats(X: T.Buffer((24, 40), "float32"), S: T.Buffer((24,), "float32"),
                     Q: T.Buffer((24,), "float32")):
    for i, k in T.grid(24, 40):
        with T.block("T_layer_norm_red"):
            v_i, v_k = T.axis.remap("SR", [i, k])
            with T.init():
                S[v_i] = T.float32(0)
                Q[v_i] = T.float32(0)
            v_s: T.float32 = S[v_i] + X[v_i, v_k]
            v_q: T.float32 = Q[v_i] + X[v_i, v_k] * X[v_i, v_k]
            S[v_i] = v_s
            Q[v_i] = v_q


@T.prim_func
def arg_max(X: T.Buffer((24, 40), "float32"), I: T.Buffer((24,), "int32"),
            M: T.Buffer((24,), "float32")):
    for i, k in T.grid(24, 40):
        with T.block("argmax"):
            v_i, v_k = T.axis.remap("SR", [i, k])
            with T.init():
                I[v_i] = -1
                M[v_i] = T.float32(-3.4e38)
            v_idx: T.int32 = T.Select(M[v_i] < X[v_i, v_k], v_k, I[v_i])
            v_max: T.float32 = T.Select(M[v_i] < X[v_i, v_k], X[v_i, v_k], M[v_i])
            I[v_i] = v_idx
            M[v_i] = v_max


@T.prim_func
def arg_max_value_first(X: T.Buffer((24, 40), "float32"), I: T.Buffer((24,), "int32"),
                        M: T.Buffer((24,), "float32")):
    for i, k in T.grid(24, 40):
        with T.block("argmax"):
            v_i, v_k = T.axis.remap("SR", [i, k])
            with T.init():
                I[v_i] = -1
                M[v_i] = T.float32(-3.4e38)
            v_idx: T.int32 = T.Select(M[v_i] < X[v_i, v_k], v_k, I[v_i])
            v_max: T.float32 = T.Select(M[v_i] < X[v_i, v_k], X[v_i, v_k], M[v_i])
            M[v_i] = v_max
            I[v_i] = v_idx  # reads the maximum before this step's store: stays bound


@T.prim_func
def same_element(X: T.Buffer((24, 40), "float32"), S: T.Buffer((24,), "float32")):
    for i, k in T.grid(24, 40):
        with T.block("twice"):
            v_i, v_k = T.axis.remap("SR", [i, k])
            with T.init():
                S[v_i] = T.float32(0)
            a: T.float32 = S[v_i] + X[v_i, v_k]
            b: T.float32 = S[v_i] + T.float32(2) * X[v_i, v_k]
            S[v_i] = a
            S[v_i] = b  # the second store wins: b was read before a was stored


def _lowered_blocks(func: PrimFunc) -> PrimFunc:
    with lowering.PassContext(opt_level=3):
        return lowering.lower_blocks(func)


def _lets(func: PrimFunc) -> int:
    found: list[Any] = []
    post_order_visit(func.body, lambda n: found.append(n) if isinstance(n, LetStmt) else None)
    return len(found)


def test_a_tuple_reductions_bound_values_become_a_declared_reduction() -> None:
    after = _lowered_blocks(layer_norm_stats)
    assert _lets(after) == 0
    text = after.script()
    assert f'"{REDUCTION_ANNOTATION}": "sum"' in text, text
    assert "S[i] = S[i] + X[i, k]" in text and "Q[i] = Q[i] + X[i, k] * X[i, k]" in text


@pytest.mark.parametrize("func", [arg_max_value_first, same_element], ids=lambda f: f.name)
def test_values_reading_what_an_earlier_store_writes_stay_bound(func: PrimFunc) -> None:
    after = _lowered_blocks(func)
    assert _lets(after) == 2
    assert REDUCTION_ANNOTATION not in after.script()


def test_an_argmax_storing_the_index_first_is_substituted_but_no_declared_reduction() -> None:
    # the index's value reads the maximum, stored after it: the same numbers substituted;
    # a select is no update kind, so the loop is not declared a reduction
    after = _lowered_blocks(arg_max)
    assert _lets(after) == 0
    assert REDUCTION_ANNOTATION not in after.script()


@pytest.mark.parametrize("target", pinned_targets())
@pytest.mark.parametrize("func", [layer_norm_stats, arg_max, arg_max_value_first,
                                  same_element], ids=lambda f: f.name)
def test_every_form_gives_the_interpreters_numbers(func: PrimFunc, target: Any) -> None:
    rng = np.random.default_rng(5)
    X = rng.standard_normal((24, 40)).astype("float32")
    outs = [np.zeros(tuple(int(d) for d in b.shape), str(b.dtype))
            for b in list(func.buffer_map.values())[1:]]
    want = [X.copy(), *[o.copy() for o in outs]]
    run_reference(func, want)
    kernel = tvmscript.build(func, target=target, cache=False, fp_contract=False)
    for _ in range(2):
        got = [X.copy(), *[o.copy() for o in outs]]
        kernel(*got)
        for g, w in zip(got, want, strict=True):
            # declared reductions may run in lanes: float sums within rounding
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)
    if func is same_element:  # each step adds 2x: the second binding read S first
        np.testing.assert_allclose(want[1], 2 * X.sum(axis=1), rtol=1e-4, atol=1e-4)
