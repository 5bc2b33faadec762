"""Data-dependent index checks of ``bounds_check=True``, validated a chunk at a time.

:mod:`lowering.checks.bounds_hoist` removes every assert whose index is affine in the loop
variables. What it leaves is an index read from memory (a gather ``O[i] = T[I[i]]``, a
histogram ``H[D[i]] += 1``) or otherwise not affine (``A[i * i]``): one compare-and-branch
per element, which keeps the loop scalar and the late passes (``vectorize_streams``,
``version_gathers``) away from it. This module rewrites an innermost loop holding such
asserts into chunks of ``B`` iterations, each validated before it runs::

    for c in range(E // B):                      # (and once more for the E % B rest)
        bounds_ok[0] = 1
        for j in range(B):                       # no branch: LLVM vectorizes this loop
            bounds_ok[0] = bounds_ok[0] & <every validated assert's condition at c*B + j>
        if bounds_ok[0] != 0:
            <the B iterations, validated asserts removed>   # the unchecked loop's code
        else:
            <the B iterations, every assert in place>       # raises as before

The chunk's index array is read twice, the second time from the L1 cache (``B`` is sized
so the validated loads of one chunk take about :data:`CHUNK_BYTES`; 1024 measured slower
than 4096 on the suite's gather). The chunks run serially: a failing access must raise after
exactly the serial loop's writes.

A loop ``parallelize_loops`` made parallel (``for p in T.parallel(P): for j in range(J):
...``, every assert of the inner loop validatable) is validated whole instead, so that it
stays parallel::

    bounds_ok[0] = 0
    if <run-time tests>:
        for p in T.parallel(P):                  # race-free: each writes its own flag
            bounds_flags[p] = <every condition holds for j in range(J)>
        bounds_ok[0] = <all bounds_flags>
    if bounds_ok[0] != 0:
        <the parallel loop, validated asserts removed>
    else:
        <the loop with every assert, serialized>

The index arrays are read twice from memory, but both passes use every core. Suite gather
(16M, znver5, 2 cores): checked/unchecked 1.24 for this form, 1.39-1.49 for serial chunks
on an idle machine (0.74 under load, when the unchecked loop gets one core).

The rewrite is exact. The condition evaluated ahead of time is the assert's own, wrapped
in the ``if`` guards and ``let`` bindings it sits under, so it holds for an iteration
exactly when the assert would pass there -- provided that the memory it reads does not
change during the chunk and that reading it ahead is harmless. Hence an assert is
validated only when its condition cannot trap or call out (no integer division, no extern
call), every load in it reads an array the loop does not write (a run-time no-overlap test
for parameters, which may be views of one array) at an index reading no memory and in
bounds over the whole loop (a run-time range test from
:class:`~lowering.checks.bounds_hoist.NestRange`). Both tests are made once, before the
loop; when they fail the loop runs as it was. A failing chunk runs the checked copy, which
raises at the same element, with the same message, after the same writes as the per-access
checks. Asserts not validated stay in place in both copies.

Applies to innermost serial loops (their body only stores, binds, branches and asserts) of
at least :data:`MIN_TRIP_COUNT` iterations when constant, and not in the hoister's checked
copy (an assert the hoister could have covered is still there: that copy runs only when
some access fails). A loop storing at an index that reads memory (a scatter: the suite's
histogram) is left alone: it stays scalar whatever its checks, a predicted branch per
element costs it little, and validating ahead added a second pass over the indices that
does not overlap the loop's own memory traffic (histogram, znver5: 1.05x per element,
1.5x-1.9x validated).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field

from irbuilder.ir import (
    GE,
    LT,
    NE,
    Allocate,
    And,
    AssertStmt,
    Buffer,
    BufferLoad,
    BufferStore,
    Call,
    Cast,
    DeclBuffer,
    Evaluate,
    FloorDiv,
    For,
    ForKind,
    IfThenElse,
    IntImm,
    Let,
    LetStmt,
    Max,
    Not,
    Or,
    PrimExpr,
    SeqStmt,
    Stmt,
    StmtExprMutator,
    StmtExprVisitor,
    StringImm,
    Var,
    as_dtype,
    const,
    make_data_var,
    seq,
    structural_equal,
)

from ..analysis.loads import LoadCollector, reads_memory
from ..arith import Analyzer, ExprSimplifier
from ..late.versioning import all_of, byte_range, disjoint
from ..transforms.auto_parallel import PARALLEL_IF
from ..transforms.unroll import copy_with_fresh_vars
from .bounds_hoist import NestRange, WithoutAsserts

__all__ = ["CHUNK_BYTES", "FLAG_NAME", "MIN_TRIP_COUNT", "validate_in_chunks"]

CHUNK_BYTES = 16384
"""Bytes of validated loads per chunk: small enough that the chunk's indices are still in
the L1 data cache (32 KiB or more on x86-64 CPUs since 2011) when the chunk runs."""

MAX_CHUNK = 4096
MIN_CHUNK = 64

MIN_TRIP_COUNT = 16
"""Shorter constant loops keep their asserts: below a vector's width the compare per
element costs about what the validation loop does, and the copies cost code size."""

MAX_FLAGS = 1 << 16
"""Most iterations of a parallel loop validated in a first parallel pass (one flag byte
each)."""

FLAG_NAME = "bounds_ok"
"""The one-element ``int8`` buffer a validation loop accumulates into."""

_INT8 = as_dtype("int8")


def validate_in_chunks(body: Stmt, local_data: Collection[int]) -> Stmt:
    """``body`` with every eligible innermost loop validated in chunks (module doc).
    ``local_data``: ids of the data vars of the function's own allocations (they never
    overlap a parameter)."""
    return _Validator(local_data).visit_stmt(body)


def _is_index_error(node: AssertStmt) -> bool:
    msg = node.message
    text = msg.args[0] if isinstance(msg, Call) and msg.args else msg
    return isinstance(text, StringImm) and text.value.startswith("IndexError: ")


@dataclass
class _Body:
    """What an innermost loop body does: its asserts (each with its condition wrapped in
    the guards and bindings above it), the arrays it writes, and whether it qualifies."""

    ok: bool = True
    scatters: bool = False
    asserts: list[tuple[AssertStmt, PrimExpr]] = field(default_factory=list)
    written: dict[int, Buffer] = field(default_factory=dict)


class _BodyScan(StmtExprVisitor):
    def __init__(self) -> None:
        self.out = _Body()
        self.path: list[tuple[Var | None, PrimExpr]] = []  # (let var, value) or (None, guard)

    def visit_expr(self, expr: PrimExpr) -> None:
        found = LoadCollector()
        found.visit_expr(expr)
        if found.impure:
            self.out.ok = False  # an extern call may write any memory

    def visit_stmt(self, stmt: Stmt) -> None:
        if not isinstance(stmt, (SeqStmt, LetStmt, IfThenElse, BufferStore, AssertStmt,
                                 Evaluate, DeclBuffer)):
            self.out.ok = False  # loops, allocations, attributes: not an innermost body
            return
        super().visit_stmt(stmt)

    def visit_buffer_store_(self, stmt: BufferStore) -> None:
        self.out.written.setdefault(id(stmt.buffer.data), stmt.buffer)
        if any(reads_memory(i) for i in stmt.indices):
            self.out.scatters = True
        self.generic_visit(stmt)

    def visit_assert_stmt_(self, stmt: AssertStmt) -> None:
        self.visit_expr(stmt.condition)
        cond = stmt.condition
        for var, value in reversed(self.path):
            cond = Or(Not(value), cond) if var is None else Let(var, value, cond)
        self.out.asserts.append((stmt, cond))

    def visit_let_stmt_(self, stmt: LetStmt) -> None:
        self.visit_expr(stmt.value)
        self.path.append((stmt.var, stmt.value))
        self.visit_stmt(stmt.body)
        self.path.pop()

    def visit_if_then_else_(self, stmt: IfThenElse) -> None:
        self.visit_expr(stmt.condition)
        self.path.append((None, stmt.condition))
        self.visit_stmt(stmt.then_case)
        self.path.pop()
        if stmt.else_case is not None:
            self.path.append((None, Not(stmt.condition)))
            self.visit_stmt(stmt.else_case)
            self.path.pop()


class _Plan:
    """The asserts of one loop that can be validated ahead, and the run-time tests that
    make reading their conditions ahead safe and exact."""

    def __init__(self, loop: For, body: _Body, local_data: Collection[int],
                 root: For | None = None) -> None:
        self.loop = loop
        self.nest = NestRange(root or loop)  # the loops the indices' range tests cover
        self.local_data = local_data
        self.body = body
        self.validated: list[tuple[AssertStmt, PrimExpr]] = []
        self.tests: list[PrimExpr] = []
        self.load_bytes = 0
        self._seen_loads: list[BufferLoad] = []

    def hoistable_left(self) -> bool:
        """Whether an assert the hoister could cover at this loop is still here: then this
        is the hoister's checked copy (or a nest failing at compile time)."""
        return any(self.nest.condition(a.condition) is not None for a, _ in self.body.asserts)

    def add(self, check: AssertStmt, cond: PrimExpr) -> None:
        """Validate ``check`` (condition ``cond``) ahead when that is safe and exact."""
        if not _is_index_error(check):
            return  # the user's own asserts stay where they are
        effects = LoadCollector(traps_are_effects=True)
        effects.visit_expr(cond)
        if effects.impure:
            return  # a division by zero must raise at its own iteration, not ahead
        tests: list[PrimExpr] = []
        for load in effects.loads:
            more = self._load_tests(load)
            if more is None:
                return
            tests.extend(more)
        self.validated.append((check, cond))
        for test in tests:
            if not any(structural_equal(test, t) for t in self.tests):
                self.tests.append(test)
        for load in effects.loads:
            if not any(structural_equal(load, seen) for seen in self._seen_loads):
                self._seen_loads.append(load)
                self.load_bytes += load.dtype.itemsize * load.dtype.lanes

    def _load_tests(self, load: BufferLoad) -> list[PrimExpr] | None:
        """Tests that ``load`` may be read ahead: its array is not written by the loop, its
        indices are in bounds over the whole loop. None when that cannot be tested."""
        data = id(load.buffer.data)
        if data in self.body.written:
            return None  # the loop writes the index array itself
        tests: list[PrimExpr] = []
        if data not in self.local_data:
            mine = byte_range(load.buffer)
            for key, written in self.body.written.items():
                if key in self.local_data:
                    continue
                theirs = byte_range(written)
                if mine is None or theirs is None:
                    return None
                tests.append(disjoint(theirs, mine))
        for index, extent in zip(load.indices, load.buffer.shape):
            if index.dtype.lanes != 1 or reads_memory(index):
                return None
            ext = extent if extent.dtype == index.dtype else Cast(index.dtype, extent)
            test = self.nest.condition(And(GE(index, const(0, index.dtype)), LT(index, ext)))
            if test is None:
                return None
            tests.append(test)
        return tests

    def chunk(self) -> int:
        """Iterations per chunk: :data:`CHUNK_BYTES` of validated loads, a power of two."""
        per = max(self.load_bytes, 1)
        size = MAX_CHUNK
        while size > MIN_CHUNK and size * per > CHUNK_BYTES:
            size //= 2
        return size


