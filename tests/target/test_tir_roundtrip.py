"""``get_source("tir")`` is exactly what code generation receives: for every suite kernel it
re-parses to an equal function, which compiles to the same machine code."""

from __future__ import annotations

import sys
from pathlib import Path

import llvmlite.binding as llvm
import pytest

import lowering
import tvmscript
from backend.codegen import CodegenOptions, generate
from backend.runtime.target import codegen_target_machine, optimize
from irbuilder.ir import PrimFunc, assert_structural_equal
from tvmscript import Target

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from benchmarks.kernels import KERNELS
from benchmarks.user_kernels import USER_KERNELS

SUITE = {**KERNELS, **{name: kernel for name, (kernel, _) in USER_KERNELS.items()}}
"""The suite's kernels and its user-style rows (blocks with T.init, alloc_buffer, T.compute)."""

TARGETS = [Target("llvm -mcpu=znver3"), Target("llvm -mcpu=skylake-avx512")]


def _machine_code(func: PrimFunc, target: Target) -> str:
    text = generate([func], CodegenOptions(target=target)).text
    module = optimize(llvm.parse_assembly(text), 3, target=target)
    return str(codegen_target_machine(3, target=target).emit_assembly(module))


@pytest.mark.parametrize("target", TARGETS, ids=lambda t: t.mcpu)
@pytest.mark.parametrize("name", sorted(SUITE))
def test_lowered_tir_reparses_to_the_same_function_and_code(name: str, target: Target) -> None:
    lowered = lowering.lower(SUITE[name], target=target)
    reparsed = tvmscript.from_source(lowered.script())
    assert_structural_equal(reparsed, lowered)
    assert _machine_code(reparsed, target) == _machine_code(lowered, target)


def test_a_built_kernels_tir_is_what_it_compiled() -> None:
    target = TARGETS[0]
    kernel = tvmscript.build(KERNELS["softmax"], target=target)
    reparsed = tvmscript.from_source(kernel.get_source("tir"))
    assert kernel.lowered is not None
    assert_structural_equal(reparsed, kernel.lowered)
