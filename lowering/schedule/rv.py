"""Random variables: the handles a schedule hands out for blocks, loops and sampled values."""

from __future__ import annotations

import itertools
import weakref

from irbuilder.ir import PrimExpr, Var, as_dtype

__all__ = ["BlockRV", "ExprRV", "LoopRV", "RV", "expr_rv_of"]

_COUNTER = itertools.count()


class RV:
    """A handle; what it stands for lives in the schedule (``sch.get(rv)``)."""

    __slots__ = ("_uid",)
    prefix = "rv"

    def __init__(self) -> None:
        self._uid = next(_COUNTER)

    def __repr__(self) -> str:
        return f"{type(self).__name__}#{self._uid}"


class BlockRV(RV):
    """A block of the scheduled function."""

    __slots__ = ()
    prefix = "b"


class LoopRV(RV):
    """A loop of the scheduled function."""

    __slots__ = ()
    prefix = "l"


# the ExprRV each stand-in var belongs to (weakly: a var outlives no schedule's interest)
_OWNERS: weakref.WeakValueDictionary[int, ExprRV] = weakref.WeakValueDictionary()


def expr_rv_of(var: object) -> ExprRV | None:
    """The ExprRV whose stand-in ``var`` is (:attr:`ExprRV.var`), or None."""
    if not isinstance(var, Var):
        return None
    owner = _OWNERS.get(id(var))
    return owner if owner is not None and owner._var is var else None


class ExprRV(RV):
    """An integer decided by a sampling instruction (``sch.get(v)`` gives its value).

    As TVM's ExprRV (a ``tir.Var``) it takes part in integer arithmetic (``j // (j1 * j2)``
    in an index map): the result is an expression over :attr:`var`, its stand-in, which a
    primitive given the expression replaces by the sampled value when it is applied, and
    a trace records as this RV (printed by its name, replayed with the replay's RV)."""

    __slots__ = ("__weakref__", "_var")
    prefix = "v"

    def __init__(self) -> None:
        super().__init__()
        self._var: Var | None = None

    @property
    def var(self) -> Var:
        """The int32 variable standing for the sampled value in expressions."""
        if self._var is None:
            self._var = Var(f"v{self._uid}", as_dtype("int32"))
            _OWNERS[id(self._var)] = self
        return self._var

    def __prim_expr__(self) -> PrimExpr:
        return self.var

    def __add__(self, other: object) -> PrimExpr:
        return self.var + other  # type: ignore[operator]

    def __radd__(self, other: object) -> PrimExpr:
        return other + self.var  # type: ignore[operator]

    def __sub__(self, other: object) -> PrimExpr:
        return self.var - other  # type: ignore[operator]

    def __rsub__(self, other: object) -> PrimExpr:
        return other - self.var  # type: ignore[operator]

    def __mul__(self, other: object) -> PrimExpr:
        return self.var * other  # type: ignore[operator]

    def __rmul__(self, other: object) -> PrimExpr:
        return other * self.var  # type: ignore[operator]

    def __floordiv__(self, other: object) -> PrimExpr:
        return self.var // other  # type: ignore[operator]

    def __rfloordiv__(self, other: object) -> PrimExpr:
        return other // self.var  # type: ignore[operator]

    def __mod__(self, other: object) -> PrimExpr:
        return self.var % other  # type: ignore[operator]

    def __rmod__(self, other: object) -> PrimExpr:
        return other % self.var  # type: ignore[operator]

    def __neg__(self) -> PrimExpr:
        return -self.var
