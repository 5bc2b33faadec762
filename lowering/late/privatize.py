"""The ``privatize_scatter_adds`` pass: a histogram loop runs on every core.

``for i in range(n): H[D[i]] = H[D[i]] + v`` cannot be a parallel loop as written: two
iterations may add to the same bin. Integer addition wraps (code generation adds no
``nsw``), so it is exactly associative and commutative: the sum a bin ends with does not
depend on the order of its additions. The loop is rewritten to count into per-task copies
of the array and add them up afterwards::

    if <H overlaps no array the loop reads> and n >= MIN_TRIP_COUNT:
        counts = T.allocate([TASKS * bins])          # one private histogram per task
        for task in T.parallel(TASKS):
            counts[task * bins : (task + 1) * bins] = 0
            for i in range(<the task's share of 0..n>):
                counts[task * bins + D[i]] += v
        for b in range(bins):                        # in task order, starting from H[b]
            H[b] = H[b] + counts[b] + counts[bins + b] + ...
    else:
        <the loop>

Every bin receives the same additions, in another order: the results are bit-identical for
every input, overlapping arrays run the original loop, and a bin index outside ``H`` is as
undefined as it was. With ``bounds_check=True`` the loop's statement comes after asserts
(``D[i]`` within ``H``); the tasks then test their conditions instead, count only the
elements that pass and flag the others, and when any task flagged one the original loop
runs from the start (``H`` is untouched until the merge): it fails at the first bad element
with its message, after counting the elements before it, as the source order does.

Applied to SERIAL loops that are not inside another loop, whose body is exactly one store
``H[idx] = H[idx] + v`` (or ``v + H[idx]``), after any asserts whose conditions are pure
and do not read ``H``, to an integer array ``H`` of at most
:data:`MAX_BINS` elements, with ``idx`` reading memory (a scatter: an affine index would
need no privatization) and neither ``idx`` nor ``v`` reading ``H`` or calling out.
"""

from __future__ import annotations

from irbuilder.ir import (
    EQ,
    GE,
    Add,
    Allocate,
    And,
    AssertStmt,
    BufferLoad,
    BufferStore,
    Cast,
    DeclBuffer,
    FloorDiv,
    For,
    ForKind,
    IfThenElse,
    IntImm,
    Min,
    Mul,
    PrimExpr,
    PrimFunc,
    SeqStmt,
    Stmt,
    StmtExprMutator,
    Sub,
    Var,
    as_dtype,
    structural_equal,
)
from irbuilder.ir.buffer import Buffer, make_data_var

from ..analysis.loads import LoadCollector, LocalAllocations, reads_memory
from ..analysis.substitute import substitute_expr
from ..pass_infra import FunctionPass, function_pass
from ..transforms.unroll import copy_with_fresh_vars
from .versioning import all_of, byte_range, no_overlap_checks

__all__ = ["MAX_BINS", "MIN_TRIP_COUNT", "TASKS", "privatize_loop", "privatize_scatter_adds"]

TASKS = 8
"""Private histograms: a few per core of the 2-8 core machines this targets, so that an
uneven share of work evens out; the merge costs ``TASKS`` additions per bin."""

MAX_BINS = 1 << 16
"""Largest array privatized (TASKS copies of it are allocated and summed)."""

MIN_TRIP_COUNT = 1 << 16
"""Fewer iterations do not pay for the fork, the zeroing and the merge; a loop must also
run at least 16 iterations per bin of each private copy."""

_TRUE = IntImm(as_dtype("bool"), 1)
_FLAG = as_dtype("int32")


def _split_body(loop: For) -> tuple[list[AssertStmt], Stmt]:
    """The loop's leading asserts and its last statement."""
    body = loop.body
    if isinstance(body, SeqStmt) and len(body.seq) >= 2 and all(
            isinstance(st, AssertStmt) for st in body.seq[:-1]):
        return [st for st in body.seq[:-1] if isinstance(st, AssertStmt)], body.seq[-1]
    return [], body


def _match(loop: For, local_data: set[int]) -> tuple[BufferStore, PrimExpr, PrimExpr] | None:
    """``(store, idx, v)`` of a qualifying loop's one statement, or None."""
    asserts, store = _split_body(loop)
    if not isinstance(store, BufferStore) or len(store.indices) != 1:
        return None
    hist = store.buffer
    dtype = hist.dtype
    if not dtype.is_integer or dtype.lanes != 1 or dtype.is_bool:
        return None
    if id(hist.data) in local_data or len(hist.shape) != 1:
        return None
    (bins,) = hist.shape
    if not (isinstance(bins, IntImm) and 0 < bins.value <= MAX_BINS):
        return None
    (idx,) = store.indices
    if not reads_memory(idx) or idx.dtype.lanes != 1:
        return None
    value = store.value
    if not isinstance(value, Add):
        return None
    for own, other in ((value.a, value.b), (value.b, value.a)):
        if (
            isinstance(own, BufferLoad)
            and own.buffer.data is hist.data
            and len(own.indices) == 1
            and structural_equal(own.indices[0], idx)
        ):
            found = LoadCollector(traps_are_effects=True)
            found.visit_expr(other)
            found.visit_expr(idx)
            for check in asserts:
                found.visit_expr(check.condition)
            if found.impure or any(ld.buffer.data is hist.data for ld in found.loads):
                return None
            return store, idx, other
    return None


