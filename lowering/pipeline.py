"""The default lowering pipeline and :func:`lower`.

Order (passes above the context's ``opt_level`` are skipped)::

    tensor_fusion           inline single-use elementwise tensors (opt_level 2)
    bufferize               tensors to buffers, returned tensors to output params
    lower_blocks            blocks, init, predicates, alloc/match buffers, Reduce
    plan_allocation_location
                            every allocation at the LCA of its uses (TVM's rule): a
                            buffer used only in a T.parallel body is allocated in it
    simplify                bindings substituted by lower_blocks become simpler
    flatten_buffer          1-d accesses through flat DeclBuffer aliases
    hoist_allocations       loop-invariant allocations out of serial loops (opt_level 1)
    memory_reuse            dead allocations' memory reused by later ones (opt_level 1)
    unroll_loop             T.unroll loops (and small constant loops)
    simplify                fold the unrolled constants
    vectorize_loop          T.vectorized loops become Ramp/Broadcast code
    simplify                clean the vector index arithmetic
    entry_checks            argument checks, data/shape bindings (always last)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from irbuilder.ir import IRModule, PrimFunc

from .bufferize import bufferize
from .entry_checks import entry_checks
from .flatten_buffer import flatten_buffer
from .hoist_alloc import hoist_allocations
from .lower_blocks import lower_blocks
from .memory_reuse import memory_reuse
from .pass_infra import Pass, PassContext, PassInstrument, Sequential
from .plan_alloc import plan_allocation_location
from .simplify import simplify
from .tensor_fusion import tensor_fusion
from .unroll import unroll_loop
from .vectorize import vectorize_loop
from .verifier import verify_well_formed

__all__ = ["PIPELINE_ORDER", "default_pipeline", "lower"]

PIPELINE_ORDER: tuple[str, ...] = (
    "tensor_fusion",
    "bufferize",
    "lower_blocks",
    "plan_allocation_location",
    "simplify",
    "flatten_buffer",
    "hoist_allocations",
    "memory_reuse",
    "unroll_loop",
    "simplify",
    "vectorize_loop",
    "simplify",
    "entry_checks",
)
"""Names of the passes of :func:`default_pipeline`, in order."""


def default_pipeline(opt_level: int = 3) -> list[Pass]:
    """The passes of :data:`PIPELINE_ORDER` whose own opt_level is at most ``opt_level``."""
    by_name: dict[str, Pass] = {
        "tensor_fusion": tensor_fusion,
        "bufferize": bufferize,
        "hoist_allocations": hoist_allocations,
        "memory_reuse": memory_reuse,
        "lower_blocks": lower_blocks,
        "plan_allocation_location": plan_allocation_location,
        "simplify": simplify,
        "flatten_buffer": flatten_buffer,
        "unroll_loop": unroll_loop,
        "vectorize_loop": vectorize_loop,
        "entry_checks": entry_checks,
    }
    return [by_name[name] for name in PIPELINE_ORDER if by_name[name].opt_level <= opt_level]


class _VerifyEach:
    """The verifier of one :func:`lower` run: 1-d accesses required once flattened."""

    def __init__(self) -> None:
        self.flattened = False

    def __call__(self, func: PrimFunc) -> None:
        pass_name = PassContext.current().current_pass or None
        if pass_name == "flatten_buffer":
            self.flattened = True
        verify_well_formed(func, lowered=self.flattened, pass_name=pass_name)


_IR = TypeVar("_IR", PrimFunc, IRModule)


def lower(
    ir: _IR,
    opt_level: int = 3,
    verify_each: bool = False,
    instruments: Sequence[PassInstrument] = (),
) -> _IR:
    """Run :func:`default_pipeline` on a PrimFunc or IRModule; returns the same kind.

    ``disabled_passes`` and ``config`` are inherited from the active PassContext.
    With ``verify_each`` the input and the output of every pass are verified
    (1-d accesses required from ``flatten_buffer`` on), and the result with
    ``lowered=True``.
    """
    outer = PassContext.current()
    ctx = PassContext(
        opt_level=opt_level,
        disabled_passes=outer.disabled_passes,
        config=outer.config,
        instruments=tuple(instruments),
        verify_each=verify_each,
        verifier=_VerifyEach(),
    )
    funcs = [ir] if isinstance(ir, PrimFunc) else [f for _, f in ir.items()]
    if verify_each:
        for func in funcs:
            verify_well_formed(func, pass_name="<input>")
    with ctx:
        result = Sequential(default_pipeline(opt_level), "default_pipeline")(ir)
    if verify_each:
        out = [result] if isinstance(result, PrimFunc) else [f for _, f in result.items()]
        for func in out:
            verify_well_formed(func, lowered=True, pass_name="default_pipeline")
    return result
