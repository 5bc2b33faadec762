"""``T.comm_reducer(combiner, identity)``: a commutative reducer as a value (TVM's
``CommReducer``): ``lhs``/``rhs`` variables, the ``result`` expressions combining them and the
``identity`` elements. It appears as the node of a ``"reduce_scope"`` attribute (with
``T.tvm_thread_allreduce``) and as the combiner of ``T.reduce``; a single-value reducer that is
a sum, product, min, max, and or or is also a :class:`ReduceKind`."""

from __future__ import annotations

from dataclasses import dataclass

from .expr import (
    Add,
    And,
    BinaryOp,
    ExprLike,
    Max,
    Min,
    Mul,
    Or,
    PrimExpr,
    ReduceKind,
    Var,
    binary,
    reduce_identity,
)

__all__ = [
    "REDUCE_COMBINERS",
    "CommReducer",
    "kind_of_combiner",
    "reduce_combine",
    "reduce_identity",
]

REDUCE_COMBINERS: dict[ReduceKind, type[BinaryOp]] = {
    ReduceKind.SUM: Add,
    ReduceKind.PROD: Mul,
    ReduceKind.MAX: Max,
    ReduceKind.MIN: Min,
    ReduceKind.ALL: And,
    ReduceKind.ANY: Or,
}
"""The one definition of each reduction kind's combiner (its identity: :func:`reduce_identity`).
Every reader (``T.compute``, ``lower_blocks``, the interpreter, comm_reducer recognition)
takes it from here."""

_KINDS: dict[type, ReduceKind] = {cls: kind for kind, cls in REDUCE_COMBINERS.items()}


def kind_of_combiner(combiner: type) -> ReduceKind | None:
    """The reduction kind whose combiner is the node class ``combiner`` (``Add`` -> sum)."""
    return _KINDS.get(combiner)


def reduce_combine(kind: ReduceKind, acc: ExprLike, value: ExprLike) -> PrimExpr:
    """``acc`` combined with ``value`` by ``kind`` (operands promoted and constants folded
    as the operators do)."""
    return binary(REDUCE_COMBINERS[kind], acc, value)


@dataclass(frozen=True, eq=False)
class CommReducer:
    """``result[i](lhs, rhs)`` combines two partial values; ``identity[i]`` is neutral."""

    lhs: tuple[Var, ...]
    rhs: tuple[Var, ...]
    result: tuple[PrimExpr, ...]
    identity: tuple[PrimExpr, ...]

    __hash__ = object.__hash__

    def __post_init__(self) -> None:
        n = len(self.identity)
        if not (len(self.lhs) == len(self.rhs) == len(self.result) == n) or n == 0:
            raise ValueError(
                f"comm_reducer: {len(self.lhs)} lhs, {len(self.rhs)} rhs, "
                f"{len(self.result)} results and {n} identities must agree (and be > 0)"
            )

    def reduce_kind(self) -> ReduceKind | None:
        """The :class:`ReduceKind` this single-value reducer computes, or None."""
        if len(self.result) != 1:
            return None
        result, x, y = self.result[0], self.lhs[0], self.rhs[0]
        kind = _KINDS.get(type(result))
        if kind is None:
            return None
        a, b = getattr(result, "a", None), getattr(result, "b", None)
        if not ((a is x and b is y) or (a is y and b is x)):
            return None
        identity = self.identity[0]
        expected = reduce_identity(kind, identity.dtype)
        same = getattr(expected, "value", None) == getattr(identity, "value", object())
        return kind if same else None
