"""Integer arithmetic analysis: bounds, canonical affine forms, folding and simplification."""

from irbuilder.ir.linear_form import LinearForm, from_linear, supports_linear, to_linear

from .analyzer import Analyzer, IntBound
from .fold import const_value, fold_binary, fold_cast, fold_node, make_const, wrap_int
from .rewrite import ExprSimplifier, simplify_expr

__all__ = [
    "Analyzer",
    "ExprSimplifier",
    "IntBound",
    "LinearForm",
    "const_value",
    "fold_binary",
    "fold_cast",
    "fold_node",
    "from_linear",
    "make_const",
    "simplify_expr",
    "supports_linear",
    "to_linear",
    "wrap_int",
]
