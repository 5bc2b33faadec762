"""Row accumulators kept in an array element, moved into a local buffer for
``vectorize_row_reductions``.

A TVM user often sums a row straight into the output::

    for i in T.parallel(n):
        O[i] = T.float32(0)
        for j in range(m):
            O[i] = O[i] + A[i, j] * A[i, j]

``O`` and ``A`` are arbitrary numpy arrays that may overlap, so as written every step loads
and stores ``O[i]``, and the row-lanes rewrite (which runs eight rows' chains side by side,
so row ``i + 1`` reads ``A`` before row ``i`` stores ``O[i]``) does not apply. When the
parameter arrays the loop writes overlap none of the others it uses (``no_alias_condition``,
the test ``parallelize_loops`` guards its loops with), such a chain may accumulate in a
one-element local buffer instead -- loaded from ``O[i]`` before the chain loop, stored back
after it -- which is the form ``row_chains.match_rows`` takes. The operations and their
order are unchanged.

:func:`promote_row_outputs` makes that form of a loop's body. ``row_vectorize`` keeps it only
when the row lanes then apply, as ``if <no overlap>: <row lanes> else: <the loop>``.

A chain loop qualifies when it is SERIAL, its body (through ``let`` bindings) is one to
:data:`~.row_chains.MAX_CHAINS` scalar stores to elements of arrays declared outside the
parallel loop, at indices that do not depend on the chain loop, each element read in the
loop only by its own store, at the same index, and nothing in the loop has side effects or
may trap. Two such elements of one array must differ by a constant.
"""

from __future__ import annotations

from collections.abc import Callable

from irbuilder.ir import (
    Allocate,
    Buffer,
    BufferLoad,
    BufferStore,
    DeclBuffer,
    For,
    ForKind,
    IntImm,
    LetStmt,
    PrimExpr,
    PrimFunc,
    SeqStmt,
    Stmt,
    StmtExprMutator,
    Sub,
    Var,
    as_dtype,
    make_data_var,
    post_order_visit,
    rebuild,
    seq,
    structural_equal,
)

from ..analysis.loads import LoadCollector, LocalAllocations
from ..analysis.vars import free_vars
from ..arith.rewrite import simplify_expr
from ..checks.race_check import loop_race
from ..transforms.auto_parallel import no_alias_condition
from .row_chains import MAX_CHAINS, bound_stores

__all__ = [
    "Swap",
    "inner_iterations_conflict",
    "interleave_nest_level",
    "nest_levels",
    "promote_row_outputs",
]

_I32 = as_dtype("int32")
_TRUE = IntImm(as_dtype("bool"), 1)


class _Target:
    """One promoted element: ``buffer[index]`` and the local buffer standing for it."""

    def __init__(self, buffer: Buffer, index: PrimExpr) -> None:
        self.buffer, self.index = buffer, index
        data = make_data_var(f"{buffer.name}_row_acc", buffer.dtype)
        self.local = Buffer(f"{buffer.name}_row_acc", data, (IntImm(_I32, 1),), buffer.dtype)

    def same_view(self, buffer: Buffer) -> bool:
        """Whether ``buffer`` addresses the memory as this one does (same elements)."""
        return buffer is self.buffer or (
            buffer.data is self.buffer.data and buffer.dtype == self.buffer.dtype
            and structural_equal(buffer.elem_offset, self.buffer.elem_offset))

    def matches(self, buffer: Buffer, indices: tuple[PrimExpr, ...] | list[PrimExpr]) -> bool:
        return (self.same_view(buffer) and len(indices) == 1
                and structural_equal(indices[0], self.index))


def _distinct(a: _Target, b: _Target) -> bool:
    if a.buffer.data is not b.buffer.data:
        return True  # other arrays: the no-overlap test covers them
    if not a.same_view(b.buffer):
        return False
    gap = simplify_expr(Sub(a.index, b.index))
    return isinstance(gap, IntImm) and gap.value != 0


def _targets(loop: For, outer: set[int], inner_data: set[int]) -> list[_Target] | None:
    """The elements a chain loop accumulates into (module doc), or None."""
    if loop.kind is not ForKind.SERIAL or loop.annotations or loop.thread_binding is not None:
        return None
    stores = bound_stores(loop.body, {})
    if not stores or len(stores) > MAX_CHAINS:
        return None
    targets: list[_Target] = []
    for store in stores:
        buffer = store.buffer
        if (id(buffer.data) in inner_data or len(store.indices) != 1
                or buffer.dtype.lanes != 1 or store.value.dtype.lanes != 1):
            return None
        (index,) = store.indices
        if index.dtype.lanes != 1 or any(id(v) not in outer for v in free_vars(index)):
            return None
        target = _Target(buffer, index)
        if not all(_distinct(target, t) for t in targets):
            return None
        targets.append(target)
    found = LoadCollector(traps_are_effects=True)
    for store in stores:
        found.visit_expr(store.value)
        for index in store.indices:
            found.visit_expr(index)
    if found.impure:
        return None
    written = {id(t.buffer.data) for t in targets}
    for load in found.loads:
        if id(load.buffer.data) in written and not any(
            t.matches(load.buffer, load.indices) for t in targets
        ):
            return None  # another element of an accumulating array
    return targets


