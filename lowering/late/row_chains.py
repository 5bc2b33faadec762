"""The parallel loop bodies ``vectorize_row_reductions`` takes, and their reduction chains.

A row's body (under allocations, buffer declarations and bindings) is a sequence of
stores, then one or more serial loops each updating elements of function-local float
accumulators declared in the body (a chain per element, :data:`MAX_CHAINS` at most per
loop), with any statements between and after them that do not store to the accumulators
(loops too) or are one store to an accumulator element. A later chain loop may read an
earlier one's accumulators at constant elements (a two-pass variance reads its mean), never
update them. See ``row_vectorize.py`` for what is done with them.
"""

from __future__ import annotations

from irbuilder.ir import (
    Add,
    Allocate,
    Buffer,
    BufferLoad,
    BufferStore,
    Cast,
    DeclBuffer,
    Div,
    FloatImm,
    For,
    ForKind,
    IntImm,
    LetStmt,
    Max,
    Min,
    Mul,
    PrimExpr,
    SeqStmt,
    Stmt,
    Sub,
    Var,
    rebuild,
)
from irbuilder.ir.functor import post_order_visit

from ..analysis.loads import reads_memory
from ..analysis.substitute import substitute_expr
from ..analysis.vars import depends_on, free_vars
from ..arith.canonical import linear_coefficient
from .row_spans import affine_in_row, row_end

__all__ = [
    "MAX_CHAINS",
    "Chain",
    "RowBody",
    "Update",
    "bound_stores",
    "loads",
    "match_rows",
    "peel",
    "stores_to",
]

MAX_CHAINS = 4
"""Most accumulator elements one matched loop may update (each is one chain per row)."""

OPS: tuple[type, ...] = (Add, Sub, Mul, Div, Max, Min)


class Update:
    """One chain's statement ``acc[at] = acc[at] <op> x`` (or ``x <op> acc[at]``)."""

    def __init__(self, acc: Buffer, at: int, op: type, acc_first: bool, x: PrimExpr) -> None:
        self.acc, self.at, self.op, self.acc_first, self.x = acc, at, op, acc_first, x


class Chain:
    """A matched reduction loop and the chains its body updates, in source order."""

    def __init__(self, loop: For, accs: list[Buffer], updates: list[Update]) -> None:
        self.loop, self.accs, self.updates = loop, accs, updates
        self.dtype = accs[0].dtype

    def operands(self) -> list[PrimExpr]:
        return [u.x for u in self.updates]


class RowBody:
    """A matched row body: its ``wrappers`` (allocations, declarations, bindings), its
    statements and its chain loops (``chains[k].loop`` is ``stmts[at[k]]``)."""

    def __init__(self, wrappers: list[Stmt], stmts: list[Stmt], chains: list[Chain],
                 at: list[int]) -> None:
        self.wrappers, self.stmts, self.chains, self.at = wrappers, stmts, chains, at

    @property
    def accs(self) -> list[Buffer]:
        return [a for chain in self.chains for a in chain.accs]


def peel(
    body: Stmt, kinds: tuple[type, ...] = (Allocate, DeclBuffer, LetStmt)
) -> tuple[list[Stmt], Stmt]:
    """The allocations, declarations and bindings (``kinds``) wrapping ``body``, and what
    they wrap."""
    wrappers: list[Stmt] = []
    while isinstance(body, kinds):
        assert isinstance(body, (Allocate, DeclBuffer, LetStmt))
        wrappers.append(body)
        body = body.body
    return wrappers, body


def _is_acc(expr: PrimExpr, acc: Buffer, at: int = 0) -> bool:
    return (
        isinstance(expr, BufferLoad)
        and expr.buffer.data is acc.data
        and len(expr.indices) == 1
        and isinstance(expr.indices[0], IntImm)
        and expr.indices[0].value == at
    )


