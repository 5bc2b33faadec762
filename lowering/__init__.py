"""Lowering: pass infrastructure, analyses, the verifier, IR-to-IR passes, the pipeline.

Every pass is a callable object taking a PrimFunc or an IRModule:
``lowering.lower_blocks(func)``, ``lowering.flatten_buffer(func)``,
``lowering.entry_checks(func)`` (and ``simplify``, ``unroll_loop``,
``vectorize_loop`` from their modules). :func:`lower` runs :func:`default_pipeline`.

The names below load their module on first use, so importing one submodule (the printer
uses ``lowering.declare_buffers``) does not import the whole pipeline.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .declare_buffers import declare_buffers
    from .entry_checks import entry_checks
    from .flatten_buffer import flatten_buffer
    from .lower_blocks import lower_blocks
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
    from .plan_alloc import plan_allocation_location
    from .simplify import simplify
    from .unroll import unroll_loop
    from .vectorize import vectorize_loop
    from .verifier import ENTRY_CHECKED_ATTR, Problem, WellFormedError, verify_well_formed

_MODULE_OF = {
    "declare_buffers": "declare_buffers",
    "entry_checks": "entry_checks",
    "flatten_buffer": "flatten_buffer",
    "lower_blocks": "lower_blocks",
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
    "plan_allocation_location": "plan_alloc",
    "PIPELINE_ORDER": "pipeline",
    "default_pipeline": "pipeline",
    "lower": "pipeline",
    "simplify": "simplify",
    "unroll_loop": "unroll",
    "vectorize_loop": "vectorize",
    "ENTRY_CHECKED_ATTR": "verifier",
    "Problem": "verifier",
    "WellFormedError": "verifier",
    "verify_well_formed": "verifier",
}


class _Package(types.ModuleType):
    """Keeps a pass under its name when the submodule of the same name is imported.

    Importing ``lowering.simplify`` sets the package attribute ``simplify`` to the module;
    the pass (what ``from lowering import simplify`` has always given) keeps the name, and
    the module stays reachable through ``sys.modules``.
    """

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, types.ModuleType) and _MODULE_OF.get(name) == name:
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


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
    "entry_checks",
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
