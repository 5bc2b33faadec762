"""Allocation placement (pass ``plan_allocation_location``): allocate where the uses are.

Runs right after ``lower_blocks``, so every allocation the program makes is an
``Allocate`` statement by then (root-block and block ``alloc_buffers``,
``T.decl_buffer`` without ``data``, ``T.allocate``, Reduce temporaries). Each one
moves down towards the lowest common ancestor (LCA) of its uses, TVM's
``PlanAndUpdateBufferAllocationLocation`` rule: a ``T.parallel`` (or thread-bound)
loop whose body holds every use gets the allocation *inside its body*, so each
iteration, and so each thread, has its own buffer. A use is anything naming the
data var: a load or store through any buffer over it, a ``DeclBuffer`` over it (a
match_buffer view, a flat alias), the var itself (a call argument,
``T.address_of``, a let). Besides loops, the allocation narrows to the smallest
run of a ``SeqStmt`` holding the uses and to the one branch of an ``if`` using it,
and passes ``LetStmt``, ``AttrStmt``, ``DeclBuffer`` and ``Allocate`` headers that
do not use it.

After this pass, a buffer is private to one iteration of a parallel loop exactly
when its ``Allocate`` is inside that loop's body; one allocated above the loop is
shared by all its iterations (what the race checker relies on).

Where we differ from TVM's letter, and why:

- A serial or unrolled loop is entered only on the way to a concurrent loop: when
  the LCA is inside serial loops below the innermost enclosing parallel loop (or
  the declaring scope), the allocation stays around the outermost of those serial
  loops. TVM puts it in the serial loop's body and then allocates it once anyway
  (its LLVM codegen puts stack buffers in the function's entry block), as our
  ``hoist_allocations`` would; stopping above the serial loops keeps a value
  carried across their iterations meaningful at every opt_level (the interpreter
  allocates a block's buffers once per execution of the block) and never makes a
  heap allocation per inner iteration.
- An allocation never enters a ``T.vectorized`` loop: the vectorizer cannot widen
  an allocation and would fall back to a serial loop. Nor a ``while`` loop (TVM's
  LCA only counts ``for`` loops and blocks).
- An allocation only moves down, never above the statement that declared it, and
  an unused one stays where it was (TVM drops it).
- TVM also lifts the LCA of a block's accessed buffers above the loops bound to
  its scan/opaque iteration variables. For serial loops that is implied here (they
  are never entered for their own sake); we do not do it for a parallel loop, whose
  iterations carrying values through a buffer would race anyway.

A buffer inside a parallel body holds undefined values at the start of each
iteration (TVM's rule): a program must not read what an earlier iteration wrote.
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
    While,
    rebuild,
)

from ..analysis import buffer_accesses
from ..pass_infra import function_pass

__all__ = ["plan_allocation_location"]

#: Loop kinds an allocation never enters (see the module docstring).
_OPAQUE_LOOPS = (ForKind.VECTORIZED,)


def _expr_vars(*exprs: PrimExpr | None) -> frozenset[Var]:
    found: set[Var] = set()
    for expr in exprs:
        if expr is not None:
            found.update(buffer_accesses(expr).data_vars)
    return frozenset(found)


def _header_vars(stmt: Stmt) -> frozenset[Var] | None:
    """Data vars a statement with a body uses itself; None for other statements."""
    if isinstance(stmt, SeqStmt):
        return frozenset()
    if isinstance(stmt, For):
        return _expr_vars(stmt.min, stmt.extent)
    if isinstance(stmt, LetStmt):
        return _expr_vars(stmt.value)
    if isinstance(stmt, AttrStmt):
        node = stmt.node if isinstance(stmt.node, Var) else None
        return _expr_vars(stmt.value, node)
    if isinstance(stmt, (IfThenElse, While)):
        return _expr_vars(stmt.condition)
    if isinstance(stmt, Allocate):
        return _expr_vars(stmt.extent, stmt.condition)
    if isinstance(stmt, DeclBuffer):
        buf = stmt.buffer
        return _expr_vars(buf.data, *buf.shape, *buf.strides, buf.elem_offset)
    return None


def _children(stmt: Stmt) -> tuple[Stmt, ...]:
    if isinstance(stmt, SeqStmt):
        return stmt.seq
    if isinstance(stmt, IfThenElse):
        return (stmt.then_case,) if stmt.else_case is None else (stmt.then_case, stmt.else_case)
    body = getattr(stmt, "body", None)
    return (body,) if isinstance(body, Stmt) else ()


class _UseIndex:
    """The data vars each statement's subtree uses, memoised (shared by all allocations)."""

    def __init__(self) -> None:
        self.memo: dict[Stmt, frozenset[Var]] = {}

    def vars_of(self, stmt: Stmt) -> frozenset[Var]:
        cached = self.memo.get(stmt)
        if cached is not None:
            return cached
        own = _header_vars(stmt)
        if own is None:  # a leaf (or a node kind this pass does not descend into)
            result = frozenset(buffer_accesses(stmt).data_vars)
        else:
            result = own.union(*(self.vars_of(child) for child in _children(stmt)))
        self.memo[stmt] = result
        return result


