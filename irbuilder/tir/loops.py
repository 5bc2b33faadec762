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
    Add,
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
    structural_equal,
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
    if stop is None or zero_start:
        extent = end
    elif isinstance(end, Add) and structural_equal(end.a, begin):
        # ``start + e``, how the printer writes a loop from a nonzero start: the extent is
        # ``e`` itself, so a printed loop parses back to the same node (``(1 + (m - 2)) - 1``
        # would be the same value in another form)
        extent = end.b
    else:
        extent = end - begin
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
    """A sequential loop (``range(a, b)`` in a kernel means the same).

    Parameters
    ----------
    start : int or PrimExpr
        The first value, or the extent when ``stop`` is not given (the loop then runs over
        ``[0, start)``).
    stop : int or PrimExpr, optional
        One past the last value. The loop variable takes the wider integer type of the
        bounds (``int64`` if either is).
    annotations : dict, optional
        Key/value pairs recorded on the ``For`` node.

    Returns
    -------
    ForFrame
        ``for i in T.serial(...)`` in a kernel; ``with T.serial(...) as i`` in an IRBuilder.

    Examples
    --------
    >>> @T.prim_func
    ... def iota(A: T.Buffer((4,), "int32")):
    ...     for i in T.serial(1, 4):
    ...         A[i] = i * 10
    >>> a = np.zeros(4, dtype="int32"); tvmscript.build(iota)(a); print(a)
    [ 0 10 20 30]
    """
    return _loop(ForKind.SERIAL, "T.serial", start, stop, annotations)


def parallel(
    start: ExprLike, stop: ExprLike | None = None, *, annotations: Mapping[str, Any] | None = None
) -> ForFrame:
    """A loop whose iterations run in parallel on the thread pool (all cores).

    The iterations must be independent; the race check reports conflicting accesses.

    Parameters
    ----------
    start : int or PrimExpr
        The first value, or the extent when ``stop`` is not given (the loop then runs over
        ``[0, start)``).
    stop : int or PrimExpr, optional
        One past the last value. The loop variable takes the wider integer type of the
        bounds (``int64`` if either is).
    annotations : dict, optional
        Key/value pairs recorded on the ``For`` node.

    Returns
    -------
    ForFrame
        ``for i in T.parallel(...)`` in a kernel; ``with T.parallel(...) as i`` in an IRBuilder.

    Examples
    --------
    >>> @T.prim_func
    ... def square(A: T.Buffer((8,), "float32")):
    ...     for i in T.parallel(8):
    ...         A[i] = A[i] * A[i]
    >>> a = np.full(8, 3, dtype="float32"); tvmscript.build(square)(a); print(a[:3])
    [9. 9. 9.]
    """
    return _loop(ForKind.PARALLEL, "T.parallel", start, stop, annotations)


def vectorized(
    start: ExprLike, stop: ExprLike | None = None, *, annotations: Mapping[str, Any] | None = None
) -> ForFrame:
    """A loop turned into vector instructions; it computes what the serial loop computes.

    Parameters
    ----------
    start : int or PrimExpr
        The first value, or the extent when ``stop`` is not given (the loop then runs over
        ``[0, start)``).
    stop : int or PrimExpr, optional
        One past the last value. The loop variable takes the wider integer type of the
        bounds (``int64`` if either is).
    annotations : dict, optional
        Key/value pairs recorded on the ``For`` node.

    Returns
    -------
    ForFrame
        ``for i in T.vectorized(...)`` in a kernel; ``with T.vectorized(...) as i`` in an IRBuilder.

    Examples
    --------
    >>> @T.prim_func
    ... def inc(A: T.Buffer((16,), "float32")):
    ...     for i in T.vectorized(16):
    ...         A[i] = A[i] + T.float32(1)
    >>> a = np.zeros(16, dtype="float32"); tvmscript.build(inc)(a); print(a[:3])
    [1. 1. 1.]
    """
    return _loop(ForKind.VECTORIZED, "T.vectorized", start, stop, annotations)


