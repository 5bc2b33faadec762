"""Block builders: ``T.block``, ``T.axis.*``, ``T.reads``/``T.writes``, ``T.where``,
``T.init`` and ``T.block_attr``.

``T.axis.spatial(dom, binding)`` adds a block iter var over ``dom`` (an extent,
a ``(min, max)`` pair or a ``Range``) bound to ``binding`` and returns the new
var. Reads and writes that are not declared are inferred when the block closes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..builder import IRBuilderError
from ..frames import BlockFrame, BlockInitFrame, ForFrame
from ..ir import (
    Buffer,
    BufferLoad,
    BufferRegion,
    DataType,
    ExprLike,
    IterKind,
    IterVar,
    PrimExpr,
    Range,
    Var,
    const,
    convert,
)
from ._common import DTypeArg, as_expr, builder, index_expr, innermost_block, span, to_dtype

__all__ = ["axis", "block", "block_attr", "init", "reads", "where", "writes"]


def block(name: str = "", no_realize: bool = False) -> BlockFrame:
    """A block frame; iter vars come from the ``T.axis`` calls inside it."""
    builder("T.block")
    if not isinstance(name, str):
        raise TypeError(f"T.block: name must be a string, got {type(name).__name__}")
    return BlockFrame(name, no_realize)


def _typed(value: Any, target: DataType, what: str) -> PrimExpr:
    if isinstance(value, int) and not isinstance(value, bool):
        return const(value, target)
    return index_expr(value, what).astype(target)


def _domain(dom: Any, dtype: DTypeArg, what: str) -> Range:
    if isinstance(dom, Range):
        return dom
    target = to_dtype(dtype)
    if isinstance(dom, (tuple, list)):
        if len(dom) != 2:
            raise TypeError(f"{what}: a domain pair must be (min, max), got {len(dom)} items")
        begin = _typed(dom[0], target, what)
        end = _typed(dom[1], target, what)
        return Range(begin, end - begin)
    # A constant zero of the target type, not a Cast of an int32 zero (TVM's IntImm).
    return Range(const(0, target), _typed(dom, target, what))


def _infer_dtype(dom: Any, dtype: DTypeArg | None) -> DTypeArg:
    # Without an explicit dtype the iter var takes the type of its domain (TVM prints an
    # int64 axis as ``T.axis.spatial(T.int64(16), i0)``), int32 for plain numbers.
    if dtype is not None:
        return dtype
    if isinstance(dom, Range):
        return dom.extent.dtype
    parts = dom if isinstance(dom, (tuple, list)) else (dom,)
    for part in parts:
        if isinstance(part, PrimExpr) and part.dtype.is_int and part.dtype.bits == 64:
            return part.dtype
    return "int32"


def _add_axis(
    kind: IterKind, what: str, dom: Any, binding: ExprLike, dtype: DTypeArg | None
) -> Var:
    frame = innermost_block(what)
    dtype = _infer_dtype(dom, dtype)
    rng = _domain(dom, dtype, what)
    value = index_expr(binding, what)
    target = to_dtype(dtype)
    if value.dtype != target:
        value = value.astype(target)
    var = Var("v", target)
    frame.iter_vars.append(IterVar(var, rng, kind, span=span()))
    frame.iter_values.append(value)
    return var


def _loop_domain(var: PrimExpr, what: str) -> Range:
    b = builder(what)
    for frame in reversed(b.frames):
        if isinstance(frame, ForFrame):
            for loop in frame.loops:
                if loop.var is var:
                    return Range(loop.min, loop.extent)
    raise IRBuilderError(f"{what}: {var!r} is not the var of an enclosing loop")


class axis:
    """``T.axis``: block iter var constructors (``spatial``/``S``, ``reduce``/``R``...)."""

    @staticmethod
    def spatial(dom: Any, binding: ExprLike, dtype: DTypeArg | None = None) -> Var:
        """A spatial (data-parallel) block iter var."""
        return _add_axis(IterKind.SPATIAL, "T.axis.spatial", dom, binding, dtype)

    @staticmethod
    def reduce(dom: Any, binding: ExprLike, dtype: DTypeArg | None = None) -> Var:
        """A reduction block iter var."""
        return _add_axis(IterKind.REDUCE, "T.axis.reduce", dom, binding, dtype)

    @staticmethod
    def scan(dom: Any, binding: ExprLike, dtype: DTypeArg | None = None) -> Var:
        """A scan (ordered) block iter var."""
        return _add_axis(IterKind.SCAN, "T.axis.scan", dom, binding, dtype)

    @staticmethod
    def opaque(dom: Any, binding: ExprLike, dtype: DTypeArg | None = None) -> Var:
        """An opaque block iter var."""
        return _add_axis(IterKind.OPAQUE, "T.axis.opaque", dom, binding, dtype)

    S = spatial
    R = reduce
    C = scan
    O = opaque  # noqa: E741

    @staticmethod
    def remap(kinds: str, bindings: Sequence[PrimExpr], dtype: DTypeArg | None = None) -> Any:
        """One iter var per kind letter (``"SSR"``), each over its loop var's domain.

        Returns the list of new vars (a single var when there is one kind).
        """
        if not isinstance(kinds, str) or len(kinds) != len(bindings):
            raise TypeError(
                f"T.axis.remap: {len(bindings)} bindings for kinds {kinds!r}; "
                "give one letter (S, R, C, O) per loop var"
            )
        table = {
            "S": IterKind.SPATIAL,
            "R": IterKind.REDUCE,
            "C": IterKind.SCAN,
            "O": IterKind.OPAQUE,
        }
        result: list[Var] = []
        for letter, binding in zip(kinds, bindings):
            if letter not in table:
                raise ValueError(f"T.axis.remap: unknown iter kind {letter!r} in {kinds!r}")
            dom = _loop_domain(binding, "T.axis.remap")
            result.append(_add_axis(table[letter], "T.axis.remap", dom, binding, dtype))
        return result[0] if len(result) == 1 else result


def _regions(values: Sequence[Any], what: str) -> tuple[BufferRegion, ...]:
    out: list[BufferRegion] = []
    for value in values:
        if isinstance(value, (list, tuple)):
            out.extend(_regions(value, what))
        elif isinstance(value, BufferRegion):
            out.append(value)
        elif isinstance(value, Buffer):
            out.append(value.full_region())
        elif isinstance(value, BufferLoad):
            out.append(
                # The unit extent has the index's type (int64 indices: an int64 1).
                BufferRegion(value.buffer, tuple(Range(i, _unit(i)) for i in value.indices))
            )
        else:
            raise TypeError(
                f"{what}: expected buffer regions such as A[i, 0:4], got {type(value).__name__}"
            )
    return tuple(out)


def _unit(index: PrimExpr) -> PrimExpr:
    dtype = index.dtype
    return const(1, dtype) if dtype.is_int and dtype.lanes == 1 else convert(1)


def reads(*regions: Any) -> None:
    """Declare the block's read regions (otherwise they are inferred)."""
    frame = innermost_block("T.reads")
    if frame.reads is not None:
        raise IRBuilderError(f"T.reads given twice in T.block {frame.name!r}")
    frame.reads = _regions(regions, "T.reads")


def writes(*regions: Any) -> None:
    """Declare the block's write regions (otherwise they are inferred)."""
    frame = innermost_block("T.writes")
    if frame.writes is not None:
        raise IRBuilderError(f"T.writes given twice in T.block {frame.name!r}")
    frame.writes = _regions(regions, "T.writes")


def where(predicate: ExprLike) -> None:
    """The block runs only where ``predicate`` holds (its BlockRealize predicate)."""
    frame = innermost_block("T.where")
    expr = as_expr(predicate, "T.where")
    if not expr.dtype.is_bool:
        raise TypeError(f"T.where: predicate must be bool, got {expr.dtype}")
    frame.predicate = expr


def init() -> BlockInitFrame:
    """The block's init frame: runs before the first reduction iteration."""
    builder("T.init")
    return BlockInitFrame()


def block_attr(attrs: Mapping[str, Any]) -> None:
    """Merge ``attrs`` into the block's annotations."""
    frame = innermost_block("T.block_attr")
    if not isinstance(attrs, Mapping):
        raise TypeError(f"T.block_attr: expected a dict, got {type(attrs).__name__}")
    frame.annotations.update({str(k): v for k, v in attrs.items()})
