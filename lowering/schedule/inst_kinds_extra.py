"""Instruction kinds of the primitives in ``schedule_extra.py`` (TVM v0.16's names and
input/attr layouts, as ``inst_kinds.py`` does for the others)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .instruction import InstructionKind, PythonCall, plain, register

if TYPE_CHECKING:
    from .schedule import Schedule

__all__: list[str] = []


def _outs(result: Any) -> list[Any]:
    if result is None:
        return []
    return list(result) if isinstance(result, list) else [result]


def _kind(
    name: str,
    inputs: tuple[int, int | None],
    attrs: int,
    apply: Callable[[Schedule, list[Any], list[Any]], Any],
    as_python: Callable[[list[str], list[Any], list[Any]], str],
) -> None:
    register(
        InstructionKind(
            name,
            False,  # every kind here changes the function
            lambda sch, i, a, d: _outs(apply(sch, i, plain(a))),
            lambda o, i, a, d: as_python(o, i, a),
            inputs,
            attrs,
        )
    )


# TVM: inputs block and new order, no attrs
_kind(
    "ReorderBlockIterVar",
    (2, 2),
    0,
    lambda sch, i, a: sch.reorder_block_iter_var(block=i[0], new_order=list(plain(i[1]))),
    lambda o, i, a: PythonCall("reorder_block_iter_var")
    .arg("block", i[0])
    .arg("new_order", list(plain(i[1])))
    .text(),
)
# TVM: input block; attrs buffer index (among the writes) and dtype
_kind(
    "UnsafeSetDType",
    (1, 1),
    2,
    lambda sch, i, a: sch.unsafe_set_dtype(block=i[0], buffer_index=a[0], dtype=a[1]),
    lambda o, i, a: PythonCall("unsafe_set_dtype")
    .arg("block", i[0])
    .arg("buffer_index", a[0])
    .arg("dtype", a[1])
    .text(),
)


def _print_merge(o: list[str], i: list[Any], a: list[Any]) -> str:
    call = PythonCall("merge")
    for loop in i:
        call.arg("", loop)
    return call.single_output(o).text()


# TVM: the loops are the inputs, no attrs
_kind("Merge", (1, None), 0, lambda sch, i, a: sch.merge(*i), _print_merge)


def _read_write_at(kind: str, method: str, key: str) -> None:
    # TVM: inputs loop and block; attrs buffer index and storage scope
    _kind(
        kind,
        (2, 2),
        2,
        lambda sch, i, a: getattr(sch, method)(
            loop=i[0], block=i[1], **{key: a[0]}, storage_scope=a[1]
        ),
        lambda o, i, a: PythonCall(method)
        .arg("loop", i[0])
        .arg("block", i[1])
        .arg(key, a[0])
        .arg("storage_scope", a[1])
        .single_output(o)
        .text(),
    )


_read_write_at("ReadAt", "read_at", "read_buffer_index")
_read_write_at("WriteAt", "write_at", "write_buffer_index")

# TVM: inputs block and loop, no attrs
_kind(
    "DecomposePadding",
    (2, 2),
    0,
    lambda sch, i, a: sch.decompose_padding(block=i[0], loop=i[1]),
    lambda o, i, a: PythonCall("decompose_padding")
    .arg("block", i[0])
    .arg("loop", i[1])
    .single_output(o)
    .text(),
)

# TVM: inputs the loop then each factor (None, a value or a sampled ExprRV); attrs
# preserve_unit_iters
_kind(
    "LoopPartition",
    (2, None),
    1,
    lambda sch, i, a: sch.loop_partition(
        loop=i[0], factors=plain(i[1:]), preserve_unit_iters=bool(a[0])
    ),
    lambda o, i, a: PythonCall("loop_partition")
    .arg("loop", i[0])
    .arg("factors", i[1:])
    .arg("preserve_unit_iters", bool(plain(a[0])))
    .output_list(o)
    .text(),
)

# TVM: input block; attrs storage scope and cse_thresh; the stages as a list
_kind(
    "CacheIndex",
    (1, 1),
    2,
    lambda sch, i, a: sch.cache_index(block=i[0], storage_scope=a[0], cse_thresh=a[1]),
    lambda o, i, a: PythonCall("cache_index")
    .arg("block", i[0])
    .arg("storage_scope", a[0])
    .arg("cse_thresh", a[1])
    .output_list(o)
    .text(),
)

# TVM: input block; attr the write buffer index (printed as ``buffer_index``, which the
# method does not take: the keyword the method takes is printed so the text replays)
_kind(
    "RollingBuffer",
    (1, 1),
    1,
    lambda sch, i, a: sch.rolling_buffer(block=i[0], write_buffer_index=a[0]),
    lambda o, i, a: PythonCall("rolling_buffer")
    .arg("block", i[0])
    .arg("write_buffer_index", a[0])
    .text(),
)

# TVM: inputs block, buffer type and the positions; no attrs
_kind(
    "UnsafeHideBufferAccess",
    (3, 3),
    0,
    lambda sch, i, a: sch.unsafe_hide_buffer_access(
        block=i[0], buf_type=i[1], buf_index_array=list(plain(i[2]))
    ),
    lambda o, i, a: PythonCall("unsafe_hide_buffer_access")
    .arg("block", i[0])
    .arg("buf_type", i[1])
    .arg("buf_index_array", list(plain(i[2])))
    .text(),
)
