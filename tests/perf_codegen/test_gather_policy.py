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
