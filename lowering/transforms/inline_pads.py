"""The ``inline_padding`` pass: a padding stage read back without reuse is computed where it
is read.

TOPI's depthwise convolutions and pools (and TVM users writing them the TE way) first copy
their input into a padded array, then read that array through the window::

    pad_temp = T.decl_buffer((1, 128, 114, 114), "float32")
    for i0, i1, i2, i3 in T.grid(1, 128, 114, 114):
        pad_temp[i0, i1, i2, i3] = T.if_then_else(1 <= i2 and i2 < 113 and ...,
                                                  data[i0, i1, i2 - 1, i3 - 1], 0)
    for b, c, i, j, di, dj in ...:
        out[b, c, i, j] = out[b, c, i, j] + pad_temp[b, c, i * 2 + di, j * 2 + dj] * ...

The copy writes and reads back an array as large as the input: for a stride-2 depthwise
convolution of 128 x 112 x 112, 6.6 MB each way, most of the kernel's memory traffic
(0.86 ms on an Intel AVX-512 host; TVM 0.27 0.78; inlined 0.45). Each load of ``pad_temp``
becomes the copy's value at the load's indices (``T.if_then_else(1 <= i * 2 + di and ...,
data[b, c, i * 2 + di - 1, ...], 0)``); ``partition_loops`` later takes the window's border
tests out of the interior.

**Where.** An allocation ``P`` (the function's own) whose body is a sequence of statements,
one of them a perfect nest storing ``P[v0, ..., vn] = value`` over exactly ``P``'s shape (from
0, the loop variables as the indices in order: every element once), where

* ``value`` is cheap -- constants, variables, loads, integer arithmetic, comparisons,
  casts, ``T.if_then_else``/``T.Select``/``T.likely``; no float arithmetic nor call that
  could cost more than the load it replaces -- and loads only arrays nothing in the
  function stores to (so it reads the same values wherever it is evaluated);
* ``P`` is used nowhere but in that store and in loads by the statements after the nest;
* every load of ``P`` is inside loops each of which moves some index by a constant
  multiple of its variable: no loop reads the same element again (a depthwise
  convolution's window re-reads an element at most 9 times; a dense convolution's
  output-channel loop reads each element once per channel, and a grouped one's ``ff // 16``
  16 times, and their padded copies stay: a load is cheaper than the test).

The loads then compute the very values the nest stored: results are bit-identical. A
parameter the later statements store to could overlap one the value reads (the caller's
arrays): then the inlined loads would see the stores, so the rewrite runs behind a
run-time test that they do not overlap, the stages as written otherwise.
"""

from __future__ import annotations

from irbuilder.ir import (
    EQ,
    GE,
    GT,
    LE,
    LT,
    NE,
    Add,
    Allocate,
    And,
    Buffer,
    BufferLoad,
    BufferStore,
    Call,
    Cast,
    DeclBuffer,
    FloatImm,
    FloorDiv,
    FloorMod,
    For,
    IfThenElse,
    IntImm,
    Max,
    Min,
    Mul,
    Not,
    Or,
    PrimExpr,
    PrimFunc,
    Select,
    SeqStmt,
    Stmt,
    StmtExprMutator,
    StmtExprVisitor,
    Sub,
    Var,
    post_order_visit,
    rebuild,
    seq,
)

from ..analysis import buffer_accesses, substitute_expr
from ..arith.canonical import linear_coefficient
from ..late.versioning import all_of, disjoint
from ..pass_infra import FunctionPass, function_pass
from .auto_parallel import param_bytes
from .unroll import copy_with_fresh_vars

__all__ = ["inline_padding"]

MAX_VALUE_NODES = 48
"""Largest padding value (in expression nodes) copied into each load."""

_CHEAP_CALLS = frozenset({"if_then_else", "likely"})
_INT_ARITH = (Add, Sub, Mul, FloorDiv, FloorMod, Min, Max)
_LOGIC = (EQ, NE, LT, LE, GT, GE, And, Or, Not, Select, Cast, IntImm, FloatImm, Var,
          BufferLoad)


def _cheap(value: PrimExpr, read_only: set[int]) -> bool:
    """Whether ``value`` may be evaluated at every load instead of once (module doc)."""
    nodes = 0
    ok = True

    def visit(node: object) -> None:
        nonlocal nodes, ok
        if not isinstance(node, PrimExpr):
            return
        nodes += 1
        if isinstance(node, _INT_ARITH):
            ok = ok and node.dtype.is_int
        elif isinstance(node, Call):
            ok = ok and node.op in _CHEAP_CALLS
        elif isinstance(node, BufferLoad):
            ok = ok and id(node.buffer.data) in read_only
        elif not isinstance(node, _LOGIC):
            ok = False

    post_order_visit(value, visit)
    return ok and nodes <= MAX_VALUE_NODES


def _producer(stmt: Stmt, decl: DeclBuffer) -> tuple[list[Var], BufferStore] | None:
    """The loop variables and the store of a perfect nest writing every element of
    ``decl``'s buffer once (``P[v0, ..., vn] = value``), or None."""
    buffer = decl.buffer
    loop_vars: list[Var] = []
    while isinstance(stmt, For):
        if not (isinstance(stmt.min, IntImm) and stmt.min.value == 0):
            return None
        if stmt.thread_binding is not None:
            return None
        loop_vars.append(stmt.loop_var)
        dim = len(loop_vars) - 1
        if dim >= len(buffer.shape):
            return None
        extent, size = stmt.extent, buffer.shape[dim]
        if not (isinstance(extent, IntImm) and isinstance(size, IntImm)
                and extent.value == size.value):
            return None
        stmt = stmt.body
    if not isinstance(stmt, BufferStore) or stmt.buffer is not buffer:
        return None
    if len(loop_vars) != len(buffer.shape) or len(stmt.indices) != len(loop_vars):
        return None
    if any(index is not var for index, var in zip(stmt.indices, loop_vars)):
        return None
    return loop_vars, stmt


