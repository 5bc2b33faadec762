"""Expression nodes (PrimExpr) with Python operator overloading.

Nodes are frozen dataclasses compared by identity: ``==`` on an expression
builds an :class:`EQ` node, as in TVMScript (``if A[i] == 0:``). Structural
comparison lives in :mod:`irbuilder.ir.structural`.

Python numbers mixed into expressions are wrapped into typed constants
following :data:`PROMOTION_RULES`; integer operations on two constants fold
on construction.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Union, cast

from .dtype import DataType, DataTypeLike, as_dtype
from .int_arith import int_binary, wrap_int
from .span import Span

if TYPE_CHECKING:
    from .buffer import Buffer, IterVar

__all__ = [
    "binary",
    "folds_at_construction",
    "BINARY_OP_NAMES",
    "EQ",
    "GE",
    "GT",
    "LE",
    "LT",
    "NE",
    "PROMOTION_RULES",
    "Add",
    "And",
    "BinaryOp",
    "Broadcast",
    "BufferLoad",
    "Call",
    "CallKind",
    "Cast",
    "CmpOp",
    "Div",
    "ExprLike",
    "FloatImm",
    "FloorDiv",
    "FloorMod",
    "IntImm",
    "Let",
    "Max",
    "Min",
    "Mod",
    "Mul",
    "Not",
    "Or",
    "PointerType",
    "PrimExpr",
    "Ramp",
    "Reduce",
    "ReduceKind",
    "Select",
    "Shuffle",
    "SizeVar",
    "StringImm",
    "Sub",
    "Var",
    "binary_dtype",
    "const",
    "convert",
    "promote",
    "reduce_identity",
]

_BOOL = as_dtype("bool")
_INT32 = as_dtype("int32")
_INT64 = as_dtype("int64")
_FLOAT32 = as_dtype("float32")
_HANDLE = as_dtype("handle")

ExprLike = Union["PrimExpr", int, float, bool]

MAX_LANES = 1024
"""The widest vector an expression may have (Ramp/Broadcast lanes)."""


def _set(obj: object, name: str, value: Any) -> None:
    object.__setattr__(obj, name, value)


@dataclass(frozen=True, eq=False, slots=True)
class PrimExpr:
    """Base of all scalar and vector expressions; every one has a ``dtype``."""

    span: Span | None = field(default=None, kw_only=True, repr=False)

    if TYPE_CHECKING:

        @property
        def dtype(self) -> DataType: ...

    __hash__ = object.__hash__

    # -- arithmetic -------------------------------------------------------
    def __add__(self, other: ExprLike) -> PrimExpr:
        return _binary(Add, self, other)

    def __radd__(self, other: ExprLike) -> PrimExpr:
        return _binary(Add, other, self)

    def __sub__(self, other: ExprLike) -> PrimExpr:
        return _binary(Sub, self, other)

    def __rsub__(self, other: ExprLike) -> PrimExpr:
        return _binary(Sub, other, self)

    def __mul__(self, other: ExprLike) -> PrimExpr:
        return _binary(Mul, self, other)

    def __rmul__(self, other: ExprLike) -> PrimExpr:
        return _binary(Mul, other, self)

    def __truediv__(self, other: ExprLike) -> PrimExpr:
        return _binary(Div, self, other)

    def __rtruediv__(self, other: ExprLike) -> PrimExpr:
        return _binary(Div, other, self)

    def __floordiv__(self, other: ExprLike) -> PrimExpr:
        return _binary(FloorDiv, self, other)

    def __rfloordiv__(self, other: ExprLike) -> PrimExpr:
        return _binary(FloorDiv, other, self)

    def __mod__(self, other: ExprLike) -> PrimExpr:
        return _binary(FloorMod, self, other)

    def __rmod__(self, other: ExprLike) -> PrimExpr:
        return _binary(FloorMod, other, self)

    def __neg__(self) -> PrimExpr:
        if isinstance(self, IntImm):
            return IntImm(self.dtype, wrap_int(-self.value, self.dtype))
        if isinstance(self, FloatImm):
            return FloatImm(self.dtype, -self.value)
        return _binary(Mul, self, -1)

    def __pos__(self) -> PrimExpr:
        return self

    # -- comparisons ------------------------------------------------------
    def __eq__(self, other: object) -> PrimExpr:  # type: ignore[override]
        return _binary(EQ, self, _check_operand(other))

    def __ne__(self, other: object) -> PrimExpr:  # type: ignore[override]
        return _binary(NE, self, _check_operand(other))

    def __lt__(self, other: ExprLike) -> PrimExpr:
        return _binary(LT, self, other)

    def __le__(self, other: ExprLike) -> PrimExpr:
        return _binary(LE, self, other)

    def __gt__(self, other: ExprLike) -> PrimExpr:
        return _binary(GT, self, other)

    def __ge__(self, other: ExprLike) -> PrimExpr:
        return _binary(GE, self, other)

    # -- bitwise and logical ----------------------------------------------
    def __and__(self, other: ExprLike) -> PrimExpr:
        return _bitwise("bitwise_and", And, self, other)

    def __rand__(self, other: ExprLike) -> PrimExpr:
        return _bitwise("bitwise_and", And, other, self)

    def __or__(self, other: ExprLike) -> PrimExpr:
        return _bitwise("bitwise_or", Or, self, other)

    def __ror__(self, other: ExprLike) -> PrimExpr:
        return _bitwise("bitwise_or", Or, other, self)

    def __xor__(self, other: ExprLike) -> PrimExpr:
        return _bitwise("bitwise_xor", None, self, other)

    def __rxor__(self, other: ExprLike) -> PrimExpr:
        return _bitwise("bitwise_xor", None, other, self)

    def __lshift__(self, other: ExprLike) -> PrimExpr:
        return _bitwise("shift_left", None, self, other)

    def __rlshift__(self, other: ExprLike) -> PrimExpr:
        return _bitwise("shift_left", None, other, self)

    def __rshift__(self, other: ExprLike) -> PrimExpr:
        return _bitwise("shift_right", None, self, other)

    def __rrshift__(self, other: ExprLike) -> PrimExpr:
        return _bitwise("shift_right", None, other, self)

    def __invert__(self) -> PrimExpr:
        if self.dtype.is_bool:
            return Not(self)
        if not self.dtype.is_integer:
            raise TypeError(f"operator ~ needs an integer or bool operand, got {self.dtype}")
        return Call(self.dtype, "bitwise_not", (self,), CallKind.INTRINSIC)

    def __bool__(self) -> bool:
        raise TypeError(
            "cannot use a symbolic expression as a Python bool: "
            f"{type(self).__name__} of type {self.dtype} has no value at parse time "
            "(use an `if` statement inside the kernel or T.if_then_else / T.Select)"
        )

    def __index__(self) -> int:
        raise TypeError(
            f"cannot use a symbolic {self.dtype} expression where a Python int is needed"
        )

    def astype(self, dtype: DataTypeLike) -> PrimExpr:
        """Cast to ``dtype`` (no node when the type already matches)."""
        target = as_dtype(dtype)
        return self if self.dtype == target else Cast(target, self)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.dtype}>"


# ---------------------------------------------------------------------------
# Leaves
# ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PointerType:
    """The type of a data pointer: the element type and the memory scope."""

    element: DataType
    scope: str = "global"

    # TVM's field names, for code written against its PointerType.
    @property
    def element_type(self) -> DataType:
        return self.element

    @property
    def storage_scope(self) -> str:
        return self.scope


@dataclass(frozen=True, eq=False, slots=True)
class Var(PrimExpr):
    """A variable, identified by the object (``name`` is only a printing hint).

    A data pointer is a ``handle`` Var with a :class:`PointerType` annotation.
    The name is the one field that may change after construction (see
    :meth:`with_name_hint`), so that ``def_`` can name values the parser binds.
    """

    name: str = "v"
    dtype: DataType = _INT32
    type_annotation: PointerType | None = None

    def __post_init__(self) -> None:
        given: object = self.dtype  # strings are accepted at run time for convenience
        if not isinstance(given, DataType):
            _set(self, "dtype", as_dtype(given))  # type: ignore[arg-type]

    def set_name_hint(self, name: str) -> None:
        """Rename for printing; identity (and so semantics) is unchanged."""
        _set(self, "name", name)

    def __repr__(self) -> str:
        return f"Var({self.name!r}, {self.dtype})"


@dataclass(frozen=True, eq=False, slots=True)
class SizeVar(Var):
    """A variable known to be non-negative (a symbolic size)."""

    def __repr__(self) -> str:
        return f"SizeVar({self.name!r}, {self.dtype})"


@dataclass(frozen=True, eq=False, slots=True)
class IntImm(PrimExpr):
    """An integer or bool constant."""

    dtype: DataType
    value: int

    def __post_init__(self) -> None:
        # Conversions only where needed: constants are built by the hundred thousand.
        dtype = self.dtype
        if dtype.__class__ is not DataType:
            dtype = as_dtype(dtype)
            _set(self, "dtype", dtype)
        if not (dtype.is_integer or dtype.is_bool) or dtype.is_vector:
            raise TypeError(f"IntImm needs a scalar integer or bool type, got {dtype}")
        value = self.value
        if value.__class__ is not int:
            value = int(value)
            _set(self, "value", value)
        if not dtype.min_value <= value <= dtype.max_value:
            raise ValueError(f"constant {value} does not fit in {dtype}")

    def __bool__(self) -> bool:
        return self.value != 0

    def __int__(self) -> int:
        return self.value

    def __index__(self) -> int:
        return self.value

    def __repr__(self) -> str:
        return f"IntImm({self.dtype}, {self.value})"


@dataclass(frozen=True, eq=False, slots=True)
class FloatImm(PrimExpr):
    """A floating-point constant."""

    dtype: DataType
    value: float

    def __post_init__(self) -> None:
        dtype = as_dtype(self.dtype)
        _set(self, "dtype", dtype)
        if not dtype.is_float or dtype.is_vector:
            raise TypeError(f"FloatImm needs a scalar float type, got {dtype}")
        value = float(self.value)
        if math.isfinite(value) and abs(value) > dtype.max_value:
            raise ValueError(f"constant {value!r} does not fit in {dtype} (use 'inf' for infinity)")
        _set(self, "value", value)

    def __float__(self) -> float:
        return self.value

    def __repr__(self) -> str:
        return f"FloatImm({self.dtype}, {self.value})"


@dataclass(frozen=True, eq=False, slots=True)
class StringImm(PrimExpr):
    """A string constant (used for messages and extern names)."""

    value: str
    dtype: DataType = field(default=_HANDLE, init=False)

    def __repr__(self) -> str:
        return f"StringImm({self.value!r})"


# ---------------------------------------------------------------------------
# Operators
# ---------------------------------------------------------------------------


@dataclass(frozen=True, eq=False, slots=True)
class Cast(PrimExpr):
    """Convert ``value`` to ``dtype`` (lanes must match)."""

    dtype: DataType
    value: PrimExpr

    def __post_init__(self) -> None:
        dtype = as_dtype(self.dtype)
        _set(self, "dtype", dtype)
        if dtype.lanes != self.value.dtype.lanes:
            raise TypeError(f"cannot cast {self.value.dtype} to {dtype}: lanes differ")
        source = self.value.dtype
        if (source.is_handle and dtype.is_float) or (dtype.is_handle and source.is_float):
            raise TypeError(
                f"cannot cast {source} to {dtype}: a handle (pointer) converts to and from "
                "integer types only"
            )


@dataclass(frozen=True, eq=False, slots=True)
class BinaryOp(PrimExpr):
    """Base of two-operand nodes; both operands have the same type."""

    a: PrimExpr
    b: PrimExpr
    dtype: DataType = field(init=False)

    symbol = "?"

    def __post_init__(self) -> None:
        dtype = self.a.dtype
        if dtype != self.b.dtype:
            raise TypeError(
                f"{type(self).__name__} operands have different types: "
                f"{dtype} and {self.b.dtype}"
            )
        object.__setattr__(self, "dtype", self._result_type(dtype))

    def _result_type(self, operand: DataType) -> DataType:
        return operand


@dataclass(frozen=True, eq=False, slots=True)
class Add(BinaryOp):
    symbol = "+"


@dataclass(frozen=True, eq=False, slots=True)
class Sub(BinaryOp):
    symbol = "-"


@dataclass(frozen=True, eq=False, slots=True)
class Mul(BinaryOp):
    symbol = "*"


@dataclass(frozen=True, eq=False, slots=True)
class Div(BinaryOp):
    """``a / b``: true division for floats, truncating division for integers."""

    symbol = "/"


@dataclass(frozen=True, eq=False, slots=True)
class Mod(BinaryOp):
    """Truncating remainder (sign follows the dividend), ``T.truncmod``."""

    symbol = "%t"


@dataclass(frozen=True, eq=False, slots=True)
class FloorDiv(BinaryOp):
    """Division rounding toward minus infinity, Python's ``//``."""

    symbol = "//"


