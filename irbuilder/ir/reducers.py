"""What each reduction kind means: its combiner and its identity, defined once.

``T.sum``/``T.prod``/``T.reduce_max``/``T.reduce_min``/``T.all``/``T.any`` (a
:class:`~irbuilder.ir.expr.Reduce` of a :class:`~irbuilder.ir.expr.ReduceKind`) combine
with ``+ * max min and or`` starting from ``0 1 lowest highest true false``. Every reader
of a reduction kind (``T.compute``'s update statement, ``lower_blocks``' loop nest, the
interpreter, vectorized reductions) takes the combiner and the identity from here.
"""

from __future__ import annotations

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
    binary,
    reduce_identity,
)

__all__ = ["REDUCE_COMBINERS", "reduce_combine", "reduce_identity"]

REDUCE_COMBINERS: dict[ReduceKind, type[BinaryOp]] = {
    ReduceKind.SUM: Add,
    ReduceKind.PROD: Mul,
    ReduceKind.MAX: Max,
    ReduceKind.MIN: Min,
    ReduceKind.ALL: And,
    ReduceKind.ANY: Or,
}
"""The binary node that combines an accumulator with the next value, per kind."""


def reduce_combine(kind: ReduceKind, acc: ExprLike, value: ExprLike) -> PrimExpr:
    """``acc`` combined with ``value`` by ``kind`` (operands promoted and constants folded
    as the operators do)."""
    return binary(REDUCE_COMBINERS[kind], acc, value)