class _Operand:
    """Checks an update's operand ``x`` (``row_vectorize.py``'s module doc): ``readable``
    are the data of earlier chains' accumulators, read at constant elements."""

    def __init__(self, row: Var, col: Var, inner: set[int], readable: set[int]) -> None:
        self.row, self.col, self.inner, self.readable = row, col, inner, readable

    def ok(self, expr: PrimExpr) -> bool:
        if isinstance(expr, (FloatImm, IntImm)):
            return True
        if isinstance(expr, Var):
            return expr is not self.row and expr is not self.col and id(expr) not in self.inner
        if isinstance(expr, Cast):
            return expr.dtype.lanes == 1 and self.ok(expr.value)
        if isinstance(expr, OPS):
            assert isinstance(expr, (Add, Sub, Mul, Div, Max, Min))
            return self.ok(expr.a) and self.ok(expr.b)
        if isinstance(expr, BufferLoad):
            if len(expr.indices) != 1 or expr.dtype.lanes != 1 or expr.buffer.dtype.lanes != 1:
                return False
            (index,) = expr.indices
            if id(expr.buffer.data) in self.readable:
                return isinstance(index, IntImm)
            if id(expr.buffer.data) in self.inner or expr.buffer.dtype.is_bool:
                return False
            if index.dtype.lanes != 1:
                return False
            if any(id(v) in self.inner for v in free_vars(index)) or reads_memory(index):
                return False
            return linear_coefficient(index, self.col) in (0, 1)
        return False


def _match_update(stmt: Stmt, locals_: dict[int, Allocate], operand: _Operand) -> Update | None:
    if not isinstance(stmt, BufferStore) or len(stmt.indices) != 1:
        return None
    (at,) = stmt.indices
    acc = stmt.buffer
    alloc = locals_.get(id(acc.data))
    dtype = acc.dtype
    if alloc is None or not dtype.is_float or dtype.lanes != 1 or dtype.bits not in (32, 64):
        return None
    if not (isinstance(alloc.extent, IntImm) and 1 <= alloc.extent.value <= MAX_CHAINS):
        return None
    if not (isinstance(at, IntImm) and 0 <= at.value < alloc.extent.value):
        return None
    value = stmt.value
    if not isinstance(value, OPS):
        return None
    assert isinstance(value, (Add, Sub, Mul, Div, Max, Min))
    if _is_acc(value.a, acc, at.value):
        acc_first, x = True, value.b
    elif _is_acc(value.b, acc, at.value):
        acc_first, x = False, value.a
    else:
        return None
    if not operand.ok(x):
        return None
    return Update(acc, at.value, type(value), acc_first, x)


def _match_chain(red: Stmt, row: Var, inner: set[int], locals_: dict[int, Allocate],
                 earlier: list[Buffer]) -> Chain | None:
    """``red`` as a chain loop of row ``row`` whose operands may read ``earlier``
    accumulators, or None."""
    if not isinstance(red, For):
        return None
    if red.kind is not ForKind.SERIAL or red.annotations or red.thread_binding is not None:
        return None
    # a triangle's row-dependent bounds (row_spans.py): the first and the last column, or
    # the extent when it does not depend on the row
    last = red.extent if not depends_on(red.extent, row) else row_end(red)
    for bound in (red.min, last):
        if any(id(v) in inner for v in free_vars(bound)) or not affine_in_row(bound, row):
            return None
    body_stmts = bound_stores(red.body, {})
    if not body_stmts or len(body_stmts) > MAX_CHAINS:
        return None
    operand = _Operand(row, red.loop_var, inner, {id(a.data) for a in earlier})
    updates: list[Update] = []
    accs: list[Buffer] = []
    for store in body_stmts:
        update = _match_update(store, locals_, operand)
        if update is None or any(
            u.acc.data is update.acc.data and u.at == update.at for u in updates
        ) or any(a.data is update.acc.data for a in earlier):
            return None
        updates.append(update)
        if not any(a.data is update.acc.data for a in accs):
            accs.append(update.acc)
    if any(a.dtype != accs[0].dtype for a in accs):
        return None
    return Chain(red, accs, updates)


def bound_stores(body: Stmt, bound: dict[Var, PrimExpr]) -> list[BufferStore] | None:
    """The statements of a chain loop's ``body`` with its ``let`` bindings (``a = A[i, j]``,
    a TVM user's way to read an element once) substituted into them, or None when it holds
    other kinds of statements. Substituting is exact: an operand reads no buffer the loop
    stores to (``_Operand``), so where it is read does not matter."""
    if isinstance(body, LetStmt):
        value = substitute_expr(body.value, bound) if bound else body.value
        return bound_stores(body.body, {**bound, body.var: value})
    if isinstance(body, SeqStmt):
        out: list[BufferStore] = []
        for stmt in body.seq:
            part = bound_stores(stmt, bound)
            if part is None:
                return None
            out.extend(part)
        return out
    if not isinstance(body, BufferStore):
        return None
    if not bound:
        return [body]
    return [rebuild(body, {"value": substitute_expr(body.value, bound),
                           "indices": [substitute_expr(i, bound) for i in body.indices]})]


