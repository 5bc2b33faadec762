"""The ``T`` namespace of TVMScript: ``from tvmscript import tir as T``.

Everything of :mod:`irbuilder.tir` (frames, statements, expression builders, type
objects), plus the names the TVMScript printer emits that are not builder functions:

* the node constructors ``T.Add(1, 2)``, ``T.LT(a, b)``, ``T.And(x, y)``, ``T.Not(x)``,
  ... which build the node **without folding** (Python's ``1 + 2`` folds to ``3``),
  ``T.Let(body, where={x: value})``, ``T.Range(begin, end)``, ``T.iter_var(...)`` and
  ``T.reduce(kind, source, axis=[...], where=...)``;
* the entry builtins of lowered code: ``T.array_data``, ``T.array_ndim``,
  ``T.array_shape``, ``T.array_stride``, ``T.array_flags``, ``T.array_dtype_is``,
  ``T.array_descr``, and ``T.format_message`` (assertion messages with run-time values);
* ``@T.macro`` (hygienic macros expanded at the call site) and ``T.buffer_decl``
  (the pre-DeclBuffer spelling of ``T.decl_buffer``).

``T.decl_buffer(A.data, (256,), "float32")`` (data first, as the DeclBuffer RFC writes
it) and ``T.allocate(shape=[16], dtype="float32")`` are accepted too.
"""

from __future__ import annotations

import builtins
import inspect
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import irbuilder.tir as _builder
from irbuilder import ir as _ir
from irbuilder.frames import AllocateFrame, DeclBufferFrame
from irbuilder.ir import (
    BinaryOp,
    CallKind,
    IterKind,
    IterVar,
    PrimExpr,
    Reduce,
    ReduceKind,
    Var,
    as_dtype,
    const,
    convert,
    promote,
)
from irbuilder.ir import Call as CallNode
from irbuilder.tir import *  # noqa: F403  (the whole builder namespace)
from irbuilder.tir import allocate as _allocate
from irbuilder.tir import call_intrin as _call_intrin
from irbuilder.tir import decl_buffer as _decl_buffer
from irbuilder.tir import types as _types
from irbuilder.tir.intrin_api import *  # noqa: F403  (the same objects, typed for checkers)
from irbuilder.tir.tvm_ops import TVM_OP_BUILDERS
from irbuilder.tir.types import *  # noqa: F403  (the same objects: type checkers see them)

from .entry_builtins import (
    array_data,
    array_descr,
    array_dtype_is,
    array_flags,
    array_ndim,
    array_shape,
    array_stride,
    format_message,
)
from .parser.tir.macro import TIRMacro, macro
from .var_constructors import SizeVar, buffer_var, ptr, target, var

if TYPE_CHECKING:
    from lowering.schedule import (
        BlockRV,
        ExprRV,
        IndexMap,
        Instruction,
        InstructionKind,
        LoopRV,
        Schedule,
        ScheduleError,
        TensorIntrin,
        Trace,
    )

_SCHEDULE_NAMES = (
    "BlockRV",
    "ExprRV",
    "IndexMap",
    "Instruction",
    "InstructionKind",
    "LoopRV",
    "Schedule",
    "ScheduleError",
    "TensorIntrin",
    "Trace",
)


