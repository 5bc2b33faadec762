"""The ``distribute_tile_consumers`` pass: a consumer a schedule computed at the tiles of a
reduction writes the reduction's result in place, and the loops they share are distributed.

The TensorIR tutorial schedules ``Y = A @ B; C = relu(Y)`` with ``split(j, [None, 4])``,
``reorder(j_0, k, j_1)`` and ``reverse_compute_at(C, j_0)``; lowered, it reads ::

    for i, j_0 in T.grid(1024, 256):
        for k, j_1 in T.grid(1024, 4):
            if k == 0:
                Y[i, j_0 * 4 + j_1] = T.float32(0)
            Y[i, j_0 * 4 + j_1] = Y[i, j_0 * 4 + j_1] + A[i, k] * B[k, j_0 * 4 + j_1]
        for ax0 in range(4):
            C[i, j_0 * 4 + ax0] = T.max(Y[i, j_0 * 4 + ax0], T.float32(0))

Each ``j_0`` walks all of ``B`` down four columns (one cache line per step): 460-600 ms on
the Zen 5 host, TVM alike, where numba's plain ``i, k, j`` loops take 20. Written into
``C`` directly and with the shared loops distributed, ::

    for i, j_0, k, j_1 in T.grid(1024, 256, 1024, 4):
        if k == 0:
            C[i, j_0 * 4 + j_1] = T.float32(0)
        C[i, j_0 * 4 + j_1] = C[i, j_0 * 4 + j_1] + A[i, k] * B[k, j_0 * 4 + j_1]
    for i, j_0, ax0 in T.grid(1024, 256, 4):
        C[i, j_0 * 4 + ax0] = T.max(C[i, j_0 * 4 + ax0], T.float32(0))

it is the unscheduled program's nest, which ``sink_reduction_loops`` and the late stage
compute in register tiles (8 ms). Every element gets the same operations in the same order:
results are bit-identical.

**Where.** A loop ``L`` whose body is statements ``P_1 ... P_n; Q`` where

* ``Q`` is a perfect nest storing ``C[g] = f(..., Y[g], ...)``: ``g`` takes every point of
  a box once (per dimension, loop variables with constant coefficients in mixed radix), and
  ``f`` reads ``Y`` only at ``g``, and ``C`` not at all;
* ``Y`` is the function's own allocation, of ``C``'s shape and dtype, used nowhere but in
  ``L`` (so it is allocated at ``L``'s body, TVM's lowest common ancestor of its uses: its
  contents do not outlive an iteration) and only through loads and stores;
* ``P_1 ... P_n`` store only to ``Y``, never at a point outside ``Q``'s box, read no ``C``,
  call nothing external, divide no integers but by constants (a trap must not move), and
  one of them updates ``Y`` the way a schedule's tile does: a reduction loop (one the stored
  index does not use; 16 steps at least over all such loops) with a serial loop of the
  stored index inside it and no unrolled one (x86 ``conv2d_NCHWc``'s unrolled register tile
  is kept: its accumulator lives in registers as written).

``Y`` becomes ``C`` in all of them (``Q`` then updates ``C`` in place; a copy back ``C[g] =
Y[g]``, a ``cache_write``'s, then stores nothing and goes), and ``L`` becomes one
loop per statement when that keeps every conflicting pair of accesses in order: for two
statements ``S_a`` before ``S_b``, what ``S_b`` does in an iteration may not touch (one of
the two writing) what ``S_a`` does in a later one. Accesses to one array are apart when, in
some dimension, all of them are ``c * L + r`` with the same constant ``c`` and ``r`` within
less than ``|c|`` over the statements' own loops; two different arrays are apart when either
is the function's own allocation, and otherwise by a run-time test (``C`` must not overlap
what ``P`` reads either). The loops around ``L`` are distributed the same way while their
bodies are exactly the distributed statements. With run-time tests, the program as written
runs when they fail (the distributed copy gets allocations of its own for the buffers only
the two versions use: placed at the lowest common ancestor of their uses, one shared by
both would land above a parallel loop).

A decomposed reduction (``T.decompose_reduction`` at the tile loop: init nests, then the
update) whose update is such a tile is distributed the same way, without a consumer: the
update is then a perfect nest of its own.
"""

