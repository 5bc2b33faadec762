"""Loop builders: ``T.serial``, ``T.parallel``, ``T.vectorized``, ``T.unroll``,
``T.thread_binding`` and ``T.grid``.

``T.serial(n)`` loops over ``[0, n)``; ``T.serial(a, b)`` over ``[a, b)``. The
loop var takes the wider integer type of the bounds (int64 if either is).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..frames import ForFrame, LoopSpec
from ..ir import (
    ExprLike,
    ForKind,
    IntImm,
    IterKind,
    IterVar,
    PrimExpr,
    Range,
    Var,
    binary_dtype,
    const,
)
from ._common import builder, index_expr

__all__ = ["grid", "parallel", "serial", "thread_binding", "unroll", "vectorized"]


def _bounds(start: ExprLike, stop: ExprLike | None, what: str) -> tuple[PrimExpr, PrimExpr]:
    if stop is None:
        # The implicit start is a constant of the extent's type (TVM: T.serial(T.int64(4))
        # starts at IntImm(int64, 0), not at a cast of an int32 zero).
        end = index_expr(start, what)
        return const(0, end.dtype), end
    else:
        begin, end = index_expr(start, what), index_expr(stop, what)
    dtype = binary_dtype(begin.dtype, end.dtype)
    begin, end = begin.astype(dtype), end.astype(dtype)
    # TVM's ``stop - start`` folds a zero start away (``T.serial(0, n)`` has extent ``n``).
    zero_start = isinstance(begin, IntImm) and begin.value == 0
    extent = end if stop is None or zero_start else end - begin
    return begin, extent


def _loop(
    kind: ForKind,
    what: str,
    start: ExprLike,
    stop: ExprLike | None,
    annotations: Mapping[str, Any] | None,
    thread: str | None = None,
) -> ForFrame:
    builder(what)
    begin, extent = _bounds(start, stop, what)
    var = Var("i", begin.dtype)
    binding = None
    if thread is not None:
        binding = IterVar(Var(thread, begin.dtype), Range(begin, extent), IterKind.THREAD, thread)
    spec = LoopSpec(var, begin, extent, kind, binding, dict(annotations or {}))
    return ForFrame(what, [spec], as_list=False)


def serial(
    start: ExprLike, stop: ExprLike | None = None, *, annotations: Mapping[str, Any] | None = None
) -> ForFrame:
    """A serial loop frame; ``with T.serial(n) as i:``."""
    return _loop(ForKind.SERIAL, "T.serial", start, stop, annotations)


def parallel(
    start: ExprLike, stop: ExprLike | None = None, *, annotations: Mapping[str, Any] | None = None
) -> ForFrame:
    """A loop whose iterations run in parallel on all cores."""
    return _loop(ForKind.PARALLEL, "T.parallel", start, stop, annotations)


def vectorized(
    start: ExprLike, stop: ExprLike | None = None, *, annotations: Mapping[str, Any] | None = None
) -> ForFrame:
    """A loop to be turned into vector instructions."""
    return _loop(ForKind.VECTORIZED, "T.vectorized", start, stop, annotations)


def unroll(
    start: ExprLike, stop: ExprLike | None = None, *, annotations: Mapping[str, Any] | None = None
) -> ForFrame:
    """A loop to be fully unrolled."""
    return _loop(ForKind.UNROLLED, "T.unroll", start, stop, annotations)


def thread_binding(
    start: ExprLike,
    stop: ExprLike | str | None = None,
    thread: str | None = None,
    *,
    annotations: Mapping[str, Any] | None = None,
) -> ForFrame:
    """A loop bound to a thread axis: ``T.thread_binding(8, thread="threadIdx.x")``."""
    if isinstance(stop, str):  # T.thread_binding(8, "threadIdx.x")
        stop, thread = None, stop
    if not thread:
        raise TypeError("T.thread_binding needs a thread tag, e.g. thread='threadIdx.x'")
    return _loop(ForKind.THREAD_BINDING, "T.thread_binding", start, stop, annotations, thread)


def grid(*extents: ExprLike) -> ForFrame:
    """Nested serial loops over ``[0, e)`` for each extent; yields the list of loop vars
    (the single var for one extent, as TVM's frame does)."""
    builder("T.grid")
    if not extents:
        raise TypeError("T.grid needs at least one extent")
    specs = []
    for extent in extents:
        begin, ext = _bounds(extent, None, "T.grid")
        specs.append(LoopSpec(Var("i", begin.dtype), begin, ext, ForKind.SERIAL))
    return ForFrame("T.grid", specs, as_list=len(specs) > 1)
