"""``T.compute`` (seed F3) and its reductions: ``T.reduce_axis``, ``T.sum``, ``T.prod``,
``T.reduce_max``, ``T.reduce_min``, ``T.all``, ``T.any``.

``C = T.compute((M, N), lambda i, j: A[i, j] + B[i, j])`` allocates ``C`` (an
``alloc_buffer`` of the innermost block, or of the function's implicit root
block) and appends::

    for i, j in T.grid(M, N):
        with T.block("compute"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj] + B[vi, vj]

A lambda returning ``T.sum(expr, axis=k)`` (``k = T.reduce_axis(0, K)``) adds
the reduce loops after the spatial ones, reduce iter vars to the block and a
``T.init()`` storing the reduction's identity (sum 0, prod 1, max lowest, min
highest, all True, any False). ``out=C`` writes into an existing buffer
(destination-passing style) instead of allocating.

The expansion lives in :func:`expand_compute` so that a later tensor-level
``T.compute`` (bufferization) can reuse it after choosing the destination.
"""

from __future__ import annotations

import builtins
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..builder import IRBuilderError
from ..frames import BlockFrame, PrimFuncFrame
from ..ir import (
    And,
    Block,
    BlockRealize,
    Buffer,
    BufferStore,
    DataType,
    ExprLike,
    ExprMutator,
    FloatImm,
    For,
    ForKind,
    IfThenElse,
    IntImm,
    IterKind,
    IterVar,
    Or,
    PrimExpr,
    Range,
    Reduce,
    ReduceKind,
    Stmt,
    Var,
    const,
    convert,
    post_order_visit,
    reduce_combine,
    reduce_identity,
)
from ..regions import infer_regions
from ._common import DTypeArg, as_expr, as_shape, builder, index_expr, span, to_dtype
from .memory import make_buffer

__all__ = [
    "ReduceAxis",
    "all",
    "any",
    "compute",
    "expand_compute",
    "prod",
    "reduce_axis",
    "reduce_max",
    "reduce_min",
    "sum",
]


@dataclass(frozen=True, eq=False, slots=True)
class ReduceAxis(Var):
    """A reduction axis from ``T.reduce_axis``: a Var usable in indices, with its domain.

    It exists only while a ``T.compute`` lambda runs; the expansion replaces it
    by a plain block iter var.
    """

    dom: Range | None = None


def reduce_axis(start: ExprLike, stop: ExprLike | None = None, name: str = "k") -> ReduceAxis:
    """A reduction axis for a ``T.compute`` lambda, over ``[0, start)`` or ``[start, stop)``.

    Parameters
    ----------
    start : int or PrimExpr
        The first value, or the extent when ``stop`` is not given.
    stop : int or PrimExpr, optional
        One past the last value.
    name : str
        The axis variable's name.

    Returns
    -------
    ReduceAxis
        A variable to index with and to name in ``axis=`` of ``T.sum`` and the others.

    Examples
    --------
    >>> @T.prim_func
    ... def rowsum(A: T.Buffer((2, 3), "int32")):
    ...     k = T.reduce_axis(0, 3)
    ...     return T.compute((2,), lambda i: T.sum(A[i, k], axis=k))
    >>> print(tvmscript.build(rowsum)(np.arange(6, dtype="int32").reshape(2, 3)))
    [ 3 12]
    """
    if stop is None:
        begin, end = index_expr(0, "T.reduce_axis"), index_expr(start, "T.reduce_axis")
    else:
        begin, end = index_expr(start, "T.reduce_axis"), index_expr(stop, "T.reduce_axis")
    end = end.astype(begin.dtype) if begin.dtype.bits >= end.dtype.bits else end
    begin = begin.astype(end.dtype)
    extent = end if stop is None else end - begin
    return ReduceAxis(name, begin.dtype, dom=Range(begin, extent))


def _axes(axis: Any, what: str) -> tuple[IterVar, ...]:
    items = list(axis) if isinstance(axis, (list, tuple)) else [axis]
    if not items:
        raise TypeError(f"{what}: axis must name at least one reduce axis")
    out: list[IterVar] = []
    for item in items:
        if isinstance(item, ReduceAxis) and item.dom is not None:
            out.append(IterVar(item, item.dom, IterKind.REDUCE))
        elif isinstance(item, IterVar):
            out.append(item)
        else:
            raise TypeError(f"{what}: axis must come from T.reduce_axis, got {item!r}")
    return tuple(out)


def _reduce(
    kind: ReduceKind, what: str, expr: ExprLike, axis: Any, where: ExprLike | None
) -> PrimExpr:
    source = as_expr(expr, what)
    condition = None if where is None else as_expr(where, f"{what} where")
    if condition is not None and not condition.dtype.is_bool:
        raise TypeError(f"{what}: where must be bool, got {condition.dtype}")
    return Reduce(kind, source, _axes(axis, what), condition)


