"""The ``branch_select_updates`` pass: a reduction step that keeps its accumulators with a
select stores them only when they change.

TVM prints an argmax (a tuple reduction) as one step per element that recomputes both
accumulators and stores them back::

    v_idx = T.Select(val[i] > A[i, k] or ..., idx[i], k)
    v_val = T.Select(val[i] > A[i, k] or ..., val[i], A[i, k])
    idx[i] = v_idx
    val[i] = v_val

Every step then waits for the previous one's selects: a chain of compare, ``or`` and select
per element (7.4 ms for 4096 rows of 1024 on the Zen 5 host). Written as a branch, the
same step costs a compare the CPU predicts (the maximum rarely moves)::

    if not (val[i] > A[i, k] or ...):
        v_idx = k
        v_val = A[i, k]
        idx[i] = v_idx
        val[i] = v_val

(1.2 ms; numba's twin, branching the same way, 1.1). Exact: when the condition keeps the
accumulators, each store of the original writes back the value just loaded from the same
element (the loads all precede the stores: they are ``let`` bindings above them), so
memory is unchanged even if the elements overlap; when it does not, the same values are
stored in the same order. Skipping the other values' evaluation skips pure, non-trapping
work only.

Applied to a ``let`` chain (inside a SERIAL loop) whose bindings are all selects on one
condition and whose body is the scalar stores of those bindings, one each, each select
keeping -- on one side, the same for all -- a load of exactly its store's element, at an
index that does not depend on the loop (an accumulator, not a stream a vectorizer wants),
with no side effect and no division that could trap.
"""

from __future__ import annotations

from irbuilder.ir import (
    BufferLoad,
    BufferStore,
    For,
    ForKind,
    IfThenElse,
    LetStmt,
    Not,
    PrimExpr,
    PrimFunc,
    Select,
    SeqStmt,
    Stmt,
    StmtExprMutator,
    Var,
    seq,
    structural_equal,
)

from ..analysis.loads import LoadCollector
from ..analysis.vars import depends_on
from ..pass_infra import FunctionPass, function_pass
from .column_lanes import runs_in_column_lanes

__all__ = ["branch_select_step", "branch_select_updates"]


def _keeps(select: Select, store: BufferStore) -> bool | None:
    """True when ``select`` keeps ``store``'s element on its true side, False on its false
    side, None when neither value is a load of exactly that element."""
    for side, value in ((True, select.true_value), (False, select.false_value)):
        if (isinstance(value, BufferLoad) and value.buffer.data is store.buffer.data
                and value.buffer.dtype == store.buffer.dtype
                and len(value.indices) == len(store.indices)
                and all(structural_equal(a, b) for a, b in zip(value.indices, store.indices))):
            return side
    return None


def _pure(expr: PrimExpr) -> bool:
    found = LoadCollector(traps_are_effects=True)
    found.visit_expr(expr)
    return not found.impure


def branch_select_step(stmt: LetStmt, loop_var: Var) -> Stmt | None:
    """The branch form of the step ``stmt`` (module doc), or None when it does not qualify."""
    lets: list[LetStmt] = []
    body: Stmt = stmt
    while isinstance(body, LetStmt):
        lets.append(body)
        body = body.body
    stores = list(body.seq) if isinstance(body, SeqStmt) else [body]
    if len(stores) != len(lets) or not all(isinstance(s, BufferStore) for s in stores):
        return None
    condition: PrimExpr | None = None
    kept_on: bool | None = None
    by_var = {id(let.var): let for let in lets}
    used: set[int] = set()
    for store in stores:
        assert isinstance(store, BufferStore)
        let = by_var.get(id(store.value)) if isinstance(store.value, Var) else None
        if (let is None or id(let.var) in used or not isinstance(let.value, Select)
                or store.value.dtype.lanes != 1
                or any(depends_on(i, loop_var) for i in store.indices)):
            return None
        used.add(id(let.var))
        select = let.value
        side = _keeps(select, store)
        if side is None or (kept_on is not None and side != kept_on):
            return None
        if condition is None:
            condition = select.condition
        elif not structural_equal(condition, select.condition):
            return None
        kept_on = side
    assert condition is not None and kept_on is not None
    if not condition.dtype.is_scalar or not all(_pure(let.value) for let in lets):
        return None
    # a store's value is the select's other side, bound (in the same order) before the stores
    changed: Stmt = seq(stores)
    for let in reversed(lets):
        assert isinstance(let.value, Select)
        other = let.value.false_value if kept_on else let.value.true_value
        changed = LetStmt(let.var, other, changed, span=let.span)
    test = Not(condition) if kept_on else condition
    return IfThenElse(test, changed, span=stmt.span)


class _Branch(StmtExprMutator):
    def __init__(self) -> None:
        self.loops: list[For] = []

    def visit_expr(self, expr: PrimExpr) -> PrimExpr:
        return expr

    def visit_for_(self, stmt: For) -> Stmt:
        if runs_in_column_lanes(stmt):
            return stmt  # its columns run in vector lanes: selects, not branches
        self.loops.append(stmt)
        try:
            return self.generic_mutate(stmt)
        finally:
            self.loops.pop()

    def visit_let_stmt_(self, stmt: LetStmt) -> Stmt:
        inner = self.loops[-1] if self.loops else None
        if inner is not None and inner.kind is ForKind.SERIAL and isinstance(stmt.value, Select):
            branched = branch_select_step(stmt, inner.loop_var)
            if branched is not None:
                return branched
        return self.generic_mutate(stmt)


@function_pass("branch_select_updates", opt_level=1)
def _branch_select_updates(func: PrimFunc) -> PrimFunc:
    """Store select-kept accumulators only when they change (module doc)."""
    body = _Branch().visit_stmt(func.body)
    return func if body is func.body else func.with_body(body)


branch_select_updates: FunctionPass = _branch_select_updates
"""The ``branch_select_updates`` pass (a :class:`FunctionPass`)."""
