"""What every CPU build (native and interpreter) does to a function before lowering:
bfloat16 legalised to uint16 storage and float32 arithmetic, thread-bound loops made serial
(with their comm_reducer allreduces), then the refusal of constructs without CPU meaning."""

from __future__ import annotations

from irbuilder.ir import PrimFunc

from .cpu_support import check_cpu_support
from .legalize_bf16 import legalize_bfloat16
from .thread_allreduce import lower_thread_allreduce

__all__ = ["prepare_for_cpu"]


def prepare_for_cpu(func: PrimFunc) -> PrimFunc:
    """``func`` ready for the CPU pipeline, or :class:`UnsupportedConstructError`."""
    prepared = lower_thread_allreduce(legalize_bfloat16(func))
    check_cpu_support(prepared)
    return prepared
