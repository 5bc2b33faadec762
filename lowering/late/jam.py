"""The ``jam_parallel_reductions`` pass: interleave iterations of a parallel loop whose body
runs a scalar reduction chain.

``for i in T.parallel(n): acc = 0; for j: acc = acc + A[i, j]; B[i] = acc`` is bound by the
latency of one floating-point add per element: without reassociation (fast-math off) the
chain cannot be split. Iterations of a parallel loop are independent (the promise
``T.parallel`` makes, as in TVM), so ``factor`` of them may run interleaved: the pass emits
``for io in T.parallel(n // factor)`` whose body holds ``factor`` copies of the original
body, merged statement by statement (one ``j`` loop updating ``factor`` independent
accumulators). Each chain keeps its exact order of operations, so results are bit-identical.

Applied only to PARALLEL loops with a constant trip count divisible by ``factor``, or a
symbolic trip count (then ``n % factor`` leftover iterations run after the jammed loop, one
after another, in a serial loop: iterations of a parallel loop may run in any order), whose
body contains a serial loop that updates a scalar element of a function-local buffer at an
index independent of that loop, carrying its value from one iteration to the next (the
latency-bound pattern; an element the iteration sets first, without reading it, is scratch:
a 3 x 3 median's nine values, sorted per pixel, whose jammed copies spilled as AVX2 code,
0.47-0.55 -> 0.43-0.47 ms without the jam) and no vector accumulator (a register-blocked
tile would spill when multiplied).
"""

from __future__ import annotations

from irbuilder.ir import (
    Allocate,
    BufferLoad,
    BufferStore,
    DeclBuffer,
    FloorDiv,
    FloorMod,
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
    StmtExprVisitor,
    Var,
    post_order_visit,
    seq,
    structural_equal,
)

from ..analysis.vars import free_vars
from ..pass_infra import FunctionPass, function_pass
from ..transforms.unroll import copy_with_fresh_vars
from .column_lanes import runs_in_column_lanes
from .versioning import interleaved_behind_parallel_if

__all__ = ["DEFAULT_FACTOR", "jam_parallel_loop", "jam_parallel_reductions", "merge_copies"]

DEFAULT_FACTOR = 4
_REDUCTION = "tvmscript.reduction"  # lower_blocks' mark of a declared reduction: mergeable
_MAX_STMTS = 64


class _Shape(StmtExprVisitor):
    """Finds scalar reduction chains into locals and counts statements (no expression walk)."""

    def __init__(self, local_data: set[int]) -> None:
        self.local_data = local_data
        self.loops: list[Var] = []
        self.guarded: list[int] = []
        """Per enclosing loop: how many ``if`` statements of its body enclose the visit."""
        self.fresh: list[list[BufferStore]] = []
        """Per enclosing loop: the local elements its body has set so far this iteration
        without reading them (a per-element scratch, not a value carried across
        iterations)."""
        self.scalar_chain = False
        self.vector_local = False
        self.stmts = 0

    def visit_expr(self, expr: PrimExpr) -> None:
        return None

    def visit_stmt(self, stmt: Stmt) -> None:
        self.stmts += 1
        super().visit_stmt(stmt)

    def visit_allocate_(self, stmt: Allocate) -> None:
        self.local_data.add(id(stmt.buffer_var))
        self.generic_visit(stmt)

    def visit_for_(self, stmt: For) -> None:
        self.loops.append(stmt.loop_var)
        self.fresh.append([])
        self.guarded.append(0)
        self.generic_visit(stmt)
        self.guarded.pop()
        self.fresh.pop()
        self.loops.pop()

    def visit_if_then_else_(self, stmt: IfThenElse) -> None:
        if self.guarded:
            self.guarded[-1] += 1
        self.generic_visit(stmt)
        if self.guarded:
            self.guarded[-1] -= 1

    def visit_buffer_store_(self, stmt: BufferStore) -> None:
        if id(stmt.buffer.data) not in self.local_data:
            return
        if stmt.value.dtype.lanes > 1:
            self.vector_local = True
            return
        if not self.loops:
            return
        inner = self.loops[-1]
        if any(v is inner for i in stmt.indices for v in free_vars(i)):
            return
        if not self.guarded[-1] and not _reads_element(stmt.value, stmt):
            self.fresh[-1].append(stmt)  # set unconditionally without being read
        elif not any(_same_element(set_, stmt) for set_ in self.fresh[-1]):
            # carried from the previous iteration: a latency-bound chain (a median's
            # exchanges on the pixel's own scratch, loaded first, are not)
            self.scalar_chain = True


def _same_element(a: BufferStore | BufferLoad, b: BufferStore) -> bool:
    return a.buffer.data is b.buffer.data and len(a.indices) == len(b.indices) and all(
        structural_equal(x, y) for x, y in zip(a.indices, b.indices, strict=True))


def _reads_element(value: PrimExpr, store: BufferStore) -> bool:
    found = False

    def visit(node: object) -> None:
        nonlocal found
        if isinstance(node, BufferLoad) and _same_element(node, store):
            found = True

    post_order_visit(value, visit)
    return found


def _same(a: PrimExpr, b: PrimExpr) -> bool:
    return a is b or structural_equal(a, b)


