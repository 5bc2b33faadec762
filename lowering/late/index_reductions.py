"""The ``promote_index_reductions`` pass: an argmax's accumulators kept in registers, and its
tie test on the index decided.

TVM prints an argmax (a tuple reduction) with a tie rule on the index: the first maximum
wins. After ``branch_select_updates`` a row's loop reads::

    for k in range(1024):
        if k == 0:
            idx[i] = -1
            val[i] = T.min_value("float32")
        if not (val[i] > A[i, k] or val[i] == A[i, k] and idx[i] < k):
            idx[i] = k
            val[i] = A[i, k]

Every element then loads ``idx[i]`` from memory and computes the ``==`` and ``<`` besides
the ``>`` (``A``, ``idx`` and ``val`` are arbitrary numpy arrays: a store to one may change
another). Yet when the accumulators overlap no other array the loop uses, ``idx[i]`` is
only ever ``-1`` (set at the first step) or an earlier ``k``: ``idx[i] < k`` always holds.
So, behind a run-time test that the accumulators' arrays overlap none of the others the
loop uses, the pass runs the loop on one-element local buffers (set to the init's values
before the loop, stored back after it), the index test replaced by its value::

    if not (val_acc[0] > A[i, k] or val_acc[0] == A[i, k]):

which is ``not (val >= A[i, k])`` (LLVM folds it: one compare and a predicted branch, as
numba's twin), with accumulators ``jam_parallel_reductions`` interleaves four rows of.
4096 x 1024 float32 on the AVX2 Zen 2 host, one process, best of 100: one thread 5.9 ->
1.8 ms, two 3.7 -> 1.1 ms (numba's twin 3.3 and 1.8).

Exact: with no overlap the local buffers hold what the accumulator elements would; the test
is the same function of them (NaNs included: only the index comparison, true on every
step, is replaced), evaluated before the step's stores, as before; the other operands are
the same loads in the same order. When the run-time test fails the nest runs as written.

Applied to a SERIAL loop of constant extent >= 1 and constant start ``m`` whose body is
exactly

- ``if k == m:`` stores of load-free values to the accumulators (``lower_blocks``' init), and
- ``if <test>:`` a ``let`` chain ending in one scalar store per accumulator (a distinct array
  each, at an index free of the loop and of loads), the test and the bindings pure,

where at least one accumulator is an index (stored the loop variable itself, initialised
to a constant below ``m``) that the test compares with the loop variable; the test and the
bindings read the accumulators' arrays only at those elements. The run-time test (whole
arrays, so it goes around the outermost loop of the nest, and a parallel loop inside keeps
its rows whole for the jam) is omitted for local accumulators.
"""

from __future__ import annotations

from dataclasses import dataclass

from irbuilder.ir import (
    EQ,
    GE,
    GT,
    LE,
    LT,
    NE,
    Allocate,
    Buffer,
    BufferLoad,
    BufferStore,
    DeclBuffer,
    For,
    ForKind,
    IfThenElse,
    IntImm,
    LetStmt,
    PrimExpr,
    PrimFunc,
    SeqStmt,
    Stmt,
    StmtExprMutator,
    Var,
    as_dtype,
    make_data_var,
    seq,
    structural_equal,
)

from ..analysis.loads import LoadCollector, LocalAllocations
from ..analysis.vars import defined_var_ids, depends_on, free_vars
from ..arith import simplify_expr
from ..pass_infra import FunctionPass, function_pass
from ..transforms.unroll import copy_with_fresh_vars
from .first_iteration import hoist_first_iteration
from .versioning import all_of, byte_range, disjoint

__all__ = ["promote_index_reductions"]

_I32 = as_dtype("int32")
_BOOL = as_dtype("bool")


@dataclass
class _Accumulator:
    """One accumulator element ``buffer[index]``, its init value and its local buffer."""

    buffer: Buffer
    index: PrimExpr
    init: PrimExpr
    local: Buffer
    is_index: bool = False

    def at(self, load: BufferLoad) -> bool:
        """Whether ``load`` reads exactly this element, through the same view."""
        return _same_element(load, self.buffer, self.index)


def _same_element(access: BufferLoad | BufferStore, buffer: Buffer, index: PrimExpr) -> bool:
    """Whether ``access`` is of ``buffer[index]`` (same data, view and index)."""
    other = access.buffer
    return (other.data is buffer.data and other.dtype == buffer.dtype
            and structural_equal(other.elem_offset, buffer.elem_offset)
            and len(access.indices) == 1 and structural_equal(access.indices[0], index))


@dataclass
class _Plan:
    loop: For
    """The loop without its first-step init (hoisted)."""
    accumulators: list[_Accumulator]
    test: PrimExpr
    lets: list[LetStmt]
    checks: list[tuple[Buffer, Buffer]]
    """Pairs of parameter arrays that must not overlap."""


