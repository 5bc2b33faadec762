"""``unsafe_hide_buffer_access``: drop some of a block's declared read or write regions
(TVM v0.16's UnsafeHideBufferAccess).

The body is unchanged: the block still accesses the buffers, it only stops declaring them.
In TVM the declared regions drive the analyses (dependences, compute_at's regions), which
then ignore those accesses on the user's promise that they do not matter, hence
``unsafe``. This library's analyses infer every block's accesses from its body, so here
only the printed (declared) regions change and no later decision does.
"""

from __future__ import annotations

from collections.abc import Sequence

from irbuilder.ir import Block, rebuild

from .edit import replace_block
from .error import fail
from .state import ScheduleState

__all__ = ["unsafe_hide_buffer_access"]

_NAME = "unsafe_hide_buffer_access"


def unsafe_hide_buffer_access(
    state: ScheduleState, block: Block, buf_type: str, buf_index_array: Sequence[int]
) -> None:
    if buf_type not in ("read", "write"):
        raise fail(
            state,
            _NAME,
            f"the buffer type must be 'read' or 'write', got {buf_type!r}",
            block,
        )
    regions = block.reads if buf_type == "read" else block.writes
    hidden: set[int] = set()
    for position in buf_index_array:
        if not 0 <= position < len(regions):
            raise fail(
                state,
                _NAME,
                f"buffer index {position} is not between 0 and {len(regions) - 1} (block "
                f"{block.name_hint!r} has {len(regions)} {buf_type} regions)",
                block,
            )
        hidden.add(position)
    kept = tuple(r for k, r in enumerate(regions) if k not in hidden)
    field = "reads" if buf_type == "read" else "writes"
    replace_block(state, block, rebuild(block, {field: kept}))