@dataclass(frozen=True, eq=False, slots=True)
class FloorMod(BinaryOp):
    """Remainder with the divisor's sign, Python's ``%``."""

    symbol = "%"


@dataclass(frozen=True, eq=False, slots=True)
class Min(BinaryOp):
    symbol = "min"


@dataclass(frozen=True, eq=False, slots=True)
class Max(BinaryOp):
    symbol = "max"


@dataclass(frozen=True, eq=False, slots=True)
class CmpOp(BinaryOp):
    """Base of comparisons; the result is bool with the operands' lanes."""

    def _result_type(self, operand: DataType) -> DataType:
        return _BOOL.with_lanes(operand.lanes)


@dataclass(frozen=True, eq=False, slots=True)
class EQ(CmpOp):
    symbol = "=="


@dataclass(frozen=True, eq=False, slots=True)
class NE(CmpOp):
    symbol = "!="


@dataclass(frozen=True, eq=False, slots=True)
class LT(CmpOp):
    symbol = "<"


@dataclass(frozen=True, eq=False, slots=True)
class LE(CmpOp):
    symbol = "<="


@dataclass(frozen=True, eq=False, slots=True)
class GT(CmpOp):
    symbol = ">"


@dataclass(frozen=True, eq=False, slots=True)
class GE(CmpOp):
    symbol = ">="


