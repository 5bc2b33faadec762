"""``T.Select`` with a memory access in a branch becomes ``T.if_then_else`` (TVM's
RewriteUnsafeSelect, which every TVM build runs).

A ``Select`` evaluates both values. TVM users guard loads with it
(``T.Select(j > 0, A[j - 1], 0)``) because TVM's default lowering turns such a select into an
``if_then_else``, which evaluates only the chosen value: the load of ``A[-1]`` never happens.
Without the rewrite the program reads out of bounds (a crash, or the interpreter's
``IndexError``). The rule, TVM's: a select with a scalar ``bool`` condition becomes an
``if_then_else`` when one of its values is *unsafe*, that is, contains a buffer load or a call
with side effects (an extern call, a runtime builtin) outside the values of a nested
``Select``/``if_then_else`` (those are guarded in their turn: only their condition counts).
Pure math, pure externs, ``T.likely`` and ``T.reinterpret`` are unsafe only through their
arguments; ``T.address_of(A[i])`` only through ``i``. Vector conditions stay selects (TVM leaves
them too: they come from vectorized loops, whose lanes are all in range).

One refinement of TVM's rule keeps the selects that cannot fault: when every load of the
values is provably inside its buffer's shape (from the ranges of the enclosing loops and block
iterators), evaluating both values is harmless and the select stays (the argmin/argmax
updates ``T.Select(A[i, j] < best[0], j, idx[0])`` are such, and later passes turn selects,
not branches, into vector blends). The values computed are the same either way.
"""

from __future__ import annotations

from irbuilder.ir import (
    GE,
    LT,
    Block,
    BufferLoad,
    Call,
    CallKind,
    For,
    IntImm,
    PrimExpr,
    PrimFunc,
    Select,
    Stmt,
    Var,
)
from irbuilder.ir.functor import StmtExprMutator, ir_fields

from ..arith.analyzer import Analyzer

__all__ = ["rewrite_unsafe_selects"]

_PURE_BUILTINS = frozenset({"likely", "reinterpret"})


def _hazards(expr: PrimExpr, loads: list[BufferLoad]) -> bool:
    """Whether evaluating ``expr`` unguarded may have an effect (an extern call, a runtime
    builtin); the loads it would do go to ``loads``."""
    if isinstance(expr, BufferLoad):
        loads.append(expr)
        return any(_hazards(index, loads) for index in expr.indices)
    if isinstance(expr, Select):
        return _hazards(expr.condition, loads)
    if isinstance(expr, Call):
        if expr.kind is CallKind.EXTERN:
            return True
        if expr.kind is CallKind.BUILTIN:
            if expr.op == "if_then_else":
                return _hazards(expr.args[0], loads)
            if expr.op == "address_of":
                target = expr.args[0]
                if isinstance(target, BufferLoad):
                    return any(_hazards(index, loads) for index in target.indices)
                return _hazards(target, loads)
            if expr.op not in _PURE_BUILTINS:
                return True
        return any(_hazards(arg, loads) for arg in expr.args)
    for name in ir_fields(type(expr)):
        value = getattr(expr, name)
        if isinstance(value, PrimExpr):
            if _hazards(value, loads):
                return True
        elif isinstance(value, tuple):
            if any(isinstance(item, PrimExpr) and _hazards(item, loads) for item in value):
                return True
    return False


class _Rewriter(StmtExprMutator):
    """Rewrites the unsafe selects; a select whose loads are all provably inside their
    buffers' shapes (from the ranges of the loops and block iterators around it) and that
    calls nothing with an effect stays a select: evaluating both values is then harmless, and
    later passes vectorize selects more readily than branches."""

    def __init__(self) -> None:
        self.analyzer = Analyzer()

    def _bind(self, var: PrimExpr, begin: PrimExpr, extent: PrimExpr) -> None:
        if isinstance(var, Var) and var.dtype.is_integer and var.dtype.is_scalar:
            self.analyzer.bind_range(var, begin, extent)
            self.analyzer.add_constraint(GE(var, begin))
            self.analyzer.add_constraint(LT(var, begin + extent))

    def visit_for_(self, stmt: For) -> Stmt:
        with self.analyzer.scope():
            self._bind(stmt.loop_var, stmt.min, stmt.extent)
            return self.generic_mutate(stmt)

    def visit_block_(self, stmt: Block) -> Stmt:
        with self.analyzer.scope():
            for iter_var in stmt.iter_vars:
                self._bind(iter_var.var, iter_var.dom.min, iter_var.dom.extent)
            return self.generic_mutate(stmt)

    def _in_bounds(self, load: BufferLoad) -> bool:
        shape = load.buffer.shape
        if len(shape) != len(load.indices):
            return False
        for index, extent in zip(load.indices, shape):
            if not index.dtype.is_scalar:
                return False
            zero = IntImm(index.dtype, 0)
            if not (self.analyzer.can_prove(GE(index, zero))
                    and self.analyzer.can_prove(LT(index, extent))):
                return False
        return True

    def _unsafe(self, value: PrimExpr) -> bool:
        loads: list[BufferLoad] = []
        return _hazards(value, loads) or not all(self._in_bounds(load) for load in loads)

    def visit_select_(self, expr: Select) -> PrimExpr:
        new = self.generic_mutate(expr)
        assert isinstance(new, Select)
        cond = new.condition
        if cond.dtype.lanes == 1 and (self._unsafe(new.true_value)
                                      or self._unsafe(new.false_value)):
            return Call(new.dtype, "if_then_else", (cond, new.true_value, new.false_value),
                        CallKind.BUILTIN, span=new.span)
        return new


def rewrite_unsafe_selects(func: PrimFunc) -> PrimFunc:
    """``func`` with every unsafe scalar-condition ``Select`` an ``if_then_else``. A function
    already lowered (``entry_checked``: built again as it is) is left as it is: the rewrite
    belongs to its source, and its flat indices say less about the bounds."""
    if func.attrs.get("entry_checked"):
        return func
    return _Rewriter().visit_func(func)