class _ToLocal(StmtExprMutator):
    def __init__(self, targets: list[_Target]) -> None:
        self.targets = targets
        self.zero = IntImm(_I32, 0)

    def _find(self, buffer: Buffer, indices: tuple[PrimExpr, ...]) -> _Target | None:
        return next((t for t in self.targets if t.matches(buffer, indices)), None)

    def visit_buffer_load_(self, node: BufferLoad) -> PrimExpr:
        target = self._find(node.buffer, node.indices)
        if target is not None:
            return BufferLoad(target.local, (self.zero,))
        return self.generic_mutate(node)

    def visit_buffer_store_(self, stmt: BufferStore) -> Stmt:
        target = self._find(stmt.buffer, stmt.indices)
        if target is not None:
            return BufferStore(target.local, self.visit_expr(stmt.value), (self.zero,),
                               span=stmt.span)
        return self.generic_mutate(stmt)


class _Promote(StmtExprMutator):
    """Rewrites the chain loops at the top of a row body (through its sequences, bindings
    and declarations, not into other loops)."""

    def __init__(self, outer: set[int], inner_data: set[int]) -> None:
        self.outer, self.inner_data = outer, inner_data
        self.locals: list[Buffer] = []

    def visit_expr(self, expr: PrimExpr) -> PrimExpr:
        return expr

    def visit_seq_stmt_(self, stmt: SeqStmt) -> Stmt:
        parts = [self.visit_stmt(s) for s in stmt.seq]
        if all(p is s for p, s in zip(parts, stmt.seq)):
            return stmt
        return seq(parts)  # one flat sequence, as match_rows reads it

    def visit_stmt(self, stmt: Stmt) -> Stmt:
        if isinstance(stmt, (SeqStmt, LetStmt, Allocate, DeclBuffer)):
            return super().visit_stmt(stmt)
        if not isinstance(stmt, For):
            return stmt
        targets = _targets(stmt, self.outer, self.inner_data)
        if targets is None:
            return stmt
        local = _ToLocal(targets).visit_stmt(stmt)
        written = {id(t.buffer.data) for t in targets}
        if _scratch_accesses(local, written) != ([], False):
            return stmt  # an access the matching saw through a binding: not promoted
        zero = IntImm(_I32, 0)
        self.locals.extend(t.local for t in targets)
        loads = [BufferStore(t.local, BufferLoad(t.buffer, (t.index,)), (zero,))
                 for t in targets]
        stores = [BufferStore(t.buffer, BufferLoad(t.local, (zero,)), (t.index,))
                  for t in targets]
        return SeqStmt((*loads, local, *stores), span=stmt.span)


def promote_row_outputs(loop: For) -> For | None:
    """``loop`` with its chains into array elements accumulating in local buffers (module
    doc; valid only where the arrays it writes overlap none of the others it uses), or
    None when it has none."""
    # indices may use the row variable and what is declared outside the loop, not a chain
    # loop's own variable or the body's bindings; the arrays are not the body's allocations
    allocated = LocalAllocations()
    allocated.visit_stmt(loop.body)
    promote = _Promote({id(v) for v in free_vars(loop.body)}, allocated.vars)
    body = promote.visit_stmt(loop.body)
    if not promote.locals:
        return None
    for local in reversed(promote.locals):
        body = Allocate(local.data, local.dtype, local.shape[0], _TRUE, DeclBuffer(local, body))
    return For(loop.loop_var, loop.min, loop.extent, loop.kind, body, loop.thread_binding,
               loop.annotations, span=loop.span)


def nest_levels(outer_body: Stmt) -> list[tuple[Stmt, For]]:
    """The levels of the perfect nest of serial loops ``outer_body`` is (under allocations
    and declarations of scratch buffers), outermost first: for each, the nest rewritten
    with the scratch allocated in the body of that level's loop, and that loop (in the
    nest). ``hoist_allocations`` leaves a batch of rows' accumulators so: ``for b: acc =
    alloc; for i: <row b, i>``. Allocating the scratch per iteration of a level is the same
    program only when each iteration writes every scratch element it reads before reading
    it (at constant indices, in statement order): a level where a value would pass from one
    iteration to the next is left out."""
    wrappers: list[Allocate | DeclBuffer] = []
    body = outer_body
    while isinstance(body, (Allocate, DeclBuffer)):
        wrappers.append(body)
        body = body.body
    scratch = {id(w.buffer_var) for w in wrappers if isinstance(w, Allocate)}
    if not all(isinstance(w, Allocate) or id(w.buffer.data) in scratch for w in wrappers):
        return []
    loops: list[For] = []
    while (isinstance(body, For) and body.kind is ForKind.SERIAL and not body.annotations
           and body.thread_binding is None):
        loops.append(body)
        body = body.body
    levels: list[tuple[Stmt, For]] = []
    for k, loop in enumerate(loops):
        if wrappers and not _written_first(loop.body, scratch):
            continue
        inner: Stmt = loop.body
        for w in reversed(wrappers):
            inner = rebuild(w, {"body": inner})
        level: For = rebuild(loop, {"body": inner}) if wrappers else loop
        nest: Stmt = level
        for outer in reversed(loops[:k]):
            nest = rebuild(outer, {"body": nest})
        levels.append((nest, level))
    return levels


