"""Linear-form queries of the lowering passes; the form itself (``LinearForm``,
``to_linear``, ``from_linear``) is :mod:`irbuilder.ir.linear_form`, shared with block
region inference."""

from __future__ import annotations

from irbuilder.ir import PrimExpr, post_order_visit
from irbuilder.ir.linear_form import supports_linear, to_linear

__all__ = ["linear_coefficient"]


def linear_coefficient(expr: PrimExpr, var: PrimExpr) -> int | None:
    """The constant factor of ``var`` in ``expr`` (0 when absent), or None when ``var``
    appears inside a non-linear term (``i * j``, ``j // 2``, a load at ``j``, ...) or
    ``expr`` has no linear form."""
    if not supports_linear(expr.dtype):
        return None
    coef = 0
    for atom, factor in to_linear(expr).live_terms():
        if atom is var:
            coef += factor
        elif _mentions(atom, var):
            return None
    return coef


def _mentions(expr: PrimExpr, var: PrimExpr) -> bool:
    found = False

    def visit(node: object) -> None:
        nonlocal found
        found = found or node is var

    post_order_visit(expr, visit)
    return found
