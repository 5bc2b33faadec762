"""The ``distribute_reductions`` pass: split element-wise stores from scalar reductions.

A serial loop such as softmax's ``for j: B[j] = exp(A[j] - m); s[0] = s[0] + B[j]`` cannot
be vectorized as a whole without reassociating the (strict, in-order) sum, so LLVM keeps
every ``exp`` scalar. Distributing it into ``for j: B[j] = exp(A[j] - m)`` followed by
``for j: s[0] = s[0] + B[j]`` lets the first loop vectorize (one libmvec call per vector)
while the sum keeps its exact order.

The transform is applied only when it provably preserves the sequential semantics
(conservatively, without alias analysis of parameters):

* the loop is SERIAL and its body is a sequence of ``BufferStore``s whose expressions
  have no side effects (no extern calls);
* each store is either *element-wise* (some index is ``c * j + invariant`` with ``c != 0``,
  so different iterations write different elements) or a *reduction* (no index depends
  on ``j``) into a function-local allocation;
* reductions write only local allocations that element-wise stores never touch;
* a reduction reads memory written by element-wise stores only as the very element the
  same iteration wrote before it (same buffer data, structurally equal indices, written
  by exactly one earlier store, and no other parameter written, which could be a view of
  the same array), and reads no other memory that could alias what they write.
"""

from __future__ import annotations

from irbuilder.ir import (
    BufferLoad,
    BufferStore,
    For,
    ForKind,
    PrimExpr,
    PrimFunc,
    SeqStmt,
    Stmt,
    StmtExprMutator,
    Var,
    seq,
    structural_equal,
)

from ..analysis.loads import LoadCollector, LocalAllocations
from ..analysis.vars import depends_on
from ..arith.canonical import linear_coefficient
from ..pass_infra import FunctionPass, function_pass
from ..transforms.unroll import copy_with_fresh_vars

__all__ = ["distribute_loop", "distribute_reductions"]


def _injective_in(expr: PrimExpr, var: Var) -> bool:
    """``expr`` is ``c * var + (terms free of var)`` with a constant ``c != 0``."""
    return linear_coefficient(expr, var) not in (None, 0)


def _same_indices(a: tuple[PrimExpr, ...], b: tuple[PrimExpr, ...]) -> bool:
    return len(a) == len(b) and all(structural_equal(x, y) for x, y in zip(a, b))


def distribute_loop(loop: For, local_data: set[int]) -> Stmt | None:
    """The distributed form of ``loop`` (element-wise loop, then reduction loop), or None.

    ``local_data`` holds ``id()`` of the data vars of function-local allocations.
    """
    if loop.kind is not ForKind.SERIAL or not isinstance(loop.body, SeqStmt):
        return None
    var = loop.loop_var
    stores = loop.body.seq
    if not all(isinstance(s, BufferStore) for s in stores):
        return None
    elementwise: list[int] = []
    reductions: list[int] = []
    loads: list[list[BufferLoad]] = []
    for pos, stmt in enumerate(stores):
        assert isinstance(stmt, BufferStore)
        found = LoadCollector(traps_are_effects=True)
        found.visit_expr(stmt.value)
        for index in stmt.indices:
            found.visit_expr(index)
        if found.impure:
            return None
        loads.append(found.loads)
        if not any(depends_on(i, var) for i in stmt.indices):
            if id(stmt.buffer.data) not in local_data:
                return None
            reductions.append(pos)
        elif any(_injective_in(i, var) for i in stmt.indices):
            elementwise.append(pos)
        else:
            return None
    if not elementwise or not reductions:
        return None
    red_data = {id(_store(stores, p).buffer.data) for p in reductions}
    ew_written: dict[int, list[int]] = {}
    for p in elementwise:
        ew_written.setdefault(id(_store(stores, p).buffer.data), []).append(p)
    ew_writes_params = any(d not in local_data for d in ew_written)
    for p in elementwise:
        if id(_store(stores, p).buffer.data) in red_data:
            return None
        if any(id(ld.buffer.data) in red_data for ld in loads[p]):
            return None
    for p in reductions:
        for ld in loads[p]:
            data = id(ld.buffer.data)
            writers = ew_written.get(data)
            if writers is None:
                if data not in local_data and ew_writes_params:
                    return None  # could alias a parameter the element-wise loop writes
                continue
            if len(writers) != 1 or writers[0] > p:
                return None
            if data not in local_data and any(
                d != data and d not in local_data for d in ew_written
            ):
                return None  # another parameter written later may overwrite the element
            writer = _store(stores, writers[0])
            if not _same_indices(writer.indices, ld.indices):
                return None
    first = For(
        var,
        loop.min,
        loop.extent,
        loop.kind,
        seq([stores[p] for p in elementwise]),
        loop.thread_binding,
        loop.annotations,
        span=loop.span,
    )
    second = copy_with_fresh_vars(
        For(
            var,
            loop.min,
            loop.extent,
            loop.kind,
            seq([stores[p] for p in reductions]),
            loop.thread_binding,
            loop.annotations,
            span=loop.span,
        )
    )
    return SeqStmt((first, second))


def _store(stores: tuple[Stmt, ...], pos: int) -> BufferStore:
    stmt = stores[pos]
    assert isinstance(stmt, BufferStore)
    return stmt


class _Distributor(StmtExprMutator):
    def __init__(self, local_data: set[int]) -> None:
        self.local_data = local_data

    def visit_expr(self, expr: PrimExpr) -> PrimExpr:
        return expr  # loops are statements: skip expression trees

    def visit_for_(self, stmt: For) -> Stmt:
        new = self.generic_mutate(stmt)  # inner loops first
        out = distribute_loop(new, self.local_data)
        return new if out is None else out


@function_pass("distribute_reductions", opt_level=1)
def _distribute_reductions(func: PrimFunc) -> PrimFunc:
    """Split serial loops into an element-wise loop and a reduction loop (see module doc)."""
    finder = LocalAllocations()
    finder.visit_stmt(func.body)
    if not finder.vars:
        return func
    body = _Distributor(finder.vars).visit_stmt(func.body)
    return func if body is func.body else func.with_body(body)


distribute_reductions: FunctionPass = _distribute_reductions
"""The ``distribute_reductions`` pass (a :class:`FunctionPass`)."""
