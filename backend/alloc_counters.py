"""The names of the heap-allocation counters a kernel built with ``count_allocations``
updates: i64 globals the code generator declares and a build binds to its own array (so
that a build served from the disk cache binds them without importing code generation)."""

from __future__ import annotations

__all__ = ["COUNTER_NAMES"]

COUNTER_NAMES = (
    "tvms_cg_live_allocs",
    "tvms_cg_total_allocs",
    "tvms_cg_live_bytes",
    "tvms_cg_total_bytes",
    "tvms_cg_peak_bytes",
    "tvms_cg_peak_allocs",
)
"""External i64 globals updated by counted heap allocations, in this order."""
