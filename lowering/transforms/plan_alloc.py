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

Besides TVM's rule, ``place_allocations`` takes split points (``fuse_parallel_loops``'
no-overlap tests): an allocation used in both branches of such an ``if`` and nowhere else
carries no value across it, so each branch may have its own. It is split only where a
branch's copy then enters a concurrent loop and compacts there to at most
``SPLIT_BUFFER_BYTES``; otherwise it stays where it was. With split points, any other
allocation (placed once already) moves again only under the same condition: into a
concurrent loop (one the fusion made), compacting there to at most that size.

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
    IntImm,
    LetStmt,
    PrimExpr,
    PrimFunc,
    SeqStmt,
    Stmt,
    StmtExprMutator,
    Var,
    While,
    post_order_visit,
    rebuild,
)

from ..analysis import buffer_accesses
from ..pass_infra import function_pass
from .compact_buffer import compacted
from .unroll import copy_with_fresh_vars

__all__ = ["STACK_BUFFER_BYTES", "place_allocations", "plan_allocation_location"]

STACK_BUFFER_BYTES = 4096
"""Largest allocation inside a concurrent loop's body that the code generator puts on the
stack (``backend`` option ``stack_limit``'s default); a larger one is a heap block per
iteration."""

SPLIT_BUFFER_BYTES = 32768
"""Largest per-iteration buffer a split allocation (``place_allocations``' ``split_at``)
may compact to: a row that stays in the L1 cache. Above the stack size it is a heap block
per iteration, whose allocation costs far less than the row's memory traffic it saves."""

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

    def __init__(self, alloc: Allocate, decls: list[DeclBuffer], index: _UseIndex,
                 split_at: tuple[PrimExpr, ...] = ()) -> None:
        self.index = index
        self.alloc = alloc
        self.decls = decls
        self.data = alloc.buffer_var
        self.split_at = split_at
        self.did_split = False
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
            if any(stmt.condition is c for c in self.split_at):
                return self._split(stmt)
        return self.wrap(stmt)

    def _split(self, stmt: IfThenElse) -> tuple[Stmt, bool]:
        """One allocation per branch of ``stmt`` (both use it, nothing outside does: no
        value crosses the ``if``), kept only where a branch's copy then enters a
        concurrent loop and compacts to a small buffer there."""
        assert stmt.else_case is not None
        fresh = copy_with_fresh_vars(self.wrap(stmt.else_case)[0])
        assert isinstance(fresh, Allocate)
        decls: list[DeclBuffer] = []
        body = fresh.body
        while isinstance(body, DeclBuffer) and body.buffer.data is fresh.buffer_var:
            decls.append(body)
            body = body.body
        other_side = _Placement(fresh, decls, self.index, self.split_at)
        then, then_inside = self.place(stmt.then_case)
        other, other_inside = other_side.place(body)
        then_inside = then_inside and _compacts_small(then, self.data)
        other_inside = other_inside and _compacts_small(other, fresh.buffer_var)
        if not (then_inside or other_inside):
            return self.wrap(stmt)
        if not then_inside:
            then = self.wrap(stmt.then_case)[0]
        if not other_inside:
            other = other_side.wrap(body)[0]
        self.did_split = True
        return rebuild(stmt, {"then_case": then, "else_case": other}), True

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


def _compacts_small(placed: Stmt, data: Var) -> bool:
    """Whether every allocation of ``data`` in ``placed`` compacts to at most
    :data:`SPLIT_BUFFER_BYTES`."""
    sizes: list[bool] = []

    def visit(node: object) -> None:
        if isinstance(node, Allocate) and node.buffer_var is data:
            extent = node.extent
            sizes.append(isinstance(extent, IntImm)
                         and extent.value * node.dtype.itemsize <= SPLIT_BUFFER_BYTES)

    post_order_visit(compacted(placed), visit)
    return bool(sizes) and all(sizes)


class _Planner(StmtExprMutator):
    def __init__(self, split_at: tuple[PrimExpr, ...] = ()) -> None:
        super().__init__()
        self.index = _UseIndex()
        self.split_at = split_at

    def visit_allocate_(self, node: Allocate) -> Stmt:
        # Inner allocations first, so an outer one sinks through their final places.
        visited = body = self.visit_stmt(node.body)
        decls: list[DeclBuffer] = []
        while isinstance(body, DeclBuffer) and body.buffer.data is node.buffer_var:
            decls.append(body)
            body = body.body
        placement = _Placement(node, decls, self.index, self.split_at)
        placed, inside = placement.place(body)
        if self.split_at and not placement.did_split and not (
                inside and _compacts_small(placed, node.buffer_var)):
            # placed once already: another moves again only into a concurrent loop (a fused
            # one) where it compacts as a split one must
            return node if visited is node.body else rebuild(node, {"body": visited})
        return placed


def place_allocations(func: PrimFunc, split_at: tuple[PrimExpr, ...] = ()) -> PrimFunc:
    """Move every allocation to the lowest common ancestor of its uses (see module); an
    allocation used in both branches of an ``if`` whose condition is (the object) one of
    ``split_at``, and nowhere else, becomes one allocation per branch where that lets a
    branch's copy enter a concurrent loop as a small buffer (``fuse_parallel_loops``'s
    guarded fusions: the fused branch then has its rows private to each iteration)."""
    body = _Planner(split_at).visit_stmt(func.body)
    return func if body is func.body else func.with_body(body)


@function_pass("plan_allocation_location")
def plan_allocation_location(func: PrimFunc) -> PrimFunc:
    """Move every allocation to the lowest common ancestor of its uses (see module)."""
    return place_allocations(func)