_CONCURRENT = (ForKind.PARALLEL, ForKind.THREAD_BINDING)


class _Placement:
    """Wraps the innermost place covering every use of one allocation's data var.

    Each ``place`` returns the rewritten statement and whether the allocation ended up
    inside a concurrent (parallel or thread-bound) loop of it: a serial loop is entered
    only on the way to one.
    """

    def __init__(self, alloc: Allocate, decls: list[DeclBuffer], index: _UseIndex) -> None:
        self.index = index
        self.alloc = alloc
        self.decls = decls
        self.data = alloc.buffer_var
        self.last_wrapped: Stmt | None = None

    def wrap(self, stmt: Stmt) -> tuple[Stmt, bool]:
        self.last_wrapped = stmt
        for decl in reversed(self.decls):
            stmt = rebuild(decl, {"body": stmt})
        return rebuild(self.alloc, {"body": stmt}), False

    def uses(self, node: Stmt | PrimExpr | None) -> bool:
        if node is None:
            return False
        if isinstance(node, Stmt):
            return self.data in self.index.vars_of(node)
        return self.data in _expr_vars(node)

    def place(self, stmt: Stmt) -> tuple[Stmt, bool]:
        data = self.data
        uses = self.uses
        if not uses(stmt):
            return self.wrap(stmt)
        if isinstance(stmt, SeqStmt):
            return self._place_in_seq(stmt)
        if isinstance(stmt, For):
            return self._place_in_loop(stmt)
        if isinstance(stmt, (LetStmt, AttrStmt)):
            header = _header_vars(stmt)
            return self.wrap(stmt) if header and data in header else self._descend(stmt)
        if isinstance(stmt, (DeclBuffer, Allocate)):
            header = _header_vars(stmt)
            return self.wrap(stmt) if header and data in header else self._descend(stmt)
        if isinstance(stmt, IfThenElse) and not uses(stmt.condition):
            in_then, in_else = uses(stmt.then_case), uses(stmt.else_case)
            if not in_else:
                then, inside = self.place(stmt.then_case)
                return rebuild(stmt, {"then_case": then}), inside
            if not in_then and stmt.else_case is not None:
                other, inside = self.place(stmt.else_case)
                return rebuild(stmt, {"else_case": other}), inside
        return self.wrap(stmt)

    def _place_in_loop(self, loop: For) -> tuple[Stmt, bool]:
        if loop.kind in _OPAQUE_LOOPS or self.uses(loop.min) or self.uses(loop.extent):
            return self.wrap(loop)
        body, inside = self.place(loop.body)
        if loop.kind in _CONCURRENT:
            return rebuild(loop, {"body": body}), True
        if not inside:
            # The LCA is this serial loop's body or below it, with no concurrent loop on
            # the way: allocate once, around the loop (see the module docstring).
            return self.wrap(loop)
        return rebuild(loop, {"body": body}), True

    def _descend(self, stmt: LetStmt | AttrStmt | DeclBuffer | Allocate) -> tuple[Stmt, bool]:
        body, inside = self.place(stmt.body)
        if isinstance(stmt, (DeclBuffer, Allocate)) and self.last_wrapped is stmt.body:
            # Around another allocation's whole scope: stay outside it, so allocations
            # landing at one place keep their declaration order.
            return self.wrap(stmt)
        return rebuild(stmt, {"body": body}), inside

    def _place_in_seq(self, stmt: SeqStmt) -> tuple[Stmt, bool]:
        hits = [i for i, s in enumerate(stmt.seq) if self.uses(s)]
        lo, hi = hits[0], hits[-1]
        inside = False
        if lo == hi:
            inner, inside = self.place(stmt.seq[lo])
        elif lo == 0 and hi == len(stmt.seq) - 1:
            return self.wrap(stmt)
        else:
            inner, _ = self.wrap(SeqStmt(stmt.seq[lo : hi + 1], span=stmt.span))
        return SeqStmt((*stmt.seq[:lo], inner, *stmt.seq[hi + 1 :]), span=stmt.span), inside


class _Planner(StmtExprMutator):
    def __init__(self) -> None:
        super().__init__()
        self.index = _UseIndex()

    def visit_allocate_(self, node: Allocate) -> Stmt:
        # Inner allocations first, so an outer one sinks through their final places.
        body = self.visit_stmt(node.body)
        decls: list[DeclBuffer] = []
        while isinstance(body, DeclBuffer) and body.buffer.data is node.buffer_var:
            decls.append(body)
            body = body.body
        placed, _ = _Placement(node, decls, self.index).place(body)
        return placed


@function_pass("plan_allocation_location")
def plan_allocation_location(func: PrimFunc) -> PrimFunc:
    """Move every allocation to the lowest common ancestor of its uses (see module)."""
    body = _Planner().visit_stmt(func.body)
    return func if body is func.body else func.with_body(body)