def __getattr__(name: str) -> Any:
    # The schedule library (and the interpreter check it installs) loads on first use, so
    # `import tvmscript` stays the language only.
    if name in _SCHEDULE_NAMES:
        from . import _prewarm

        _prewarm.wait_for_imports()
        from lowering import schedule as library

        from . import schedule as _checker  # noqa: F401  (installs the interpreter check)

        value = getattr(library, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "EQ",
    "ExprRV",
    "GE",
    "GT",
    "IndexMap",
    "Instruction",
    "InstructionKind",
    "LE",
    "LT",
    "NE",
    "Add",
    "And",
    "BlockRV",
    "Call",
    "Div",
    "FloorDiv",
    "FloorMod",
    "Let",
    "LoopRV",
    "Max",
    "Min",
    "Mod",
    "Mul",
    "Not",
    "Or",
    "Range",
    "Schedule",
    "ScheduleError",
    "Sub",
    "TensorIntrin",
    "TIRMacro",
    "Trace",
    "allocate",
    "array_data",
    "array_descr",
    "array_dtype_is",
    "array_flags",
    "array_ndim",
    "array_shape",
    "array_stride",
    "buffer_decl",
    "decl_buffer",
    "format_message",
    "iter_var",
    "macro",
    "reduce",
    "comm_reducer",
    "boolean",
    "broadcast",
    "buffer",
    "buffer_var",
    "ptr",
    "ramp",
    "target",
    "var",
    "void",
    "tvm_call_packed",
    "tvm_call_cpacked",
    "tvm_call_packed_lowered",
    "tvm_call_cpacked_lowered",
    "SizeVar",
    "BufferLoad",
    "index_map",
]
__all__ += [  # IR classes and helpers T re-exports for isinstance checks and constants
    "AllocateFrame",
    "BinaryOp",
    "CallKind",
    "CallNode",
    "DeclBufferFrame",
    "IterKind",
    "IterVar",
    "PrimExpr",
    "Reduce",
    "ReduceKind",
    "TVM_OP_BUILDERS",
    "Var",
    "as_dtype",
    "const",
    "convert",
    "promote",
]
__all__ += _builder.__all__  # the builder namespace (a form type checkers follow)


def _operands(a: Any, b: Any, what: str) -> tuple[PrimExpr, PrimExpr]:
    for value in (a, b):
        if not isinstance(value, (PrimExpr, builtins.bool, int, float)):
            raise TypeError(
                f"T.{what}: expected expressions or numbers, got {type(value).__name__}"
            )
    return promote(a, b)


def _node(cls: type[BinaryOp]) -> Any:
    def build(a: Any, b: Any) -> PrimExpr:
        x, y = _operands(a, b, cls.__name__)
        return cls(x, y)

    build.__name__ = build.__qualname__ = cls.__name__
    build.__doc__ = (
        f"A ``{cls.__name__}`` node of ``a`` and ``b``, never folded (Python's operators fold "
        "constants).\n\n    Parameters\n    ----------\n    a, b : PrimExpr or number\n"
        "        Promoted to a common type.\n\n    Returns\n    -------\n    PrimExpr\n"
    )
    build.exact_node = True  # type: ignore[attr-defined]  # no parse-time checks on it
    return build


# Python operators fold constants (``1 + 2`` is ``3``); the printer spells unfolded nodes
# with these constructors so that they parse back to the same node.
Add = _node(_ir.Add)
Sub = _node(_ir.Sub)
Mul = _node(_ir.Mul)
Div = _node(_ir.Div)
Mod = _node(_ir.Mod)
FloorDiv = _node(_ir.FloorDiv)
FloorMod = _node(_ir.FloorMod)
Min = _node(_ir.Min)
Max = _node(_ir.Max)
EQ = _node(_ir.EQ)
NE = _node(_ir.NE)
LT = _node(_ir.LT)
LE = _node(_ir.LE)
GT = _node(_ir.GT)
GE = _node(_ir.GE)
And = _node(_ir.And)
Or = _node(_ir.Or)


def Not(a: Any) -> PrimExpr:
    """A ``Not`` node of a bool expression, never folded."""
    return _ir.Not(convert(a))


def Let(body: Any, where: Mapping[Var, Any]) -> PrimExpr:
    """``T.Let(body, where={x: value})``: the ``Let`` expression binding ``x`` in ``body``."""
    if not isinstance(where, Mapping) or len(where) != 1:
        raise TypeError("T.Let: where= must be a dict with exactly one {var: value} entry")
    ((var, value),) = where.items()
    if not isinstance(var, Var):
        raise TypeError(f"T.Let: the key of where= must be a Var, got {type(var).__name__}")
    bound = value if isinstance(value, PrimExpr) else const(value, var.dtype)
    return _ir.Let(var, bound, convert(body))


def Range(begin: Any, end: Any) -> _ir.Range:
    """``T.Range(begin, end)``: the range ``[begin, end)``; its extent is built as
    ``end - begin`` (just ``end`` when ``begin`` is 0), as buffer regions build it."""
    start, stop = promote(begin, end)
    zero = isinstance(start, _ir.IntImm) and start.value == 0 and not start.dtype.is_bool
    return _ir.Range(start, stop if zero else stop - start)