@dataclass(frozen=True, eq=False, slots=True)
class And(BinaryOp):
    """Logical and of two bool expressions."""

    symbol = "and"

    def _result_type(self, operand: DataType) -> DataType:
        if not operand.is_bool:
            raise TypeError(f"And needs bool operands, got {operand}")
        return operand


@dataclass(frozen=True, eq=False, slots=True)
class Or(BinaryOp):
    """Logical or of two bool expressions."""

    symbol = "or"

    def _result_type(self, operand: DataType) -> DataType:
        if not operand.is_bool:
            raise TypeError(f"Or needs bool operands, got {operand}")
        return operand


@dataclass(frozen=True, eq=False, slots=True)
class Not(PrimExpr):
    """Logical negation of a bool expression."""

    a: PrimExpr
    dtype: DataType = field(init=False)

    def __post_init__(self) -> None:
        if not self.a.dtype.is_bool:
            raise TypeError(f"Not needs a bool operand, got {self.a.dtype}")
        _set(self, "dtype", self.a.dtype)


@dataclass(frozen=True, eq=False, slots=True)
class Select(PrimExpr):
    """``true_value if condition else false_value``; both sides are evaluated."""

    condition: PrimExpr
    true_value: PrimExpr
    false_value: PrimExpr
    dtype: DataType = field(init=False)

    def __post_init__(self) -> None:
        if not self.condition.dtype.is_bool:
            raise TypeError(f"Select condition must be bool, got {self.condition.dtype}")
        if self.true_value.dtype != self.false_value.dtype:
            raise TypeError(
                "Select branches have different types: "
                f"{self.true_value.dtype} and {self.false_value.dtype}"
            )
        _set(self, "dtype", self.true_value.dtype)


