"""Pinned targets of the code generation tests: each test says which machine it means, so the
suite asserts the same IR on AVX2 and AVX-512 hosts."""

from __future__ import annotations

import pytest

import lowering
from irbuilder.ir import PrimFunc
from lowering.target import Target

AVX2 = Target("llvm -mcpu=znver3")
"""An AVX2 machine (no hardware gathers worth using: no gather fast path)."""
AVX512 = Target("llvm -mcpu=znver4")
"""An AVX-512 machine (the gather fast path runs)."""
BOTH = pytest.mark.parametrize("target", [AVX2, AVX512], ids=["znver3", "znver4"])


def lower_for(func: PrimFunc, target: Target = AVX2, opt_level: int = 3) -> PrimFunc:
    """``func`` lowered for ``target``: exactly what code generation receives."""
    return lowering.lower(func, opt_level=opt_level, target=target)


def needs_host_features(target: Target) -> pytest.MarkDecorator:
    """Skip a test that runs code for ``target`` on a host lacking one of its features."""
    missing = target.missing_on_host()
    return pytest.mark.skipif(
        bool(missing), reason=f"the host lacks {', '.join(missing)} (target {target.mcpu})"
    )


def lower_before_late_stage(func: PrimFunc) -> PrimFunc:
    """``func`` lowered without the late stage's rewrites: the input of a late pass tested on
    its own."""
    late = set(lowering.pipeline.LATE_STAGE) - {"simplify"}
    with lowering.PassContext(disabled_passes=frozenset(late)):
        return lowering.lower(func, target=AVX2)


def optimized_ir(func: PrimFunc, target: Target) -> str:
    """LLVM's optimised IR of ``func`` compiled for ``target`` (nothing is run, so any target
    works on any host)."""
    import llvmlite.binding as llvm

    from backend.codegen import CodegenOptions, generate
    from backend.runtime.target import optimize

    text = generate([lower_for(func, target)], CodegenOptions(target=target)).text
    return str(optimize(llvm.parse_assembly(text), 3, target=target))


def assembly(func: PrimFunc, target: Target) -> str:
    """The assembly of ``func`` compiled for ``target`` (made, not run: any target, any host)."""
    import llvmlite.binding as llvm

    from backend.runtime.target import codegen_target_machine

    module = llvm.parse_assembly(optimized_ir(func, target))
    return str(codegen_target_machine(3, target=target).emit_assembly(module))


def runnable_targets(*targets: str) -> list[object]:
    """``targets`` (target strings, or ``"interp"``) as pytest params, each one whose code
    this host cannot run skipped with the reason (an AVX-512 target on an AVX2 host)."""
    params: list[object] = []
    for target in targets:
        missing = [] if target == "interp" else Target(target).missing_on_host()
        params.append(pytest.param(target, id=target, marks=pytest.mark.skipif(
            bool(missing), reason=f"the host lacks {', '.join(missing)} (target {target})")))
    return params