_ITER_KINDS = {
    "DataPar": IterKind.SPATIAL,
    "CommReduce": IterKind.REDUCE,
    "Ordered": IterKind.SCAN,
    "Opaque": IterKind.OPAQUE,
    "ThreadIndex": IterKind.THREAD,
}


def iter_var(var: Var | PrimExpr, dom: Any, iter_type: str, thread_tag: str = "") -> IterVar:
    """``T.iter_var(k, T.Range(0, 8), "CommReduce", "")``: an IterVar over ``dom``.

    Parameters
    ----------
    var, dom : Var, Range
        The iteration variable and its domain (a ``T.Range`` or a ``(begin, end)`` pair).
    iter_type, thread_tag : str
        TVM's kind name (``"DataPar"``, ``"CommReduce"``, ``"Ordered"``, ``"Opaque"``,
        ``"ThreadIndex"``) and, for ``"ThreadIndex"``, the thread axis.

    Returns
    -------
    IterVar
    """
    if not isinstance(var, Var):
        raise TypeError(f"T.iter_var: expected a Var, got {type(var).__name__}")
    if isinstance(dom, (tuple, list)):
        dom = Range(*dom)
    if not isinstance(dom, _ir.Range):
        raise TypeError(f"T.iter_var: dom must be a T.Range, got {type(dom).__name__}")
    kind = _ITER_KINDS.get(iter_type)
    if kind is None:
        raise ValueError(
            f"T.iter_var: unknown iter type {iter_type!r}; one of {sorted(_ITER_KINDS)}"
        )
    return IterVar(var, dom, kind, thread_tag)


def comm_reducer(combiner: Any, identity: Sequence[Any]) -> _ir.CommReducer:
    """``T.comm_reducer(lambda x, y: x + y, [T.float32(0)])``: a commutative reducer.

    The combiner takes ``2 * len(identity)`` parameters (the lhs values, then the rhs values)
    and returns one expression or a tuple of them; each parameter becomes a variable of its
    identity's type (an int identity is int32), as TVM builds it.

    Parameters
    ----------
    combiner : callable
        ``lambda x, y: x + y`` (or ``lambda x0, x1, y0, y1: (..., ...)`` for two values).
    identity : list
        The identity of each value.

    Returns
    -------
    CommReducer

    Examples
    --------
    >>> print(T.comm_reducer(lambda x, y: T.max(x, y), [T.float32("-inf")]).reduce_kind())
    ReduceKind.MAX
    """
    if not callable(combiner):
        raise TypeError("T.comm_reducer: the combiner must be a function (a lambda)")
    ids = tuple(convert(i) for i in identity)
    names = list(inspect.signature(combiner).parameters)
    if len(names) != 2 * len(ids) or not ids:
        raise TypeError(
            f"T.comm_reducer: the combiner takes {len(names)} parameters for "
            f"{len(ids)} identity value(s); it needs two per value"
        )
    params = [Var(name, value.dtype) for name, value in zip(names, ids + ids)]
    result = combiner(*params)
    results = result if isinstance(result, tuple) else (result,)
    half = len(ids)
    exprs = tuple(convert(r) for r in results)
    return _ir.CommReducer(tuple(params[:half]), tuple(params[half:]), exprs, ids)


