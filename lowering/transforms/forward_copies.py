"""The ``forward_tile_copies`` pass: a tile a schedule copies out of an array at every step
of a reduction's outer loop (a GPU schedule's ``cache_read`` into "shared" memory) is read
from the array itself, and the copy goes.

A matmul scheduled the GPU way stages its operands by chunks of the reduction ::

    for k_0 in range(128):
        for ax0, ax1 in T.grid(32, 8):
            A_shared[i_0 * 32 + ax0, k_0 * 8 + ax1] = A[i_0 * 32 + ax0, k_0 * 8 + ax1]
        for ax0, ax1 in T.grid(8, 32):
            B_shared[k_0 * 8 + ax0, j_0 * 32 + ax1] = B[k_0 * 8 + ax0, j_0 * 32 + ax1]
        for k_1, i_1 in T.grid(8, 32):
            for j_1 in T.vectorized(32):
                C[...] = C[...] + A_shared[i, k] * B_shared[k, j]

On a CPU the copies buy nothing (the caches do the staging) and they split the reduction:
the update runs 8 steps at a time over the 32 x 32 tile of ``C`` (rows 4 KiB apart, all in
one cache set), 215 ms at 1024^3 on the Zen 5 host where numba's plain loops take 20.
Reading ``A`` and ``B`` directly leaves one perfect nest, ``k_0, k_1, i_1, j_1``, which
``sink_reduction_loops`` and the late stage compute in register tiles.

**Where.** A loop ``L`` whose body is statements, one of which is a perfect nest copying
``Y[g] = X[g]`` (the same indices: the same layout) over a box (every point once), where

* ``Y`` is the function's own allocation, of ``X``'s shape and dtype, used nowhere else but
  in loads by the statements after the copy (so, TVM allocating it at the lowest common
  ancestor of its uses, it holds nothing across iterations of ``L``), each load inside the
  copied box: it reads what the copy wrote in the same iteration;
* those statements store nothing to ``X`` nor to an array that may overlap it (a run-time
  test for two parameters; the program as written when it fails), call nothing external
  and divide no integers;
* one of them accumulates across ``L``: it stores at an index that does not depend on
  ``L`` (the copy stages a chunk of a reduction; a copy for one output tile, such as a
  packed panel, is left alone).

The loads of ``Y`` become loads of ``X`` at the same indices, which hold the same values:
results are bit-identical.
"""

from __future__ import annotations

from irbuilder.ir import (
    Buffer,
    BufferLoad,
    For,
    IfThenElse,
    PrimExpr,
    PrimFunc,
    Stmt,
    StmtExprMutator,
    rebuild,
    seq,
    structural_equal,
)

from ..analysis.nest_accesses import (
    FunctionFacts,
    NoOverlapTests,
    dense_box,
    inside_box,
    nest_accesses,
    perfect_nest,
    statements,
    with_own_allocations,
)
from ..analysis.substitute import substitute
from ..arith.canonical import linear_coefficient
from ..late.versioning import all_of
from ..pass_infra import FunctionPass, function_pass
from .unroll import copy_with_fresh_vars

__all__ = ["forward_tile_copies"]


class _Forward(StmtExprMutator):
    def __init__(self, func: PrimFunc) -> None:
        facts = FunctionFacts(func.body)
        self.local_data, self.uses = facts.local_data, facts.uses
        self.allocations = facts.allocations
        self.tests: NoOverlapTests | None = None

    def visit_expr(self, expr: PrimExpr) -> PrimExpr:
        return expr

    def visit_for_(self, stmt: For) -> Stmt:
        # the run-time tests (addresses only) guard the outermost loop: the loops
        # between stay perfect nests for the passes after
        outermost = self.tests is None
        if outermost:
            self.tests = NoOverlapTests(self.local_data)
        assert self.tests is not None
        loop = self.generic_mutate(stmt)
        body = loop.body
        while True:
            forwarded = self._one_copy(loop, body, self.tests)
            if forwarded is None:
                break
            body = forwarded
        fast: Stmt = loop if body is loop.body else rebuild(loop, {"body": body})
        if not outermost:
            return fast
        tests, self.tests = self.tests, None
        if fast is stmt or not tests.tests:
            return fast
        fast = with_own_allocations(copy_with_fresh_vars(fast), stmt, self.allocations,
                                    self.uses)
        return IfThenElse(all_of(list(tests.tests.values())), fast, stmt, span=stmt.span)

    def _one_copy(self, loop: For, body: Stmt, tests: NoOverlapTests) -> Stmt | None:
        """``body`` with one copy forwarded (module doc), or None."""
        stmts = statements(body)
        for pos, stmt in enumerate(stmts):
            nest = perfect_nest(stmt)
            if nest is None:
                continue
            loops, store = nest
            tile, source = store.buffer, store.value
            if not isinstance(source, BufferLoad) or not self._copy_of(store.buffer, source):
                continue
            if not all(structural_equal(a, b) for a, b in zip(source.indices, store.indices)):
                continue
            box = dense_box(store, loops)
            later = [nest_accesses(s) for s in stmts[pos + 1:]]
            if box is None or any(acc is None for acc in later):
                continue
            found = [a for acc in later if acc is not None for a in acc.found]
            reads = [a for a in found if a.buffer.data is tile.data]
            if not reads or len(reads) + 1 != self.uses.count.get(tile.data, 0):
                continue
            if any(a.store or a.buffer is not tile or not inside_box(a, box) for a in reads):
                continue
            var = loop.loop_var
            if not any(a.store and all(linear_coefficient(i, var) == 0 for i in a.indices)
                       for a in found):
                continue  # nothing accumulates across the loop: not a reduction's chunk
            trial = NoOverlapTests(tests.local_data, dict(tests.tests))
            if not all(a.buffer.data is not source.buffer.data
                       and trial.apart(a.buffer, source.buffer) for a in found if a.store):
                continue
            tests.tests = trial.tests
            rest = [substitute(s, bmap={tile: source.buffer}) for s in stmts[pos + 1:]]
            return seq([*stmts[:pos], *rest])
        return None

    def _copy_of(self, tile: Buffer, source: BufferLoad) -> bool:
        src = source.buffer
        if id(tile.data) not in self.local_data or tile.data is src.data:
            return False
        if tile.data in self.uses.escaped or len(self.uses.buffers.get(tile.data, ())) != 1:
            return False
        return (tile.dtype == src.dtype and len(tile.shape) == len(src.shape)
                and all(structural_equal(a, b) for a, b in zip(tile.shape, src.shape)))


@function_pass("forward_tile_copies", opt_level=1)
def _forward_tile_copies(func: PrimFunc) -> PrimFunc:
    """Read a reduction chunk's staged tiles from their arrays (module doc)."""
    body = _Forward(func).visit_stmt(func.body)
    return func if body is func.body else func.with_body(body)


forward_tile_copies: FunctionPass = _forward_tile_copies
"""The ``forward_tile_copies`` pass (a :class:`FunctionPass`)."""