def _stores(stmt: Stmt) -> list[BufferStore] | None:
    stmts = list(stmt.seq) if isinstance(stmt, SeqStmt) else [stmt]
    return [s for s in stmts if isinstance(s, BufferStore)] if all(
        isinstance(s, BufferStore) for s in stmts) else None


def _pure(expr: PrimExpr) -> bool:
    found = LoadCollector(traps_are_effects=True)
    found.visit_expr(expr)
    return not found.impure


def _loads(expr: PrimExpr) -> list[BufferLoad]:
    found = LoadCollector()
    found.visit_expr(expr)
    return found.loads


def _plan(loop: For, local_data: set[int]) -> _Plan | None:
    """What the rewrite of ``loop`` needs (module doc), or None when it does not qualify."""
    if loop.kind is not ForKind.SERIAL or loop.thread_binding is not None:
        return None
    if not isinstance(loop.min, IntImm):
        return None
    hoisted = hoist_first_iteration(loop)
    if not isinstance(hoisted, SeqStmt):
        return None
    *init, rest = hoisted.seq  # (a flat sequence: the init's stores, then the loop)
    init_stores = _stores(seq(init)) if init else None
    if init_stores is None or not isinstance(rest, For):
        return None
    step = rest.body
    if not isinstance(step, IfThenElse) or step.else_case is not None:
        return None
    lets: list[LetStmt] = []
    body = step.then_case
    while isinstance(body, LetStmt):
        lets.append(body)
        body = body.body
    stores = _stores(body)
    if not stores or len(stores) != len(init_stores):
        return None
    var = rest.loop_var
    bound = {id(let.var): let.value for let in lets}
    accumulators: list[_Accumulator] = []
    for store in stores:
        buffer = store.buffer
        if (len(store.indices) != 1 or buffer.dtype.lanes != 1
                or store.value.dtype.lanes != 1
                or any(a.buffer.data is buffer.data for a in accumulators)):
            return None
        (index,) = store.indices
        if depends_on(index, var) or _loads(index) or _loads(store.value):
            return None  # (a value read after an earlier store of the step would see it)
        firsts = [s for s in init_stores if s.buffer.data is buffer.data]
        if (len(firsts) != 1 or not _same_element(firsts[0], buffer, index)
                or _loads(firsts[0].value) or not _pure(firsts[0].value)):
            return None
        first = firsts[0].value
        value = bound.get(id(store.value), store.value) if isinstance(store.value, Var) \
            else store.value
        data = make_data_var(f"{buffer.name}_acc", buffer.dtype)
        local = Buffer(f"{buffer.name}_acc", data, (IntImm(_I32, 1),), buffer.dtype)
        accumulators.append(_Accumulator(
            buffer, index, first, local,
            is_index=(value is var and buffer.dtype == var.dtype
                      and isinstance(first, IntImm) and first.value < loop.min.value)))
    if not any(a.is_index for a in accumulators):
        return None
    exprs = [step.condition, *(let.value for let in lets)]
    if not step.condition.dtype.is_scalar or not all(_pure(e) for e in exprs):
        return None
    others: list[Buffer] = []
    for expr in exprs:
        for load in _loads(expr):
            mine = [a for a in accumulators if load.buffer.data is a.buffer.data]
            if mine and not mine[0].at(load):
                return None  # another element of an accumulator's array
            if not mine:
                others.append(load.buffer)
    checks: list[tuple[Buffer, Buffer]] = []
    for n, acc in enumerate(accumulators):
        if id(acc.buffer.data) in local_data:
            continue
        against = others + [a.buffer for a in accumulators[n + 1:]]
        for other in against:
            if id(other.data) in local_data or any(
                    c[0].data is acc.buffer.data and c[1].data is other.data for c in checks):
                continue
            if byte_range(acc.buffer) is None or byte_range(other) is None:
                return None
            checks.append((acc.buffer, other))
    return _Plan(rest, accumulators, step.condition, lets, checks)


