"""Lowering: pass infrastructure, the pipeline and the target at the top; the passes in
folders that say when they run (ARCHITECTURE.md, "Layout"):

* ``transforms/``: the main pipeline, target-independent (tensors to buffers, blocks to
  loops, flattening, allocation placement, unrolling, vectorization, simplification);
* ``late/``: the target-dependent late stage (bit-exact loop rewrites for the machine code);
* ``abi/``: the kernel's calling convention in IR (entry checks, outputs, the C entry);
* ``checks/``: the verifier, the race check, bounds checks;
* ``cpu/``: what every CPU build does before the pipeline (legalisation, refusals);
* ``analysis/``, ``arith/``: shared analyses and integer arithmetic;
* ``schedule/``: ``tir.Schedule``.

Every pass is a callable object taking a PrimFunc or an IRModule:
``lowering.lower_blocks(func)``, ``lowering.flatten_buffer(func)``,
``lowering.insert_entry_checks(func)`` (and ``simplify``, ``unroll_loop``, ``vectorize_loop``).
:func:`lower` runs :func:`default_pipeline`.

The names below load their module on first use, so importing one submodule (the printer
uses ``lowering.transforms.declare_buffers``) does not import the whole pipeline.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .abi.entry_checks import insert_entry_checks
    from .checks.verifier import ENTRY_CHECKED_ATTR, Problem, WellFormedError, verify_well_formed
    from .pass_infra import (
        FunctionPass,
        ModulePass,
        Pass,
        PassContext,
        PassInstrument,
        PrintAfterEach,
        Sequential,
        TimePasses,
        function_pass,
        module_pass,
    )
    from .pipeline import PIPELINE_ORDER, default_pipeline, lower
    from .transforms.declare_buffers import declare_buffers
    from .transforms.flatten_buffer import flatten_buffer
    from .transforms.lower_blocks import lower_blocks
    from .transforms.plan_alloc import plan_allocation_location
    from .transforms.simplify import simplify
    from .transforms.unroll import unroll_loop
    from .transforms.vectorize import vectorize_loop

_MODULE_OF = {
    "declare_buffers": "transforms.declare_buffers",
    "insert_entry_checks": "abi.entry_checks",
    "flatten_buffer": "transforms.flatten_buffer",
    "lower_blocks": "transforms.lower_blocks",
    "FunctionPass": "pass_infra",
    "ModulePass": "pass_infra",
    "Pass": "pass_infra",
    "PassContext": "pass_infra",
    "PassInstrument": "pass_infra",
    "PrintAfterEach": "pass_infra",
    "Sequential": "pass_infra",
    "TimePasses": "pass_infra",
    "function_pass": "pass_infra",
    "module_pass": "pass_infra",
    "plan_allocation_location": "transforms.plan_alloc",
    "PIPELINE_ORDER": "pipeline",
    "default_pipeline": "pipeline",
    "lower": "pipeline",
    "simplify": "transforms.simplify",
    "unroll_loop": "transforms.unroll",
    "vectorize_loop": "transforms.vectorize",
    "ENTRY_CHECKED_ATTR": "checks.verifier",
    "Problem": "checks.verifier",
    "WellFormedError": "checks.verifier",
    "verify_well_formed": "checks.verifier",
}


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "ENTRY_CHECKED_ATTR",
    "PIPELINE_ORDER",
    "FunctionPass",
    "ModulePass",
    "Pass",
    "PassContext",
    "PassInstrument",
    "PrintAfterEach",
    "Problem",
    "Sequential",
    "TimePasses",
    "WellFormedError",
    "declare_buffers",
    "default_pipeline",
    "insert_entry_checks",
    "flatten_buffer",
    "function_pass",
    "lower",
    "lower_blocks",
    "module_pass",
    "plan_allocation_location",
    "simplify",
    "unroll_loop",
    "vectorize_loop",
    "verify_well_formed",
]