def sum(expr: ExprLike, axis: Any, where: ExprLike | None = None) -> PrimExpr:
    """Sum of ``expr`` over the reduce axes ``axis`` (inside a ``T.compute`` lambda).

    Parameters
    ----------
    expr : PrimExpr
        The summed value, an expression of the compute's indices and the reduce axes.
    axis : ReduceAxis or list of ReduceAxis
        The axes to reduce over (from ``T.reduce_axis``).
    where : PrimExpr, optional
        Only points where this bool holds count.

    Returns
    -------
    PrimExpr
        A ``Reduce`` node; its identity (the block's init value) is 0.

    Examples
    --------
    >>> @T.prim_func
    ... def dot(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    ...     k = T.reduce_axis(0, 4)
    ...     return T.compute((1,), lambda i: T.sum(A[k] * B[k], axis=k, where=k < 3))
    >>> a = np.arange(4, dtype="float32"); print(tvmscript.build(dot)(a, a))
    [5.]
    """
    return _reduce(ReduceKind.SUM, "T.sum", expr, axis, where)


def prod(expr: ExprLike, axis: Any, where: ExprLike | None = None) -> PrimExpr:
    """Product of ``expr`` over the reduce axes (identity 1).

    Parameters
    ----------
    expr, axis, where
        As for :func:`sum`: the value, the reduce axes, the optional condition.

    Returns
    -------
    PrimExpr
        A ``Reduce`` node.

    Examples
    --------
    >>> @T.prim_func
    ... def fact(A: T.Buffer((4,), "int32")):
    ...     k = T.reduce_axis(0, 4)
    ...     return T.compute((1,), lambda i: T.prod(A[k], axis=k))
    >>> print(tvmscript.build(fact)(np.arange(1, 5, dtype="int32")))
    [24]
    """
    return _reduce(ReduceKind.PROD, "T.prod", expr, axis, where)


def reduce_max(expr: ExprLike, axis: Any, where: ExprLike | None = None) -> PrimExpr:
    """Maximum of ``expr`` over the reduce axes (identity: the type's lowest value, ``-inf``
    for floats).

    Parameters
    ----------
    expr, axis, where
        As for :func:`sum`: the value, the reduce axes, the optional condition.

    Returns
    -------
    PrimExpr
        A ``Reduce`` node.

    Examples
    --------
    >>> @T.prim_func
    ... def top(A: T.Buffer((2, 3), "float32")):
    ...     k = T.reduce_axis(0, 3)
    ...     return T.compute((2,), lambda i: T.reduce_max(A[i, k], axis=k))
    >>> print(tvmscript.build(top)(np.array([[1, 7, 2], [-5, -1, -3]], dtype="float32")))
    [ 7. -1.]
    """
    return _reduce(ReduceKind.MAX, "T.reduce_max", expr, axis, where)


def reduce_min(expr: ExprLike, axis: Any, where: ExprLike | None = None) -> PrimExpr:
    """Minimum of ``expr`` over the reduce axes (identity: the type's highest value, ``inf``
    for floats).

    Parameters
    ----------
    expr, axis, where
        As for :func:`sum`: the value, the reduce axes, the optional condition.

    Returns
    -------
    PrimExpr
        A ``Reduce`` node.

    Examples
    --------
    >>> @T.prim_func
    ... def low(A: T.Buffer((3,), "int32")):
    ...     k = T.reduce_axis(0, 3)
    ...     return T.compute((1,), lambda i: T.reduce_min(A[k], axis=k))
    >>> print(tvmscript.build(low)(np.array([4, -2, 9], dtype="int32")))
    [-2]
    """
    return _reduce(ReduceKind.MIN, "T.reduce_min", expr, axis, where)


def _logical(cls: type[And] | type[Or], what: str, args: Sequence[ExprLike]) -> PrimExpr:
    if not args:
        raise TypeError(f"{what} needs at least one argument")
    exprs = [as_expr(a, what) for a in args]
    for e in exprs:
        if not e.dtype.is_bool:
            raise TypeError(f"{what} needs bool arguments, got {e.dtype}")
    result = exprs[0]
    for e in exprs[1:]:
        result = cls(result, e)
    return result


def all(*args: ExprLike, axis: Any = None, where: ExprLike | None = None) -> PrimExpr:
    """``T.all(a, b, ...)``: logical and; ``T.all(expr, axis=k)``: and-reduction.

    Parameters
    ----------
    *args : PrimExpr
        Bool expressions (exactly one with ``axis``).
    axis : ReduceAxis or list, optional
        Reduce over these axes (identity ``True``), inside a ``T.compute`` lambda.
    where : PrimExpr, optional
        With ``axis``: only points where this holds count.

    Returns
    -------
    PrimExpr
        An ``And`` chain, or a ``Reduce`` node.

    Examples
    --------
    >>> x = T.int32()
    >>> print(T.all(x > 0, x < 9, x != 4).dtype)
    bool
    """
    if axis is not None:
        if len(args) != 1:
            raise TypeError("T.all(expr, axis=k) reduces exactly one expression")
        return _reduce(ReduceKind.ALL, "T.all", args[0], axis, where)
    return _logical(And, "T.all", args)


