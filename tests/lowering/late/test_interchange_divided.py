"""``interchange_divided_reductions`` alone: a reduction nest whose output row is read
through ``(t - k) // d`` (the TOPI transposed convolution with the dilation's parity test
inside its reduction) goes below the reduction loops, split by ``d`` (``t = d * q + r``),
the short reduction loops the divisions read unrolled: every test of the dilation becomes a
constant, every load contiguous in ``q``. Each output element keeps its updates in order
(bit-exact without fused multiply-adds: LLVM fuses the interleaved updates of the rewritten
loop differently), the zero terms too (``0 * inf`` is NaN); overlapping arguments run the
nest as written."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from late_kit import (
    assert_same_numbers,
    before_late,
    loops,
    one_storage,
    pinned_targets,
    run_pass,
    runs_avx2,
    versioning_ifs,
)

import tvmscript
from irbuilder.ir import FloorDiv, FloorMod, PrimFunc
from irbuilder.ir.functor import post_order_visit
from lowering.late.alias_version import NOALIAS_ATTR
from lowering.target import Target
from tvmscript import tir as T


@T.prim_func
def convt1d(X: T.Buffer((4, 16), "float32"), W: T.Buffer((4, 3, 4), "float32"),
            Y: T.Buffer((3, 34), "float32")):
    for o, t, c, k in T.grid(3, 34, 4, 4):
        with T.block("convt"):
            vo, vt, vc, vk = T.axis.remap("SSRR", [o, t, c, k])
            with T.init():
                Y[vo, vt] = T.float32(0)
            Y[vo, vt] = Y[vo, vt] + T.if_then_else(
                T.floormod(vt - vk, 2) == 0 and 0 <= vt - vk and T.floordiv(vt - vk, 2) < 16,
                X[vc, T.floordiv(vt - vk, 2)], T.float32(0)) * W[vc, vo, vk]


@T.prim_func
def convt1d_stride3(X: T.Buffer((5, 12), "float32"), W: T.Buffer((5, 2, 3), "float32"),
                    Y: T.Buffer((2, 36), "float32")):
    for o, t, c, k in T.grid(2, 36, 5, 3):
        with T.block("convt"):
            vo, vt, vc, vk = T.axis.remap("SSRR", [o, t, c, k])
            with T.init():
                Y[vo, vt] = T.float32(0)
            Y[vo, vt] = Y[vo, vt] + T.if_then_else(
                T.floormod(vt - vk, 3) == 0 and 0 <= vt - vk and T.floordiv(vt - vk, 3) < 12,
                X[vc, T.floordiv(vt - vk, 3)], T.float32(0)) * W[vc, vo, vk]


@T.prim_func
def convt2d(X: T.Buffer((3, 6, 8), "float32"), W: T.Buffer((3, 2, 3, 3), "float32"),
            Y: T.Buffer((2, 13, 18), "float32")):
    for o, y, x, c, kh, kw in T.grid(2, 13, 18, 3, 3, 3):
        with T.block("convt"):
            vo, vy, vx, vc, vkh, vkw = T.axis.remap("SSSRRR", [o, y, x, c, kh, kw])
            with T.init():
                Y[vo, vy, vx] = T.float32(0)
            Y[vo, vy, vx] = Y[vo, vy, vx] + T.if_then_else(
                T.floormod(vy - vkh, 2) == 0 and T.floormod(vx - vkw, 2) == 0
                and 0 <= vy - vkh and T.floordiv(vy - vkh, 2) < 6
                and 0 <= vx - vkw and T.floordiv(vx - vkw, 2) < 8,
                X[vc, T.floordiv(vy - vkh, 2), T.floordiv(vx - vkw, 2)],
                T.float32(0)) * W[vc, vo, vkh, vkw]


def _divisions(stmt: object) -> int:
    found: list[object] = []
    post_order_visit(stmt, lambda n: found.append(n)  # type: ignore[arg-type]
                     if isinstance(n, (FloorDiv, FloorMod)) else None)
    return len(found)


def _loop_names(func: PrimFunc, within: object) -> list[str]:
    inside: list[object] = []
    post_order_visit(within, inside.append)  # type: ignore[arg-type]
    ids = {id(n) for n in inside}
    return [lp.loop_var.name for lp in loops(func) if id(lp) in ids]


def test_the_output_row_goes_inside_split_by_parity() -> None:
    before = before_late(convt1d)
    after = run_pass("interchange_divided_reductions", before)
    (branch,) = versioning_ifs(after, NOALIAS_ATTR)
    fast = branch.then_case
    # the init row, then c around one loop over t's quotients per k (unrolled)
    assert sorted(_loop_names(after, fast)) == ["c", "t", "t_q", "t_q", "t_q", "t_q"]
    assert _divisions(fast) == 0  # every parity test a constant, every index affine
    assert branch.else_case is not None
    assert sorted(_loop_names(after, branch.else_case)) == ["c", "k", "t"]  # as written
    assert _divisions(branch.else_case) > 0


def test_the_regular_interchange_leaves_it_alone() -> None:
    # the divided form is this pass's alone: interchange_reductions needs contiguous loads
    before = before_late(convt1d)
    assert run_pass("interchange_reductions", before) is before


@T.prim_func
def odd_row(X: T.Buffer((4, 16), "float32"), W: T.Buffer((4, 3, 4), "float32"),
            Y: T.Buffer((3, 33), "float32")):
    for o, t, c, k in T.grid(3, 33, 4, 4):
        with T.block("convt"):
            vo, vt, vc, vk = T.axis.remap("SSRR", [o, t, c, k])
            with T.init():
                Y[vo, vt] = T.float32(0)
            Y[vo, vt] = Y[vo, vt] + T.if_then_else(
                T.floormod(vt - vk, 2) == 0 and 0 <= vt - vk and T.floordiv(vt - vk, 2) < 16,
                X[vc, T.floordiv(vt - vk, 2)], T.float32(0)) * W[vc, vo, vk]


@T.prim_func
def mixed_divisors(X: T.Buffer((4, 48), "float32"), W: T.Buffer((4, 3, 4), "float32"),
                   Y: T.Buffer((3, 48), "float32")):
    for o, t, c, k in T.grid(3, 48, 4, 4):
        with T.block("convt"):
            vo, vt, vc, vk = T.axis.remap("SSRR", [o, t, c, k])
            with T.init():
                Y[vo, vt] = T.float32(0)
            Y[vo, vt] = Y[vo, vt] + X[
                vc, T.floordiv(vt - vk + 4, 2) + T.floordiv(vt, 3)] * W[vc, vo, vk]


@pytest.mark.parametrize("func", [odd_row, mixed_divisors], ids=["odd_extent", "two_divisors"])
def test_left_alone_when_the_row_does_not_split(func: PrimFunc) -> None:
    before = before_late(func)
    assert run_pass("interchange_divided_reductions", before) is before


@runs_avx2
@pytest.mark.parametrize("func", [convt1d, convt1d_stride3, convt2d],
                         ids=["stride2", "stride3", "2d"])
def test_same_numbers_before_and_after(func: PrimFunc) -> None:
    before = before_late(func)
    after = run_pass("interchange_divided_reductions", before)
    assert after is not before
    assert_same_numbers(func, before, after, fp_contract=False)


@runs_avx2
def test_overlapping_arguments_run_the_nest_as_written() -> None:
    before = before_late(convt1d)
    after = run_pass("interchange_divided_reductions", before)
    # Y over the end of X and all of W: the original order runs
    overlapping = lambda rng: one_storage(convt1d, [0, 64, 40], rng)  # noqa: E731
    assert_same_numbers(convt1d, before, after, overlapping, reference=False,
                        fp_contract=False)


def _with_infinities(func: PrimFunc) -> Any:
    def make(rng: np.random.Generator) -> list[np.ndarray[Any, Any]]:
        arrays = [rng.standard_normal(tuple(int(d) for d in b.shape)).astype("float32")
                  for b in func.buffer_map.values()]
        weights = arrays[1].reshape(-1)
        weights[rng.choice(weights.size, 3, replace=False)] = np.inf
        arrays[0].reshape(-1)[rng.choice(arrays[0].size, 2, replace=False)] = -0.0
        return arrays
    return make


@runs_avx2
def test_the_zero_terms_stay() -> None:
    # an infinite weight times the dilation's zeros is NaN: the outputs it touches are NaN
    # in the rewritten nest as in the interpreter
    before = before_late(convt1d)
    after = run_pass("interchange_divided_reductions", before)
    assert_same_numbers(convt1d, before, after, _with_infinities(convt1d), fp_contract=False)
    args = _with_infinities(convt1d)(np.random.default_rng(0))
    tvmscript.build(convt1d, target="interp")(*args)
    assert np.isnan(args[-1]).sum() > args[-1].size // 4


@pytest.mark.parametrize("target", pinned_targets())
@pytest.mark.parametrize(("func", "quotient"), [(convt1d, "t_q"), (convt2d, "x_q")],
                         ids=["1d", "2d"])
def test_built_kernels_match_the_interpreter_bit_for_bit(
    func: PrimFunc, quotient: str, target: Target
) -> None:
    kernel = tvmscript.build(func, target=target, cache=False, fp_contract=False)
    assert f"for {quotient} in range(" in kernel.get_source("tir")
    for seed in range(3):
        rng = np.random.default_rng(seed)
        want = [rng.standard_normal(tuple(int(d) for d in b.shape)).astype("float32")
                for b in func.buffer_map.values()]
        got = [a.copy() for a in want]
        tvmscript.build(func, target="interp")(*want)
        kernel(*got)
        np.testing.assert_array_equal(got[-1], want[-1])
