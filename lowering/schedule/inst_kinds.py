"""The instruction kinds: one per schedule primitive, with TVM v0.16's name, input/attr
layout, purity and printed form (TVM's ``*Traits`` registrations, written anew here).

Layout facts carried over from TVM: random variables and values that may hold them are
*inputs* (``Split``'s inputs are the loop then each factor; ``Fuse``/``Reorder``'s are
the loops; ``Annotate``'s value is an input, its key an attr), everything else is an
*attr*; a buffer is named by its index (``CacheRead``) or by ``(index, read=0/write=1)``
(``ReIndex``, ``TransformLayout``). Printed lines use the schedule method's keyword names
in TVM's order.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .instruction import (
    InstructionKind,
    PythonCall,
    parse_index_map,
    plain,
    register,
)
from .layout import IndexMap

if TYPE_CHECKING:
    from .schedule import Schedule

__all__: list[str] = []

_BUFFER_TYPES = ("read", "write")  # TVM's BufferIndexType: kRead = 0, kWrite = 1

_ANY = None
_LAYOUT: dict[str, tuple[tuple[int, int | None], int]] = {
    # kind: ((fewest inputs, most inputs or _ANY), attrs), as TVM lays the kinds out
    "GetBlock": ((0, 0), 2),  # attrs: name, func_name
    "GetLoops": ((1, 1), 0),
    "GetChildBlocks": ((1, 1), 0),
    "GetProducers": ((1, 1), 0),
    "GetConsumers": ((1, 1), 0),
    "GetOutputBlocks": ((1, 1), 0),
    "SampleCategorical": ((0, 0), 2),  # attrs: candidates, probs
    "SamplePerfectTile": ((1, 1), 2),  # attrs: n, max_innermost_factor
    "SampleComputeLocation": ((1, 1), 0),  # inputs: block; decision: the candidate
    "Split": ((2, _ANY), 2),  # inputs: loop, *factors; attrs: preserve_unit_iters, no-guard
    "Fuse": ((1, _ANY), 1),  # inputs: the loops; attrs: preserve_unit_iters
    "Reorder": ((1, _ANY), 0),
    "AddUnitLoop": ((1, 1), 0),
    "Parallel": ((1, 1), 0),
    "Vectorize": ((1, 1), 0),
    "Unroll": ((1, 1), 0),
    "Bind": ((1, 1), 1),  # attrs: thread_axis
    "ComputeAt": ((2, 2), 2),  # attrs: preserve_unit_loops, index
    "ReverseComputeAt": ((2, 2), 2),
    "ComputeInline": ((1, 1), 0),
    "ReverseComputeInline": ((1, 1), 0),
    "DecomposeReduction": ((2, 2), 0),
    "RFactor": ((1, 1), 1),  # attrs: factor_axis
    "CacheRead": ((2, 2), 2),  # inputs: block, consumer blocks; attrs: index, scope
    "CacheWrite": ((2, 2), 2),
    "CacheInplace": ((1, 1), 2),  # attrs: read buffer index, scope
    "ReindexCacheRead": ((2, 2), 2),  # inputs: block, index map; attrs: index, scope
    "ReindexCacheWrite": ((2, 2), 2),
    "ReIndex": ((1, 1), 2),  # attrs: buffer index, read 0 / write 1
    "SetScope": ((1, 1), 2),  # attrs: buffer index, scope
    "StorageAlign": ((1, 1), 4),  # attrs: buffer index, axis, factor, offset
    # attrs: buffer index, read/write, map, pad value, assume_injective_transform
    "TransformLayout": ((1, 1), 5),
    "SetAxisSeparator": ((1, 1), 3),  # attrs: buffer index, read/write, axis separators
    "TransformBlockLayout": ((1, 1), 1),  # attrs: index map
    "Blockize": ((1, 1), 1),  # attrs: preserve_unit_iters
    "Annotate": ((2, 2), 1),  # inputs: block or loop, value; attrs: key
    "Unannotate": ((1, 1), 1),  # attrs: key
    "EnterPostproc": ((0, 0), 0),
}


def _outs(result: Any) -> list[Any]:
    if result is None:
        return []
    if isinstance(result, list):
        return list(result)
    return [result]


def _kind(
    name: str,
    apply: Callable[[Schedule, list[Any], list[Any], Any], Any],
    as_python: Callable[[list[str], list[Any], list[Any], Any], str],
    *,
    pure: bool = False,
    attrs_as_json: Callable[[list[Any]], list[Any]] | None = None,
    attrs_from_json: Callable[[list[Any]], list[Any]] | None = None,
) -> None:
    register(
        InstructionKind(
            name,
            pure,
            lambda sch, i, a, d: _outs(apply(sch, i, plain(a), d)),
            as_python,
            *_LAYOUT[name],
            attrs_as_json,
            attrs_from_json,
        )
    )


def _call(method: str, outputs: list[str], *args: tuple[str, Any], many: bool = False) -> str:
    """A line calling ``method`` with keyword ``args``; outputs as one value or a list."""
    call = PythonCall(method)
    for name, value in args:
        call.arg(name, value)
    if many:
        call.output_list(outputs)
    elif outputs:
        call.single_output(outputs)
    return call.text()


def _buffer_arg(index: Any, index_type: Any) -> tuple[str, int]:
    """The schedule's ``("read"|"write", index)`` for TVM's two buffer attrs."""
    kind = plain(index_type)
    if kind not in (0, 1):
        raise ValueError(f"buffer index type must be 0 (read) or 1 (write), got {kind!r}")
    return _BUFFER_TYPES[kind], int(plain(index))


def _buffer_text(index: Any, index_type: Any) -> str:
    side, position = _buffer_arg(index, index_type)
    return f'("{side}", {position})'


# -- queries (pure) ---------------------------------------------------------------------
_kind(
    "GetBlock",
    lambda sch, i, a, d: sch.get_block(name=a[0], func_name=a[1]),
    lambda o, i, a, d: _call("get_block", o, ("name", a[0]), ("func_name", a[1])),
    pure=True,
)
_kind(
    "GetLoops",
    lambda sch, i, a, d: sch.get_loops(block=i[0]),
    lambda o, i, a, d: _call("get_loops", o, ("block", i[0]), many=True),
    pure=True,
)
_kind(
    "GetChildBlocks",
    lambda sch, i, a, d: sch.get_child_blocks(i[0]),
    lambda o, i, a, d: _call("get_child_blocks", o, ("", i[0]), many=True),
    pure=True,
)
_kind(
    "GetProducers",
    lambda sch, i, a, d: sch.get_producers(block=i[0]),
    lambda o, i, a, d: _call("get_producers", o, ("block", i[0]), many=True),
    pure=True,
)
_kind(
    "GetConsumers",
    lambda sch, i, a, d: sch.get_consumers(block=i[0]),
    lambda o, i, a, d: _call("get_consumers", o, ("block", i[0]), many=True),
    pure=True,
)
# TVM prints ``block=`` here, which its own ``get_output_blocks(scope_block)`` rejects;
# the method's real keyword is printed so the text replays
_kind(
    "GetOutputBlocks",
    lambda sch, i, a, d: sch.get_output_blocks(scope_block=i[0]),
    lambda o, i, a, d: _call("get_output_blocks", o, ("scope_block", i[0]), many=True),
    pure=True,
)

# -- sampling (pure, with a decision) ---------------------------------------------------


def _print_categorical(o: list[str], i: list[Any], a: list[Any], d: Any) -> str:
    call = PythonCall("sample_categorical").arg("candidates", plain(a[0]))
    # TVM prints probabilities with 17 significant digits and no float marker (``[1]``)
    call.raw("probs", "[" + ", ".join(f"{float(p):.17g}" for p in plain(a[1])) + "]")
    return call.decision(d).single_output(o).text()


_kind(
    "SampleCategorical",
    lambda sch, i, a, d: sch.sample_categorical(
        candidates=a[0], probs=a[1], decision=None if d is None else int(plain(d))
    ),
    _print_categorical,
    pure=True,
)
_kind(
    "SamplePerfectTile",
    lambda sch, i, a, d: sch.sample_perfect_tile(
        loop=i[0], n=a[0], max_innermost_factor=a[1], decision=plain(d)
    ),
    lambda o, i, a, d: PythonCall("sample_perfect_tile")
    .arg("loop", i[0])
    .arg("n", a[0])
    .arg("max_innermost_factor", a[1])
    .decision(d)
    .output_list(o)
    .text(),
    pure=True,
)

# -- loops -------------------------------------------------------------------------------
_kind(
    "Split",
    lambda sch, i, a, d: sch.split(
        loop=i[0], factors=plain(i[1:]), preserve_unit_iters=a[0], disable_predication=a[1]
    ),
    lambda o, i, a, d: _call(
        "split",
        o,
        ("loop", i[0]),
        ("factors", i[1:]),
        ("preserve_unit_iters", bool(plain(a[0]))),
        ("disable_predication", bool(plain(a[1]))),
        many=True,
    ),
)


def _print_fuse(o: list[str], i: list[Any], a: list[Any], d: Any) -> str:
    call = PythonCall("fuse")
    for loop in i:
        call.arg("", loop)
    return call.arg("preserve_unit_iters", bool(plain(a[0]))).single_output(o).text()


def _print_reorder(o: list[str], i: list[Any], a: list[Any], d: Any) -> str:
    call = PythonCall("reorder")
    for loop in i:
        call.arg("", loop)
    return call.text()


_kind("Fuse", lambda sch, i, a, d: sch.fuse(*i, preserve_unit_iters=a[0]), _print_fuse)
_kind("Reorder", lambda sch, i, a, d: sch.reorder(*i), _print_reorder)
_kind(
    "AddUnitLoop",
    lambda sch, i, a, d: sch.add_unit_loop(block_or_loop=i[0]),
    lambda o, i, a, d: _call("add_unit_loop", o, ("block_or_loop", i[0])),
)


def _one_input(name: str, method: str, keyword: str) -> None:
    """A kind with one input (a loop for parallel, vectorize...; a block for
    compute_inline...), passed as ``keyword``, and no attrs."""

    def apply(sch: Schedule, i: list[Any], a: list[Any], d: Any) -> Any:
        return getattr(sch, method)(**{keyword: i[0]})

    def as_python(o: list[str], i: list[Any], a: list[Any], d: Any) -> str:
        return _call(method, o, (keyword, i[0]))

    _kind(name, apply, as_python)


def _loop_only(name: str, method: str) -> None:
    _one_input(name, method, "loop")


def _block_only(name: str, method: str) -> None:
    _one_input(name, method, "block")


def _compute_at(name: str, method: str) -> None:
    def apply(sch: Schedule, i: list[Any], a: list[Any], d: Any) -> Any:
        return getattr(sch, method)(block=i[0], loop=i[1], preserve_unit_loops=a[0], index=a[1])

    def as_python(o: list[str], i: list[Any], a: list[Any], d: Any) -> str:
        return _call(
            method,
            o,
            ("block", i[0]),
            ("loop", i[1]),
            ("preserve_unit_loops", bool(plain(a[0]))),
            ("index", a[1]),
        )

    _kind(name, apply, as_python)


def _cache(name: str, method: str, key: str) -> None:
    def apply(sch: Schedule, i: list[Any], a: list[Any], d: Any) -> Any:
        consumers = list(i[1]) if i[1] else None
        return getattr(sch, method)(
            block=i[0], **{key: a[0]}, storage_scope=a[1], consumer_blocks=consumers
        )

    def as_python(o: list[str], i: list[Any], a: list[Any], d: Any) -> str:
        call = PythonCall(method).arg("block", i[0]).arg(key, a[0]).arg("storage_scope", a[1])
        if i[1]:  # TVM writes consumer blocks only when some were given
            call.arg("consumer_blocks", i[1])
        return call.single_output(o).text()

    _kind(name, apply, as_python)


def _reindex_cache(name: str, method: str, key: str) -> None:
    def apply(sch: Schedule, i: list[Any], a: list[Any], d: Any) -> Any:
        return getattr(sch, method)(block=i[0], **{key: a[0]}, storage_scope=a[1], index_map=i[1])

    def as_python(o: list[str], i: list[Any], a: list[Any], d: Any) -> str:
        call = PythonCall(method).arg("block", i[0]).arg(key, a[0]).arg("storage_scope", a[1])
        return call.arg("index_map", i[1]).single_output(o).text()

    _kind(name, apply, as_python)


_loop_only("Parallel", "parallel")
_loop_only("Vectorize", "vectorize")
_loop_only("Unroll", "unroll")
_kind(
    "Bind",
    lambda sch, i, a, d: sch.bind(loop=i[0], thread_axis=a[0]),
    lambda o, i, a, d: _call("bind", o, ("loop", i[0]), ("thread_axis", a[0])),
)

# -- compute location ----------------------------------------------------------------------
_compute_at("ComputeAt", "compute_at")
_compute_at("ReverseComputeAt", "reverse_compute_at")
_block_only("ComputeInline", "compute_inline")
_block_only("ReverseComputeInline", "reverse_compute_inline")

# -- reductions ----------------------------------------------------------------------------
_kind(
    "DecomposeReduction",
    lambda sch, i, a, d: sch.decompose_reduction(block=i[0], loop=i[1]),
    lambda o, i, a, d: _call("decompose_reduction", o, ("block", i[0]), ("loop", i[1])),
)
_kind(
    "RFactor",
    lambda sch, i, a, d: sch.rfactor(loop=i[0], factor_axis=a[0]),
    lambda o, i, a, d: _call("rfactor", o, ("loop", i[0]), ("factor_axis", a[0])),
)

_kind(
    "SampleComputeLocation",
    lambda sch, i, a, d: sch.sample_compute_location(
        block=i[0], decision=None if d is None else int(plain(d))
    ),
    lambda o, i, a, d: PythonCall("sample_compute_location")
    .arg("block", i[0])
    .decision(d)
    .single_output(o)
    .text(),
    pure=True,
)

# -- caches and layouts --------------------------------------------------------------------
_cache("CacheRead", "cache_read", "read_buffer_index")
_cache("CacheWrite", "cache_write", "write_buffer_index")
_kind(
    "CacheInplace",
    lambda sch, i, a, d: sch.cache_inplace(
        block=i[0], read_buffer_index=a[0], storage_scope=a[1]
    ),
    lambda o, i, a, d: _call(
        "cache_inplace", o, ("block", i[0]), ("read_buffer_index", a[0]),
        ("storage_scope", a[1]), many=True,
    ),
)
_reindex_cache("ReindexCacheRead", "reindex_cache_read", "read_buffer_index")
_reindex_cache("ReindexCacheWrite", "reindex_cache_write", "write_buffer_index")

_kind(
    "ReIndex",
    lambda sch, i, a, d: sch.reindex(block=i[0], buffer=_buffer_arg(a[0], a[1])),
    lambda o, i, a, d: PythonCall("reindex")
    .arg("block", i[0])
    .raw("buffer", _buffer_text(a[0], a[1]))
    .single_output(o)
    .text(),
)
_kind(
    "SetScope",
    lambda sch, i, a, d: sch.set_scope(block=i[0], buffer_index=a[0], storage_scope=a[1]),
    lambda o, i, a, d: _call(
        "set_scope", o, ("block", i[0]), ("buffer_index", a[0]), ("storage_scope", a[1])
    ),
)
_kind(
    "StorageAlign",
    lambda sch, i, a, d: sch.storage_align(
        block=i[0], buffer_index=a[0], axis=a[1], factor=a[2], offset=a[3]
    ),
    lambda o, i, a, d: _call(
        "storage_align",
        o,
        ("block", i[0]),
        ("buffer_index", a[0]),
        ("axis", a[1]),
        ("factor", a[2]),
        ("offset", a[3]),
    ),
)


def _map_to_json(value: Any) -> Any:
    return repr(value) if isinstance(value, IndexMap) else value


def _map_from_json(value: Any) -> Any:
    return parse_index_map(value) if isinstance(value, str) else value


def _layout_as_json(attrs: list[Any]) -> list[Any]:
    # the index maps as their lambda text (TVM stores its own JSON of the map here)
    return [attrs[0], attrs[1], _map_to_json(attrs[2]), _map_to_json(attrs[3]), *attrs[4:]]


def _layout_from_json(attrs: list[Any]) -> list[Any]:
    return [attrs[0], attrs[1], _map_from_json(attrs[2]), _map_from_json(attrs[3]), *attrs[4:]]


def _transform_layout_text(i: list[str], a: list[Any]) -> str:
    call = (
        PythonCall("transform_layout")
        .arg("block", i[0])
        .raw("buffer", _buffer_text(a[0], a[1]))
        .arg("index_map", a[2])
        .arg("pad_value", a[3])
    )
    if bool(plain(a[4])):  # printed when set (the default leaves TVM's short line)
        call.arg("assume_injective_transform", True)
    return call.text()


_kind(
    "TransformLayout",
    lambda sch, i, a, d: sch.transform_layout(
        block=i[0],
        buffer=_buffer_arg(a[0], a[1]),
        index_map=a[2],
        pad_value=a[3],
        assume_injective_transform=bool(plain(a[4])),
    ),
    lambda o, i, a, d: _transform_layout_text(i, a),
    attrs_as_json=_layout_as_json,
    attrs_from_json=_layout_from_json,
)
_kind(
    "SetAxisSeparator",
    lambda sch, i, a, d: sch.set_axis_separator(
        block=i[0], buffer=_buffer_arg(a[0], a[1]), axis_separators=list(plain(a[2]))
    ),
    lambda o, i, a, d: PythonCall("set_axis_separator")
    .arg("block", i[0])
    .raw("buffer", _buffer_text(a[0], a[1]))
    .arg("axis_separators", list(plain(a[2])))
    .text(),
)
_kind(
    "TransformBlockLayout",
    lambda sch, i, a, d: sch.transform_block_layout(block=i[0], index_map=a[0]),
    lambda o, i, a, d: _call("transform_block_layout", o, ("block", i[0]), ("index_map", a[0])),
    attrs_as_json=lambda a: [_map_to_json(a[0])],
    attrs_from_json=lambda a: [_map_from_json(a[0])],
)

# -- blocks and annotations ----------------------------------------------------------------
_kind(
    "Blockize",
    lambda sch, i, a, d: sch.blockize(target=i[0], preserve_unit_iters=a[0]),
    lambda o, i, a, d: _call(
        "blockize", o, ("target", i[0]), ("preserve_unit_iters", bool(plain(a[0])))
    ),
)
_kind(
    "Annotate",
    # the value as recorded: an IR constant stays one (a replay gives the same annotation)
    lambda sch, i, a, d: sch.annotate(block_or_loop=i[0], ann_key=a[0], ann_val=i[1]),
    lambda o, i, a, d: _call(
        "annotate", o, ("block_or_loop", i[0]), ("ann_key", a[0]), ("ann_val", i[1])
    ),
)
_kind(
    "Unannotate",
    lambda sch, i, a, d: sch.unannotate(block_or_loop=i[0], ann_key=a[0]),
    lambda o, i, a, d: _call("unannotate", o, ("block_or_loop", i[0]), ("ann_key", a[0])),
)
_kind(
    "EnterPostproc",
    lambda sch, i, a, d: sch.enter_postproc(),
    lambda o, i, a, d: PythonCall("enter_postproc").text(),
)


from . import inst_kinds_extra  # noqa: E402, F401  (the kinds of schedule_extra.py)