class _Validator(StmtExprMutator):
    def __init__(self, local_data: Collection[int]) -> None:
        self.local_data = local_data

    def visit_expr(self, expr: PrimExpr) -> PrimExpr:
        return expr

    def visit_for_(self, node: For) -> Stmt:
        if node.kind is ForKind.PARALLEL and PARALLEL_IF in node.annotations:
            whole = _two_phase(node, self.local_data)
            if whole is not None:
                return whole
        new = self.generic_mutate(node)  # inner loops first: only innermost ones qualify
        return _rewrite(new, self.local_data) or new


def _plan(loop: For, local_data: Collection[int], root: For | None = None
          ) -> tuple[_Plan, PrimExpr | None] | None:
    """What of ``loop`` can be validated and the run-time test it needs (None: no test);
    None when nothing can (or the test fails at compile time)."""
    # A loop made parallel automatically runs serially once checked (serialize_checked_loops).
    serial = loop.kind is ForKind.SERIAL or (
        loop.kind is ForKind.PARALLEL and PARALLEL_IF in loop.annotations)
    if not serial or loop.thread_binding is not None:
        return None
    if isinstance(loop.extent, IntImm) and loop.extent.value < MIN_TRIP_COUNT:
        return None
    if reads_memory(loop.min) or reads_memory(loop.extent):
        return None  # the chunks evaluate the bounds again, after the loop's own writes
    scan = _BodyScan()
    scan.visit_stmt(loop.body)
    body = scan.out
    if not (body.ok and body.asserts) or body.scatters:
        return None
    plan = _Plan(loop, body, local_data, root)
    if plan.hoistable_left():
        return None
    for check, cond in body.asserts:
        plan.add(check, cond)
    if not plan.validated:
        return None
    test = ExprSimplifier().visit_expr(all_of(plan.tests)) if plan.tests else None
    if isinstance(test, IntImm):
        if not test.value:
            return None
        test = None
    return plan, test


