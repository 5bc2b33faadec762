"""The ``fuse_parallel_loops`` pass: consecutive loops over the same iterations, one of them
parallel, become one parallel loop when its iterations are independent.

A layernorm written as TVM blocks (topi's form: a ``sum`` block, a ``mean`` block, a
``var`` block, a ``norm`` block) lowers to a parallel loop of row sums, a loop of means and
a parallel loop of squared deviations, each over all rows: the 4096 x 1024 input is read
from L3 or DRAM once per loop. Fused, a row's statistics are computed together and its
second read hits L1::

    for i in T.parallel(4096):
        S[i] = 0; for k: S[i] += A[i, k]      # the row's sum
        S[i] = S[i] / 1024                      # its mean
        Q[i] = 0; for k: Q[i] += (A[i, k] - S[i]) ** 2

On the Zen 5 host that kernel went from 0.35 to 0.29 ms (numba's hand-fused twin: 0.26).

Two sibling statements ``L1; L2`` (``L2`` possibly inside buffer declarations and
allocations that directly follow ``L1``, whose scope then grows to cover it) are fused when
both are loops without annotations over the same bounds, of kind SERIAL or PARALLEL, at
least one PARALLEL. The fused loop runs ``body1(i); body2(i)`` per iteration, so body2 of
iteration ``i`` runs before body1 of ``i + 1``: that is the original program's result
when no iteration writes an element another iteration reads or writes, which is what the
race check proves of the fused loop (``loop_race``; undecided counts as a race); the fused
loop may then run in parallel too. The race check takes distinct arrays as distinct
memory, and parameter arrays may overlap at run time, so a fused loop that writes a
parameter array beside another parameter array it uses runs behind the run-time test that
they do not overlap, the two loops as written otherwise (a loop ``parallelize_loops`` made
parallel under such a test, its annotation, may be one of the two: the fused loop's test
covers its own). The topi-style layernorm's normalising loop, which writes the output beside
the input, then joins the statistics: each row is read from memory once (on the Zen 5 host
0.43 -> 0.32 ms, numba's hand-fused twin 0.35). A fused loop is offered to the pass again
with its next sibling, a guarded one too: the test is placed once no more loops join it,
and covers the whole fused loop (its else branch: every loop as written). A layer-norm
backward pass (normalised rows, their gradient, two row sums, the input gradient) and a
Sobel magnitude (two gradients, the magnitude) each become one loop that reads its rows
once: set 12's kernels 3.9 -> 3.0 ms and 3.0 -> 2.65 ms, one thread as host code.

Inside a parallel loop's body, two innermost serial loops over the same bounds fuse the
same way when the second reads what the first stores and one of them stores an
intermediate of the function's own (a row buffer, :func:`_passes_intermediate`): a Sobel
magnitude's column loops (one gradient in the output row, the other in a row buffer, then
the magnitude) become one, each element's gradients in registers (set 12, two threads on
the Zen 2 host: 2.1 -> 1.75 ms). The race check proves the fused loop's iterations
independent (a reduction or a read of a neighbour's element keeps the loops apart), and
the same no-overlap test guards it. ``PassContext(config={"fuse_parallel_loops":
{"inner": False}})`` turns this part off.

An intermediate the fused loop shares with the loops as written (the backward pass's
normalised rows, its row sums) is allocated around the test, in memory both branches use.
Allocation placement then runs again with the tests as split points (``place_allocations``):
each branch gets its own allocation, the fused branch's enters the loop and compacts to one
row per iteration, in the L1 cache, where it was a 16 MB array written and read back through
memory (layer-norm backward on the Zen 2 host, one thread: 5.15 -> 4.5 ms). A row larger
than ``SPLIT_BUFFER_BYTES`` keeps the shared allocation.
"""

from __future__ import annotations

from irbuilder.ir import (
    Allocate,
    DeclBuffer,
    For,
    ForKind,
    IfThenElse,
    IntImm,
    PrimExpr,
    PrimFunc,
    SeqStmt,
    Stmt,
    StmtExprMutator,
    StmtExprVisitor,
    rebuild,
    seq,
    structural_equal,
)

from ..analysis.buffer_uses import buffer_accesses
from ..checks.race_check import loop_race
from ..late.row_promote import Swap
from ..late.versioning import all_of
from ..pass_infra import FunctionPass, PassContext, function_pass
from .auto_parallel import PARALLEL_IF, no_alias_condition
from .plan_alloc import place_allocations
from .unroll import copy_with_fresh_vars

__all__ = ["fuse_parallel_loops"]

FUSED_BEHIND_TEST = "tvms.fused_behind_test"
"""Annotation of a fused loop, within the pass, that must run behind a run-time no-overlap
test: its value keys the test and the loops as written."""

