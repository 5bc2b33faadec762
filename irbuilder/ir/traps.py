"""Which expressions may raise when evaluated: the one rule every place that drops, moves or
folds an expression asks (operator identities at construction, the simplifier, hoisting).

This project's integer division and modulo by zero raise ``ZeroDivisionError`` (the
interpreter) or the kernel's error (compiled code), so an expression holding one whose
divisor is not a nonzero constant may not be dropped or evaluated where the program would
not evaluate it."""

from __future__ import annotations

from .expr import Div, FloatImm, FloorDiv, FloorMod, IntImm, Mod, PrimExpr, Var
from .functor import ir_fields

__all__ = ["may_trap"]


def may_trap(expr: PrimExpr, memo: dict[int, tuple[PrimExpr, bool]] | None = None) -> bool:
    """Whether evaluating ``expr`` may raise: an integer division by a non-constant or zero.

    ``memo`` (keyed by node identity, holding the node to keep the id valid) makes repeated
    queries on growing trees linear, as the bottom-up simplifier asks for every node.
    """
    cls = type(expr)
    if cls is Var or cls is IntImm or cls is FloatImm:
        return False  # leaves, most of the questions
    if memo is not None:
        hit = memo.get(id(expr))
        if hit is not None and hit[0] is expr:
            return hit[1]
    if isinstance(expr, (Div, Mod, FloorDiv, FloorMod)) and expr.dtype.is_integer:
        if not (isinstance(expr.b, IntImm) and expr.b.value != 0):
            result = True
        else:
            result = may_trap(expr.a, memo)
    else:
        result = False
        for name in ir_fields(cls):
            value = getattr(expr, name)
            if isinstance(value, PrimExpr):
                result = may_trap(value, memo)
            elif isinstance(value, tuple):
                result = any(isinstance(v, PrimExpr) and may_trap(v, memo) for v in value)
            if result:
                break
    if memo is not None:
        memo[id(expr)] = (expr, result)
    return result