class _Decide(StmtExprMutator):
    """The accumulators' loads read the local buffers; an index accumulator compared with
    the loop variable gives the comparison's value (it is below the variable)."""

    def __init__(self, plan: _Plan) -> None:
        self.plan = plan
        self.decided = 0

    def _accumulator(self, expr: PrimExpr) -> _Accumulator | None:
        if isinstance(expr, BufferLoad):
            for acc in self.plan.accumulators:
                if acc.at(expr):
                    return acc
        return None

    def visit_expr(self, expr: PrimExpr) -> PrimExpr:
        if isinstance(expr, (LT, LE, GT, GE, EQ, NE)):
            var = self.plan.loop.loop_var
            below: bool | None = None  # whether the index is the comparison's left side
            for side, mine, theirs in ((True, expr.a, expr.b), (False, expr.b, expr.a)):
                acc = self._accumulator(mine)
                if theirs is var and acc is not None and acc.is_index:
                    below = side
            if below is not None:
                # index < var on every step: the comparison's value, as either side reads it
                left_smaller = below
                holds = {
                    LT: left_smaller, LE: left_smaller, GT: not left_smaller,
                    GE: not left_smaller, EQ: False, NE: True,
                }[type(expr)]
                self.decided += 1
                return IntImm(_BOOL, int(holds))
        acc = self._accumulator(expr)
        if acc is not None:
            return BufferLoad(acc.local, (IntImm(_I32, 0),))
        return super().visit_expr(expr)


def _promoted(plan: _Plan) -> Stmt | None:
    """The loop on local accumulators with the index test decided (module doc), or None
    when the test compares no index with the loop variable."""
    decide = _Decide(plan)
    test = simplify_expr(decide.visit_expr(plan.test))
    if not decide.decided:
        return None
    zero = IntImm(_I32, 0)
    changed: Stmt = seq([
        BufferStore(a.local, decide.visit_expr(s.value), (zero,))
        for a, s in zip(plan.accumulators, _final_stores(plan), strict=True)])
    for let in reversed(plan.lets):
        changed = LetStmt(let.var, decide.visit_expr(let.value), changed, span=let.span)
    loop = plan.loop
    step = IfThenElse(test, changed, span=loop.body.span)
    fast: Stmt = seq([
        *(BufferStore(a.local, a.init, (zero,)) for a in plan.accumulators),
        For(loop.loop_var, loop.min, loop.extent, loop.kind, step, loop.thread_binding,
            loop.annotations, span=loop.span),
        *(BufferStore(a.buffer, BufferLoad(a.local, (zero,)), (a.index,))
          for a in plan.accumulators),
    ])
    for a in reversed(plan.accumulators):
        fast = Allocate(a.local.data, a.buffer.dtype, IntImm(_I32, 1), IntImm(_BOOL, 1),
                        DeclBuffer(a.local, fast))
    return fast


def _final_stores(plan: _Plan) -> list[BufferStore]:
    step = plan.loop.body
    assert isinstance(step, IfThenElse)
    body = step.then_case
    while isinstance(body, LetStmt):
        body = body.body
    stores = _stores(body)
    assert stores is not None
    return stores


class _Rewrite(StmtExprMutator):
    """Every qualifying loop of a nest rewritten; the arrays each needs disjoint."""

    def __init__(self, local_data: set[int]) -> None:
        self.local_data = local_data
        self.checks: list[tuple[Buffer, Buffer]] = []

    def visit_expr(self, expr: PrimExpr) -> PrimExpr:
        return expr

    def visit_for_(self, stmt: For) -> Stmt:
        plan = _plan(stmt, self.local_data)
        if plan is not None:
            out = _promoted(plan)
            if out is not None:
                self.checks.extend(plan.checks)
                return out
        return self.generic_mutate(stmt)


class _Nests(StmtExprMutator):
    """Offers each outermost loop's nest to :class:`_Rewrite`; versions it on the test."""

    def __init__(self, local_data: set[int]) -> None:
        self.local_data = local_data

    def visit_expr(self, expr: PrimExpr) -> PrimExpr:
        return expr

    def visit_for_(self, stmt: For) -> Stmt:
        rewrite = _Rewrite(self.local_data)
        fast = rewrite.visit_stmt(stmt)
        if fast is stmt:
            return stmt
        tests: list[PrimExpr] = []
        for a, b in rewrite.checks:
            ra, rb = byte_range(a), byte_range(b)
            assert ra is not None and rb is not None
            tests.append(disjoint(ra, rb))
        if not tests:
            return fast
        inside = defined_var_ids(stmt)
        if any(id(v) in inside for t in tests for v in free_vars(t)):
            return stmt  # an array's pointer or extent is defined inside the nest
        return IfThenElse(all_of(tests), copy_with_fresh_vars(fast), stmt, span=stmt.span)


@function_pass("promote_index_reductions", opt_level=1)
def _promote_index_reductions(func: PrimFunc) -> PrimFunc:
    """Run argmax-like loops on local accumulators, the index tie test decided."""
    finder = LocalAllocations()
    finder.visit_stmt(func.body)
    body = _Nests(finder.vars).visit_stmt(func.body)
    return func if body is func.body else func.with_body(body)


promote_index_reductions: FunctionPass = _promote_index_reductions
"""The ``promote_index_reductions`` pass (a :class:`FunctionPass`)."""
