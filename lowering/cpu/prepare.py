"""What every CPU build (native and interpreter) does to a function before lowering:
variables bound again renamed (one definition each), vector-typed buffer parameters taken as
arrays of their elements (the lanes a last dimension), bfloat16 and float8 legalised to
integer storage and float32 arithmetic, the thread-bound loops around comm_reducer
allreduces made serial, virtual threads made serial loops, selects guarding a memory access
made ``if_then_else`` (TVM's RewriteUnsafeSelect), then the refusal of constructs without
CPU meaning."""

from __future__ import annotations

from irbuilder.ir import PrimFunc

from .legalize_bf16 import legalize_bfloat16, legalize_type
from .legalize_fp8 import E4M3, E5M2
from .single_definitions import rename_rebindings
from .support import check_cpu_support
from .thread_allreduce import lower_thread_allreduce
from .unsafe_select import rewrite_unsafe_selects
from .vector_params import lanes_as_last_dimension
from .virtual_threads import serialize_virtual_threads

__all__ = ["prepare_for_cpu"]


def prepare_for_cpu(func: PrimFunc) -> PrimFunc:
    """``func`` ready for the CPU pipeline, or :class:`UnsupportedConstructError`."""
    single = lanes_as_last_dimension(rename_rebindings(func))
    legal = legalize_type(legalize_type(legalize_bfloat16(single), E4M3), E5M2)
    prepared = rewrite_unsafe_selects(serialize_virtual_threads(lower_thread_allreduce(legal)))
    check_cpu_support(prepared)
    return prepared
