"""What the body of a ``T.parallel`` loop does to memory (for :mod:`lowering.checks.race_check`).

:func:`collect_body` lists every load and store below a parallel loop with the conditions
and inner loops around it, the buffers private to an iteration (allocated inside), and the
pointers to shared memory that escape (data vars used as values, ``T.address_of``,
``match_buffer`` views). Values bound by ``LetStmt``/``Let`` and block iteration variables
are substituted into indices and conditions.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from irbuilder.ir import (
    Allocate,
    Block,
    BlockRealize,
    Broadcast,
    Buffer,
    BufferLoad,
    BufferStore,
    Call,
    Cast,
    DeclBuffer,
    FloorDiv,
    FloorMod,
    For,
    ForKind,
    IfThenElse,
    IntImm,
    IterKind,
    Let,
    LetStmt,
    Not,
    PrimExpr,
    PrimFunc,
    Ramp,
    Span,
    Stmt,
    StmtExprVisitor,
    Var,
    as_dtype,
    post_order_visit,
)

from ..analysis import substitute_expr
from ..arith import Analyzer, simplify_expr

__all__ = [
    "Access",
    "Escape",
    "InnerLoop",
    "LoopBody",
    "collect_body",
    "has_memory",
    "mentions",
    "parallel_loops",
    "storage_outside",
]


@dataclass
class InnerLoop:
    """A loop around an access (inside the parallel loop, or around it)."""

    var: Var
    min: PrimExpr
    extent: PrimExpr


@dataclass
class Access:
    """One load or store: indices and conditions with let values substituted, the inner
    loops around it (outermost first), and its span (the statement's when it has none)."""

    buffer: Buffer
    indices: tuple[PrimExpr, ...]
    write: bool
    span: Span | None
    conds: tuple[PrimExpr, ...]
    loops: tuple[InnerLoop, ...]


@dataclass
class Escape:
    """A pointer to the storage of ``data`` that leaves the analysis (``what`` says how)."""

    data: Var
    what: str
    span: Span | None


@dataclass
class LoopBody:
    """What one parallel loop's body does to memory."""

    accesses: list[Access] = field(default_factory=list)
    escapes: list[Escape] = field(default_factory=list)
    private: set[Var] = field(default_factory=set)


def _lanes_as_loop(
    indices: tuple[PrimExpr, ...], loops: tuple[InnerLoop, ...]
) -> tuple[tuple[PrimExpr, ...], tuple[InnerLoop, ...]]:
    """A vector access (``P[T.ramp(b, s, n)]``, TVM's printed vector stores) as the scalar
    access of one lane inside a loop over the lanes: ``P[b + s * lane]`` for ``lane`` in
    ``[0, n)``, one lane variable for every vector index of the access (lane ``l`` of
    ``A[T.ramp(a, 1, 4), T.ramp(c, 1, 4)]`` is ``A[a + l, c + l]``); broadcast indices are
    their value. Other vector indices stay as they are."""
    lanes = next(i.dtype.lanes for i in indices if not i.dtype.is_scalar)
    lane = Var("lane", as_dtype("int32"))
    scalar: list[PrimExpr] = []
    for index in indices:
        if isinstance(index, Ramp) and index.base.dtype.is_scalar:
            step = Cast(index.base.dtype, lane) if index.base.dtype != lane.dtype else lane
            scalar.append(index.base + index.stride * step)
        elif isinstance(index, Broadcast):
            scalar.append(index.value)
        else:
            scalar.append(index)
    lane_loop = InnerLoop(lane, IntImm(lane.dtype, 0), IntImm(lane.dtype, lanes))
    return tuple(scalar), (*loops, lane_loop)


class _Collector(StmtExprVisitor):
    """Accesses below a parallel loop, with their conditions and enclosing inner loops.

    Let-bound values are substituted into indices and conditions, so that an index
    computed in a ``LetStmt`` is analysed like the written-out expression.
    """

    def __init__(self, storage: set[Var]) -> None:
        self.body = LoopBody()
        self.storage = storage
        self.conds: list[PrimExpr] = []
        self.loops: list[InnerLoop] = []
        self.lets: dict[Var, PrimExpr] = {}
        self.spans: list[Span | None] = []
        self.analyzer = Analyzer()

    def _resolve(self, expr: PrimExpr) -> PrimExpr:
        return substitute_expr(expr, self.lets) if self.lets else expr

    def _index(self, expr: PrimExpr) -> PrimExpr:
        """An index with lets substituted; a division or modulo is simplified under the
        loops' ranges (a packed layout's ``(j_o * 64 + j_i) // 64`` is ``j_o``)."""
        resolved = self._resolve(expr)
        return simplify_expr(resolved, self.analyzer) if _divides(resolved) else resolved

    def _span(self, own: Span | None = None) -> Span | None:
        if own is not None:
            return own
        return next((s for s in reversed(self.spans) if s is not None), None)

    def _record(
        self, buffer: Buffer, indices: tuple[PrimExpr, ...], write: bool, span: Span | None
    ) -> None:
        resolved = tuple(self._index(i) for i in indices)
        loops = tuple(self.loops)
        if any(not i.dtype.is_scalar for i in resolved):
            resolved, loops = _lanes_as_loop(resolved, loops)
        self.body.accesses.append(
            Access(buffer, resolved, write, self._span(span), tuple(self.conds), loops)
        )

    def visit_stmt(self, stmt: Stmt) -> None:
        self.spans.append(stmt.span)
        try:
            super().visit_stmt(stmt)
        finally:
            self.spans.pop()

    def visit_buffer_store_(self, node: BufferStore) -> None:
        self._record(node.buffer, node.indices, True, node.span)
        self.generic_visit(node)

    def visit_buffer_load_(self, node: BufferLoad) -> None:
        self._record(node.buffer, node.indices, False, node.span)
        self.generic_visit(node)

    def visit_var_(self, var: Var) -> None:
        if var.dtype.is_handle and var not in self.body.private:
            self.body.escapes.append(Escape(var, f"the pointer {var.name!r}", self._span()))

    def visit_cast_(self, node: Cast) -> None:
        if isinstance(node.value, Var) and node.value.dtype.is_handle and node.dtype.is_uint:
            # an address as a number (a run-time no-overlap test compares them): nothing
            # can store through it
            return
        self.generic_visit(node)

    def visit_call_(self, node: Call) -> None:
        if node.op == "address_of":
            for arg in node.args:
                if isinstance(arg, BufferLoad) and arg.buffer.data not in self.body.private:
                    what = f"T.address_of({arg.buffer.name}[...])"
                    self.body.escapes.append(Escape(arg.buffer.data, what, self._span(node.span)))
        self.generic_visit(node)

    def visit_for_(self, node: For) -> None:
        self.visit_expr(node.min)
        self.visit_expr(node.extent)
        self.loops.append(
            InnerLoop(node.loop_var, self._resolve(node.min), self._resolve(node.extent))
        )
        with self.analyzer.scope():
            self.analyzer.bind_range(node.loop_var, node.min, node.extent)
            self.visit_stmt(node.body)
        self.loops.pop()

    def visit_if_then_else_(self, node: IfThenElse) -> None:
        self.visit_expr(node.condition)
        cond = self._resolve(node.condition)
        self.conds.append(cond)
        self.visit_stmt(node.then_case)
        self.conds.pop()
        if node.else_case is not None:
            self.conds.append(Not(cond))
            self.visit_stmt(node.else_case)
            self.conds.pop()

    def visit_let_stmt_(self, node: LetStmt) -> None:
        self.visit_expr(node.value)
        self.lets[node.var] = self._resolve(node.value)
        self.visit_stmt(node.body)
        del self.lets[node.var]

    def visit_let_(self, node: Let) -> None:
        self.visit_expr(node.value)
        self.lets[node.var] = self._resolve(node.value)
        self.visit_expr(node.body)
        del self.lets[node.var]

    def visit_allocate_(self, node: Allocate) -> None:
        self.body.private.add(node.buffer_var)
        self.generic_visit(node)

    def visit_decl_buffer_(self, node: DeclBuffer) -> None:
        if node.buffer.data not in self.storage:
            self.body.private.add(node.buffer.data)  # it owns its storage
        self.generic_visit(node)

    def visit_block_realize_(self, node: BlockRealize) -> None:
        # Before lower_blocks: the iter vars stand for their bound values.
        for value in node.iter_values:
            self.visit_expr(value)
        self.visit_expr(node.predicate)
        bound = [iv.var for iv in node.block.iter_vars]
        for var, value in zip(bound, node.iter_values):
            self.lets[var] = self._resolve(value)
        guarded = not (isinstance(node.predicate, IntImm) and node.predicate.value)
        if guarded:
            self.conds.append(self._resolve(node.predicate))
        self.visit_stmt(node.block)
        if guarded:
            self.conds.pop()
        for var in bound:
            del self.lets[var]

    def visit_block_(self, node: Block) -> None:
        for buffer in node.alloc_buffers:
            self.body.private.add(buffer.data)
        for match in node.match_buffers:
            # A view whose accesses this analysis does not map back to its source.
            source = match.source.buffer
            if source.data not in self.body.private:
                what = f"the match_buffer view {match.buffer.name!r}"
                self.body.escapes.append(Escape(source.data, what, self._span(node.span)))
        if node.init is not None:
            # The init runs when every reduction axis is at its start.
            starts: list[PrimExpr] = [
                iv.var == iv.dom.min
                for iv in node.iter_vars
                if iv.kind is IterKind.REDUCE
            ]
            self.conds.extend(self._resolve(c) for c in starts)
            self.visit_stmt(node.init)
            del self.conds[len(self.conds) - len(starts) :]
        self.visit_stmt(node.body)


def storage_outside(func: PrimFunc) -> set[Var]:
    """Pointers defined by something other than a ``DeclBuffer``: buffer and handle
    parameters, allocations, block buffers, let-bound handles. A ``DeclBuffer`` over any
    other data var owns its memory."""
    found: set[Var] = {b.data for b in func.buffer_map.values()}
    found.update(p for p in func.params if p.dtype.is_handle)

    def visit(node: object) -> None:
        if isinstance(node, Allocate):
            found.add(node.buffer_var)
        elif isinstance(node, Block):
            found.update(b.data for b in node.alloc_buffers)
        elif isinstance(node, (LetStmt, Let)) and node.var.dtype.is_handle:
            found.add(node.var)

    post_order_visit(func.body, visit)
    return found


def mentions(expr: PrimExpr, targets: set[Var]) -> bool:
    found = False

    def visit(node: object) -> None:
        nonlocal found
        if isinstance(node, Var) and node in targets:
            found = True

    post_order_visit(expr, visit)
    return found


def has_memory(expr: PrimExpr) -> bool:
    """Whether ``expr`` reads memory or calls anything (its value depends on data)."""
    found = False

    def visit(node: object) -> None:
        nonlocal found
        if isinstance(node, BufferLoad) or (isinstance(node, Call) and node.op != "likely"):
            found = True

    post_order_visit(expr, visit)
    return found


class _ParallelLoops(StmtExprVisitor):
    """Parallel loops in source order (an outer loop before the loops inside it)."""

    def __init__(self) -> None:
        self.found: list[tuple[For, tuple[InnerLoop, ...]]] = []
        self.enclosing: list[InnerLoop] = []

    def visit_for_(self, node: For) -> None:
        if node.kind is ForKind.PARALLEL:
            self.found.append((node, tuple(self.enclosing)))
        self.enclosing.append(InnerLoop(node.loop_var, node.min, node.extent))
        self.generic_visit(node)
        self.enclosing.pop()


def parallel_loops(stmt: Stmt) -> Iterator[tuple[For, tuple[InnerLoop, ...]]]:
    """Each parallel loop with the loops around it, outer loops first."""
    finder = _ParallelLoops()
    finder.visit_stmt(stmt)
    return iter(finder.found)


def _divides(expr: PrimExpr) -> bool:
    found = False

    def visit(node: object) -> None:
        nonlocal found
        found = found or isinstance(node, (FloorDiv, FloorMod))

    post_order_visit(expr, visit)
    return found


def collect_body(loop: For, storage: set[Var]) -> LoopBody:
    """The accesses, private buffers and escapes below ``loop`` (``storage``: data vars
    owning memory, from :func:`storage_outside`)."""
    collector = _Collector(storage)
    collector.analyzer.bind_range(loop.loop_var, loop.min, loop.extent)
    collector.visit_stmt(loop.body)
    return collector.body
