"""What the schedule records for each primitive: TVM's kind name for each method, and
buffer arguments in the form TVM's trace keeps them (an index, or an index with read/write).

TVM's Python front end turns a buffer given by name or object into its position among the
block's reads or writes before the call is traced, so a trace names buffers by position
only; this module does the same ahead of each primitive (the primitive itself still reports
a buffer it cannot find).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from irbuilder.ir import Block, Buffer, BufferRegion

__all__ = ["KIND_OF", "buffer_slot", "region_position"]

KIND_OF: dict[str, str] = {
    "get_block": "GetBlock",
    "get_loops": "GetLoops",
    "get_child_blocks": "GetChildBlocks",
    "get_producers": "GetProducers",
    "get_consumers": "GetConsumers",
    "get_output_blocks": "GetOutputBlocks",
    "split": "Split",
    "fuse": "Fuse",
    "reorder": "Reorder",
    "add_unit_loop": "AddUnitLoop",
    "parallel": "Parallel",
    "vectorize": "Vectorize",
    "unroll": "Unroll",
    "bind": "Bind",
    "compute_at": "ComputeAt",
    "reverse_compute_at": "ReverseComputeAt",
    "compute_inline": "ComputeInline",
    "reverse_compute_inline": "ReverseComputeInline",
    "decompose_reduction": "DecomposeReduction",
    "rfactor": "RFactor",
    "cache_read": "CacheRead",
    "cache_write": "CacheWrite",
    "cache_inplace": "CacheInplace",
    "reindex_cache_read": "ReindexCacheRead",
    "reindex_cache_write": "ReindexCacheWrite",
    "reindex": "ReIndex",
    "set_scope": "SetScope",
    "transform_layout": "TransformLayout",
    "transform_block_layout": "TransformBlockLayout",
    "storage_align": "StorageAlign",
    "set_axis_separator": "SetAxisSeparator",
    "blockize": "Blockize",
    "annotate": "Annotate",
    "unannotate": "Unannotate",
    "sample_perfect_tile": "SamplePerfectTile",
    "sample_categorical": "SampleCategorical",
    "sample_compute_location": "SampleComputeLocation",
    "enter_postproc": "EnterPostproc",
}
"""Schedule method -> TVM v0.16 instruction kind name."""


def _matches(region: BufferRegion, arg: str | Buffer) -> bool:
    return region.buffer.name == arg if isinstance(arg, str) else region.buffer is arg


def region_position(regions: Sequence[BufferRegion], arg: Any) -> Any:
    """The position of the buffer ``arg`` names among ``regions`` (an index is kept)."""
    if isinstance(arg, (str, Buffer)):
        for k, region in enumerate(regions):
            if _matches(region, arg):
                return k
    return arg


def buffer_slot(block: Block, arg: Any) -> tuple[Any, int]:
    """``(index, 0 for a read / 1 for a write)``: TVM's ``buffer_index`` and
    ``buffer_index_type`` attrs for ``("read"|"write", index)``, a write index, or a buffer
    named or given (its last place among reads then writes: a buffer both read and
    written counts as written, as ``reindex`` resolves it)."""
    if isinstance(arg, tuple) and len(arg) == 2 and arg[0] in ("read", "write"):
        return arg[1], 0 if arg[0] == "read" else 1
    if isinstance(arg, int) and not isinstance(arg, bool):
        return arg, 1
    found: tuple[Any, int] = (arg, 1)
    if isinstance(arg, (str, Buffer)):
        for kind, regions in ((0, block.reads), (1, block.writes)):
            for k, region in enumerate(regions):
                if _matches(region, arg):
                    found = (k, kind)
    return found