def reduce(
    kind: Any,
    source: Any,
    axis: Sequence[IterVar],
    where: Any = None,
    *,
    condition: Any = None,
    init: Any = None,
    value_index: int = 0,
) -> PrimExpr:
    """``T.reduce("sum", src, axis=[T.iter_var(...)], where=c)``: a ``Reduce`` node.

    TVM's form ``T.reduce(T.comm_reducer(...), source=[src], init=[], axis=[...],
    condition=c, value_index=0)`` is accepted for single-value reducers that are a sum,
    product, min, max, and or or with their usual identity.

    Parameters
    ----------
    kind : str or CommReducer
        ``"sum"``, ``"prod"``, ``"max"``, ``"min"``, ``"all"``, ``"any"``.
    source, axis : PrimExpr (or a one-element list), list of IterVar
        The reduced value and the reduction domain.
    where : PrimExpr, optional
        Only points where it holds count (``condition=`` in TVM's form).

    Returns
    -------
    PrimExpr
        A ``Reduce`` node.

    Examples
    --------
    >>> @T.prim_func
    ... def rowsum(A: T.Buffer((2, 3), "int32"), B: T.Buffer((2,), "int32")):
    ...     k = T.int32()
    ...     for i in range(2):
    ...         axis = T.meta_var([T.iter_var(k, T.Range(0, 3), "CommReduce", "")])
    ...         B[i] = T.reduce("sum", A[i, k], axis=axis)
    >>> b = np.zeros(2, dtype="int32")
    >>> tvmscript.build(rowsum)(np.arange(6, dtype="int32").reshape(2, 3), b); print(b)
    [ 3 12]
    """
    if isinstance(kind, _ir.CommReducer):
        matched = kind.reduce_kind()
        if matched is None:
            raise ValueError(
                "T.reduce: only a single-value comm_reducer computing a sum, product, min, "
                "max, and or or (with its identity) has a Reduce kind here"
            )
        kind = matched.value
    if isinstance(source, (list, tuple)):
        if len(source) != 1 or value_index != 0:
            raise ValueError("T.reduce: expected one source value (value_index=0)")
        source = source[0]
    if init:
        raise ValueError("T.reduce: an explicit init is not supported (the kind's identity is)")
    if condition is not None:
        if where is not None:
            raise TypeError("T.reduce: give the condition once (where= or condition=)")
        folded = convert(condition)
        true = isinstance(folded, _ir.IntImm) and folded.dtype.is_bool and folded.value == 1
        where = None if true else folded
    try:
        reduce_kind = ReduceKind(kind)
    except ValueError:
        names = [k.value for k in ReduceKind]
        raise ValueError(f"T.reduce: unknown reduction {kind!r}; one of {names}") from None
    axes = tuple(axis)
    if not axes or not builtins.all(isinstance(a, IterVar) for a in axes):
        raise TypeError("T.reduce: axis must be a non-empty list of T.iter_var(...)")
    return Reduce(reduce_kind, convert(source), axes, None if where is None else convert(where))


def Call(dtype: str, op: str, args: Sequence[Any] = (), span: Any = None) -> PrimExpr:
    """TVM's ``T.Call("int32", "tir.name", [args])``: a call of the TIR op ``name``, the
    node ``T.call_intrin`` makes (TVM takes a string op only in the ``tir.`` namespace)."""
    if not isinstance(op, str):
        raise TypeError(f"T.Call: op must be a string 'tir.<name>', got {type(op).__name__}")
    if not op.startswith("tir."):
        raise ValueError(f"T.Call: a string op must be a TIR op 'tir.<name>', got {op!r}")
    return _call_intrin(dtype, op, *args)


def allocate(  # type: ignore[no-redef]  # replaces the builder's (adds shape=)
    extents: Any = None,
    dtype: Any = None,
    scope: str = "global",
    condition: Any = True,
    annotations: dict[str, Any] | None = None,
    *,
    shape: Any = None,
) -> AllocateFrame:
    """:func:`irbuilder.tir.allocate`; also accepts ``shape=`` for ``extents``."""
    if extents is None:
        extents = shape
    if extents is None or dtype is None:
        raise TypeError("T.allocate needs the extents and a dtype: T.allocate([n], 'float32')")
    return _allocate(extents, dtype, scope, condition, annotations)


def decl_buffer(*args: Any, **kwargs: Any) -> DeclBufferFrame:  # type: ignore[no-redef]
    """:func:`irbuilder.tir.decl_buffer`; a leading data var (``T.decl_buffer(A.data,
    (256,), "float32")``, the DeclBuffer RFC's spelling) is taken as ``data=``."""
    if args and isinstance(args[0], Var) and args[0].dtype.is_handle:
        if "data" in kwargs:
            raise TypeError("T.decl_buffer: data given twice")
        kwargs["data"] = args[0]
        args = args[1:]
    return _decl_buffer(*args, **kwargs)


def _with_note(doc: str | None, note: str) -> str:
    """``doc`` (a builder's numpy-style docstring) with ``note`` as a paragraph before its
    Parameters section, so ``help(T.<name>)`` of a wrapper shows the whole documentation."""
    text = doc or ""
    head, sep, tail = text.partition("\n    Parameters\n")
    return f"{head}\n{note}{sep}{tail}" if sep else f"{text}\n{note}"