class _LoadsWithoutReuse(StmtExprVisitor):
    """Whether every load of ``data`` sits in loops whose variables all index it, and no
    other use of ``data`` (a store, the var itself) occurs."""

    def __init__(self, data: Var) -> None:
        self.data = data
        self.loops: list[Var] = []
        self.ok = True
        self.loads = 0

    def visit_for_(self, node: For) -> None:
        self.visit_expr(node.min)
        self.visit_expr(node.extent)
        self.loops.append(node.loop_var)
        self.visit_stmt(node.body)
        self.loops.pop()

    def visit_buffer_load_(self, node: BufferLoad) -> None:
        if node.buffer.data is self.data:
            self.loads += 1
            self.ok = self.ok and all(
                any(linear_coefficient(index, v) not in (None, 0) for index in node.indices)
                for v in self.loops
            )
        self.generic_visit(node)

    def visit_buffer_store_(self, node: BufferStore) -> None:
        if node.buffer.data is self.data:
            self.ok = False
        self.generic_visit(node)

    def visit_decl_buffer_(self, node: DeclBuffer) -> None:
        if node.buffer.data is self.data:
            self.ok = False
        self.generic_visit(node)

    def visit_var_(self, var: Var) -> None:
        if var is self.data:
            self.ok = False


class _Inline(StmtExprMutator):
    """Loads of the padded buffer become the padding value at their indices."""

    def __init__(self, data: Var, loop_vars: list[Var], value: PrimExpr) -> None:
        self.data, self.loop_vars, self.value = data, loop_vars, value

    def visit_expr(self, expr: PrimExpr) -> PrimExpr:
        if isinstance(expr, BufferLoad) and expr.buffer.data is self.data:
            indices = [self.visit_expr(i) for i in expr.indices]
            return substitute_expr(self.value, dict(zip(self.loop_vars, indices)))
        return super().visit_expr(expr)


class _InlinePadding(StmtExprMutator):
    def __init__(self, func: PrimFunc) -> None:
        self.params = {id(b.data) for b in func.buffer_map.values()}
        stored = {id(b.data) for b in buffer_accesses(func.body).stored}
        self.read_only = self.params - stored

    def visit_allocate_(self, node: Allocate) -> Stmt:
        visited = self.generic_mutate(node)
        assert isinstance(visited, Allocate)
        decl = visited.body
        if not (isinstance(decl, DeclBuffer) and decl.buffer.data is visited.buffer_var):
            return visited
        body = decl.body
        if not isinstance(body, SeqStmt):
            return visited
        inlined = self._inline(visited, decl, list(body.seq))
        return visited if inlined is None else inlined

    def _inline(self, alloc: Allocate, decl: DeclBuffer, stmts: list[Stmt]) -> Stmt | None:
        data = decl.buffer.data
        for at, stmt in enumerate(stmts):
            found = _producer(stmt, decl)
            if found is None:
                continue
            loop_vars, store = found
            if not _cheap(store.value, self.read_only):
                return None
            before, after = stmts[:at], stmts[at + 1:]
            if any(data in buffer_accesses(s).data_vars for s in before):
                return None
            if data in buffer_accesses(store.value).data_vars:
                return None
            check = _LoadsWithoutReuse(data)
            for s in after:
                check.visit_stmt(s)
            if not check.ok or check.loads == 0:
                return None
            checks = self._no_overlap(store.value, after)
            if checks is None:
                return None
            rewrite = _Inline(data, loop_vars, store.value)
            # fresh loop variables: the stages as written may stay beside it (below)
            inlined = copy_with_fresh_vars(seq([rewrite.visit_stmt(s) for s in after]))
            if checks:
                # an output overlapping the padded input would change it before the
                # inlined loads read it: the stages as written then
                inlined = IfThenElse(all_of(checks), inlined, seq([stmt, *after]))
                kept = rebuild(decl, {"body": seq([*before, inlined])})
                versioned: Stmt = rebuild(alloc, {"body": kept})
                return versioned
            return seq([*before, inlined])
        return None

    def _no_overlap(self, value: PrimExpr, after: list[Stmt]) -> list[PrimExpr] | None:
        """Tests that no parameter the statements after the nest store to overlaps one the
        padding value reads, or None when a range is unknown."""
        read = buffer_accesses(value).loaded
        stored: dict[Buffer, None] = {}
        for stmt in after:
            stored.update(buffer_accesses(stmt).stored)
        checks: list[PrimExpr] = []
        for r in {b.data: b for b in read}.values():
            for w in {b.data: b for b in stored if id(b.data) in self.params}.values():
                a, b = param_bytes(r), param_bytes(w)
                if a is None or b is None:
                    return None
                checks.append(disjoint(a, b))
        return checks


@function_pass("inline_padding", opt_level=1)
def _inline_padding(func: PrimFunc) -> PrimFunc:
    """Compute padding stages where they are read (module doc)."""
    body = _InlinePadding(func).visit_stmt(func.body)
    return func if body is func.body else func.with_body(body)


inline_padding: FunctionPass = _inline_padding
"""The ``inline_padding`` pass (a :class:`FunctionPass`)."""