from __future__ import annotations

from dataclasses import dataclass

from irbuilder.ir import (
    Buffer,
    BufferLoad,
    BufferStore,
    For,
    ForKind,
    IfThenElse,
    IntImm,
    Mul,
    PrimExpr,
    PrimFunc,
    SeqStmt,
    Stmt,
    StmtExprMutator,
    Var,
    rebuild,
    structural_equal,
)

from ..analysis.loads import reads_memory
from ..analysis.nest_accesses import (
    Access,
    FunctionFacts,
    NoOverlapTests,
    dense_box,
    inside_box,
    nest_accesses,
    offset_range,
    perfect_nest,
    statements,
    with_own_allocations,
)
from ..analysis.substitute import substitute
from ..arith.canonical import linear_coefficient
from ..late.versioning import all_of
from ..pass_infra import FunctionPass, function_pass
from .unroll import copy_with_fresh_vars

__all__ = ["distribute_tile_consumers"]

MIN_REDUCTION_STEPS = 16
"""Fewer reduction steps than this stay in place in the late stage (a 3 x 3 window): the
tile as written is then the better nest."""



def _window(access: Access, dim: int, var: Var) -> tuple[int, int, int] | None:
    """``(c, lo, hi)`` with ``index[dim] = c * var + r`` and ``lo <= r <= hi`` over the
    access's own loops, or None when the index is not of that form."""
    index = access.indices[dim]
    if not index.dtype.is_integer:
        return None
    coef = linear_coefficient(index, var)
    if not coef:
        return None
    span = offset_range(index, Mul(IntImm(var.dtype, coef), var), access.loops)
    if span is None or span[1] - span[0] >= abs(coef):
        return None
    return coef, span[0], span[1]


def _apart_across_iterations(accesses: list[Access], var: Var) -> bool:
    """Whether different iterations of ``var``'s loop touch different elements of the
    array all ``accesses`` go to (some dimension's windows of a common stride)."""
    ndim = len(accesses[0].indices)
    if any(len(a.indices) != ndim for a in accesses):
        return False
    for dim in range(ndim):
        windows = [_window(a, dim, var) for a in accesses]
        if any(w is None for w in windows):
            continue
        coefs = {w[0] for w in windows if w is not None}
        if len(coefs) != 1:
            continue
        lo = min(w[1] for w in windows if w is not None)
        hi = max(w[2] for w in windows if w is not None)
        if hi - lo < abs(coefs.pop()):
            return True
    return False


def _distributable(loop: For, stmts: list[Stmt], checks: NoOverlapTests) -> bool:
    """Whether ``loop`` may run as one loop per statement (module doc), recording the
    run-time tests that needs in ``checks``."""
    if loop.kind not in (ForKind.SERIAL, ForKind.PARALLEL) or loop.thread_binding:
        return False
    if reads_memory(loop.min) or reads_memory(loop.extent):
        return False
    found: list[list[Access]] = []
    for stmt in stmts:
        acc = nest_accesses(stmt)
        if acc is None:
            return False
        found.append(acc.found)
    var = loop.loop_var
    for a in range(len(stmts)):
        for b in range(a + 1, len(stmts)):
            for first, second in ((found[a], found[b]), (found[b], found[a])):
                for w in (x for x in first if x.store):
                    for other in second:
                        if other.buffer.data is not w.buffer.data:
                            if not checks.apart(w.buffer, other.buffer):
                                return False
                            continue
                        same = [x for x in (*found[a], *found[b])
                                if x.buffer.data is w.buffer.data]
                        if not _apart_across_iterations(same, var):
                            return False
    return True


def _tile_update(stores: list[Access], tile_loop: For) -> bool:
    """Whether some store updates its element inside a reduction loop around a serial
    loop of the stored index, or a vectorized one whose row ``tile_loop`` continues (a
    schedule's tile: module doc)."""
    for store in stores:
        for pos, outer in enumerate(store.loops):
            if any(_uses(i, outer.loop_var) for i in store.indices):
                continue
            inside = store.loops[pos + 1:]
            steps = 1
            for lp in store.loops:
                if not any(_uses(i, lp.loop_var) for i in store.indices):
                    steps *= lp.extent.value if isinstance(lp.extent, IntImm) else 1 << 20
            outputs = [lp for lp in inside if any(_uses(i, lp.loop_var) for i in store.indices)]
            if steps < MIN_REDUCTION_STEPS or not outputs:
                continue
            if any(lp.kind is ForKind.UNROLLED for lp in outputs):
                continue
            if any(lp.kind is ForKind.SERIAL for lp in outputs):
                return True
            if any(_uses(i, tile_loop.loop_var) for i in store.indices):
                return True  # T.vectorized(4) columns of a row the tile loop walks on
    return False