def match_rows(loop: For) -> RowBody | None:
    """The body of the parallel ``loop`` as a :class:`RowBody` (module doc), or None."""
    wrappers, inner_body = peel(loop.body)
    stmts = list(inner_body.seq) if isinstance(inner_body, SeqStmt) else [inner_body]
    # an allocation placed after the first statements (at the LCA of its uses) may as well
    # wrap them all: they cannot name it
    while stmts and isinstance(stmts[-1], (Allocate, DeclBuffer)):
        more, rest = peel(stmts[-1], (Allocate, DeclBuffer))
        wrappers.extend(more)
        stmts = stmts[:-1] + (list(rest.seq) if isinstance(rest, SeqStmt) else [rest])
    inner: set[int] = set()
    locals_: dict[int, Allocate] = {}
    for w in wrappers:
        if isinstance(w, Allocate):
            inner.add(id(w.buffer_var))
            locals_[id(w.buffer_var)] = w
        elif isinstance(w, LetStmt):
            inner.add(id(w.var))
    first = next((k for k, s in enumerate(stmts) if isinstance(s, For)), None)
    if first is None or not all(isinstance(s, BufferStore) for s in stmts[:first]):
        return None
    row = loop.loop_var
    chains: list[Chain] = []
    at: list[int] = []
    for k in range(first, len(stmts)):
        stmt = stmts[k]
        if k != first and not isinstance(stmt, For):
            continue
        earlier = [a for chain in chains for a in chain.accs]
        chain = _match_chain(stmt, row, inner, locals_, earlier)
        if chain is None:
            if k == first:
                return None
            continue  # a loop that is no chain: it must not store to the accumulators
        chains.append(chain)
        at.append(k)
    body = RowBody(wrappers, stmts, chains, at)
    accs = body.accs
    if any(a.dtype != accs[0].dtype for a in accs):
        return None
    if len(chains) > 1 and any(affine_bounds_depend(c, row) for c in chains):
        return None
    # the accumulators are read per row; every access names a constant element (the lanes
    # keep each element's rows side by side)
    if not all(_constant_accesses(s, accs) for s in stmts):
        return None
    # outside the chain loops a row may rescale or reset its accumulators (a mean: ``m[0] =
    # m[0] / n``), one store per lane; another loop storing to them is not a chain of them
    if any(stores_to(s, accs) and not isinstance(s, BufferStore)
           for k, s in enumerate(stmts) if k not in at):
        return None
    return body


def affine_bounds_depend(chain: Chain, row: Var) -> bool:
    """Whether the chain loop's bounds depend on the row (they are affine in it, or a
    ``min``/``max`` of such bounds)."""
    return any(depends_on(b, row) for b in (chain.loop.min, chain.loop.extent))


def _constant_accesses(stmt: Stmt, accs: list[Buffer]) -> bool:
    data = {id(a.data) for a in accs}
    ok = True

    def visit(node: object) -> None:
        nonlocal ok
        if isinstance(node, (BufferLoad, BufferStore)) and id(node.buffer.data) in data:
            if len(node.indices) != 1 or not isinstance(node.indices[0], IntImm):
                ok = False
        elif isinstance(node, Var) and id(node) in data:
            ok = False  # the accumulator's address escapes

    post_order_visit(stmt, visit)
    return ok


def stores_to(stmt: Stmt, accs: list[Buffer]) -> bool:
    """Whether ``stmt`` stores to any of ``accs``."""
    data = {id(a.data) for a in accs}
    found = False

    def visit(node: object) -> None:
        nonlocal found
        if isinstance(node, BufferStore) and id(node.buffer.data) in data:
            found = True

    post_order_visit(stmt, visit)
    return found


def loads(expr: PrimExpr) -> list[BufferLoad]:
    """The loads of an operand, left to right."""
    if isinstance(expr, BufferLoad):
        return [expr]
    if isinstance(expr, Cast):
        return loads(expr.value)
    if isinstance(expr, (Add, Sub, Mul, Div, Max, Min)):
        return loads(expr.a) + loads(expr.b)
    return []
