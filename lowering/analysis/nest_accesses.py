"""Loads and stores of loop nests with the loops around each, for the rewrites that move
whole statements (``distribute_tile_consumers``, ``forward_tile_copies``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from irbuilder.ir import (
    Add,
    Allocate,
    Buffer,
    BufferLoad,
    BufferStore,
    Call,
    CallKind,
    Cast,
    DeclBuffer,
    Div,
    FloorDiv,
    FloorMod,
    For,
    ForKind,
    IfThenElse,
    IntImm,
    LetStmt,
    Mod,
    PrimExpr,
    SeqStmt,
    Stmt,
    StmtExprVisitor,
    Var,
    as_dtype,
    rebuild,
)
from irbuilder.ir.linear_form import to_linear

from ..arith.canonical import linear_coefficient
from ..late.versioning import ByteRange, disjoint
from .loads import LocalAllocations, reads_memory
from .substitute import substitute, substitute_expr

__all__ = [
    "Access",
    "Allocations",
    "DataUses",
    "FunctionFacts",
    "NestAccesses",
    "NoOverlapTests",
    "dense_box",
    "inside_box",
    "nest_accesses",
    "offset_range",
    "perfect_nest",
    "statements",
    "whole_range",
    "with_own_allocations",
]

NEST_KINDS = (ForKind.SERIAL, ForKind.VECTORIZED, ForKind.UNROLLED)
_PLAIN_STMTS = (For, SeqStmt, IfThenElse, BufferStore, LetStmt)
_U64 = as_dtype("uint64")


@dataclass
class Access:
    """One load or store."""

    buffer: Buffer
    indices: tuple[PrimExpr, ...]
    store: bool
    loops: tuple[For, ...]
    """The loops around the access inside its statement, outermost first."""


class NestAccesses(StmtExprVisitor):
    """The loads and stores of one statement; ``opaque`` when it may do anything else
    (call out, trap, allocate, use a data pointer) or its loop bounds read memory."""

    def __init__(self) -> None:
        self.found: list[Access] = []
        self.opaque = False
        self._loops: list[For] = []

    def visit_stmt(self, stmt: Stmt) -> None:
        if not isinstance(stmt, _PLAIN_STMTS):
            self.opaque = True
            return
        super().visit_stmt(stmt)

    def visit_for_(self, node: For) -> None:
        if reads_memory(node.min) or reads_memory(node.extent) or node.thread_binding:
            self.opaque = True
        self.visit_expr(node.min)
        self.visit_expr(node.extent)
        self._loops.append(node)
        self.visit_stmt(node.body)
        self._loops.pop()

    def visit_buffer_load_(self, node: BufferLoad) -> None:
        self.found.append(Access(node.buffer, tuple(node.indices), False, tuple(self._loops)))
        self.generic_visit(node)

    def visit_buffer_store_(self, node: BufferStore) -> None:
        self.found.append(Access(node.buffer, tuple(node.indices), True, tuple(self._loops)))
        self.generic_visit(node)

    def visit_call_(self, node: Call) -> None:
        if node.kind is CallKind.EXTERN:
            self.opaque = True
        self.generic_visit(node)

    def visit_var_(self, var: Var) -> None:
        if var.dtype.is_handle:
            self.opaque = True

    def visit_expr(self, expr: PrimExpr) -> None:
        if (isinstance(expr, (Div, Mod, FloorDiv, FloorMod)) and not expr.dtype.is_float
                and not (isinstance(expr.b, IntImm) and expr.b.value != 0)):
            self.opaque = True  # it may trap: earlier stores must stay where they are
        super().visit_expr(expr)


def nest_accesses(stmt: Stmt) -> NestAccesses | None:
    """The accesses of ``stmt``, or None when it is opaque (:class:`NestAccesses`)."""
    found = NestAccesses()
    found.visit_stmt(stmt)
    return None if found.opaque else found


class DataUses(StmtExprVisitor):
    """Per data var: the accesses in the function, and whether the var is used otherwise."""

    def __init__(self) -> None:
        self.count: dict[Var, int] = {}
        self.buffers: dict[Var, set[int]] = {}
        self.escaped: set[Var] = set()

    def _access(self, buffer: Buffer) -> None:
        self.count[buffer.data] = self.count.get(buffer.data, 0) + 1
        self.buffers.setdefault(buffer.data, set()).add(id(buffer))

    def visit_buffer_load_(self, node: BufferLoad) -> None:
        self._access(node.buffer)
        self.generic_visit(node)

    def visit_buffer_store_(self, node: BufferStore) -> None:
        self._access(node.buffer)
        self.generic_visit(node)

    def visit_allocate_(self, node: Allocate) -> None:
        self.visit_expr(node.extent)
        self.visit_expr(node.condition)
        self.visit_stmt(node.body)

    def visit_var_(self, var: Var) -> None:
        if var.dtype.is_handle:
            self.escaped.add(var)


def statements(stmt: Stmt) -> list[Stmt]:
    """``stmt`` as a list of statements, nested sequences flattened."""
    if not isinstance(stmt, SeqStmt):
        return [stmt]
    out: list[Stmt] = []
    for item in stmt.seq:
        out.extend(statements(item))
    return out


def offset_range(expr: PrimExpr, base: PrimExpr, loops: tuple[For, ...]) -> tuple[int, int] | None:
    """The exact range of ``expr - base`` over ``loops`` (constant bounds), or None when the
    difference is not linear in those loop variables alone."""
    if not (expr.dtype.is_integer and base.dtype.is_integer):
        return None
    form = to_linear(expr, wrap=False)
    form.add_form(to_linear(base, wrap=False), -1)
    ranges = {id(lp.loop_var): lp for lp in loops}
    lo = hi = form.const
    for atom, coef in form.live_terms():
        lp = ranges.get(id(atom))
        if lp is None or not (isinstance(lp.min, IntImm) and isinstance(lp.extent, IntImm)):
            return None
        if lp.extent.value <= 0:
            return None
        first, last = coef * lp.min.value, coef * (lp.min.value + lp.extent.value - 1)
        lo += min(first, last)
        hi += max(first, last)
    return lo, hi


def whole_range(buffer: Buffer) -> ByteRange | None:
    """The bytes of a dense buffer starting at its data pointer, or None when unknown."""
    if buffer.strides or not (isinstance(buffer.elem_offset, IntImm)
                              and buffer.elem_offset.value == 0):
        return None
    size: PrimExpr = IntImm(_U64, buffer.dtype.itemsize)
    for extent in buffer.shape:
        if not extent.dtype.is_integer or reads_memory(extent):
            return None
        size = size * Cast(_U64, extent)
    lo = Cast(_U64, buffer.data)
    return lo, Add(lo, size)


@dataclass
class NoOverlapTests:
    """Run-time no-overlap tests by pair of data vars (each pair tested once)."""

    local_data: set[int]
    tests: dict[tuple[int, int], PrimExpr] = field(default_factory=dict)

    def apart(self, a: Buffer, b: Buffer) -> bool:
        """Record that ``a`` and ``b`` (different data vars) must not overlap; False when
        that cannot be tested."""
        if id(a.data) in self.local_data or id(b.data) in self.local_data:
            return True
        key = (min(id(a.data), id(b.data)), max(id(a.data), id(b.data)))
        if key in self.tests:
            return True
        ra, rb = whole_range(a), whole_range(b)
        if ra is None or rb is None:
            return False
        self.tests[key] = disjoint(ra, rb)
        return True


def dense_box(store: BufferStore, loops: list[For]) -> list[tuple[PrimExpr, int]] | None:
    """Per dimension of ``store``: its index with the nest's variables at 0 and the span of
    values it covers, when the nest writes every point of that box once."""
    used: set[int] = set()
    out: list[tuple[PrimExpr, int]] = []
    for index in store.indices:
        if not index.dtype.is_integer:
            return None
        terms: list[tuple[int, int]] = []
        for lp in loops:
            coef = linear_coefficient(index, lp.loop_var)
            if coef is None:
                return None
            if coef == 0:
                continue
            if id(lp) in used or not isinstance(lp.extent, IntImm):
                return None
            used.add(id(lp))
            terms.append((coef, lp.extent.value))
        dense = 1
        for coef, extent in sorted(terms):
            if coef != dense:
                return None
            dense *= extent
        base = substitute_expr(index, {lp.loop_var: IntImm(lp.loop_var.dtype, 0)
                                       for lp in loops})
        out.append((base, dense - 1))
    if len(used) != len(loops):
        return None  # some loop stores the same point again
    return out


def inside_box(access: Access, box: list[tuple[PrimExpr, int]]) -> bool:
    """Whether ``access`` stays inside ``box`` (a :func:`dense_box`) over its own loops."""
    for index, (base, span) in zip(access.indices, box):
        offset = offset_range(index, base, access.loops)
        if offset is None or offset[0] < 0 or offset[1] > span:
            return False
    return True


def perfect_nest(stmt: Stmt) -> tuple[list[For], BufferStore] | None:
    """The loops (serial, vectorized or unrolled, from 0) around one store, when ``stmt``
    is nothing else."""
    loops: list[For] = []
    while isinstance(stmt, For):
        if stmt.kind not in NEST_KINDS or stmt.thread_binding is not None:
            return None
        if not (isinstance(stmt.min, IntImm) and stmt.min.value == 0):
            return None
        loops.append(stmt)
        stmt = stmt.body
    if not loops or not isinstance(stmt, BufferStore):
        return None
    return loops, stmt


class Allocations(StmtExprVisitor):
    """The function's own allocations: per data var, its ``Allocate`` and the buffers
    declared over it."""

    def __init__(self) -> None:
        self.nodes: dict[Var, Allocate] = {}
        self.buffers: dict[Var, list[Buffer]] = {}

    def visit_expr(self, expr: PrimExpr) -> None:
        return None

    def visit_allocate_(self, node: Allocate) -> None:
        self.nodes[node.buffer_var] = node
        self.generic_visit(node)

    def visit_decl_buffer_(self, node: DeclBuffer) -> None:
        self.buffers.setdefault(node.buffer.data, []).append(node.buffer)
        self.generic_visit(node)


class FunctionFacts:
    """What the tile rewrites read of the whole function before they change it: its own
    allocations (ids of their data vars, and the nodes), and every data var's uses."""

    def __init__(self, body: Stmt) -> None:
        local = LocalAllocations()
        local.visit_stmt(body)
        self.local_data = local.vars
        self.uses = DataUses()
        self.uses.visit_stmt(body)
        self.allocations = Allocations()
        self.allocations.visit_stmt(body)


