"""``version_accumulator_nests``: a loop nest with a short in-memory accumulation (a 3x3
window) runs in a no-alias region under a run-time no-overlap test, its outermost serial
loop taking the test; ``interchange_reductions`` leaves such short reductions in place.
Overlapping arguments run the original nest; results are bit-identical either way."""

from __future__ import annotations

import numpy as np
import pytest
from late_kit import (
    AVX2,
    AVX512,
    assert_same_numbers,
    before_late,
    one_storage,
    run_pass,
    runs_avx2,
    versioning_ifs,
)

import lowering
import tvmscript
from irbuilder.ir import For, ForKind, PrimFunc, Var, post_order_visit
from lowering.late.alias_version import NOALIAS_ATTR, short_accumulator
from lowering.pipeline import LATE_STAGE
from lowering.target import Target
from tvmscript import tir as T


@T.prim_func
def maxpool(A: T.Buffer((4, 18, 18), "float32"), O: T.Buffer((4, 8, 8), "float32")):
    for c in T.parallel(4):
        for h, w in T.grid(8, 8):
            O[c, h, w] = T.float32(-3.4e38)
            for kh, kw in T.grid(3, 3):
                O[c, h, w] = T.max(O[c, h, w], A[c, h * 2 + kh, w * 2 + kw])


@T.prim_func
def maxpool_serial(A: T.Buffer((4, 18, 18), "float32"), O: T.Buffer((4, 8, 8), "float32")):
    for c, h, w in T.grid(4, 8, 8):  # serial: overlapping arguments have one answer
        O[c, h, w] = T.float32(-3.4e38)
        for kh, kw in T.grid(3, 3):
            O[c, h, w] = T.max(O[c, h, w], A[c, h * 2 + kh, w * 2 + kw])


@T.prim_func
def depthwise_block(A: T.Buffer((3, 12, 12), "float32"), W: T.Buffer((3, 3, 3), "float32"),
                    O: T.Buffer((3, 10, 10), "float32")):
    for c, h, w, kh, kw in T.grid(3, 10, 10, 3, 3):
        with T.block("dw"):
            vc, vh, vw, vkh, vkw = T.axis.remap("SSSRR", [c, h, w, kh, kw])
            with T.init():
                O[vc, vh, vw] = T.float32(0)
            O[vc, vh, vw] = O[vc, vh, vw] + A[vc, vh + vkh, vw + vkw] * W[vc, vkh, vkw]


@T.prim_func
def long_rows(A: T.Buffer((8, 64), "float32"), B: T.Buffer((64, 32), "float32"),
              C: T.Buffer((8, 32), "float32")):
    for i, j in T.grid(8, 32):
        C[i, j] = T.float32(0)
        for k in range(64):  # 64 steps: interchange_reductions' business
            C[i, j] = C[i, j] + A[i, k] * B[k, j]


@T.prim_func
def local_window(A: T.Buffer((4, 18, 18), "float32"), O: T.Buffer((4, 8, 8), "float32")):
    for c in T.parallel(4):
        for h, w in T.grid(8, 8):
            m = T.alloc_buffer((1,), "float32")
            m[0] = T.float32(-3.4e38)
            for kh, kw in T.grid(3, 3):
                m[0] = T.max(m[0], A[c, h * 2 + kh, w * 2 + kw])
            O[c, h, w] = m[0]


def _versioned(func: PrimFunc, target: Target) -> PrimFunc:
    return run_pass("version_accumulator_nests", before_late(func, target), target)


@pytest.mark.parametrize("target", [AVX2, AVX512], ids=["avx2", "avx512"])
def test_the_outermost_serial_loop_of_the_nest_takes_the_test(target: Target) -> None:
    after = _versioned(maxpool, target)
    (version,) = versioning_ifs(after, NOALIAS_ATTR)
    fast = version.then_case.body  # the AttrStmt's body: a copy of the h loop
    assert isinstance(fast, For) and fast.kind is ForKind.SERIAL
    assert fast.loop_var.name == "h"
    text = after.script()
    assert text.index("for c in T.parallel(4):") < text.index("tvms.noalias_region")


def test_short_block_reductions_stay_in_place_and_are_versioned() -> None:
    lowered = lowering.lower(depthwise_block, target=AVX2)
    text = lowered.script()
    assert "tvms.noalias_region" in text
    # not interchanged: the window loops stay inside the w loop
    assert text.index("for c, h, w in T.grid(3, 10, 10)") < text.index("for kh")