def _uses(expr: PrimExpr, var: Var) -> bool:
    return linear_coefficient(expr, var) != 0


def _copies_itself(store: BufferStore, tile: Buffer) -> bool:
    """Whether ``store`` copies ``tile`` at its own indices (nothing else)."""
    value = store.value
    return (isinstance(value, BufferLoad) and value.buffer is tile
            and all(structural_equal(a, b) for a, b in zip(value.indices, store.indices)))


def _one_loop_each(loop: For, stmts: list[Stmt]) -> SeqStmt:
    """``loop`` around each statement, each loop with its own variable."""
    return SeqStmt(tuple(
        copy_with_fresh_vars(For(loop.loop_var, loop.min, loop.extent, loop.kind, s,
                                 loop.thread_binding, loop.annotations, span=loop.span))
        for s in stmts))


@dataclass
class _Pending:
    new: SeqStmt
    old: Stmt
    checks: NoOverlapTests


class _Rewriter(StmtExprMutator):
    def __init__(self, func: PrimFunc) -> None:
        facts = FunctionFacts(func.body)
        self.local_data, self.uses = facts.local_data, facts.uses
        self.allocations = facts.allocations
        self.pending: dict[int, _Pending] = {}

    def visit_expr(self, expr: PrimExpr) -> PrimExpr:
        return expr

    def visit_for_(self, stmt: For) -> Stmt:
        loop = self.generic_mutate(stmt)
        inner = self.pending.pop(id(loop.body), None)
        if inner is not None:
            return self._lift(loop, inner)
        if self.pending:
            # a rewrite deeper inside gets its own version now: this loop's version would
            # otherwise take it, unversioned, for the program as written
            finished = _Finish(self).visit_stmt(loop)
            assert isinstance(finished, For)
            loop = finished
        made = self._in_place(loop) or self._split_init(loop)
        if made is None:
            return loop
        self.pending[id(made.new)] = made
        return made.new

    def _lift(self, loop: For, inner: _Pending) -> Stmt:
        stmts = list(inner.new.seq)
        if _distributable(loop, stmts, inner.checks):
            new = _one_loop_each(loop, stmts)
            old = For(loop.loop_var, loop.min, loop.extent, loop.kind, inner.old,
                      loop.thread_binding, loop.annotations, span=loop.span)
            lifted = _Pending(new, old, inner.checks)
            self.pending[id(new)] = lifted
            return new
        return For(loop.loop_var, loop.min, loop.extent, loop.kind, self.finish(inner),
                   loop.thread_binding, loop.annotations, span=loop.span)

    def finish(self, made: _Pending) -> Stmt:
        """The distributed statements, behind their run-time tests when they need some."""
        tests = list(made.checks.tests.values())
        if not tests:
            return made.new
        fast = with_own_allocations(made.new, made.old, self.allocations, self.uses)
        return IfThenElse(all_of(tests), fast, made.old, span=made.old.span)

    def _split_init(self, loop: For) -> _Pending | None:
        """A decomposed reduction's init nests, then its update as a schedule's tile (the
        init of ``T.decompose_reduction`` at the tile loop): one loop each."""
        stmts = statements(loop.body)
        if len(stmts) < 2 or loop.kind is not ForKind.SERIAL:
            return None
        update = nest_accesses(stmts[-1])
        if update is None or not _tile_update([a for a in update.found if a.store], loop):
            return None
        written = {a.buffer.data for a in update.found if a.store}
        for stmt in stmts[:-1]:
            init = nest_accesses(stmt)
            if init is None or any(a.buffer.data not in written for a in init.found
                                   if a.store):
                return None
        checks = NoOverlapTests(self.local_data)
        if not _distributable(loop, stmts, checks):
            return None
        return _Pending(_one_loop_each(loop, stmts), loop, checks)

    def _in_place(self, loop: For) -> _Pending | None:
        stmts = statements(loop.body)
        if len(stmts) < 2 or loop.kind is not ForKind.SERIAL:
            return None
        consumer = perfect_nest(stmts[-1])
        if consumer is None:
            return None
        q_loops, q_store = consumer
        target = q_store.buffer
        q_acc = nest_accesses(stmts[-1])
        if q_acc is None:
            return None
        tiles = {id(a.buffer): a.buffer for a in q_acc.found
                 if not a.store and id(a.buffer.data) in self.local_data
                 and self._replaceable(a.buffer, target, q_store, q_acc.found)}
        if len(tiles) != 1:
            return None
        (tile,) = tiles.values()
        producers = stmts[:-1]
        stores: list[Access] = []
        reads: list[Buffer] = []
        inside = sum(1 for a in q_acc.found if a.buffer.data is tile.data)
        for stmt in producers:
            acc = nest_accesses(stmt)
            if acc is None:
                return None
            for a in acc.found:
                if a.buffer.data is target.data:
                    return None
                if a.buffer.data is tile.data:
                    if a.buffer is not tile:
                        return None
                    inside += 1
                    if a.store:
                        stores.append(a)
                elif a.store:
                    return None
                else:
                    reads.append(a.buffer)
        if inside != self.uses.count[tile.data] or not _tile_update(stores, loop):
            return None
        box = dense_box(q_store, q_loops)
        if box is None or not all(inside_box(s, box) for s in stores):
            return None
        checks = NoOverlapTests(self.local_data)
        for buffer in (*reads, *(a.buffer for a in q_acc.found)):
            if buffer.data is not target.data and buffer.data is not tile.data:
                if not checks.apart(target, buffer):
                    return None
        written = [substitute(s, bmap={tile: target}) for s in stmts]
        if _copies_itself(q_store, tile):
            written.pop()  # a cache_write's copy back: C[g] = C[g] once in place
        if not _distributable(loop, written, checks):
            return None
        if len(written) == 1:
            return _Pending(SeqStmt((copy_with_fresh_vars(rebuild(loop, {"body": written[0]})),)),
                            loop, checks)
        return _Pending(_one_loop_each(loop, written), loop, checks)

    def _replaceable(self, tile: Buffer, target: Buffer, store: BufferStore,
                     found: list[Access]) -> bool:
        if tile.data in self.uses.escaped or len(self.uses.buffers.get(tile.data, ())) != 1:
            return False
        if tile.dtype != target.dtype or len(tile.shape) != len(target.shape):
            return False
        if not all(structural_equal(a, b) for a, b in zip(tile.shape, target.shape)):
            return False
        if tile.strides or target.strides or not structural_equal(tile.elem_offset,
                                                                  target.elem_offset):
            return False
        for a in found:
            if a.buffer.data is target.data and not a.store:
                return False  # the consumer reads its own output
            if a.buffer.data is tile.data and not all(
                    structural_equal(x, y) for x, y in zip(a.indices, store.indices)):
                return False
        return True


class _Finish(StmtExprMutator):
    def __init__(self, rewriter: _Rewriter) -> None:
        self.rewriter = rewriter

    def visit_expr(self, expr: PrimExpr) -> PrimExpr:
        return expr

    def visit_stmt(self, stmt: Stmt) -> Stmt:
        made = self.rewriter.pending.get(id(stmt))
        if made is not None:
            return self.rewriter.finish(made)
        return super().visit_stmt(stmt)


def _rewrite(func: PrimFunc) -> PrimFunc:
    rewriter = _Rewriter(func)
    body = rewriter.visit_stmt(func.body)
    if rewriter.pending:
        body = _Finish(rewriter).visit_stmt(body)
    return func if body is func.body else func.with_body(body)


@function_pass("distribute_tile_consumers", opt_level=1)
def _distribute_tile_consumers(func: PrimFunc) -> PrimFunc:
    """Write a reduction tile's consumer in place and distribute their loops (module doc)."""
    return _rewrite(func)


distribute_tile_consumers: FunctionPass = _distribute_tile_consumers
"""The ``distribute_tile_consumers`` pass (a :class:`FunctionPass`)."""