def with_own_allocations(fast: Stmt, original: Stmt, allocations: Allocations,
                         uses: DataUses) -> Stmt:
    """``fast`` (a rewritten copy of ``original``, run in its place behind a run-time test)
    over allocations of its own where both use one of the function's allocations.

    Allocations are placed at the lowest common ancestor of their uses later; one used in
    both versions would land above them, and so above a parallel loop both share: one
    buffer for every thread where each iteration had its own. Only allocations used nowhere
    else (``uses``: the function's) get a copy: one written before the versions is read
    by both."""
    used_fast, used_original = DataUses(), DataUses()
    used_fast.visit_stmt(fast)
    used_original.visit_stmt(original)
    shared = [data for data in used_fast.count if data in allocations.nodes
              and used_original.count.get(data) == uses.count.get(data)]
    vmap: dict[Var, PrimExpr] = {}
    bmap: dict[Buffer, Buffer] = {}
    fresh: list[tuple[Allocate, Var, list[Buffer]]] = []
    for data in shared:
        new_data = Var(data.name, data.dtype, data.type_annotation)
        vmap[data] = new_data
        views = []
        for buffer in allocations.buffers.get(data, []):
            view = rebuild(buffer, {"data": new_data})
            bmap[buffer] = view
            views.append(view)
        fresh.append((allocations.nodes[data], new_data, views))
    if not shared:
        return fast
    body = substitute(fast, vmap, bmap)
    for node, new_data, views in reversed(fresh):
        for view in reversed(views):
            body = DeclBuffer(view, body)
        body = Allocate(new_data, node.dtype, node.extent, node.condition, body,
                        node.annotations, span=node.span)
    return body
