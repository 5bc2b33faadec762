"""Helpers shared by the ``T.*`` builder modules, and the scalar type objects."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar, Union

from ..builder import Frame, IRBuilder, IRBuilderError, current_span
from ..frames import BlockFrame
from ..ir import (
    BufferLoad,
    BufferRegion,
    DataType,
    DataTypeLike,
    ExprLike,
    FloatImm,
    IntImm,
    PointerType,
    PrimExpr,
    Ramp,
    SizeVar,
    Span,
    Stmt,
    Var,
    as_dtype,
    const,
    convert,
)
from ..ir.expr_text import expr_text

__all__ = [
    "DTypeArg",
    "HandleType",
    "ScalarType",
    "add_stmt",
    "as_expr",
    "builder",
    "index_expr",
    "innermost_block",
    "span",
    "to_dtype",
]

_FrameT = TypeVar("_FrameT", bound=Frame)

DTypeArg = Union[DataTypeLike, "ScalarType"]
"""A dtype as TVMScript accepts it: ``"float32"``, a DataType or ``T.float32``."""


def to_dtype(value: DTypeArg) -> DataType:
    """Resolve a :data:`DTypeArg` to a DataType."""
    if isinstance(value, ScalarType):
        return value.dtype
    return as_dtype(value)


def builder(what: str) -> IRBuilder:
    """The current IRBuilder; ``what`` (``"T.evaluate"``) names the caller in errors."""
    return IRBuilder.current(what)


def span() -> Span | None:
    """The span to stamp on nodes created now."""
    return current_span()


def add_stmt(stmt: Stmt, what: str) -> None:
    """Append a statement to the innermost frame of the current builder."""
    builder(what).add_stmt(stmt, what)


def innermost_block(what: str) -> BlockFrame:
    """The innermost frame, which must be a ``T.block``."""
    top = builder(what).top()
    if not isinstance(top, BlockFrame):
        where = "outside any frame" if top is None else f"inside {top.kind}"
        raise IRBuilderError(f"{what} must be called directly inside a T.block frame, not {where}")
    return top


def as_expr(value: object, what: str) -> PrimExpr:
    """Convert a Python number or expression; other values are a TypeError naming ``what``."""
    if isinstance(value, (PrimExpr, bool, int, float)):
        return convert(value)
    raise TypeError(f"{what}: expected an expression or a number, got {type(value).__name__}")


def call_operand(value: object, what: str) -> PrimExpr:
    """An argument of a call node: as :func:`as_expr`, and a region such as ``A[0:16]``
    is its :func:`vector_load` (TVM's ``tir.Call``)."""
    if not isinstance(value, BufferRegion):
        return as_expr(value, what)
    return vector_load(value, what)


def vector_load(region: BufferRegion, what: str) -> BufferLoad:
    """The load of ``region`` as TVM reads a sliced buffer used as a value (``A[0:16] *
    2``, a call's argument): a dimension of extent 1 indexed by its start, the one of a
    constant extent by a unit-stride ``Ramp``."""
    indices: list[PrimExpr] = []
    for rng in region.region:
        extent = rng.extent
        if isinstance(extent, IntImm) and extent.value == 1:
            indices.append(rng.min)
        elif isinstance(extent, IntImm) and extent.value > 1:
            indices.append(Ramp(rng.min, IntImm(rng.min.dtype, 1), extent.value))
        else:
            raise TypeError(
                f"{what}: cannot read the region of {region.buffer.name!r} with extent "
                f"{expr_text(extent)} as a vector (a constant extent is needed)"
            )
    if sum(isinstance(i, Ramp) for i in indices) > 1:
        raise TypeError(
            f"{what}: cannot read the region of {region.buffer.name!r} as a vector: more "
            "than one dimension is sliced"
        )
    return BufferLoad(region.buffer, tuple(indices))


def as_condition(value: object, what: str) -> PrimExpr:
    """A bool condition; an integer one is compared with zero (TVM's implicit conversion)."""
    expr = as_expr(value, what)
    element = expr.dtype.element_of()
    if element.is_integer:
        return expr != const(0, expr.dtype)
    if not element.is_bool:
        raise TypeError(f"{what}: condition must be bool, got {expr.dtype}")
    return expr


def index_expr(value: object, what: str) -> PrimExpr:
    """An integer-typed expression (extents, indices, loop bounds)."""
    expr = as_expr(value, what)
    if not expr.dtype.element_of().is_integer:
        raise TypeError(f"{what}: expected an integer expression, got {expr.dtype}")
    return expr


def as_shape(shape: object, what: str) -> tuple[PrimExpr, ...]:
    """A shape given as one extent or a sequence of extents."""
    if isinstance(shape, (PrimExpr, int)):
        return (index_expr(shape, what),)
    if isinstance(shape, Sequence) and not isinstance(shape, str):
        return tuple(index_expr(s, what) for s in shape)
    raise TypeError(f"{what}: shape must be an int, an expression or a sequence of them")


class ScalarType:
    """A type object such as ``T.int32`` or ``T.float32x4``: annotation, constant, variable.

    ``x: T.int32`` annotates a parameter or a binding; calling it makes a fresh variable,
    a constant or a conversion (see ``__call__``).

    Parameters
    ----------
    expr : number, str, PrimExpr or None
        None: a fresh variable (``n = T.int32()``, for symbolic shapes); a number (or a
        numeric string such as ``"inf"``): a constant; an expression: its conversion.
    is_size_var : bool
        With no ``expr``: a variable known to be non-negative.

    Returns
    -------
    PrimExpr

    Examples
    --------
    >>> print(T.float32(1), T.int64(T.int32()).dtype, T.int32(is_size_var=True))
    FloatImm(float32, 1.0) int64 SizeVar('v', int32)
    """

    __slots__ = ("dtype",)

    def __init__(self, dtype: DataTypeLike) -> None:
        self.dtype: DataType = as_dtype(dtype)

    def __call__(
        self, expr: ExprLike | str | None = None, *, is_size_var: bool = False
    ) -> PrimExpr:
        """A fresh var (no argument), a constant (a number) or a cast (an expression)."""
        if expr is None:
            return SizeVar("v", self.dtype) if is_size_var else Var("v", self.dtype)
        if isinstance(expr, str):
            try:
                expr = float(expr)  # TVM accepts numeric strings: T.float32("inf")
            except ValueError:
                raise TypeError(
                    f"T.{self.dtype}({expr!r}): a string argument is a number such as 'inf'; "
                    f"a fresh variable is T.{self.dtype}()"
                ) from None
        if isinstance(expr, (IntImm, FloatImm)):
            return const(expr.value, self.dtype)
        if isinstance(expr, PrimExpr):
            return expr.astype(self.dtype)
        if isinstance(expr, float) and self.dtype.element_of().is_integer:
            if not expr.is_integer():
                raise TypeError(f"T.{self.dtype}({expr!r}): not an integer value")
        return const(expr, self.dtype)

    def __repr__(self) -> str:
        return f"T.{self.dtype}"


class HandleType(ScalarType):
    """``T.handle``: ``T.handle()`` is an opaque handle var; with a dtype, a typed pointer."""

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__("handle")

    def __call__(  # type: ignore[override]
        self,
        dtype: DataTypeLike | None = None,
        storage_scope: str = "global",
        *,
        is_size_var: bool = False,
    ) -> Var:
        """A fresh handle var, pointing to ``dtype`` elements in ``storage_scope`` if given.

        ``T.handle("void")`` (a void pointer) is an opaque handle, as ``T.handle()``."""
        annotation = None
        if dtype is not None and not (dtype == "void" and storage_scope == "global"):
            annotation = PointerType(as_dtype(dtype), storage_scope)
        cls = SizeVar if is_size_var else Var
        return cls("v", self.dtype, annotation)

    def __repr__(self) -> str:
        return "T.handle"