@dataclass(frozen=True, eq=False, slots=True)
class Let(PrimExpr):
    """Bind ``var`` to ``value`` inside ``body``."""

    var: Var
    value: PrimExpr
    body: PrimExpr
    dtype: DataType = field(init=False)

    def __post_init__(self) -> None:
        if self.var.dtype != self.value.dtype:
            raise TypeError(f"Let binds {self.var.dtype} var to a {self.value.dtype} value")
        _set(self, "dtype", self.body.dtype)


class CallKind(enum.Enum):
    """How a :class:`Call` is implemented."""

    INTRINSIC = "intrinsic"
    """A pure math or bit intrinsic (``exp``, ``bitwise_and``...)."""
    BUILTIN = "builtin"
    """A compiler builtin with special semantics (``likely``, ``reinterpret``...)."""
    EXTERN = "extern"
    """A call to a C symbol that may have side effects."""
    PURE_EXTERN = "pure_extern"
    """A call to a C symbol without side effects."""


@dataclass(frozen=True, eq=False, slots=True)
class Call(PrimExpr):
    """A call of an intrinsic, builtin or external function by name."""

    dtype: DataType
    op: str
    args: tuple[PrimExpr, ...]
    kind: CallKind = CallKind.INTRINSIC

    def __post_init__(self) -> None:
        _set(self, "dtype", as_dtype(self.dtype))
        _set(self, "args", tuple(self.args))