def _rewrite(loop: For, local_data: Collection[int]) -> Stmt | None:
    found = _plan(loop, local_data)
    if found is None:
        return None
    plan, test = found
    chunked = _chunked(loop, plan)
    return chunked if test is None else IfThenElse(test, chunked, loop, span=loop.span)


def _two_phase(outer: For, local_data: Collection[int]) -> Stmt | None:
    """An automatically parallel loop whose body is one loop with validatable asserts,
    validated whole in a first parallel loop and then run in parallel without the asserts;
    None when that does not apply (module doc)."""
    inner = outer.body
    if not (isinstance(inner, For) and isinstance(outer.extent, IntImm)
            and 0 < outer.extent.value <= MAX_FLAGS and not reads_memory(outer.min)):
        return None
    found = _plan(inner, local_data, root=outer)
    if found is None:
        return None
    plan, test = found
    if len(plan.validated) != len(plan.body.asserts):
        return None  # an assert left inside would make the parallel copy inexact
    dtype = outer.loop_var.dtype
    zero = IntImm(dtype, 0)
    flags_data = make_data_var("bounds_flags", _INT8)
    flags = Buffer("bounds_flags", flags_data, (outer.extent,), _INT8)
    all_data = make_data_var(FLAG_NAME, _INT8)
    all_ok = Buffer(FLAG_NAME, all_data, (IntImm(dtype, 1),), _INT8)
    at = Var(outer.loop_var.name, dtype)
    mine = BufferLoad(flags, (at,))
    step = BufferStore(flags, mine & Cast(_INT8, all_of([c for _, c in plan.validated])),
                       (at,))
    sweep = copy_with_fresh_vars(
        For(inner.loop_var, inner.min, inner.extent, ForKind.SERIAL, step),
        {outer.loop_var: outer.min + at})
    # Every iteration writes only its own flag and reads what the loop does not write:
    # race-free whatever the arrays, so parallel without a run-time test.
    validate = For(at, zero, outer.extent, ForKind.PARALLEL,
                   seq([BufferStore(flags, IntImm(_INT8, 1), (at,)), sweep]), span=outer.span)
    k = Var("k", dtype)
    gather_flags = seq([
        BufferStore(all_ok, IntImm(_INT8, 1), (zero,)),
        validate,
        For(k, zero, outer.extent, ForKind.SERIAL,
            BufferStore(all_ok, BufferLoad(all_ok, (zero,)) & BufferLoad(flags, (k,)), (zero,))),
    ])
    first: Stmt = gather_flags if test is None else IfThenElse(test, gather_flags)
    validated = {id(a) for a, _ in plan.validated}
    fast = copy_with_fresh_vars(WithoutAsserts(validated).visit_stmt(outer))
    run = IfThenElse(NE(BufferLoad(all_ok, (zero,)), IntImm(_INT8, 0)), fast, outer,
                     span=outer.span)
    body = seq([BufferStore(all_ok, IntImm(_INT8, 0), (zero,)), first, run])
    true = IntImm(as_dtype("bool"), 1)
    return Allocate(all_data, _INT8, IntImm(dtype, 1), true, DeclBuffer(
        all_ok, Allocate(flags_data, _INT8, outer.extent, true, DeclBuffer(flags, body))))


