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
    IntImm,
    IterKind,
    IterVar,
    PrimExpr,
    Ramp,
    Range,
    Var,
    const,
    convert,
    structural_equal,
)
from ..ir.expr_text import expr_text
from ._common import DTypeArg, as_expr, builder, index_expr, innermost_block, span, to_dtype

__all__ = ["axis", "block", "block_attr", "init", "reads", "where", "writes"]


def block(name: str = "", no_realize: bool = False) -> BlockFrame:
    """A block: TensorIR's unit of computation, ``with T.block("name"):``.

    Its axes (iteration variables with a domain, a kind and a binding to the enclosing
    loops) come from the ``T.axis.*`` calls at its start; its read and write regions from
    ``T.reads``/``T.writes`` or, when not given, are inferred when it closes.

    Parameters
    ----------
    name : str
        The block's name (schedules find blocks by name).
    no_realize : bool
        IRBuilder only: build the ``Block`` without its ``BlockRealize``.

    Returns
    -------
    BlockFrame
        Used with ``with``.

    Examples
    --------
    >>> @T.prim_func
    ... def matmul(A: T.Buffer((2, 3), "float32"), B: T.Buffer((3, 2), "float32"),
    ...            C: T.Buffer((2, 2), "float32")):
    ...     for i, j, k in T.grid(2, 2, 3):
    ...         with T.block("C"):
    ...             vi, vj, vk = T.axis.remap("SSR", [i, j, k])
    ...             with T.init():
    ...                 C[vi, vj] = T.float32(0)
    ...             C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
    >>> a = np.arange(6, dtype="float32").reshape(2, 3); b = np.ones((3, 2), dtype="float32")
    >>> c = np.zeros((2, 2), dtype="float32"); tvmscript.build(matmul)(a, b, c); print(c)
    [[ 3.  3.]
     [12. 12.]]
    """
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
        """A spatial (data-parallel) block axis; ``T.axis.S`` is the same.

        Parameters
        ----------
        dom : int, PrimExpr, (begin, end) or Range
            The domain: an extent ``n`` means ``[0, n)``.
        binding : PrimExpr
            The value the axis takes, an expression of the enclosing loop variables.
        dtype : str, optional
            The axis's integer type; by default its domain's (``int32`` for plain ints).

        Returns
        -------
        Var
            The new block variable.

        Examples
        --------
        >>> @T.prim_func
        ... def shift(A: T.Buffer((4,), "int32"), B: T.Buffer((2,), "int32")):
        ...     for i in range(2):
        ...         with T.block("B"):
        ...             v = T.axis.spatial((2, 4), i + 2)
        ...             B[v - 2] = A[v]
        >>> b = np.zeros(2, dtype="int32")
        >>> tvmscript.build(shift)(np.arange(4, dtype="int32"), b); print(b)
        [2 3]
        """
        return _add_axis(IterKind.SPATIAL, "T.axis.spatial", dom, binding, dtype)

    @staticmethod
    def reduce(dom: Any, binding: ExprLike, dtype: DTypeArg | None = None) -> Var:
        """A reduction block axis (its values are combined into the outputs); ``T.axis.R``.

        The block's ``T.init`` runs when all its reduce axes are at their first value.

        Parameters
        ----------
        dom : int, PrimExpr, (begin, end) or Range
            The domain: an extent ``n`` means ``[0, n)``.
        binding : PrimExpr
            The value the axis takes, an expression of the enclosing loop variables.
        dtype : str, optional
            The axis's integer type; by default its domain's (``int32`` for plain ints).

        Returns
        -------
        Var
            The new block variable.

        Examples
        --------
        >>> @T.prim_func
        ... def total(A: T.Buffer((4,), "int32"), S: T.Buffer((1,), "int32")):
        ...     for k in range(4):
        ...         with T.block("S"):
        ...             vk = T.axis.reduce(4, k)
        ...             with T.init():
        ...                 S[0] = 0
        ...             S[0] = S[0] + A[vk]
        >>> s = np.full(1, 99, dtype="int32")
        >>> tvmscript.build(total)(np.arange(4, dtype="int32"), s); print(s)
        [6]
        """
        return _add_axis(IterKind.REDUCE, "T.axis.reduce", dom, binding, dtype)

    @staticmethod
    def scan(dom: Any, binding: ExprLike, dtype: DTypeArg | None = None) -> Var:
        """A scan block axis (iterations depend on earlier ones, in order); ``T.axis.C``.

        Parameters
        ----------
        dom : int, PrimExpr, (begin, end) or Range
            The domain: an extent ``n`` means ``[0, n)``.
        binding : PrimExpr
            The value the axis takes, an expression of the enclosing loop variables.
        dtype : str, optional
            The axis's integer type; by default its domain's (``int32`` for plain ints).

        Returns
        -------
        Var
            The new block variable.

        Examples
        --------
        >>> @T.prim_func
        ... def cumsum(A: T.Buffer((4,), "int32")):
        ...     for i in range(1, 4):
        ...         with T.block("scan"):
        ...             v = T.axis.scan((1, 4), i)
        ...             A[v] = A[v] + A[v - 1]
        >>> a = np.ones(4, dtype="int32"); tvmscript.build(cumsum)(a); print(a)
        [1 2 3 4]
        """
        return _add_axis(IterKind.SCAN, "T.axis.scan", dom, binding, dtype)

    @staticmethod
    def opaque(dom: Any, binding: ExprLike, dtype: DTypeArg | None = None) -> Var:
        """An opaque block axis (no promise about its iterations); ``T.axis.O``.

        Parameters
        ----------
        dom : int, PrimExpr, (begin, end) or Range
            The domain: an extent ``n`` means ``[0, n)``.
        binding : PrimExpr
            The value the axis takes, an expression of the enclosing loop variables.
        dtype : str, optional
            The axis's integer type; by default its domain's (``int32`` for plain ints).

        Returns
        -------
        Var
            The new block variable.

        Examples
        --------
        >>> @T.prim_func
        ... def f(A: T.Buffer((2,), "int32")):
        ...     for i in range(2):
        ...         with T.block("A"):
        ...             v = T.axis.opaque(2, i)
        ...             A[v] = v
        >>> f.script().count("T.axis.opaque(2, i)")
        1
        """
        return _add_axis(IterKind.OPAQUE, "T.axis.opaque", dom, binding, dtype)

    S = spatial
    R = reduce
    C = scan
    O = opaque  # noqa: E741

    @staticmethod
    def remap(kinds: str, bindings: Sequence[PrimExpr], dtype: DTypeArg | None = None) -> Any:
        """One block axis per letter of ``kinds``, each bound to a loop variable.

        Parameters
        ----------
        kinds : str
            One letter per axis: ``S`` spatial, ``R`` reduce, ``C`` scan, ``O`` opaque.
        bindings : list of Var
            Variables of enclosing loops, one per letter; each axis takes its loop's
            domain.
        dtype : str, optional
            The axes' integer type; by default the loops'.

        Returns
        -------
        list of Var, or Var
            The new block variables (a single variable when ``kinds`` has one letter).

        Examples
        --------
        >>> @T.prim_func
        ... def matmul(A: T.Buffer((2, 3), "float32"), B: T.Buffer((3, 2), "float32"),
        ...            C: T.Buffer((2, 2), "float32")):
        ...     for i, j, k in T.grid(2, 2, 3):
        ...         with T.block("C"):
        ...             vi, vj, vk = T.axis.remap("SSR", [i, j, k])
        ...             with T.init():
        ...                 C[vi, vj] = T.float32(0)
        ...             C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
        >>> a = np.arange(6, dtype="float32").reshape(2, 3); b = np.ones((3, 2), dtype="float32")
        >>> c = np.zeros((2, 2), dtype="float32"); tvmscript.build(matmul)(a, b, c); print(c)
        [[ 3.  3.]
         [12. 12.]]
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
            ranges = tuple(_load_range(i, what) for i in value.indices)
            out.append(BufferRegion(value.buffer, ranges))
        else:
            raise TypeError(
                f"{what}: expected buffer regions such as A[i, 0:4], got {type(value).__name__}"
            )
    return tuple(out)


def _load_range(index: PrimExpr, what: str) -> Range:
    """The range an index of ``A[...]`` covers in a region: one element, or the lanes of a
    ``lo:hi:1`` slice (a Ramp). A region is a box, so a strided slice has no region."""
    if isinstance(index, Ramp):
        stride = index.stride
        if not (isinstance(stride, IntImm) and stride.value == 1):
            raise ValueError(
                f"{what}: a region cannot be strided, got a slice with step {expr_text(stride)}; "
                "declare the whole box (lo:hi) the block accesses"
            )
        return Range(index.base, const(index.lanes, index.base.dtype))
    # The unit extent has the index's type (int64 indices: an int64 1).
    return Range(index, _unit(index))


def _unit(index: PrimExpr) -> PrimExpr:
    dtype = index.dtype
    return const(1, dtype) if dtype.is_int and dtype.lanes == 1 else convert(1)


def reads(*regions: Any) -> None:
    """Declare the buffer regions the block reads (otherwise they are inferred).

    Parameters
    ----------
    *regions : BufferRegion, BufferLoad, Buffer or lists of them
        ``A[i, 0:4]`` (slices are ranges, indices unit ranges), an element ``A[i]`` or a
        whole buffer ``A``.

    Returns
    -------
    None

    Examples
    --------
    >>> @T.prim_func
    ... def rowsum(A: T.Buffer((2, 4), "float32"), S: T.Buffer((2,), "float32")):
    ...     for i, k in T.grid(2, 4):
    ...         with T.block("S"):
    ...             vi, vk = T.axis.remap("SR", [i, k])
    ...             T.reads(A[vi, 0:4])
    ...             T.writes(S[vi])
    ...             with T.init():
    ...                 S[vi] = T.float32(0)
    ...             S[vi] = S[vi] + A[vi, vk]
    >>> s = np.zeros(2, dtype="float32")
    >>> tvmscript.build(rowsum)(np.ones((2, 4), dtype="float32"), s); print(s)
    [4. 4.]
    """
    frame = innermost_block("T.reads")
    if frame.reads is not None:
        raise IRBuilderError(f"T.reads given twice in T.block {frame.name!r}")
    frame.reads = _regions(regions, "T.reads")


def writes(*regions: Any) -> None:
    """Declare the buffer regions the block writes (otherwise they are inferred).

    Parameters
    ----------
    *regions : BufferRegion, BufferLoad, Buffer or lists of them
        As for :func:`reads`.

    Returns
    -------
    None

    Examples
    --------
    >>> @T.prim_func
    ... def fill(A: T.Buffer((2,), "int32")):
    ...     for i in range(2):
    ...         with T.block("A"):
    ...             v = T.axis.spatial(2, i)
    ...             T.writes(A[v])
    ...             A[v] = 5
    >>> a = np.zeros(2, dtype="int32"); tvmscript.build(fill)(a); print(a)
    [5 5]
    """
    frame = innermost_block("T.writes")
    if frame.writes is not None:
        raise IRBuilderError(f"T.writes given twice in T.block {frame.name!r}")
    frame.writes = _regions(regions, "T.writes")


def where(predicate: ExprLike) -> None:
    """The block executes only where ``predicate`` holds (its BlockRealize predicate).

    Parameters
    ----------
    predicate : PrimExpr
        A bool expression of the enclosing loop variables.

    Returns
    -------
    None

    Examples
    --------
    >>> @T.prim_func
    ... def tail(A: T.Buffer((5,), "int32")):
    ...     for io, ii in T.grid(2, 4):
    ...         with T.block("A"):
    ...             v = T.axis.spatial(5, io * 4 + ii)
    ...             T.where(io * 4 + ii < 5)
    ...             A[v] = v
    >>> a = np.full(5, -1, dtype="int32"); tvmscript.build(tail)(a); print(a)
    [0 1 2 3 4]
    """
    frame = innermost_block("T.where")
    expr = as_expr(predicate, "T.where")
    if not expr.dtype.is_bool:
        raise TypeError(f"T.where: predicate must be bool, got {expr.dtype}")
    if frame.predicate is not None:
        # A second predicate would silently replace the first (TVM refuses it too).
        raise IRBuilderError(
            f"T.where given twice in T.block {frame.name!r}; "
            "combine the conditions in one T.where(a and b)"
        )
    frame.predicate = expr


def init() -> BlockInitFrame:
    """The statements initialising a reduction block's outputs: ``with T.init():``.

    They run before the first iteration of the block's reduce axes, for each combination of
    its spatial axes.

    Returns
    -------
    BlockInitFrame
        Used with ``with`` inside a ``T.block``.

    Examples
    --------
    >>> @T.prim_func
    ... def rowmax(A: T.Buffer((2, 3), "int32"), M: T.Buffer((2,), "int32")):
    ...     for i, k in T.grid(2, 3):
    ...         with T.block("M"):
    ...             vi, vk = T.axis.remap("SR", [i, k])
    ...             with T.init():
    ...                 M[vi] = T.min_value("int32")
    ...             M[vi] = T.max(M[vi], A[vi, vk])
    >>> m = np.zeros(2, dtype="int32")
    >>> tvmscript.build(rowmax)(np.array([[1, 5, 2], [-4, -3, -9]], dtype="int32"), m)
    >>> print(m)
    [ 5 -3]
    """
    builder("T.init")
    return BlockInitFrame()


def block_attr(attrs: Mapping[str, Any]) -> None:
    """Merge ``attrs`` into the block's annotations (kept and printed; hints for schedules).

    Parameters
    ----------
    attrs : dict
        String keys; values are numbers, strings or expressions.

    Returns
    -------
    None

    Examples
    --------
    >>> @T.prim_func
    ... def f(A: T.Buffer((2,), "int32")):
    ...     for i in range(2):
    ...         with T.block("A"):
    ...             v = T.axis.spatial(2, i)
    ...             T.block_attr({"note": 1})
    ...             A[v] = 1
    >>> 'T.block_attr({"note": 1})' in f.script()
    True
    """
    frame = innermost_block("T.block_attr")
    if not isinstance(attrs, Mapping):
        raise TypeError(f"T.block_attr: expected a dict, got {type(attrs).__name__}")
    frame.annotations = _merge_annotations(frame.annotations, attrs, "")


def _merge_annotations(
    old: Mapping[str, Any], new: Mapping[Any, Any], path: str
) -> dict[str, Any]:
    """``old`` with ``new`` added, as TVM merges block annotations: dict values of one key
    merge key by key, an equal value is kept, a different one is an error (the later
    T.block_attr silently winning would hide which annotation a schedule sees)."""
    merged = dict(old)
    for raw_key, value in new.items():
        key = str(raw_key)
        if key not in merged:
            merged[key] = value
            continue
        previous = merged[key]
        if isinstance(previous, Mapping) and isinstance(value, Mapping):
            merged[key] = _merge_annotations(previous, value, f"{path}{key}.")
        elif not structural_equal(previous, value):
            raise ValueError(
                f"T.block_attr: duplicate block annotation {path}{key!r}: "
                f"already {previous!r}, now {value!r}"
            )
    return merged