def merge_copies(copies: list[Stmt]) -> Stmt:
    """One statement running every copy, interleaved where their structures agree."""
    first = copies[0]
    if all(isinstance(c, SeqStmt) and len(c.seq) == len(first.seq) for c in copies):  # type: ignore[attr-defined]
        seqs = [c.seq for c in copies]  # type: ignore[attr-defined]
        # one flat sequence (a statement of several copies is itself a sequence), as the
        # printer writes it and the parser reads it back
        return seq([merge_copies([s[k] for s in seqs]) for k in range(len(seqs[0]))])
    if isinstance(first, For) and all(
        isinstance(c, For) and c.kind is first.kind and _same(c.min, first.min)
        and _same(c.extent, first.extent) and not set(c.annotations) - {_REDUCTION}
        for c in copies
    ):
        loops = [c for c in copies if isinstance(c, For)]
        var = first.loop_var
        bodies = [first.body] + [
            copy_with_fresh_vars(c.body, {c.loop_var: var}) for c in loops[1:]
        ]
        return For(
            var, first.min, first.extent, first.kind, merge_copies(bodies), first.thread_binding,
            first.annotations, span=first.span,
        )
    if isinstance(first, Allocate) and all(isinstance(c, Allocate) for c in copies):
        allocs = [c for c in copies if isinstance(c, Allocate)]
        out = merge_copies([a.body for a in allocs])
        for a in reversed(allocs):
            out = Allocate(a.buffer_var, a.dtype, a.extent, a.condition, out, a.annotations,
                           span=a.span)
        return out
    if isinstance(first, DeclBuffer) and all(isinstance(c, DeclBuffer) for c in copies):
        decls = [c for c in copies if isinstance(c, DeclBuffer)]
        out = merge_copies([d.body for d in decls])
        for d in reversed(decls):
            out = DeclBuffer(d.buffer, out, span=d.span)
        return out
    if isinstance(first, LetStmt) and all(isinstance(c, LetStmt) for c in copies):
        lets = [c for c in copies if isinstance(c, LetStmt)]
        out = merge_copies([let.body for let in lets])
        for let in reversed(lets):
            out = LetStmt(let.var, let.value, out, span=let.span)
        return out
    return seq(copies)


def jam_parallel_loop(loop: For, factor: int = DEFAULT_FACTOR) -> Stmt | None:
    """The jammed form of a qualifying parallel loop (see module doc), or None."""
    if loop.kind is not ForKind.PARALLEL or factor < 2:
        return None
    symbolic = not isinstance(loop.extent, IntImm)
    if not symbolic:
        assert isinstance(loop.extent, IntImm)
        count = loop.extent.value
        if count % factor or count < 2 * factor:
            return None
    shape = _Shape(set())
    shape.visit_stmt(loop.body)
    if not shape.scalar_chain or shape.vector_local or shape.stmts > _MAX_STMTS:
        return None
    dtype = loop.loop_var.dtype
    outer = Var(f"{loop.loop_var.name}_jam", dtype)
    copies = [
        copy_with_fresh_vars(
            loop.body,
            {loop.loop_var: loop.min + outer * IntImm(dtype, factor) + IntImm(dtype, u)},
        )
        for u in range(factor)
    ]
    step = IntImm(dtype, factor)
    jammed = For(
        outer, IntImm(dtype, 0), FloorDiv(loop.extent, step) if symbolic
        else IntImm(dtype, count // factor), ForKind.PARALLEL,
        merge_copies(copies), loop.thread_binding, loop.annotations, span=loop.span,
    )
    if not symbolic:
        return jammed
    rest = Var(f"{loop.loop_var.name}_rest", dtype)
    start = loop.min + FloorDiv(loop.extent, step) * step
    leftover = For(
        rest, IntImm(dtype, 0), FloorMod(loop.extent, step), ForKind.SERIAL,
        copy_with_fresh_vars(loop.body, {loop.loop_var: start + rest}), span=loop.span,
    )
    return SeqStmt((jammed, leftover), span=loop.span)


class _Jammer(StmtExprMutator):
    def visit_expr(self, expr: PrimExpr) -> PrimExpr:
        return expr

    def visit_for_(self, stmt: For) -> Stmt:
        if stmt.kind is ForKind.PARALLEL:
            if runs_in_column_lanes(stmt):
                # neighbouring columns in vector lanes beat interleaved scalar chains (a
                # column argmax: 13 -> 0.83 ms on an Intel AVX-512 host)
                return stmt
            out = jam_parallel_loop(stmt)
            if out is not None:
                return interleaved_behind_parallel_if(stmt, out)
        return self.generic_mutate(stmt)


@function_pass("jam_parallel_reductions", opt_level=1)
def _jam_parallel_reductions(func: PrimFunc) -> PrimFunc:
    """Interleave iterations of parallel loops running scalar reduction chains."""
    body = _Jammer().visit_stmt(func.body)
    return func if body is func.body else func.with_body(body)


jam_parallel_reductions: FunctionPass = _jam_parallel_reductions
"""The ``jam_parallel_reductions`` pass (a :class:`FunctionPass`)."""