@dataclass(frozen=True, eq=False, slots=True)
class Ramp(PrimExpr):
    """The vector ``[base, base + stride, ..., base + (lanes - 1) * stride]``."""

    base: PrimExpr
    stride: PrimExpr
    lanes: int
    dtype: DataType = field(init=False)

    def __post_init__(self) -> None:
        if self.base.dtype != self.stride.dtype or self.base.dtype.is_vector:
            raise TypeError(
                f"Ramp base and stride must be scalars of one type, "
                f"got {self.base.dtype} and {self.stride.dtype}"
            )
        if not 2 <= int(self.lanes) <= MAX_LANES:
            raise ValueError(f"Ramp needs 2 to {MAX_LANES} lanes, got {self.lanes}")
        _set(self, "lanes", int(self.lanes))
        _set(self, "dtype", self.base.dtype.with_lanes(self.lanes))


@dataclass(frozen=True, eq=False, slots=True)
class Broadcast(PrimExpr):
    """A vector with every lane equal to the scalar ``value``."""

    value: PrimExpr
    lanes: int
    dtype: DataType = field(init=False)

    def __post_init__(self) -> None:
        if self.value.dtype.is_vector:
            raise TypeError(f"Broadcast needs a scalar value, got {self.value.dtype}")
        if not 2 <= int(self.lanes) <= MAX_LANES:
            raise ValueError(f"Broadcast needs 2 to {MAX_LANES} lanes, got {self.lanes}")
        _set(self, "lanes", int(self.lanes))
        _set(self, "dtype", self.value.dtype.with_lanes(self.lanes))


@dataclass(frozen=True, eq=False, slots=True)
class Shuffle(PrimExpr):
    """Concatenate ``vectors`` and pick lanes by constant ``indices``."""

    vectors: tuple[PrimExpr, ...]
    indices: tuple[int, ...]
    dtype: DataType = field(init=False)

    def __post_init__(self) -> None:
        _set(self, "vectors", tuple(self.vectors))
        _set(self, "indices", tuple(int(i) for i in self.indices))
        if not self.vectors:
            raise ValueError("Shuffle needs at least one vector")
        element = self.vectors[0].dtype.element_of()
        total = 0
        for vector in self.vectors:
            if vector.dtype.element_of() != element:
                raise TypeError("Shuffle vectors must share one element type")
            total += vector.dtype.lanes
        for index in self.indices:
            if not 0 <= index < total:
                raise ValueError(f"Shuffle index {index} out of range [0, {total})")
        _set(self, "dtype", element.with_lanes(len(self.indices)))


@dataclass(frozen=True, eq=False, slots=True)
class BufferLoad(PrimExpr):
    """Read ``buffer[indices]``; a Ramp last index reads a vector."""

    buffer: Buffer
    indices: tuple[PrimExpr, ...]
    dtype: DataType = field(init=False)

    def __post_init__(self) -> None:
        _set(self, "indices", tuple(self.indices))
        check_indices(self.buffer.name, self.indices)
        lanes = 1
        for index in self.indices:
            lanes = max(lanes, index.dtype.lanes)
        base = self.buffer.dtype
        _set(self, "dtype", base if lanes == 1 else base.with_lanes(base.lanes * lanes))


def check_indices(buffer_name: str, indices: tuple[PrimExpr, ...]) -> None:
    """Raise TypeError unless every index is an integer (scalar or vector) expression."""
    for index in indices:
        if not index.dtype.element_of().is_integer:
            raise TypeError(
                f"buffer {buffer_name!r}: index must be an integer, got {index.dtype}"
            )


class ReduceKind(enum.Enum):
    """The combiner of a :class:`Reduce` (CINN: kSum, kMul, kMax, kMin, kAll, kAny)."""

    SUM = "sum"
    PROD = "prod"
    MAX = "max"
    MIN = "min"
    ALL = "all"
    ANY = "any"