def _scratch_accesses(stmt: Stmt, scratch: set[int]) -> tuple[list[BufferLoad | BufferStore],
                                                              bool]:
    """The loads and stores of scratch in ``stmt`` (post order), and whether a scratch
    address itself is used."""
    accesses: list[BufferLoad | BufferStore] = []
    escaped = False

    def visit(node: object) -> None:
        nonlocal escaped
        if isinstance(node, (BufferLoad, BufferStore)) and id(node.buffer.data) in scratch:
            accesses.append(node)
        elif isinstance(node, Var) and id(node) in scratch:
            escaped = True

    post_order_visit(stmt, visit)
    return accesses, escaped


def _written_first(body: Stmt, scratch: set[int]) -> bool:
    """Whether the statements of ``body`` (through sequences, bindings and declarations)
    read only scratch elements an earlier statement stored."""
    written: set[tuple[int, int]] = set()
    stmts: list[Stmt] = []

    def flatten(stmt: Stmt) -> None:
        if isinstance(stmt, SeqStmt):
            for part in stmt.seq:
                flatten(part)
        elif isinstance(stmt, (LetStmt, Allocate, DeclBuffer)):
            stmts.append(rebuild(stmt, {"body": SeqStmt(())}))  # its own expressions
            flatten(stmt.body)
        else:
            stmts.append(stmt)

    flatten(body)
    for stmt in stmts:
        accesses, escaped = _scratch_accesses(stmt, scratch)
        keys: list[tuple[int, int] | None] = [
            (id(a.buffer.data), a.indices[0].value)
            if len(a.indices) == 1 and isinstance(a.indices[0], IntImm) else None
            for a in accesses
        ]
        if escaped or any(key is None for key in keys):
            return False
        reads = [k for a, k in zip(accesses, keys) if isinstance(a, BufferLoad)]
        if any(k not in written for k in reads):
            return False
        if isinstance(stmt, BufferStore) and id(stmt.buffer.data) in scratch:
            key = keys[-1]  # post order: the store itself comes last
            assert key is not None
            written.add(key)
        elif any(isinstance(a, BufferStore) for a in accesses) and not isinstance(stmt, For):
            return False  # a store under a branch need not happen
    return True


class Swap(StmtExprMutator):
    """Replaces one statement (by identity)."""

    def __init__(self, old: Stmt, new: Stmt) -> None:
        self.old, self.new = old, new

    def visit_expr(self, expr: PrimExpr) -> PrimExpr:
        return expr

    def visit_stmt(self, stmt: Stmt) -> Stmt:
        return self.new if stmt is self.old else super().visit_stmt(stmt)


def inner_iterations_conflict(func: PrimFunc, loop: For, nest: Stmt, inner: For) -> bool:
    """Whether the iterations of ``inner``, a loop of ``nest``, may conflict (``loop_race``);
    ``nest`` is the body of ``func``'s loop ``loop``, or a rewriting of it
    (:func:`nest_levels`)."""
    if nest is loop.body:
        return loop_race(func, inner) is not None
    swapped = Swap(loop, rebuild(loop, {"body": nest})).visit_stmt(func.body)
    return loop_race(func.with_body(swapped), inner) is not None


def interleave_nest_level(
    func: PrimFunc, loop: For, lanes_of: Callable[[For], Stmt | None]
) -> tuple[Stmt, list[PrimExpr]] | None:
    """The body of ``func``'s parallel ``loop`` with one serial level of its nest
    (:func:`nest_levels`, innermost first) replaced by ``lanes_of`` that level's loop (given
    as PARALLEL: its iterations run interleaved), and the tests that the arrays it writes
    overlap none of the others it uses; None when no level has lanes, or the first that
    does has iterations that may conflict (the race check takes distinct arrays as
    distinct memory, hence the tests)."""
    for nest, inner in reversed(nest_levels(loop.body)):
        lanes = lanes_of(rebuild(inner, {"kind": ForKind.PARALLEL}))
        if lanes is None:
            continue
        tests = no_alias_condition(func, inner)
        if tests is None or inner_iterations_conflict(func, loop, nest, inner):
            return None
        return Swap(inner, lanes).visit_stmt(nest), tests
    return None
