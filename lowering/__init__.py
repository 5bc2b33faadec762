"""Lowering: pass infrastructure, analyses, the verifier, IR-to-IR passes, the pipeline.

Every pass is a callable object taking a PrimFunc or an IRModule:
``lowering.lower_blocks(func)``, ``lowering.flatten_buffer(func)``,
``lowering.entry_checks(func)`` (and ``simplify``, ``unroll_loop``,
``vectorize_loop`` from their modules). :func:`lower` runs :func:`default_pipeline`.
"""

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