def reduce_identity(kind: ReduceKind, dtype: DataType, *, finite: bool = False) -> PrimExpr:
    """The init value of a reduction: sum 0, prod 1, max lowest, min highest...

    A float max/min starts at -inf/+inf (neutral for every input); ``finite=True`` gives the
    lowest/highest finite value instead, TVM's reducer identity (``min_value(dtype)``), which
    the schedule primitives match and produce so their IR equals TVM's."""
    if kind in (ReduceKind.ALL, ReduceKind.ANY):
        if not dtype.is_bool:
            raise TypeError(f"T.{kind.value} reduces bool values, got {dtype}")
        return IntImm(dtype, 1 if kind is ReduceKind.ALL else 0)
    if dtype.is_bool or dtype.is_handle:
        raise TypeError(f"T.{kind.value} cannot reduce {dtype} values")
    value: int | float
    if kind is ReduceKind.SUM:
        value = 0
    elif kind is ReduceKind.PROD:
        value = 1
    elif kind is ReduceKind.MAX:
        value = -float("inf") if dtype.is_float and not finite else dtype.min_value
    else:
        value = float("inf") if dtype.is_float and not finite else dtype.max_value
    return const(value, dtype)


@dataclass(frozen=True, eq=False, slots=True)
class Reduce(PrimExpr):
    """Combine ``source`` over the iteration domain of ``axes`` with ``kind``.

    ``init`` is derived from the kind and the source type (sum 0, prod 1, max
    the lowest value, min the highest, all true, any false).
    """

    kind: ReduceKind
    source: PrimExpr
    axes: tuple[IterVar, ...]
    condition: PrimExpr | None = None
    init: PrimExpr = field(init=False)
    dtype: DataType = field(init=False)

    def __post_init__(self) -> None:
        _set(self, "axes", tuple(self.axes))
        _set(self, "dtype", self.source.dtype)
        _set(self, "init", reduce_identity(self.kind, self.source.dtype))


# ---------------------------------------------------------------------------
# Conversion and promotion
# ---------------------------------------------------------------------------


def const(value: int | float | bool, dtype: DataTypeLike | None = None) -> PrimExpr:
    """A typed constant; the default type follows Python's value."""
    if dtype is None:
        if isinstance(value, bool):
            dtype = _BOOL
        elif isinstance(value, int):
            dtype = _INT32 if -(2**31) <= value < 2**31 else _INT64
        else:
            dtype = _FLOAT32
    target = as_dtype(dtype)
    if target.is_vector:
        return Broadcast(const(value, target.element_of()), target.lanes)
    if target.is_float:
        return FloatImm(target, float(value))
    if target.is_bool:
        return IntImm(target, 1 if value else 0)
    if target.is_integer:
        if isinstance(value, float) and not value.is_integer():
            raise TypeError(f"cannot make a {target} constant from {value!r}")
        return IntImm(target, int(value))
    raise TypeError(f"cannot make a constant of type {target}")


def _stand_in(value: object) -> object:
    """An object standing for an expression (a schedule's sampled ``ExprRV``, which TVM
    makes a Var) gives that expression by ``__prim_expr__``; anything else is itself."""
    method = getattr(type(value), "__prim_expr__", None)
    return value if method is None else method(value)


def _operand(value: object) -> ExprLike:
    if isinstance(value, (PrimExpr, int, float)):
        return value
    return cast(ExprLike, _stand_in(value))


def convert(value: object) -> PrimExpr:
    """Wrap a Python number into a constant; pass expressions through."""
    if isinstance(value, PrimExpr):
        return value
    value = _stand_in(value)
    if isinstance(value, PrimExpr):
        return value
    if isinstance(value, (bool, int, float)):
        return const(value)
    if isinstance(value, str):
        return StringImm(value)
    raise TypeError(f"cannot convert {type(value).__name__} {value!r} to an expression")


def _check_operand(value: object) -> ExprLike:
    if isinstance(value, (PrimExpr, bool, int, float)):
        return value
    raise TypeError(f"cannot compare an expression with {type(value).__name__}")


PROMOTION_RULES: tuple[tuple[str, str], ...] = (
    ("same type", "that type"),
    ("Python int with an expression of any numeric type", "the expression's type"),
    ("Python float with a float expression", "the expression's type"),
    ("Python float with an integer or bool expression", "float32"),
    ("Python bool with an expression", "the expression's type (bool -> 0/1 for numbers)"),
    ("bool with an integer or float", "the integer or float type"),
    ("int/uint of different widths", "the wider; same width: the unsigned type (as TVM)"),
    ("integer with float", "the float type"),
    ("float of different widths", "the wider"),
    ("scalar with vector", "the scalar is broadcast to the vector's lanes"),
)
"""The dtype promotion table applied by the operators, one rule per row."""