_KINDS = (ForKind.SERIAL, ForKind.PARALLEL)


MAX_GUARDED_DEPTH = 2
"""Deepest loop nest (the loop and the loops inside it) fused behind a no-overlap test:
rows streamed once per loop (a layernorm's statistics and its normalising loop) gain, a
matmul nest and its epilogue (a dense layer's bias and activation) lose the matmul's
register tiles and packed operand (on the Zen 5 host 0.83 -> 2.3 ms)."""


class _Depth(StmtExprVisitor):
    def __init__(self) -> None:
        self.level = self.deepest = 0

    def visit_expr(self, expr: PrimExpr) -> None:
        return None  # loops are statements

    def visit_for_(self, stmt: For) -> None:
        self.level += 1
        self.deepest = max(self.deepest, self.level)
        self.generic_visit(stmt)
        self.level -= 1


def _depth(loop: For) -> int:
    """Loops in the deepest nest starting at ``loop`` (itself included)."""
    depth = _Depth()
    depth.visit_stmt(loop)
    return depth.deepest


_FUSABLE_KEYS = {PARALLEL_IF, FUSED_BEHIND_TEST}


def _fusable(a: Stmt, b: Stmt, in_parallel: bool, params: set[int]) -> bool:
    """Whether ``a; b`` is a pair to try: loops over the same bounds, one of them parallel,
    or (``in_parallel``: in the body of a parallel loop) two innermost serial loops, the
    second reading an intermediate the first stores (:func:`_passes_intermediate`)."""
    if not (
        isinstance(a, For) and isinstance(b, For)
        and a.kind in _KINDS and b.kind in _KINDS
        and set(a.annotations) <= _FUSABLE_KEYS and set(b.annotations) <= _FUSABLE_KEYS
        and a.thread_binding is None and b.thread_binding is None
        and a.loop_var.dtype == b.loop_var.dtype
        and structural_equal(a.min, b.min) and structural_equal(a.extent, b.extent)
    ):
        return False
    if ForKind.PARALLEL in (a.kind, b.kind):
        return True
    # both serial: the walks last, for the pairs that pass the checks above
    return (in_parallel and _depth(a) == 1 and _depth(b) == 1
            and _passes_intermediate(a, b, params))


def _passes_intermediate(first: For, second: For, params: set[int]) -> bool:
    """Whether ``second`` loads a buffer ``first`` stores, and one of them stores a buffer
    of the function's own (an intermediate row; ``params``: the ids of the parameters' data
    vars): fused, its elements go from one statement to the next in registers. A Sobel
    magnitude (one gradient in a row buffer, the other in the output, then the magnitude):
    2.1-2.2 -> 1.75 ms (set 12, two threads, Zen 2 host); an LSTM cell whose second loop
    reads only the first one's output parameter ran slower fused (0.71 -> 0.81 ms)."""
    first_uses, second_uses = buffer_accesses(first.body), buffer_accesses(second.body)
    stored = {id(b.data) for b in first_uses.stored}
    loaded = {id(b.data) for b in second_uses.loaded}
    local = any(id(b.data) not in params for b in [*first_uses.stored, *second_uses.stored])
    return local and bool(stored & loaded)


def _unwrap(stmt: Stmt) -> tuple[list[Stmt], list[Stmt]]:
    """The declarations and constant-size allocations wrapping ``stmt``'s first statement,
    and the statements they wrap."""
    wrappers: list[Stmt] = []
    while (isinstance(stmt, DeclBuffer)
           or (isinstance(stmt, Allocate) and isinstance(stmt.extent, IntImm)
               and isinstance(stmt.condition, IntImm))):
        wrappers.append(stmt)
        stmt = stmt.body
    return wrappers, list(stmt.seq) if isinstance(stmt, SeqStmt) else [stmt]


def _rewrap(wrappers: list[Stmt], stmts: list[Stmt]) -> Stmt:
    body = seq(stmts)
    for w in reversed(wrappers):
        body = rebuild(w, {"body": body})
    return body


def fused_loop(first: For, second: For) -> For:
    """``for i in T.parallel(...): <first's body>; <second's body at i>`` (serial when both
    loops are)."""
    body2 = copy_with_fresh_vars(second.body, {second.loop_var: first.loop_var})
    kind = ForKind.SERIAL if first.kind is second.kind is ForKind.SERIAL else ForKind.PARALLEL
    fused: For = rebuild(first, {"kind": kind, "body": seq([first.body, body2]),
                                 "annotations": {}})
    return fused