allocate.__doc__ = _with_note(
    _allocate.__doc__, "    ``shape=`` is accepted for ``extents`` (TVM's keyword).\n"
)
decl_buffer.__doc__ = _with_note(
    _decl_buffer.__doc__,
    "    A leading data var is taken as ``data=``: ``T.decl_buffer(A.data, (256,),\n"
    '    "float32")``, as the DeclBuffer RFC writes it.\n',
)

buffer_decl = decl_buffer
"""``T.buffer_decl``: the old name of :func:`decl_buffer` (TVM before the DeclBuffer RFC)."""


# -- TVM v0.16 aliases and small constructors ----------------------------------------

ramp = Ramp  # noqa: F405
"""``T.ramp(base, stride, lanes)``: TVM's lower-case spelling of :func:`Ramp`."""
broadcast = Broadcast  # noqa: F405
"""``T.broadcast(value, lanes)``: TVM's lower-case spelling of :func:`Broadcast`."""
boolean = bool
"""``T.boolean``: the bool type object (``T.boolean(True)``, ``x: T.boolean``)."""
void = _types.handle
"""``T.void``: TVM's void type object; values of it are opaque handles."""
buffer = Buffer  # noqa: F405
"""``T.buffer(shape, dtype, ...)``: TVM's lower-case buffer declaration, as ``T.Buffer``."""


tvm_call_packed_lowered = TVM_OP_BUILDERS["call_packed_lowered"]
tvm_call_cpacked_lowered = TVM_OP_BUILDERS["call_cpacked_lowered"]


def BufferLoad(buffer: _ir.Buffer, indices: Sequence[Any]) -> PrimExpr:
    """``T.BufferLoad(A, [i])``: the node ``A[i]``."""
    return _ir.BufferLoad(buffer, tuple(convert(i) for i in indices))


def _accepting_dtype(fn: Any) -> Any:
    # TVM's _op_wrapper: these T functions take and ignore a dtype= keyword.
    def wrapped(*args: Any, dtype: Any = None, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    wrapped.__name__ = wrapped.__qualname__ = fn.__name__
    wrapped.__doc__ = fn.__doc__
    wrapped.__wrapped__ = fn  # type: ignore[attr-defined]
    return wrapped


ceildiv = _accepting_dtype(ceildiv)  # noqa: F405
floordiv = _accepting_dtype(floordiv)  # noqa: F405
floormod = _accepting_dtype(floormod)  # noqa: F405
truncdiv = _accepting_dtype(truncdiv)  # noqa: F405
truncmod = _accepting_dtype(truncmod)  # noqa: F405
address_of = _accepting_dtype(address_of)  # noqa: F405
tvm_access_ptr = _accepting_dtype(tvm_access_ptr)  # noqa: F405
call_packed = _accepting_dtype(call_packed)  # noqa: F405
call_cpacked = _accepting_dtype(call_cpacked)  # noqa: F405
tvm_call_packed = call_packed
tvm_call_cpacked = call_cpacked
tvm_stack_alloca = _accepting_dtype(tvm_stack_alloca)  # noqa: F405
tvm_stack_make_shape = _accepting_dtype(tvm_stack_make_shape)  # noqa: F405
tvm_stack_make_array = _accepting_dtype(tvm_stack_make_array)  # noqa: F405
tvm_thread_allreduce = _accepting_dtype(tvm_thread_allreduce)  # noqa: F405
ret = _accepting_dtype(ret)  # noqa: F405


def index_map(mapping: Any, *, inverse_index_map: Any = None, index_dtype: str = "int64") -> Any:
    """``T.index_map(lambda i, j: (j, i))``: an index map for ``Schedule.transform_layout``.

    The schedule library's ``IndexMap`` (its index variables are int32; TVM's default
    ``index_dtype`` is int64). ``inverse_index_map`` is kept as the map's field of that name
    and not trusted: the schedule computes and checks the inverse itself.
    """
    if not callable(mapping):
        raise TypeError("T.index_map: the mapping must be a function (a lambda)")
    from lowering.schedule import IndexMap as _IndexMap

    return _IndexMap.from_func(mapping, inverse_index_map=inverse_index_map)