def _rank(dtype: DataType) -> tuple[int, int, int]:
    # Floats win over integers, integers over bool; among integers the wider
    # wins and, at equal width, the unsigned type wins (TVM's BinaryOpMatchTypes:
    # int8 & uint8 is computed in uint8).
    if dtype.is_float:
        return (2, dtype.bits, 0)
    if dtype.is_integer:
        return (1, dtype.bits, 1 if dtype.is_uint else 0)
    if dtype.is_bool:
        return (0, 0, 0)
    raise TypeError(f"no arithmetic on {dtype} values")


def binary_dtype(a: DataType, b: DataType) -> DataType:
    """The common type of two operand types (see :data:`PROMOTION_RULES`)."""
    if a == b:
        return a
    if a.lanes != b.lanes and a.lanes != 1 and b.lanes != 1:
        raise TypeError(f"vector lanes differ: {a} and {b}")
    lanes = max(a.lanes, b.lanes)
    ea, eb = a.element_of(), b.element_of()
    winner = ea if _rank(ea) >= _rank(eb) else eb
    return winner.with_lanes(lanes)


def _as_type(expr: PrimExpr, dtype: DataType) -> PrimExpr:
    if expr.dtype == dtype:
        return expr
    if expr.dtype.element_of() == dtype.element_of():
        return Broadcast(expr, dtype.lanes)
    converted = expr
    if isinstance(expr, IntImm) and dtype.element_of().is_float:
        converted = FloatImm(dtype.element_of(), float(expr.value))
    elif isinstance(expr, IntImm) and dtype.element_of().is_integer:
        converted = IntImm(dtype.element_of(), wrap_int(expr.value, dtype.element_of()))
    elif isinstance(expr, FloatImm) and dtype.element_of().is_float:
        converted = FloatImm(dtype.element_of(), expr.value)
    else:
        converted = Cast(dtype.element_of().with_lanes(expr.dtype.lanes), expr)
    if converted.dtype.lanes != dtype.lanes:
        converted = Broadcast(converted, dtype.lanes)
    return converted


def _literal(value: int | float | bool, like: DataType) -> PrimExpr:
    element = like.element_of()
    if isinstance(value, bool):
        lit = const(value, element if not element.is_handle else _BOOL)
    elif isinstance(value, int):
        lit = const(value, element) if (element.is_integer or element.is_float) else const(value)
    elif element.is_float:
        lit = const(value, element)
    else:
        lit = const(value, _FLOAT32)
    return lit


def promote(a: ExprLike, b: ExprLike) -> tuple[PrimExpr, PrimExpr]:
    """Wrap Python numbers and cast both operands to their common type."""
    a, b = _operand(a), _operand(b)
    if not isinstance(a, PrimExpr) and not isinstance(b, PrimExpr):
        return convert(a), convert(b)
    if not isinstance(a, PrimExpr):
        assert isinstance(b, PrimExpr)
        a = _literal(a, b.dtype)
    if not isinstance(b, PrimExpr):
        b = _literal(b, a.dtype)
    target = binary_dtype(a.dtype, b.dtype)
    return _as_type(a, target), _as_type(b, target)


BINARY_OP_NAMES: dict[type[BinaryOp], str] = {
    Add: "add",
    Sub: "sub",
    Mul: "mul",
    Div: "div",
    Mod: "mod",
    FloorDiv: "floordiv",
    FloorMod: "floormod",
    Min: "min",
    Max: "max",
    EQ: "eq",
    NE: "ne",
    LT: "lt",
    LE: "le",
    GT: "gt",
    GE: "ge",
    And: "and",
    Or: "or",
}
"""The operator name of each binary node (the names of :func:`int_binary`, plus comparisons)."""

_COMPARISONS: dict[type[BinaryOp], Callable[[int, int], bool]] = {
    EQ: lambda x, y: x == y,
    NE: lambda x, y: x != y,
    LT: lambda x, y: x < y,
    LE: lambda x, y: x <= y,
    GT: lambda x, y: x > y,
    GE: lambda x, y: x >= y,
}


def _fold(cls: type[BinaryOp], a: IntImm, b: IntImm) -> PrimExpr | None:
    x, y = a.value, b.value
    compare = _COMPARISONS.get(cls)
    if compare is not None:
        return IntImm(_BOOL, compare(x, y))
    if cls in (And, Or):
        return IntImm(_BOOL, bool(int_binary(BINARY_OP_NAMES[cls], x, y, a.dtype)))
    if a.dtype.is_bool or cls not in BINARY_OP_NAMES:
        return None
    result = int_binary(BINARY_OP_NAMES[cls], x, y, a.dtype)
    return None if result is None else IntImm(a.dtype, result)


