"""LLVM forms gathers on its own only where a function asks for them
(backend/codegen/gather_policy.py): on AVX-512 targets other functions get
``+prefer-no-gather``, so the SLP vectorizer no longer packs jammed rows into gathers."""

from __future__ import annotations

import numpy as np
import pytest
from pinned import AVX2, AVX512, lower_for

import tvmscript
from backend.codegen import CodegenOptions, generate
from backend.codegen.gather_policy import intends_gathers
from backend.runtime.target import codegen_target_machine
from tvmscript import tir as T


@T.prim_func
def argmin_rows(A: T.Buffer((64, 256), "float32"), O: T.Buffer((64,), "int32")):
    for i in T.parallel(64):
        best = T.alloc_buffer((1,), "float32")
        idx = T.alloc_buffer((1,), "int32")
        best[0] = T.float32(3.4e38)
        idx[0] = 0
        for j in range(256):
            idx[0] = T.Select(A[i, j] < best[0], j, idx[0])
            best[0] = T.min(best[0], A[i, j])
        O[i] = idx[0]


@T.prim_func
def gather(Tb: T.Buffer((97,), "float32"), I: T.Buffer((4096,), "int32"),
           O: T.Buffer((4096,), "float32")):
    for i in range(4096):
        O[i] = Tb[I[i]]


@T.prim_func
def vector_gather(Tb: T.Buffer((97,), "float32"), I: T.Buffer((64,), "int32"),
                  O: T.Buffer((64,), "float32")):
    for i in T.vectorized(64):
        O[i] = Tb[I[i]]


def _llvm_ir(func: object, target: object) -> str:
    return generate([lower_for(func, target)], CodegenOptions(target=target)).text


def _assembly(func: object, target: object) -> str:
    import llvmlite.binding as llvm

    from backend.runtime.target import optimize

    module = optimize(llvm.parse_assembly(_llvm_ir(func, target)), 3, target=target)
    return str(codegen_target_machine(3, target=target).emit_assembly(module))


def test_functions_that_do_not_ask_for_gathers_get_none() -> None:
    text = _llvm_ir(argmin_rows, AVX512)
    headers = [line for line in text.splitlines() if line.startswith("define")]
    kernels = [h for h in headers if "argmin_rows" in h]
    assert kernels and all("+prefer-no-gather" in h for h in kernels)  # entry and body
    assert "vgather" not in _assembly(argmin_rows, AVX512)


@pytest.mark.parametrize("func", [gather, vector_gather], ids=["versioned", "explicit"])
def test_functions_that_ask_for_gathers_keep_them(func: object) -> None:
    assert intends_gathers(lower_for(func, AVX512))
    assert "prefer-no-gather" not in _llvm_ir(func, AVX512)
    assert "vgather" in _assembly(func, AVX512)


def test_avx2_targets_are_left_as_they_are() -> None:
    assert "prefer-no-gather" not in _llvm_ir(argmin_rows, AVX2)
    assert "target-features" not in _llvm_ir(argmin_rows, AVX2)


def test_the_result_is_unchanged() -> None:
    A = np.random.default_rng(2).standard_normal((64, 256)).astype("float32")
    A[5, 17] = A[5, 200] = A[5].min() - 1  # a tie: the first index wins
    O = np.zeros(64, "int32")
    tvmscript.build(argmin_rows)(A, O)
    np.testing.assert_array_equal(O, A.argmin(axis=1))


def test_parallel_argmin_gives_the_interpreter_result_on_every_run() -> None:
    A = np.random.default_rng(3).standard_normal((64, 256)).astype("float32")
    want = np.zeros(64, "int32")
    tvmscript.build(argmin_rows, target="interp")(A, want)
    kernel = tvmscript.build(argmin_rows, target=AVX2, cache=False)
    for _ in range(5):
        O = np.zeros(64, "int32")
        kernel(A, O)
        np.testing.assert_array_equal(O, want)


@T.prim_func
def conv14(data: T.Buffer((1, 32, 14, 14), "float32"), kernel: T.Buffer((32, 32, 3, 3), "float32"),
           out: T.Buffer((1, 32, 14, 14), "float32")):
    pad = T.alloc_buffer((1, 32, 16, 16))
    for i0, i1, i2, i3 in T.grid(1, 32, 16, 16):
        with T.block("pad"):
            v0, v1, v2, v3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
            pad[v0, v1, v2, v3] = T.if_then_else(
                1 <= v2 and v2 < 15 and 1 <= v3 and v3 < 15,
                data[v0, v1, v2 - 1, v3 - 1], T.float32(0))
    for n, f, y, x, c, ry, rx in T.grid(1, 32, 14, 14, 32, 3, 3):
        with T.block("conv"):
            vn, vf, vy, vx, vc, vry, vrx = T.axis.remap("SSSSRRR", [n, f, y, x, c, ry, rx])
            with T.init():
                out[vn, vf, vy, vx] = T.float32(0)
            out[vn, vf, vy, vx] = out[vn, vf, vy, vx] + pad[vn, vc, vy + vry, vx + vrx] * kernel[vf, vc, vry, vrx]


@T.prim_func
def pool_s2(A: T.Buffer((16, 113, 113), "float32"), O: T.Buffer((16, 56, 56), "float32")):
    for c, h, w in T.grid(16, 56, 56):
        with T.block("pool"):
            vc, vh, vw = T.axis.remap("SSS", [c, h, w])
            O[vc, vh, vw] = T.float32(-3.4e38)
            for rh, rw in T.grid(3, 3):
                O[vc, vh, vw] = T.max(O[vc, vh, vw], A[vc, vh * 2 + rh, vw * 2 + rw])


def test_a_region_walking_its_rows_contiguously_gets_no_gathers() -> None:
    """The interchanged window of a 14 x 14 convolution reads every row contiguously along
    its column loop: gathers there vectorize across rows (168 of them, ~7x slower)."""
    lowered = lower_for(conv14, AVX512)
    assert "tvms.noalias_region" in lowered.script()
    assert not intends_gathers(lowered)
    assert "vgather" not in _assembly(conv14, AVX512)


def test_a_stride_two_window_keeps_its_gathers() -> None:
    # the 3-tap column loop is unrolled whole; the output column loop around it reads
    # every other input column: gathers (or none at all) are what vectorize it
    lowered = lower_for(pool_s2, AVX512)
    if "tvms.noalias_region" not in lowered.script():
        pytest.skip("no no-overlap region in this nest: the policy is not asked")
    assert intends_gathers(lowered)


@pytest.mark.parametrize("target", [AVX2, AVX512], ids=["avx2", "avx512"])
def test_the_convolution_gives_the_interpreters_numbers(target: object) -> None:
    if target.missing_on_host():  # type: ignore[attr-defined]
        pytest.skip("the host cannot run this target's code")
    rng = np.random.default_rng(1)
    data = rng.standard_normal((1, 32, 14, 14)).astype("float32")
    weights = rng.standard_normal((32, 32, 3, 3)).astype("float32")
    want = np.zeros((1, 32, 14, 14), "float32")
    tvmscript.build(conv14, target="interp")(data, weights, want)
    kernel = tvmscript.build(conv14, target=target, cache=False)
    for _ in range(2):
        got = np.zeros_like(want)
        kernel(data, weights, got)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