def _chunked(loop: For, plan: _Plan) -> Stmt:
    """The loop as validated chunks (module doc)."""
    var = loop.loop_var
    dtype = var.dtype
    size = plan.chunk()
    fast_body = WithoutAsserts({id(a) for a, _ in plan.validated}).visit_stmt(loop.body)
    conds = [cond for _, cond in plan.validated]

    def chunk(start: PrimExpr, count: PrimExpr) -> Stmt:
        data = make_data_var(FLAG_NAME, _INT8)
        flag = Buffer(FLAG_NAME, data, (IntImm(dtype, 1),), _INT8)
        zero = IntImm(dtype, 0)

        def copy(stmt: Stmt) -> For:
            # Each copy defines its own loop variable and its own let variables.
            j = Var(var.name, dtype)
            inner = copy_with_fresh_vars(stmt, {var: start + j})
            return For(j, zero, count, ForKind.SERIAL, inner, span=loop.span)

        ok = BufferLoad(flag, (zero,))
        step = BufferStore(
            flag, ok & Cast(_INT8, all_of(conds)), (zero,), span=loop.span
        )
        validate = copy(step)
        run = IfThenElse(NE(ok, IntImm(_INT8, 0)), copy(fast_body), copy(loop.body),
                         span=loop.span)
        init = BufferStore(flag, IntImm(_INT8, 1), (zero,))
        return Allocate(data, _INT8, IntImm(dtype, 1), IntImm(as_dtype("bool"), 1),
                        DeclBuffer(flag, seq([init, validate, run])))

    extent = loop.extent
    if isinstance(extent, IntImm) and extent.value <= size:
        return chunk(loop.min, extent)
    if not Analyzer().can_prove(GE(extent, IntImm(dtype, 0))):
        extent = Max(extent, IntImm(dtype, 0))  # a negative extent runs no iteration
    step_size = IntImm(dtype, size)
    full = ExprSimplifier().visit_expr(FloorDiv(extent, step_size))
    c = Var(f"{var.name}_chunk", dtype)
    whole = For(c, IntImm(dtype, 0), full, ForKind.SERIAL,
                chunk(loop.min + c * step_size, step_size), span=loop.span)
    rest = ExprSimplifier().visit_expr(extent - full * step_size)
    if isinstance(rest, IntImm) and rest.value == 0:
        return whole
    return seq([whole, chunk(loop.min + full * step_size, rest)])