def any(*args: ExprLike, axis: Any = None, where: ExprLike | None = None) -> PrimExpr:
    """``T.any(a, b, ...)``: logical or; ``T.any(expr, axis=k)``: or-reduction.

    Parameters as :func:`all` (the reduction's identity is ``False``).

    Examples
    --------
    >>> @T.prim_func
    ... def has_negative(A: T.Buffer((2, 3), "int32")):
    ...     k = T.reduce_axis(0, 3)
    ...     return T.compute((2,), lambda i: T.any(A[i, k] < 0, axis=k))
    >>> print(tvmscript.build(has_negative)(np.array([[1, -1, 0], [2, 3, 4]], dtype="int32")))
    [ True False]
    """
    if axis is not None:
        if len(args) != 1:
            raise TypeError("T.any(expr, axis=k) reduces exactly one expression")
        return _reduce(ReduceKind.ANY, "T.any", args[0], axis, where)
    return _logical(Or, "T.any", args)


class _Substitute(ExprMutator):
    def __init__(self, mapping: dict[int, Var]) -> None:
        self.mapping = mapping

    def visit_var_(self, var: Var) -> PrimExpr:
        return self.mapping.get(id(var), var)


def _contains(expr: PrimExpr, predicate: Callable[[object], bool]) -> bool:
    found = False

    def check(node: object) -> None:
        nonlocal found
        found = found or predicate(node)

    post_order_visit(expr, check)
    return found


def _param_names(fcompute: Callable[..., Any], ndim: int) -> list[str]:
    try:
        params = list(inspect.signature(fcompute).parameters.values())
    except (TypeError, ValueError):
        return [f"i{d}" for d in range(ndim)]
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if builtins.any(p.kind == p.VAR_POSITIONAL for p in params):
        return [f"i{d}" for d in range(ndim)]
    if len(positional) != ndim:
        raise TypeError(
            f"T.compute: fcompute takes {len(positional)} arguments but the shape has "
            f"{ndim} dimensions"
        )
    return [p.name for p in positional]


def _to_dtype(value: PrimExpr, target: DataType, explicit: bool, what: str) -> PrimExpr:
    if value.dtype == target:
        return value
    if isinstance(value, (IntImm, FloatImm)) and (
        target.is_float or not isinstance(value, FloatImm)
    ):
        return const(value.value, target)
    if explicit:
        return value.astype(target)
    raise TypeError(
        f"{what}: the computed value is {value.dtype} but the output is {target}; "
        "pass dtype=... to cast"
    )


def compute(
    shape: Any,
    fcompute: Callable[..., Any],
    name: str = "compute",
    dtype: DTypeArg | None = None,
    *,
    out: Buffer | None = None,
) -> Buffer:
    """Compute a buffer element-wise: a loop nest and one block storing ``fcompute(*indices)``.

    Without ``out=`` the buffer is allocated in the enclosing block (the root block at
    function level); returning it (``return C`` or ``T.return_tensors(C)``) makes it a
    result of the kernel, which then allocates and returns it. A reduction in the value
    (``T.sum(..., axis=k)`` and the others) adds reduce loops, reduce axes and a
    ``T.init`` storing its identity.

    Parameters
    ----------
    shape : int, PrimExpr or tuple of them
        The output shape.
    fcompute : callable
        Takes one index per dimension and returns the element's value.
    name : str
        The block's name.
    dtype : str or type object, optional
        The element type (the value is cast to it); by default the value's.
    out : Buffer, optional
        Store into this buffer (destination-passing style) instead of allocating.

    Returns
    -------
    Buffer
        The output buffer.

    Examples
    --------
    >>> @T.prim_func
    ... def add(A: T.Buffer((2, 2), "float32"), B: T.Buffer((2, 2), "float32")):
    ...     return T.compute((2, 2), lambda i, j: A[i, j] + B[i, j])
    >>> a = np.ones((2, 2), dtype="float32"); print(tvmscript.build(add)(a, a))
    [[2. 2.]
     [2. 2.]]
    >>> @T.prim_func
    ... def into(A: T.Buffer((3,), "int32"), C: T.Buffer((3,), "int32")):
    ...     T.compute((3,), lambda i: A[i] * 2, out=C)
    >>> c = np.zeros(3, dtype="int32"); tvmscript.build(into)(np.arange(3, dtype="int32"), c)
    >>> print(c)
    [0 2 4]
    """
    b = builder("T.compute")
    if b.find(PrimFuncFrame) is None:
        raise IRBuilderError("T.compute must be called inside T.prim_func")
    dims = as_shape(shape, "T.compute")
    if out is not None and not isinstance(out, Buffer):
        raise TypeError(f"T.compute: out must be a Buffer, got {type(out).__name__}")
    if out is not None and out.ndim != len(dims):
        raise ValueError(
            f"T.compute: out buffer {out.name!r} has {out.ndim} dimensions, shape has {len(dims)}"
        )
    names = _param_names(fcompute, len(dims))
    block_vars = [Var(f"v{n}", d.dtype) for n, d in zip(names, dims)]
    value = fcompute(*block_vars)
    explicit = dtype is not None
    target: DataType | None = None
    if out is not None:
        target = out.dtype
        if dtype is not None and to_dtype(dtype) != out.dtype:
            raise TypeError(
                f"T.compute: dtype={dtype} differs from out buffer {out.name!r} ({out.dtype})"
            )
    elif dtype is not None:
        target = to_dtype(dtype)
    stmt, buffer = expand_compute(dims, names, block_vars, value, name, target, explicit, out)
    b.add_stmt(stmt, "T.compute")
    return buffer