def test_short_accumulator_counts_every_step_of_the_nest() -> None:
    lowered = before_late(maxpool, AVX2)
    windows = [f for f in _loops(lowered) if f.loop_var.name == "kh"]
    assert windows and short_accumulator(windows[0]) is not None
    rows = [f for f in _loops(before_late(long_rows, AVX2)) if f.loop_var.name == "k"]
    assert rows and short_accumulator(rows[0]) is None


def _loops(func: PrimFunc) -> list[For]:
    found: list[For] = []
    post_order_visit(func.body, lambda n: found.append(n) if isinstance(n, For) else None)
    return found


@pytest.mark.parametrize("func", [long_rows, local_window], ids=["long", "local"])
def test_other_nests_are_left_alone(func: PrimFunc) -> None:
    before = before_late(func, AVX2)
    assert run_pass("version_accumulator_nests", before, AVX2) is before


@runs_avx2
@pytest.mark.parametrize("func", [maxpool, depthwise_block], ids=["pool", "block"])
def test_same_numbers_as_the_interpreter(func: PrimFunc) -> None:
    before = before_late(func, AVX2)
    after = run_pass("version_accumulator_nests", before, AVX2)
    assert after is not before
    assert_same_numbers(func, before, after)


@runs_avx2
def test_overlapping_arguments_run_the_original_nest() -> None:
    before = before_late(maxpool_serial, AVX2)
    after = run_pass("version_accumulator_nests", before, AVX2)
    assert list(versioning_ifs(after, NOALIAS_ATTR))
    # O starts inside A: windows read elements that earlier outputs overwrote
    assert_same_numbers(maxpool_serial, before, after,
                        make_args=lambda rng: one_storage(maxpool_serial, [0, 300], rng))
    args = one_storage(maxpool_serial, [0, 300], np.random.default_rng(4))
    want = one_storage(maxpool_serial, [0, 300], np.random.default_rng(4))
    tvmscript.build(maxpool_serial, target="interp")(*want)
    tvmscript.build(maxpool_serial, target=AVX2, cache=False)(*args)
    np.testing.assert_array_equal(args[1], want[1])


@T.prim_func
def padded_depthwise(A: T.Buffer((4, 8, 8), "float32"), W: T.Buffer((4, 3, 3), "float32"),
                     O: T.Buffer((4, 8, 8), "float32")):
    # the window reads the function's own padded copy of A (a TE ``pad`` stage)
    P = T.alloc_buffer((4, 10, 10), "float32")
    for c, h, w in T.grid(4, 10, 10):
        with T.block("P"):
            vc, vh, vw = T.axis.remap("SSS", [c, h, w])
            P[vc, vh, vw] = T.if_then_else(1 <= vh and vh < 9 and 1 <= vw and vw < 9, A[vc, vh - 1, vw - 1], T.float32(0))
    for c, h, w, kh, kw in T.grid(4, 8, 8, 3, 3):
        with T.block("O"):
            vc, vh, vw, vkh, vkw = T.axis.remap("SSSRR", [c, h, w, kh, kw])
            with T.init():
                O[vc, vh, vw] = T.float32(0)
            O[vc, vh, vw] = O[vc, vh, vw] + P[vc, vh + vkh, vw + vkw] * W[vc, vkh, vkw]


def _padded_copy_kept(func: PrimFunc) -> PrimFunc:
    """``func`` up to the late stage with its padded copy kept (``inline_padding`` would
    compute it at the window's loads)."""
    kept = (frozenset(LATE_STAGE) - {"simplify"}) | {"inline_padding"}
    with lowering.PassContext(disabled_passes=kept):
        return lowering.lower(func, target=AVX2)


def test_an_own_buffer_read_by_the_window_joins_the_region_untested() -> None:
    # P is the function's allocation: no parameter overlaps it, so it is declared apart from
    # the written O (LLVM keeps the accumulator in a register) without a run-time test
    after = run_pass("version_accumulator_nests", _padded_copy_kept(padded_depthwise), AVX2)
    (version,) = versioning_ifs(after, NOALIAS_ATTR)
    region = version.then_case
    names = [v.name.split("_")[0] for v in region.node]  # type: ignore[attr-defined]
    assert names[0] == "O" and int(region.value) == 1  # type: ignore[attr-defined]
    assert sorted(names[1:]) == ["P", "W"]
    tested: list[str] = []
    post_order_visit(version.condition, lambda n: tested.append(n.name) if isinstance(n, Var) else None)
    assert tested and not any(name.startswith("P") for name in tested)


@runs_avx2
def test_an_own_buffer_in_the_region_gives_the_same_numbers() -> None:
    before = _padded_copy_kept(padded_depthwise)
    after = run_pass("version_accumulator_nests", before, AVX2)
    assert after is not before
    assert_same_numbers(padded_depthwise, before, after)
