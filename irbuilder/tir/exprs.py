"""Expression builders: select, casts, vectors, calls and ``T.meta_var`` (min/max, the
divisions and the typed limits are in :mod:`irbuilder.tir.arith`). The math and bit
intrinsics are made from the intrinsic table in :mod:`irbuilder.tir.intrin`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ..ir import (
    Broadcast,
    Call,
    CallKind,
    Cast,
    DataType,
    ExprLike,
    FloatImm,
    IntImm,
    PrimExpr,
    Ramp,
    Select,
    Shuffle,
    StringImm,
    as_dtype,
    const,
)
from ._common import DTypeArg, as_condition, as_expr, call_operand, to_dtype
from .arith import _pair
from .tvm_ops import TVM_OPS

__all__ = [
    "Broadcast_",
    "Cast_",
    "MetaVar",
    "Ramp_",
    "Select_",
    "Shuffle_",
    "assume",
    "call_extern",
    "call_intrin",
    "call_pure_extern",
    "cast",
    "if_then_else",
    "likely",
    "meta_var",
    "reinterpret",
]

# The runtime builtins (irbuilder.tir.runtime) are builtins too; listed here rather than
# imported so that this module stays free of the frame machinery.
_BUILTINS = frozenset(
    {
        "likely",
        "reinterpret",
        "assume",
        "if_then_else",
        "prefetch",
        "ret",
        "tvm_call_packed",
        "tvm_call_cpacked",
        "address_of",
        "tvm_access_ptr",
        "type_annotation",
        "tvm_thread_allreduce",
        "tvm_storage_sync",
        "tvm_stack_alloca",
        "tvm_stack_make_shape",
        "tvm_stack_make_array",
    }
)


def _bool_cond(cond: ExprLike, what: str) -> PrimExpr:
    return as_condition(cond, what)


def if_then_else(
    cond: ExprLike, t: ExprLike, f: ExprLike, dtype: DTypeArg | None = None
) -> PrimExpr:
    """``t`` where ``cond`` holds, else ``f``, evaluating only the chosen branch.

    Safe for guarded loads (``T.if_then_else(i < n, A[i], 0)``). ``t if c else f`` in a
    kernel means the same.

    Parameters
    ----------
    cond : PrimExpr
        A bool expression (an integer is compared with zero).
    t, f : PrimExpr or number
        The two values (promoted to a common type).
    dtype : str, optional
        Older TVM spelling: convert both values to this type.

    Returns
    -------
    PrimExpr
        An ``if_then_else`` builtin call.

    Examples
    --------
    >>> @T.prim_func
    ... def shift_left(A: T.Buffer((3,), "int32"), B: T.Buffer((3,), "int32")):
    ...     for i in range(3):
    ...         B[i] = T.if_then_else(i + 1 < 3, A[T.min(i + 1, 2)], -1)
    >>> b = np.zeros(3, dtype="int32")
    >>> tvmscript.build(shift_left)(np.array([5, 6, 7], dtype="int32"), b); print(b)
    [ 6  7 -1]
    """
    c = _bool_cond(cond, "T.if_then_else")
    x, y = _pair(t, f, "T.if_then_else")
    if dtype is not None:
        target = to_dtype(dtype)
        x, y = cast(x, target), cast(y, target)
    return Call(x.dtype, "if_then_else", (c, x, y), CallKind.BUILTIN)


def Select_(cond: ExprLike, t: ExprLike, f: ExprLike) -> PrimExpr:
    """``T.Select(cond, t, f)``: ``t`` where ``cond`` holds, else ``f``; both evaluated.

    Parameters
    ----------
    cond : PrimExpr
        A bool expression (vectors: lane-wise).
    t, f : PrimExpr or number
        The two values (promoted to a common type).

    Returns
    -------
    PrimExpr
        A ``Select`` node.

    Examples
    --------
    >>> x = T.int32()
    >>> print(T.Select(x > 0, x, 0).dtype)
    int32
    """
    c = _bool_cond(cond, "T.Select")
    x, y = _pair(t, f, "T.Select")
    return Select(c, x, y)


def cast(x: ExprLike, dtype: DTypeArg) -> PrimExpr:
    """Convert the value ``x`` to ``dtype`` (``x.astype(dtype)``).

    Float to integer truncates toward zero. No node is made when ``x`` already has the type;
    a Python number becomes a constant of the type.

    Parameters
    ----------
    x : PrimExpr or number
        The value.
    dtype : str or type object
        The target type.

    Returns
    -------
    PrimExpr

    Examples
    --------
    >>> print(T.cast(3, "float32"), T.cast(T.float32(), "int8").dtype)
    FloatImm(float32, 3.0) int8
    """
    target = to_dtype(dtype)
    expr = as_expr(x, "T.cast")
    if isinstance(expr, (IntImm, FloatImm)) and target.is_scalar and not isinstance(x, PrimExpr):
        return const(expr.value, target)
    if (isinstance(expr, IntImm) and expr.dtype != target and target.is_scalar
            and _exact_constant(expr, target)):
        # TVM's cast folds a constant operand (``T.cast(T.int32(1), "float32")`` is
        # ``T.float32(1)``); folded here only where the value is exact in the target type,
        # the conversion of any other constant left to the Cast node's own semantics.
        return const(expr.value, target)
    return expr.astype(target)


def _exact_constant(expr: IntImm, target: DataType) -> bool:
    """Whether ``target`` holds the integer constant ``expr`` exactly (an int in range, or
    an int a float's mantissa holds)."""
    if expr.dtype.is_bool or target.is_bool:
        return False
    value = expr.value
    if target.is_float:
        mantissa = {16: 11, 32: 24, 64: 53}.get(target.bits)
        return mantissa is not None and not target.is_low_precision_float \
            and abs(value) <= 1 << mantissa
    if target.is_int:
        return -(1 << (target.bits - 1)) <= value < 1 << (target.bits - 1)
    if target.is_uint:
        return 0 <= value < 1 << target.bits
    return False


def Cast_(dtype: DTypeArg, x: ExprLike) -> PrimExpr:
    """``T.Cast(dtype, x)``: a ``Cast`` node, always (TVM's node constructor, type first).

    Parameters
    ----------
    dtype : str or type object
        The target type.
    x : PrimExpr or number
        The value.

    Returns
    -------
    PrimExpr

    Examples
    --------
    >>> print(T.Cast("float32", 3))
    Cast(dtype=DataType('float32'), value=IntImm(int32, 3))
    """
    target = to_dtype(dtype)
    return Cast(target, as_expr(x, "T.Cast"))


def reinterpret(*args: Any, dtype: DTypeArg | None = None) -> PrimExpr:
    """The bits of a value read as another type: ``T.reinterpret(dtype, x)``.

    Parameters
    ----------
    *args : (dtype, x), or (x,) with ``dtype=``
        The target type and the value; their total bit widths must agree.
    dtype : str, optional
        The target type (TVM's keyword form).

    Returns
    -------
    PrimExpr
        A ``reinterpret`` builtin call (``x`` itself when it has type ``dtype``).

    Examples
    --------
    >>> @T.prim_func
    ... def bits(X: T.Buffer((1,), "float32"), Y: T.Buffer((1,), "int32")):
    ...     Y[0] = T.reinterpret("int32", X[0])
    >>> y = np.zeros(1, dtype="int32"); tvmscript.build(bits)(np.ones(1, dtype="float32"), y)
    >>> print(hex(y[0]))
    0x3f800000
    """
    if dtype is not None:
        args = (dtype, *args)
    if len(args) != 2:
        raise TypeError("T.reinterpret takes (dtype, value)")
    target, x = to_dtype(args[0]), args[1]
    expr = call_operand(x, "T.reinterpret")
    if target.bits * target.lanes != expr.dtype.bits * expr.dtype.lanes:
        raise TypeError(f"T.reinterpret: cannot reinterpret {expr.dtype} as {target}")
    if expr.dtype == target:
        # Nothing to reinterpret; TVM returns the value too, so programs written either
        # way compare structurally equal.
        return expr
    return Call(target, "reinterpret", (expr,), CallKind.BUILTIN)


def likely(cond: ExprLike, dtype: DTypeArg | None = None) -> PrimExpr:
    """``cond``, marked as usually true (a branch hint; the value is unchanged).

    Parameters
    ----------
    cond : PrimExpr
        A bool expression.
    dtype : optional
        Accepted and ignored (TVM's wrapper).

    Returns
    -------
    PrimExpr
        A ``likely`` builtin call of type ``bool``.

    Examples
    --------
    >>> print(T.likely(T.int32() < 8).dtype)
    bool
    """
    c = _bool_cond(cond, "T.likely")
    return Call(c.dtype, "likely", (c,), CallKind.BUILTIN)


def assume(cond: ExprLike = True, dtype: DTypeArg | None = None) -> PrimExpr:
    """A fact the compiler may rely on: ``T.evaluate(T.assume(c))``.

    Not checked: the program is wrong if it does not hold.

    Parameters
    ----------
    cond : PrimExpr
        A bool expression.
    dtype : optional
        Accepted and ignored (TVM's wrapper).

    Returns
    -------
    PrimExpr
        An ``assume`` builtin call.

    Examples
    --------
    >>> n = T.int32()
    >>> print(T.assume(n > 0).op)
    assume
    """
    c = _bool_cond(cond, "T.assume")
    return Call(as_dtype("bool"), "assume", (c,), CallKind.BUILTIN)


def Ramp_(base: ExprLike, stride: ExprLike, lanes: int) -> PrimExpr:
    """``T.Ramp(base, stride, lanes)``: the vector ``base + stride * [0, 1, ..., lanes-1]``.

    ``A[T.Ramp(i, 1, 4)]`` loads four consecutive elements.

    Parameters
    ----------
    base, stride : int or PrimExpr
        Scalars of one integer type.
    lanes : int
        The number of lanes.

    Returns
    -------
    PrimExpr
        A vector of ``lanes`` lanes.

    Examples
    --------
    >>> print(T.Ramp(0, 2, 4).dtype)
    int32x4
    """
    b, s = _pair(base, stride, "T.Ramp")
    return Ramp(b, s, int(lanes))


def Broadcast_(value: ExprLike, lanes: int) -> PrimExpr:
    """``T.Broadcast(value, lanes)``: a vector of ``lanes`` copies of ``value``.

    Parameters
    ----------
    value : PrimExpr or number
        A scalar.
    lanes : int
        The number of lanes.

    Returns
    -------
    PrimExpr

    Examples
    --------
    >>> print(T.Broadcast(T.float32(1), 8).dtype)
    float32x8
    """
    return Broadcast(as_expr(value, "T.Broadcast"), int(lanes))


def Shuffle_(vectors: Sequence[PrimExpr], indices: Sequence[int | IntImm]) -> PrimExpr:
    """``T.Shuffle(vectors, indices)``: concatenate ``vectors``, then pick lanes by ``indices``.

    Parameters
    ----------
    vectors : list of PrimExpr
        Vectors of one element type.
    indices : list of int
        Constant lane numbers into the concatenation; the result has one lane per index.

    Returns
    -------
    PrimExpr

    Examples
    --------
    >>> print(T.Shuffle([T.Ramp(0, 1, 4)], [3, 2, 1, 0]).dtype)
    int32x4
    """
    return Shuffle(tuple(as_expr(v, "T.Shuffle") for v in vectors), tuple(int(i) for i in indices))


def _call_args(args: Sequence[Any], what: str) -> tuple[PrimExpr, ...]:
    return tuple(call_operand(a, what) if not isinstance(a, str) else _string(a) for a in args)


def _string(text: str) -> PrimExpr:
    return StringImm(text)


def _dtype_forward(
    args: tuple[Any, ...], dtype: DTypeArg | None, what: str
) -> tuple[DataType, str, tuple[Any, ...]]:
    # TVM's call forms: f(dtype, name, *args) or f(name, *args, dtype=...).
    if dtype is None:
        if len(args) < 2:
            raise TypeError(f"{what} takes a result dtype and a function name")
        dtype, args = args[0], args[1:]
    elif not args:
        raise TypeError(f"{what} takes a function name")
    name = args[0]
    if not isinstance(name, str):
        raise TypeError(f"{what}: the function name must be a string, got {name!r}")
    if isinstance(dtype, str) and dtype in ("", "void"):
        # TVM's void result (DataType("")); the IR has no void type, and types the
        # results of TVM's void ops `handle` (irbuilder/tir/tvm_ops.py) as here.
        dtype = "handle"
    return to_dtype(dtype), name, args[1:]


def call_extern(*args: Any, dtype: DTypeArg | None = None) -> PrimExpr:
    """Call the C function ``name``: ``T.call_extern(dtype, name, *args)``.

    ``T.call_extern(name, *args, dtype=...)`` is the same. The function is looked up in the
    process (libc, libm, loaded libraries) and may have side effects.

    Parameters
    ----------
    *args : dtype, name, then the arguments
        The result type (``"handle"`` for ``void``/pointers), the symbol name, and the
        arguments (expressions; strings become ``StringImm``).
    dtype : str, optional
        The result type, when not given first.

    Returns
    -------
    PrimExpr
        The call (use ``T.evaluate`` to call for the effect only).

    Examples
    --------
    >>> @T.prim_func
    ... def cube_root(A: T.Buffer((2,), "float64")):
    ...     for i in range(2):
    ...         A[i] = T.call_extern("float64", "cbrt", A[i])
    >>> a = np.array([8.0, -27.0]); tvmscript.build(cube_root)(a); print(a)
    [ 2. -3.]
    """
    target, name, rest = _dtype_forward(args, dtype, "T.call_extern")
    return Call(target, name, _call_args(rest, "T.call_extern"), CallKind.EXTERN)


def call_pure_extern(*args: Any, dtype: DTypeArg | None = None) -> PrimExpr:
    """Call the side-effect-free C function ``name`` (the forms of :func:`call_extern`).

    TVM's distinction: the call is an expression that depends only on its arguments.

    Parameters
    ----------
    *args : dtype, name, then the arguments
        As for :func:`call_extern`.
    dtype : str, optional
        The result type, when not given first.

    Returns
    -------
    PrimExpr

    Examples
    --------
    >>> print(T.call_pure_extern("float32", "cbrtf", T.float32(8)).op)
    cbrtf
    """
    target, name, rest = _dtype_forward(args, dtype, "T.call_pure_extern")
    return Call(target, name, _call_args(rest, "T.call_pure_extern"), CallKind.PURE_EXTERN)


def call_intrin(*args: Any, dtype: DTypeArg | None = None) -> PrimExpr:
    """Call an intrinsic by name (``"exp"`` or TVM's ``"tir.exp"``); the forms of
    :func:`call_extern`.

    Reaches the intrinsics without a ``T.`` function too (``"expm1"``, ``"erfc"``,
    ``"cbrt"``, ``"fma"``, ``"round_half_away"``), and TVM's builtins by name.

    Parameters
    ----------
    *args : dtype, name, then the arguments
        The result type, the intrinsic's name and its operands.
    dtype : str, optional
        The result type, when not given first.

    Returns
    -------
    PrimExpr

    Examples
    --------
    >>> @T.prim_func
    ... def fused(A: T.Buffer((1,), "float32")):
    ...     A[0] = T.call_intrin("float32", "fma", A[0], T.float32(2), T.float32(1))
    >>> a = np.array([3], dtype="float32"); tvmscript.build(fused)(a); print(a)
    [7.]
    """
    target, op, rest = _dtype_forward(args, dtype, "T.call_intrin")
    name = op.removeprefix("tir.")
    kind = CallKind.BUILTIN if name in _BUILTINS or name in TVM_OPS else CallKind.INTRINSIC
    return Call(target, name, _call_args(rest, "T.call_intrin"), kind)


@dataclass(frozen=True)
class MetaVar:
    """A value marked with ``T.meta_var`` for parse-time use; the parser unwraps ``value``."""

    value: Any

    def __iter__(self) -> Iterator[MetaVar]:
        """The items of a list or tuple value, each a MetaVar: ``a, b = T.meta_var([3, 4])``
        in an IRBuilder program (the parser unpacks the value itself)."""
        return (MetaVar(item) for item in self.value)


def meta_var(value: Any) -> Any:  # a MetaVar; Any: in a kernel it stands for ``value``
    """Mark ``value`` (any Python object) for use at parse time, not as IR.

    ``x = T.meta_var(expr)`` in a kernel makes ``x`` stand for ``expr`` itself where it is
    used, instead of binding a kernel variable with a ``LetStmt``.

    Parameters
    ----------
    value : Any
        An expression, a number, a Python object.

    Returns
    -------
    MetaVar
        The wrapper the parser unwraps.

    Examples
    --------
    >>> @T.prim_func
    ... def f(A: T.Buffer((2,), "int32")):
    ...     two = T.meta_var(2)
    ...     for i in range(2):
    ...         A[i] = i * two
    >>> "A[i] = i * 2" in f.script()
    True
    """
    return MetaVar(value)
