"""Allocation placement (pass ``plan_allocation_location``): allocate at the LCA of the uses.

Runs right after ``lower_blocks``, so every allocation the program makes is an
``Allocate`` statement by then (root-block and block ``alloc_buffers``,
``T.decl_buffer`` without ``data``, ``T.allocate``, Reduce temporaries). Each one
moves down to the lowest common ancestor of its uses, TVM's
``PlanAndUpdateBufferAllocationLocation`` rule: the innermost loop whose body
holds every use gets the allocation *inside its body*, so the buffer is one
allocation per iteration. A use is anything naming the data var: a load or store
through any buffer over it, a ``DeclBuffer`` over it (a match_buffer view, a
flat alias), the var itself (a call argument, ``T.address_of``, a let). Besides
loops, the allocation narrows to the smallest run of a ``SeqStmt`` holding the
uses, and to the one branch of an ``if`` that uses it, and passes ``LetStmt``,
``AttrStmt``, ``DeclBuffer`` and other ``Allocate`` headers that do not use it.

After this pass, a buffer is private to one iteration of a ``T.parallel`` loop
exactly when its ``Allocate`` is inside that loop's body (what the race checker
relies on); one allocated above the loop is shared by all its iterations.

Kept from TVM's letter, with reasons:

- An allocation only moves down, never above the statement that declared it.
- It never enters a ``T.vectorized`` loop: the vectorizer cannot widen an
  allocation and would fall back to a serial loop; lanes of one vector share the
  one thread anyway. Nor a ``while`` loop (TVM's LCA only counts ``for`` and blocks).
- An unused allocation stays where it was (TVM drops it).

Values are not carried between iterations of the loop the allocation lands in:
its contents are undefined at the start of each iteration (TVM's rule too).
``hoist_allocations`` (opt_level >= 1) then moves allocations with
loop-invariant sizes back out of serial loops, never out of a parallel one, so
the code allocates once per parallel iteration, not per inner iteration.
"""

from __future__ import annotations

from irbuilder.ir import (
    Allocate,
    AttrStmt,
    DeclBuffer,
    For,
    ForKind,
    IfThenElse,
    LetStmt,
    PrimExpr,
    PrimFunc,
    SeqStmt,
    Stmt,
    StmtExprMutator,
    Var,
    rebuild,
)

from .analysis import uses_buffer_data
from .pass_infra import function_pass

__all__ = ["plan_allocation_location"]

#: Loop kinds an allocation never enters (see the module docstring).
_OPAQUE_LOOPS = (ForKind.VECTORIZED,)


def _uses(node: Stmt | PrimExpr | None, data: Var) -> bool:
    return node is not None and uses_buffer_data(node, data)


def _decl_uses(buffer_decl: DeclBuffer, data: Var) -> bool:
    buf = buffer_decl.buffer
    if buf.data is data:
        return True
    exprs = (*buf.shape, *buf.strides, buf.elem_offset)
    return any(_uses(e, data) for e in exprs)


class _Placement:
    """Wraps the innermost place covering every use of one allocation's data var."""

    def __init__(self, alloc: Allocate, decls: list[DeclBuffer]) -> None:
        self.alloc = alloc
        self.decls = decls
        self.data = alloc.buffer_var

    def wrap(self, stmt: Stmt) -> Stmt:
        for decl in reversed(self.decls):
            stmt = rebuild(decl, {"body": stmt})
        return rebuild(self.alloc, {"body": stmt})

    def place(self, stmt: Stmt) -> Stmt:
        data = self.data
        if not _uses(stmt, data):
            return self.wrap(stmt)
        if isinstance(stmt, SeqStmt):
            return self._place_in_seq(stmt)
        if isinstance(stmt, For):
            if stmt.kind in _OPAQUE_LOOPS or _uses(stmt.min, data) or _uses(stmt.extent, data):
                return self.wrap(stmt)
            return rebuild(stmt, {"body": self.place(stmt.body)})
        if isinstance(stmt, (LetStmt, AttrStmt)):
            header_uses = _uses(stmt.value, data) or (
                isinstance(stmt, AttrStmt) and stmt.node is data
            )
            return self.wrap(stmt) if header_uses else self._descend(stmt)
        if isinstance(stmt, DeclBuffer):
            return self.wrap(stmt) if _decl_uses(stmt, data) else self._descend(stmt)
        if isinstance(stmt, Allocate):
            header_uses = _uses(stmt.extent, data) or _uses(stmt.condition, data)
            return self.wrap(stmt) if header_uses else self._descend(stmt)
        if isinstance(stmt, IfThenElse) and not _uses(stmt.condition, data):
            in_then, in_else = _uses(stmt.then_case, data), _uses(stmt.else_case, data)
            if not in_else:
                return rebuild(stmt, {"then_case": self.place(stmt.then_case)})
            if not in_then and stmt.else_case is not None:
                return rebuild(stmt, {"else_case": self.place(stmt.else_case)})
        return self.wrap(stmt)

    def _descend(self, stmt: LetStmt | AttrStmt | DeclBuffer | Allocate) -> Stmt:
        return rebuild(stmt, {"body": self.place(stmt.body)})

    def _place_in_seq(self, stmt: SeqStmt) -> Stmt:
        hits = [i for i, s in enumerate(stmt.seq) if _uses(s, self.data)]
        lo, hi = hits[0], hits[-1]
        if lo == hi:
            inner = self.place(stmt.seq[lo])
        elif lo == 0 and hi == len(stmt.seq) - 1:
            return self.wrap(stmt)
        else:
            inner = self.wrap(SeqStmt(stmt.seq[lo : hi + 1], span=stmt.span))
        return SeqStmt((*stmt.seq[:lo], inner, *stmt.seq[hi + 1 :]), span=stmt.span)


class _Planner(StmtExprMutator):
    def visit_allocate_(self, node: Allocate) -> Stmt:
        # Inner allocations first, so an outer one sinks through their final places.
        body = self.visit_stmt(node.body)
        decls: list[DeclBuffer] = []
        while isinstance(body, DeclBuffer) and body.buffer.data is node.buffer_var:
            decls.append(body)
            body = body.body
        return _Placement(node, decls).place(body)


@function_pass("plan_allocation_location")
def plan_allocation_location(func: PrimFunc) -> PrimFunc:
    """Move every allocation to the lowest common ancestor of its uses (see module)."""
    body = _Planner().visit_stmt(func.body)
    return func if body is func.body else func.with_body(body)
