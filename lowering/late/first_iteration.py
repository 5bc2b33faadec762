"""A block's init at the first step of its reduction loops, moved before them.

``lower_blocks`` writes a reduction block's init as ``if k == 0: C[i] = 0`` at the start of
the reduction loop's body. ``vectorize_reductions`` moves it out of the loops it splits
(at least ``MIN_SPLIT_EXTENT`` steps); a shorter sum keeps it inside, where it stops
``vectorize_row_reductions`` from taking the loop as a chain: TOPI's 2048 x 7 x 7 global
average pool (49 steps a channel) ran as 2048 scalar chains through memory. In a serial loop
of constant positive extent the statement ``if var == min [and c]: init`` at the start of
the body runs before the first iteration's other statements, so ``init`` (``if c:`` when
``c`` remains) may run before the loop instead: :func:`hoist_inits` does that bottom-up (an
init tested on several nested loops' first steps goes before all of them).
"""

from __future__ import annotations

from irbuilder.ir import (
    EQ,
    And,
    For,
    ForKind,
    IfThenElse,
    IntImm,
    PrimExpr,
    SeqStmt,
    Stmt,
    StmtExprMutator,
    rebuild,
    seq,
    structural_equal,
)

from ..analysis.substitute import substitute
from ..analysis.vars import depends_on
from ..transforms.lower_blocks import REDUCTION_ANNOTATION
from .versioning import all_of

__all__ = ["hoist_first_iteration", "hoist_inits"]


def _conjuncts(cond: PrimExpr) -> list[PrimExpr]:
    if isinstance(cond, And):
        return [*_conjuncts(cond.a), *_conjuncts(cond.b)]
    return [cond]


def _at_first(cond: PrimExpr, loop: For) -> bool:
    """Whether ``cond`` is ``var == min`` (either way round) of ``loop``."""
    if not isinstance(cond, EQ):
        return False
    var, lo = loop.loop_var, loop.min
    return ((cond.a is var and structural_equal(cond.b, lo))
            or (cond.b is var and structural_equal(cond.a, lo)))


def hoist_first_iteration(loop: For) -> Stmt | None:
    """``init; loop`` for a serial loop of constant positive extent whose body starts with
    ``if var == min [and c]: init`` (``c`` free of ``var``: a block's init at the first
    step of its reduction loops, as ``lower_blocks`` writes it): the init runs before the
    first iteration's other statements either way. None when it does not apply."""
    if loop.kind is not ForKind.SERIAL or loop.thread_binding is not None:
        return None
    if not (isinstance(loop.extent, IntImm) and loop.extent.value >= 1):
        return None
    body = loop.body
    stmts = list(body.seq) if isinstance(body, SeqStmt) else [body]
    if not stmts:
        return None
    first = stmts[0]
    if not isinstance(first, IfThenElse) or first.else_case is not None:
        return None
    parts = _conjuncts(first.condition)
    at = [p for p in parts if _at_first(p, loop)]
    rest = [p for p in parts if not _at_first(p, loop)]
    if not at or any(depends_on(p, loop.loop_var) for p in rest):
        return None
    init = substitute(first.then_case, {loop.loop_var: loop.min})
    if rest:
        init = IfThenElse(all_of(rest), init, span=first.span)
    remaining = stmts[1:]
    if not remaining:
        return init
    hoisted: Stmt = rebuild(loop, {"body": seq(remaining)})
    return seq([init, hoisted])


class _HoistInits(StmtExprMutator):
    def __init__(self, plain: bool) -> None:
        self.plain = plain

    def visit_expr(self, expr: PrimExpr) -> PrimExpr:
        return expr

    def visit_for_(self, stmt: For) -> Stmt:
        visited = self.generic_mutate(stmt)
        hoisted = hoist_first_iteration(visited)
        if hoisted is None:
            return visited
        if self.plain:
            hoisted = _Unmarked().visit_stmt(hoisted)
        return hoisted


class _Unmarked(StmtExprMutator):
    def visit_expr(self, expr: PrimExpr) -> PrimExpr:
        return expr

    def visit_for_(self, stmt: For) -> Stmt:
        visited = self.generic_mutate(stmt)
        if REDUCTION_ANNOTATION not in visited.annotations:
            return visited
        marks = {k: v for k, v in visited.annotations.items() if k != REDUCTION_ANNOTATION}
        unmarked: For = rebuild(visited, {"annotations": marks})
        return unmarked


def hoist_inits(stmt: Stmt, plain: bool = False) -> Stmt:
    """``stmt`` with :func:`hoist_first_iteration` applied bottom-up (``stmt`` itself when
    nothing moved). ``plain``: the loops an init left also lose ``lower_blocks``' mark of a
    declared reduction (for a pass that keeps their source order, which reads no mark)."""
    return _HoistInits(plain).visit_stmt(stmt)