def expand_compute(
    dims: Sequence[PrimExpr],
    names: Sequence[str],
    block_vars: Sequence[Var],
    value: Any,
    name: str,
    target: DataType | None,
    explicit: bool,
    out: Buffer | None,
) -> tuple[Stmt, Buffer]:
    """The loop nest storing ``value`` (built over ``block_vars``) and its output buffer.

    Allocates the output (``T.alloc_buffer`` semantics) unless ``out`` is given.
    """
    what = "T.compute"
    reduce: Reduce | None = value if isinstance(value, Reduce) else None
    source = reduce.source if reduce is not None else as_expr(value, what)
    if _contains(source, lambda n: isinstance(n, Reduce)):
        raise TypeError(f"{what}: T.sum/T.prod/... must be the outermost call of the lambda")
    if reduce is None and _contains(source, lambda n: isinstance(n, ReduceAxis)):
        raise TypeError(f"{what}: a reduce axis is used outside T.sum/T.prod/...")
    if target is None:
        target = source.dtype
    source = _to_dtype(source, target, explicit, what)
    buffer = out if out is not None else _allocate(dims, target, name)

    reduce_vars: list[IterVar] = []
    condition: PrimExpr | None = None
    if reduce is not None:
        mapping: dict[int, Var] = {}
        for iv in reduce.axes:
            fresh = Var(iv.var.name, iv.var.dtype)
            mapping[id(iv.var)] = fresh
            reduce_vars.append(IterVar(fresh, iv.dom, IterKind.REDUCE))
        source = _Substitute(mapping).visit_expr(source)
        if reduce.condition is not None:
            condition = _Substitute(mapping).visit_expr(reduce.condition)

    indices = tuple(block_vars)
    init: Stmt | None = None
    body: Stmt
    if reduce is not None:
        identity = reduce_identity(reduce.kind, target)
        init = BufferStore(buffer, identity, indices, span=span())
        update = reduce_combine(reduce.kind, buffer[indices], source)
        body = BufferStore(buffer, update, indices, span=span())
        if condition is not None:
            body = IfThenElse(condition, body, span=span())
    else:
        body = BufferStore(buffer, source, indices, span=span())

    spatial = [
        IterVar(v, Range(const(0, d.dtype), d), IterKind.SPATIAL) for v, d in zip(block_vars, dims)
    ]
    iter_vars = spatial + reduce_vars
    loop_vars = [Var(n, d.dtype) for n, d in zip(names, dims)]
    loop_vars += [Var(iv.var.name, iv.var.dtype) for iv in reduce_vars]
    reads, writes = infer_regions(body, init, (), ())
    block = Block(tuple(iter_vars), reads, writes, name, body, init, span=span())
    stmt: Stmt = BlockRealize(tuple(loop_vars), convert(True), block, span=span())
    for loop_var, iv in reversed(list(zip(loop_vars, iter_vars))):
        stmt = For(loop_var, iv.dom.min, iv.dom.extent, ForKind.SERIAL, stmt, span=span())
    return stmt, buffer


def _allocate(dims: Sequence[PrimExpr], dtype: DataType, name: str) -> Buffer:
    b = builder("T.compute")
    buffer = make_buffer("T.compute", list(dims), dtype)
    buffer.set_name_hint(name)
    block = b.find(BlockFrame)
    if block is not None:
        block.alloc_buffers.append(buffer)
    else:
        func = b.find(PrimFuncFrame)
        assert func is not None
        func.root_alloc_buffers.append(buffer)
    return buffer