def privatize_loop(loop: For, local_data: set[int]) -> Stmt | None:
    """The versioned, privatized loop (see the module doc), or None."""
    if loop.kind is not ForKind.SERIAL or loop.annotations or loop.thread_binding is not None:
        return None
    found = _match(loop, local_data)
    if found is None:
        return None
    store, idx, value = found
    hist = store.buffer
    bins = hist.shape[0]
    assert isinstance(bins, IntImm)
    n = loop.extent
    if reads_memory(n) or reads_memory(loop.min) or not n.dtype.is_int:
        return None
    needed = max(MIN_TRIP_COUNT, 16 * TASKS * bins.value)
    trip_checks: list[PrimExpr] = []
    if isinstance(n, IntImm):
        if n.value < needed:
            return None
    else:
        trip_checks.append(GE(n, IntImm(n.dtype, needed)))
    written = byte_range(hist)
    asserts, _ = _split_body(loop)
    collector = LoadCollector()
    collector.visit_expr(idx)
    collector.visit_expr(value)
    for check in asserts:
        collector.visit_expr(check.condition)
    others = [ld.buffer for ld in collector.loads]
    checks = None if written is None else no_overlap_checks(written, others, local_data)
    if checks is None:
        return None
    idt = loop.loop_var.dtype
    hdt = bins.dtype
    name = f"{hist.name}_private"
    data = make_data_var(f"{name}_data", hist.dtype)
    total = IntImm(hdt, TASKS * bins.value)
    counts = Buffer(name, data, (total,), hist.dtype)
    task = Var("task", idt)
    zero_at = Var("bin", hdt)
    base = Mul(Cast(hdt, task) if hdt != idt else task, bins)
    zero = For(zero_at, IntImm(hdt, 0), bins, ForKind.SERIAL,
               BufferStore(counts, IntImm(hist.dtype, 0), (Add(base, zero_at),)))
    # the task's share: [min + task * share, min + min(n, (task + 1) * share))
    share = FloorDiv(Add(n, IntImm(idt, TASKS - 1)), IntImm(idt, TASKS))
    begin = Mul(task, share)
    end = Min(n, Add(begin, share))
    i = Var(loop.loop_var.name, idt)
    at = Add(loop.min, Add(begin, i))
    moved = copy_with_fresh_vars(BufferStore(hist, value, (idx,)), {loop.loop_var: at})
    assert isinstance(moved, BufferStore)
    (bin_at,) = moved.indices
    slot = Add(base, Cast(hdt, bin_at) if bin_at.dtype != hdt else bin_at)
    count: Stmt = BufferStore(counts, Add(BufferLoad(counts, (slot,)), moved.value), (slot,))
    flags = None
    if asserts:
        # each task flags an element that fails a check instead of counting it
        flag_data = make_data_var(f"{name}_failed_data", _FLAG)
        flags = Buffer(f"{name}_failed", flag_data, (IntImm(idt, TASKS),), _FLAG)
        passed: PrimExpr = substitute_expr(asserts[0].condition, {loop.loop_var: at})
        for check in asserts[1:]:
            passed = And(passed, substitute_expr(check.condition, {loop.loop_var: at}))
        count = IfThenElse(passed, count, BufferStore(flags, IntImm(_FLAG, 1), (task,)))
    work = For(i, IntImm(idt, 0), Sub(end, begin), ForKind.SERIAL, count)
    setup: list[Stmt] = [zero]
    if flags is not None:
        setup.append(BufferStore(flags, IntImm(_FLAG, 0), (task,)))
    tasks = For(task, IntImm(idt, 0), IntImm(idt, TASKS), ForKind.PARALLEL,
                SeqStmt((*setup, work)))
    b = Var("bin", hdt)
    merged: PrimExpr = BufferLoad(hist, (b,))
    for t in range(TASKS):
        merged = Add(merged, BufferLoad(counts, (Add(IntImm(hdt, t * bins.value), b),)))
    merge: Stmt = For(b, IntImm(hdt, 0), bins, ForKind.SERIAL, BufferStore(hist, merged, (b,)))
    if flags is not None:
        # a flagged element: the original loop from the start, failing where it fails
        failed: PrimExpr = BufferLoad(flags, (IntImm(idt, 0),))
        for t in range(1, TASKS):
            failed = Add(failed, BufferLoad(flags, (IntImm(idt, t),)))
        merge = IfThenElse(EQ(failed, IntImm(_FLAG, 0)), merge, copy_with_fresh_vars(loop))
        merge = Allocate(flags.data, _FLAG, IntImm(idt, TASKS), _TRUE,
                         DeclBuffer(flags, SeqStmt((tasks, merge))))
    else:
        merge = SeqStmt((tasks, merge))
    fast = Allocate(data, hist.dtype, total, _TRUE, DeclBuffer(counts, merge))
    conditions = [*trip_checks, *checks]
    return IfThenElse(all_of(conditions), fast, loop, span=loop.span) if conditions else fast


class _Outermost(StmtExprMutator):
    """Offers every loop that is not inside another loop."""

    def __init__(self, local_data: set[int]) -> None:
        super().__init__()
        self.local_data = local_data

    def visit_expr(self, expr: PrimExpr) -> PrimExpr:
        return expr

    def visit_for_(self, stmt: For) -> Stmt:
        out = privatize_loop(stmt, self.local_data)
        return stmt if out is None else out


@function_pass("privatize_scatter_adds", opt_level=1)
def _privatize_scatter_adds(func: PrimFunc) -> PrimFunc:
    """Run histogram loops in parallel on private copies, summed afterwards (module doc)."""
    finder = LocalAllocations()
    finder.visit_stmt(func.body)
    body = _Outermost(finder.vars).visit_stmt(func.body)
    return func if body is func.body else func.with_body(body)


privatize_scatter_adds: FunctionPass = _privatize_scatter_adds
"""The ``privatize_scatter_adds`` pass (a :class:`FunctionPass`)."""