class _FuseFirst(StmtExprMutator):
    """Fuses the first pair not in ``rejected`` (ids of their first loops); ``pair`` is
    then the two loops and ``fused`` their fusion."""

    def __init__(self, rejected: set[int], inner: bool, params: set[int]) -> None:
        self.rejected = rejected
        self.inner = inner
        self.params = params
        self.pair: tuple[For, For] | None = None
        self.fused: For | None = None
        self.parallel_depth = 0

    def visit_expr(self, expr: PrimExpr) -> PrimExpr:
        return expr

    def visit_for_(self, stmt: For) -> Stmt:
        parallel = stmt.kind is ForKind.PARALLEL
        self.parallel_depth += parallel
        try:
            return self.generic_mutate(stmt)
        finally:
            self.parallel_depth -= parallel

    def visit_seq_stmt_(self, stmt: SeqStmt) -> Stmt:
        items = list(stmt.seq)
        for k in range(len(items) - 1):
            first = items[k]
            wrappers, rest = _unwrap(items[k + 1])
            if id(first) in self.rejected or not _fusable(first, rest[0],
                                                          self.inner and self.parallel_depth > 0,
                                                          self.params):
                continue
            assert isinstance(first, For) and isinstance(rest[0], For)
            self.pair = (first, rest[0])
            self.fused = fused_loop(first, rest[0])
            joined = _rewrap(wrappers, [self.fused, *rest[1:]])
            return seq([*items[:k], joined, *items[k + 2:]])
        for k, item in enumerate(items):
            new = self.visit_stmt(item)
            if new is not item:
                return seq([*items[:k], new, *items[k + 1:]])
        return stmt


_Guards = dict[int, tuple[list[PrimExpr], list[Stmt]]]
"""Per :data:`FUSED_BEHIND_TEST` key: the fused loop's tests and the loops as written."""


class _PlaceTests(StmtExprMutator):
    """Each loop marked :data:`FUSED_BEHIND_TEST` becomes ``if <its tests>: <it> else: <the
    loops as written>``."""

    def __init__(self, guards: _Guards) -> None:
        self.guards = guards
        self.tests: list[PrimExpr] = []

    def visit_expr(self, expr: PrimExpr) -> PrimExpr:
        return expr

    def visit_for_(self, stmt: For) -> Stmt:
        key = stmt.annotations.get(FUSED_BEHIND_TEST)
        visited = self.generic_mutate(stmt)
        if key is None:
            return visited
        assert isinstance(visited, For)
        checks, written = self.guards[int(key)]
        loop = rebuild(visited, {"annotations": {}})
        test = all_of(checks)
        self.tests.append(test)
        # fresh variables: the loops as written stay beside it, in the else branch
        return IfThenElse(test, copy_with_fresh_vars(loop),
                          seq([self.visit_stmt(w) for w in written]), span=stmt.span)


def _as_written(loop: For, guards: _Guards) -> list[Stmt]:
    key = loop.annotations.get(FUSED_BEHIND_TEST)
    return [loop] if key is None else guards[int(key)][1]


@function_pass("fuse_parallel_loops", opt_level=1)
def _fuse_parallel_loops(func: PrimFunc) -> PrimFunc:
    """Fuse consecutive loops over the same iterations into one parallel loop when the
    race check proves its iterations independent (module doc)."""
    rejected: set[int] = set()
    guards: _Guards = {}
    inner = PassContext.current().option("fuse_parallel_loops", "inner")
    while True:
        fuser = _FuseFirst(rejected, inner is None or bool(inner),
                           {id(b.data) for b in func.buffer_map.values()})
        body = fuser.visit_stmt(func.body)
        if fuser.pair is None or fuser.fused is None:
            break
        first, second = fuser.pair
        fused = fuser.fused
        trial = func.with_body(body)
        checks = no_alias_condition(func, fused)
        if checks is None or loop_race(trial, fused) is not None:
            rejected.add(id(first))
            continue
        written = [*_as_written(first, guards), *_as_written(second, guards)]
        if checks:
            # a parameter array written beside another one it uses could overlap it: the
            # fused loop runs behind the test that they do not, the loops as written else
            if any(_depth(w) > MAX_GUARDED_DEPTH for w in written if isinstance(w, For)):
                rejected.add(id(first))
                continue
            key = len(guards)
            guards[key] = (checks, written)
            marked = rebuild(fused, {"annotations": {FUSED_BEHIND_TEST: key}})
            trial = func.with_body(Swap(fused, marked).visit_stmt(body))
        func = trial
    if not guards:
        return func
    placer = _PlaceTests(guards)
    func = func.with_body(placer.visit_stmt(func.body))
    # an intermediate used by both branches gets one allocation per branch, so that the
    # fused loop's rows become private to its iterations (and compact to a row)
    return place_allocations(func, tuple(placer.tests))


fuse_parallel_loops: FunctionPass = _fuse_parallel_loops
"""The ``fuse_parallel_loops`` pass (a :class:`FunctionPass`)."""
