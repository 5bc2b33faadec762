"""``fuse_contiguous_loops``: perfectly nested serial loops whose every index walks memory as
``h * W + w`` become one loop of ``H * W`` iterations (a declared reduction's loops too, with
their init guard); anything else is left alone."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lowering
import tvmscript
from irbuilder.ir import Allocate, For, ForKind, PrimFunc, post_order_visit, structural_equal
from lowering.pipeline import LATE_STAGE
from lowering.target import Target
from lowering.transforms.fuse_loops import fuse_contiguous_loops
from tvmscript import tir as T

AVX2 = Target("llvm -mcpu=znver3")
runs_avx2 = pytest.mark.skipif(bool(AVX2.missing_on_host()), reason="the host lacks AVX2")


def loops(func: PrimFunc) -> list[For]:
    """The loops of ``func``, outermost first."""
    out: list[For] = []
    post_order_visit(func.body, lambda n: out.append(n) if isinstance(n, For) else None)
    return out[::-1]


def _no_parallel(func: PrimFunc, **config: Any) -> PrimFunc:
    """``func`` lowered without this pass, the late stage or automatic parallel loops."""
    skipped = frozenset({"fuse_contiguous_loops", *LATE_STAGE}) - {"simplify"}
    with lowering.PassContext(disabled_passes=skipped,
                              config={"parallelize_loops": {"enabled": False}, **config}):
        return lowering.lower(func, target=AVX2)


def run_pass(name: str, func: PrimFunc) -> PrimFunc:
    assert name == "fuse_contiguous_loops"
    with lowering.PassContext(opt_level=3, target=AVX2):
        return fuse_contiguous_loops(func)


def _same_numbers(source: PrimFunc, before: PrimFunc, after: PrimFunc,
                  make: Any = None) -> None:
    """The interpreter on ``source`` and the compiled ``before`` and ``after`` (translated as
    they are) give the same arrays."""
    every = frozenset(lowering.PIPELINE_ORDER)
    with lowering.PassContext(disabled_passes=every):
        kernels = [tvmscript.build(f, target=AVX2, cache=False, fp_contract=False)
                   for f in (before, after)]
    runs = [tvmscript.build(source, target="interp"), *kernels]
    for seed in range(3):
        results = []
        for run in runs:
            rng = np.random.default_rng(seed)
            args = make(rng) if make else [
                rng.standard_normal(tuple(int(d) for d in b.shape)).astype(str(b.dtype))
                if b.dtype.is_float else
                rng.integers(0, 8, tuple(int(d) for d in b.shape)).astype(str(b.dtype))
                for b in source.buffer_map.values()
            ]
            run(*args)
            results.append(args)
        for want, got_before, got_after in zip(*results):
            np.testing.assert_array_equal(got_before, got_after)
            np.testing.assert_allclose(got_after, want, rtol=1e-5, atol=1e-5)


@T.prim_func
def scale_shift(X: T.Buffer((2, 6, 7, 7), "float32"), S: T.Buffer((6,), "float32"),
                B: T.Buffer((6,), "float32"), Y: T.Buffer((2, 6, 7, 7), "float32")):
    for n, c, h, w in T.grid(2, 6, 7, 7):
        with T.block("ss"):
            vn, vc, vh, vw = T.axis.remap("SSSS", [n, c, h, w])
            Y[vn, vc, vh, vw] = X[vn, vc, vh, vw] * S[vc] + B[vc]


@T.prim_func
def add3(A: T.Buffer((3, 5, 7), "int32"), B: T.Buffer((3, 5, 7), "int32"),
         C: T.Buffer((3, 5, 7), "int32")):
    for i, j, k in T.grid(3, 5, 7):
        C[i, j, k] = A[i, j, k] + B[i, j, k] * 3


@T.prim_func
def stencil(A: T.Buffer((6, 9), "float32"), B: T.Buffer((6, 9), "float32")):
    for i, j in T.grid(4, 7):  # rows of 7 inside rows of 9: not one walk
        B[i + 1, j + 1] = A[i, j + 1] + A[i + 2, j + 1]


@T.prim_func
def transposed(A: T.Buffer((5, 7), "float32"), B: T.Buffer((7, 5), "float32")):
    for i, j in T.grid(5, 7):
        B[j, i] = A[i, j]


@T.prim_func
def edge(A: T.Buffer((5, 7), "float32"), B: T.Buffer((5, 7), "float32")):
    for i, j in T.grid(5, 7):  # the variables in a value, not only in indices
        B[i, j] = A[i, j] + T.Cast("float32", j)


@T.prim_func
def gathered(A: T.Buffer((64,), "float32"), I: T.Buffer((4, 8), "int32"),
             B: T.Buffer((4, 8), "float32")):
    for i, j in T.grid(4, 8):
        B[i, j] = A[I[i, j]]


def _serial_extents(func: PrimFunc) -> list[int]:
    return [int(f.extent) for f in loops(func) if f.kind is ForKind.SERIAL]


def test_nchw_scale_shift_fuses_the_spatial_loops() -> None:
    before = _no_parallel(scale_shift)
    after = run_pass("fuse_contiguous_loops", before)
    assert _serial_extents(before) == [2, 6, 7, 7]
    # h and w walk one 49-element plane; c cannot join (S[c] steps 1 per channel, not 49)
    assert _serial_extents(after) == [2, 6, 49]
    text = after.script()
    assert "for n, c, h_w in T.grid(2, 6, 49):" in text
    assert "Y_flat[n * 294 + c * 49 + h_w] = X_flat[n * 294 + c * 49 + h_w]" in text


def test_a_plain_elementwise_nest_becomes_one_loop() -> None:
    after = run_pass("fuse_contiguous_loops", _no_parallel(add3))
    assert _serial_extents(after) == [105]
    assert structural_round_trip(after)


def structural_round_trip(func: PrimFunc) -> bool:
    return structural_equal(tvmscript.from_source(func.script()), func)


def test_nests_that_do_not_walk_as_one_are_left_alone() -> None:
    for func in (stencil, transposed, edge):
        before = _no_parallel(func)
        assert run_pass("fuse_contiguous_loops", before) is before, func.name


def test_a_gather_index_fuses_its_own_loops() -> None:
    after = run_pass("fuse_contiguous_loops", _no_parallel(gathered))
    assert _serial_extents(after) == [32]
    assert "B_flat[i_j] = A_flat[I_flat[i_j]]" in after.script()


def test_annotated_and_parallel_loops_are_not_fused() -> None:
    @T.prim_func
    def marked(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
        for i in T.parallel(4):
            for j in T.unroll(8):
                B[i, j] = A[i, j]

    before = _no_parallel(marked, unroll_loop={"max_extent": 0})
    assert run_pass("fuse_contiguous_loops", before) is before


@runs_avx2
def test_same_numbers_as_the_interpreter() -> None:
    for func in (scale_shift, add3, gathered):
        before = _no_parallel(func)
        after = run_pass("fuse_contiguous_loops", before)
        assert after is not before
        make = None
        if func is gathered:
            def make(rng: np.random.Generator) -> list[np.ndarray]:  # type: ignore[type-arg]
                return [rng.standard_normal(64).astype("float32"),
                        rng.integers(0, 64, (4, 8)).astype("int32"),
                        np.zeros((4, 8), "float32")]
        _same_numbers(func, before, after, make)


@runs_avx2
def test_the_default_build_fuses_and_agrees_with_numpy() -> None:
    kernel = tvmscript.build(scale_shift, target=AVX2, cache=False)
    assert "h_w" in kernel.get_source("tir")
    rng = np.random.default_rng(4)
    X = rng.standard_normal((2, 6, 7, 7)).astype("float32")
    S, B = rng.standard_normal(6).astype("float32"), rng.standard_normal(6).astype("float32")
    Y = np.zeros_like(X)
    kernel(X, S, B, Y)
    np.testing.assert_allclose(Y, X * S[:, None, None] + B[:, None, None], rtol=1e-6, atol=1e-6)
    with lowering.PassContext(disabled_passes=frozenset({"fuse_contiguous_loops"})):
        unfused = tvmscript.build(scale_shift, target=AVX2, cache=False)
    assert "h_w" not in unfused.get_source("tir")


@T.prim_func
def plane_sums(X: T.Buffer((4, 3, 8, 8), "float32"), M: T.Buffer((4,), "float32")):
    for g, c, h, w in T.grid(4, 3, 8, 8):
        with T.block("sum"):
            vg, vc, vh, vw = T.axis.remap("SRRR", [g, c, h, w])
            with T.init():
                M[vg] = T.float32(0)
            M[vg] = M[vg] + X[vg, vc, vh, vw]


def test_a_declared_reduction_over_three_axes_becomes_one_loop() -> None:
    before = _no_parallel(plane_sums, vectorize_reductions={"enabled": False})
    after = run_pass("fuse_contiguous_loops", before)
    (fused,) = [f for f in loops(after) if f.loop_var.name == "c_h_w"]
    assert int(fused.extent) == 192
    assert fused.annotations == {"tvmscript.reduction": "sum"}
    text = after.script()
    assert "if c_h_w == 0:" in text  # the init guard c == 0 and h == 0 and w == 0
    assert "X_flat[g * 192 + c_h_w]" in text
    _same_numbers(plane_sums, before, after)


def test_the_fused_reduction_runs_in_lanes() -> None:
    @T.prim_func
    def groups(X: T.Buffer((4, 16, 32, 32), "float32"), M: T.Buffer((4,), "float32")):
        for g, c, h, w in T.grid(4, 16, 32, 32):
            with T.block("sum"):
                vg, vc, vh, vw = T.axis.remap("SRRR", [g, c, h, w])
                with T.init():
                    M[vg] = T.float32(0)
                M[vg] = M[vg] + X[vg, vc, vh, vw]

    with lowering.PassContext(config={"parallelize_loops": {"enabled": False}}):
        lowered = lowering.lower(groups, target=AVX2)
    lanes = [s for s in _stmts(lowered) if isinstance(s, Allocate)]
    assert any(int(a.extent) == 64 for a in lanes)  # vectorize_reductions' 64 lanes
    kernel = tvmscript.build(groups, target=AVX2, cache=False)
    X = np.random.default_rng(6).standard_normal((4, 16, 32, 32)).astype("float32")
    M = np.zeros(4, "float32")
    kernel(X, M)
    np.testing.assert_allclose(M, X.astype("float64").sum(axis=(1, 2, 3)), rtol=1e-4, atol=1e-3)


def _stmts(func: PrimFunc) -> list[object]:
    out: list[object] = []
    post_order_visit(func.body, out.append)
    return out


@T.prim_func
def nested_views(a: T.handle, b: T.handle) -> None:
    A = T.match_buffer(a, (16, 16, 16), "float32")
    B = T.match_buffer(b, (1,), "float32")
    for i, j in T.grid(16, 4):
        with T.block():
            vi, vj = T.axis.remap("SS", [i, j])
            C = T.match_buffer(A[0:16, vi, vj * 4:vj * 4 + 4], (16, 1, 4))
            for ii in range(4):
                with T.block():
                    vii = T.axis.S(4, ii)
                    D = T.match_buffer(C[vii * 4:vii * 4 + 4, 0, 0:4], (4, 1, 4))
                    for x, y in T.grid(4, 4):
                        B[0] += D[x, 0, y]


def test_loops_a_view_declaration_uses_stay_apart() -> None:
    # the lowered match_buffer views are declared with elem_offset = vi * 16 + vj * 4 ...:
    # fusing (i, j) would leave i and j undefined there
    func = _no_parallel(nested_views)
    fused = run_pass("fuse_contiguous_loops", func)
    assert [loop.loop_var.name for loop in loops(fused)][:2] == ["i", "j"]


@runs_avx2
def test_loops_around_view_declarations_build_and_compute() -> None:
    a = np.random.default_rng(0).random((16, 16, 16)).astype("float32")
    b = np.zeros(1, "float32")
    tvmscript.build(nested_views, target=AVX2)(a, b)
    reference = np.zeros(1, "float32")
    tvmscript.build(nested_views, target="interp")(a, reference)
    np.testing.assert_allclose(b, reference, rtol=1e-6)
    np.testing.assert_allclose(b, [a.sum()], rtol=1e-4)