def _binary(cls: type[BinaryOp], a: ExprLike, b: ExprLike) -> PrimExpr:
    x, y = promote(a, b)
    if cls in (And, Or):
        if not (x.dtype.is_bool and y.dtype.is_bool):
            raise TypeError(f"{cls.__name__} needs bool operands, got {x.dtype} and {y.dtype}")
    if isinstance(x, IntImm) and isinstance(y, IntImm):
        folded = _fold(cls, x, y)
        if folded is not None:
            return folded
    identity = _identity(cls, x, y)
    return cls(x, y) if identity is None else identity


def _constant(e: PrimExpr) -> int | float | None:
    """The value of a scalar constant, for the identity rules (None otherwise)."""
    if isinstance(e, (IntImm, FloatImm)):
        return e.value
    return None


def _may_trap(expr: PrimExpr) -> bool:
    from .traps import may_trap  # traps walks nodes with functor, which imports this module

    return may_trap(expr)


def _identity(cls: type[BinaryOp], x: PrimExpr, y: PrimExpr) -> PrimExpr | None:
    """TVM's construction-time simplifications of an operation with one constant operand
    (its arith ``TryConstFold``): ``x + 0``, ``x - 0``, ``x * 1``, ``x // 1`` are ``x``,
    ``x * 0`` and ``x % 1`` (floor or truncated) are zero, ``0 // x`` and ``0 % x`` are zero,
    ``True and x`` is ``x``... TVM's operators build these, so its programs (and the
    expected programs of its tests) never hold such nodes. Floats too, as TVM does:
    ``x * 0.0`` is ``0.0`` whatever ``x`` (a NaN included)."""
    a, b = _constant(x), _constant(y)
    if a is None and b is None:
        return None
    result = _identity_rule(cls, x, y, a, b)
    other = x if a is None else y  # the operand that is not a constant (or the second)
    if result is not None and result is not other and _may_trap(other):
        # ``(i // j) * 0``, ``0 // j``, ``(i // j) % 1`` would drop a division that raises
        # ZeroDivisionError here (this project's semantics); TVM folds them
        return None
    return result


def _identity_rule(cls: type[BinaryOp], x: PrimExpr, y: PrimExpr,
                   a: int | float | None, b: int | float | None) -> PrimExpr | None:
    if cls is Add:
        return y if a == 0 else (x if b == 0 else None)
    if cls is Sub:
        return x if b == 0 else None
    if cls is Mul:
        if a is not None:
            return y if a == 1 else (x if a == 0 else None)
        return x if b == 1 else (y if b == 0 else None)
    if cls in (Div, FloorDiv):
        return x if b == 1 or a == 0 else None
    if cls in (Mod, FloorMod):
        if b == 1 and x.dtype.is_integer:
            return IntImm(x.dtype, 0)
        return x if a == 0 else None
    if cls is And:
        if a is not None:
            return y if a else x
        return x if b else y
    if cls is Or:
        if a is not None:
            return x if a else y
        return y if b else x
    return None


def folds_at_construction(expr: BinaryOp) -> bool:
    """Whether the operators would not build ``expr`` as it is (an identity of TVM's
    construction-time folding applies): the printer then spells it as the node."""
    return _identity(type(expr), expr.a, expr.b) is not None


def binary(cls: type[BinaryOp], a: ExprLike, b: ExprLike) -> PrimExpr:
    """``cls(a, b)`` as the operators build it: operands promoted, integer constants folded
    (:func:`~irbuilder.ir.int_arith.int_binary`; what belongs to run time is kept)."""
    return _binary(cls, a, b)


def _bitwise(op: str, logical: type[BinaryOp] | None, a: ExprLike, b: ExprLike) -> PrimExpr:
    x, y = promote(a, b)
    if x.dtype.is_bool and logical is not None:
        return _binary(logical, x, y)
    if not x.dtype.element_of().is_integer:
        raise TypeError(f"{op} needs integer operands, got {x.dtype} and {y.dtype}")
    return Call(x.dtype, op, (x, y), CallKind.INTRINSIC)


def as_index_list(indices: Sequence[ExprLike]) -> tuple[PrimExpr, ...]:
    """Convert Python ints in an index list to int32 constants."""
    return tuple(convert(i) for i in indices)