def unroll(
    start: ExprLike, stop: ExprLike | None = None, *, annotations: Mapping[str, Any] | None = None
) -> ForFrame:
    """A loop unrolled into copies of its body (constant extents up to 64; longer or symbolic
    ones keep a loop with an unroll hint); it computes what the serial loop computes.

    Parameters
    ----------
    start : int or PrimExpr
        The first value, or the extent when ``stop`` is not given (the loop then runs over
        ``[0, start)``).
    stop : int or PrimExpr, optional
        One past the last value. The loop variable takes the wider integer type of the
        bounds (``int64`` if either is).
    annotations : dict, optional
        Key/value pairs recorded on the ``For`` node.

    Returns
    -------
    ForFrame
        ``for i in T.unroll(...)`` in a kernel; ``with T.unroll(...) as i`` in an IRBuilder.

    Examples
    --------
    >>> @T.prim_func
    ... def rev(A: T.Buffer((3,), "int32"), B: T.Buffer((3,), "int32")):
    ...     for i in T.unroll(3):
    ...         B[i] = A[2 - i]
    >>> b = np.zeros(3, dtype="int32"); tvmscript.build(rev)(np.arange(3, dtype="int32"), b)
    >>> print(b)
    [2 1 0]
    """
    return _loop(ForKind.UNROLLED, "T.unroll", start, stop, annotations)


def thread_binding(
    start: ExprLike,
    stop: ExprLike | str | None = None,
    thread: str | None = None,
    *,
    annotations: Mapping[str, Any] | None = None,
) -> ForFrame:
    """A loop bound to a GPU thread axis: ``T.thread_binding(8, thread="threadIdx.x")``.

    It parses, prints and compares; the CPU build refuses it, except for the thread loops
    around a ``T.tvm_thread_allreduce`` (run serially).

    Parameters
    ----------
    start, stop : int or PrimExpr
        The bounds, as for :func:`serial`. ``stop`` may be the thread tag instead
        (``T.thread_binding(8, "threadIdx.x")``).
    thread : str
        The thread axis (``"threadIdx.x"``, ``"blockIdx.y"``, ...); required.
    annotations : dict, optional
        Key/value pairs recorded on the ``For`` node.

    Returns
    -------
    ForFrame
        The loop; its ``thread_binding`` is the thread's ``IterVar``.

    Examples
    --------
    >>> @T.prim_func
    ... def zero(A: T.Buffer((8,), "float32")):
    ...     for tx in T.thread_binding(8, thread="threadIdx.x"):
    ...         A[tx] = T.float32(0)
    >>> zero.body.thread_binding.thread_tag
    'threadIdx.x'
    """
    if isinstance(stop, str):  # T.thread_binding(8, "threadIdx.x")
        stop, thread = None, stop
    if not thread:
        raise TypeError("T.thread_binding needs a thread tag, e.g. thread='threadIdx.x'")
    return _loop(ForKind.THREAD_BINDING, "T.thread_binding", start, stop, annotations, thread)


def grid(*extents: ExprLike) -> ForFrame:
    """Nested serial loops over ``[0, e)`` for each extent, the first outermost.

    Parameters
    ----------
    *extents : int or PrimExpr
        One extent per loop (at least one); each loop variable has its extent's type.

    Returns
    -------
    ForFrame
        Yields the list of loop variables (``for i, j in T.grid(m, n)``), or the single
        variable for one extent (``for i in T.grid(n)``), as TVM's frame does.

    Examples
    --------
    >>> @T.prim_func
    ... def index(A: T.Buffer((2, 3), "int32")):
    ...     for i, j in T.grid(2, 3):
    ...         A[i, j] = i * 3 + j
    >>> a = np.zeros((2, 3), dtype="int32"); tvmscript.build(index)(a); print(a)
    [[0 1 2]
     [3 4 5]]
    """
    builder("T.grid")
    if not extents:
        raise TypeError("T.grid needs at least one extent")
    specs = []
    for extent in extents:
        begin, ext = _bounds(extent, None, "T.grid")
        specs.append(LoopSpec(Var("i", begin.dtype), begin, ext, ForKind.SERIAL))
    return ForFrame("T.grid", specs, as_list=len(specs) > 1)
