"""The two-buffer reducers rfactor factors as TVM v0.16 does: argmax and argmin.

TVM recognizes a block whose init stores ``(-1, min_value)`` (argmax; argmin: ``max_value``)
into an index and a value buffer, and whose update is

    v0 = T.Select(V[i] >= y1, I[i], y0)      # argmin: <=
    v1 = T.Select(V[i] >= y1, V[i], y1)
    I[i] = v0
    V[i] = v1

(the lets in this order, the stores and the init in any order) as its commutative reducer
over the pairs ``(index, value)``. Only that exact form is accepted here; anything else is
refused by rfactor. The combiner keeps the current pair when its value is at least (at most)
the new one: on ties the *first* pair met wins, so the factored reduction, which meets the
pairs in another order (each rf slot first, then the slots in order), may return another
of the tied indices. TVM's factored program does the same; its answer is the one given.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from irbuilder.ir import (
    GE,
    LE,
    Block,
    Buffer,
    BufferLoad,
    BufferStore,
    FloatImm,
    IntImm,
    LetStmt,
    PrimExpr,
    Select,
    SeqStmt,
    Stmt,
    Var,
    post_order_visit,
    structural_equal,
)

__all__ = ["ArgReducer", "match_arg_reducer"]


@dataclass(frozen=True, eq=False)
class ArgReducer:
    """An argmax (``GE``) or argmin (``LE``) update of ``index``/``value`` at ``indices``;
    ``rhs`` are the new pair (``y0``, ``y1``); ``init`` the identity pair."""

    compare: type[GE] | type[LE]
    index: Buffer
    value: Buffer
    indices: tuple[PrimExpr, ...]
    rhs: tuple[PrimExpr, PrimExpr]
    init: tuple[PrimExpr, PrimExpr]
    let_names: tuple[str, str]

    @property
    def buffers(self) -> tuple[Buffer, Buffer]:
        return self.index, self.value

    def update_stmt(
        self,
        targets: Sequence[Buffer],
        indices: Sequence[PrimExpr],
        rhs: Sequence[PrimExpr],
    ) -> Stmt:
        """The update of ``targets`` (index, value) at ``indices`` by the pair ``rhs``,
        with its lets named after the targets as TVM names them (``v_<buffer>``)."""
        index, value = targets
        x0, x1 = BufferLoad(index, tuple(indices)), BufferLoad(value, tuple(indices))
        y0, y1 = rhs
        keep = self.compare(x1, y1)
        w0 = Var(f"v_{index.name}", index.dtype)
        w1 = Var(f"v_{value.name}", value.dtype)
        stores = SeqStmt(
            (BufferStore(index, w0, tuple(indices)), BufferStore(value, w1, tuple(indices)))
        )
        return LetStmt(w0, Select(keep, x0, y0), LetStmt(w1, Select(keep, x1, y1), stores))

    def init_stmt(self, targets: Sequence[Buffer], indices: Sequence[PrimExpr]) -> Stmt:
        return SeqStmt(
            tuple(BufferStore(t, v, tuple(indices)) for t, v in zip(targets, self.init))
        )


def _stores(stmt: Stmt | None) -> list[BufferStore] | None:
    if isinstance(stmt, SeqStmt) and all(isinstance(s, BufferStore) for s in stmt.seq):
        return [s for s in stmt.seq if isinstance(s, BufferStore)]
    return None


def _same(a: Sequence[PrimExpr], b: Sequence[PrimExpr]) -> bool:
    return len(a) == len(b) and all(structural_equal(x, y) for x, y in zip(a, b))


def _is_load(expr: PrimExpr, buffer: Buffer, indices: Sequence[PrimExpr]) -> bool:
    return isinstance(expr, BufferLoad) and expr.buffer is buffer and _same(expr.indices, indices)


def _reads(expr: PrimExpr, buffers: Sequence[Buffer]) -> bool:
    hit = False

    def visit(node: object) -> None:
        nonlocal hit
        if isinstance(node, BufferLoad) and any(node.buffer is b for b in buffers):
            hit = True

    post_order_visit(expr, visit)
    return hit


def _constant(expr: PrimExpr) -> int | float | None:
    return expr.value if isinstance(expr, (IntImm, FloatImm)) else None


def match_arg_reducer(block: Block) -> ArgReducer | None:
    """The argmax/argmin reducer of ``block`` (TVM's two-element patterns), or None."""
    body = block.body
    lets: list[LetStmt] = []
    while isinstance(body, LetStmt) and len(lets) < 2:
        lets.append(body)
        body = body.body
    stores = _stores(body)
    inits = _stores(block.init)
    if len(lets) != 2 or stores is None or inits is None or len(stores) != 2 or len(inits) != 2:
        return None
    first, second = lets
    # each store writes one let var, each let var is stored once, to two distinct buffers
    by_var = {id(s.value): s for s in stores if isinstance(s.value, Var)}
    if len(by_var) != 2 or id(first.var) not in by_var or id(second.var) not in by_var:
        return None
    store0, store1 = by_var[id(first.var)], by_var[id(second.var)]
    index, value = store0.buffer, store1.buffer
    if index is value or not _same(store0.indices, store1.indices):
        return None
    if index.shape and not _same(index.shape, value.shape):
        return None
    indices = store0.indices
    init_by_buffer = {id(s.buffer): s for s in inits}
    if len(init_by_buffer) != 2 or set(init_by_buffer) != {id(index), id(value)}:
        return None
    if not all(_same(s.indices, indices) for s in inits):
        return None
    e0, e1 = first.value, second.value
    if not (isinstance(e0, Select) and isinstance(e1, Select)):
        return None
    cond = e0.condition
    if not (isinstance(cond, (GE, LE)) and structural_equal(cond, e1.condition)):
        return None
    if not _is_load(cond.a, value, indices):
        return None
    y1 = cond.b
    if not (
        _is_load(e0.true_value, index, indices)
        and _is_load(e1.true_value, value, indices)
        and structural_equal(e1.false_value, y1)
    ):
        return None
    y0 = e0.false_value
    if _reads(y0, (index, value)) or _reads(y1, (index, value)):
        return None
    # let vars are used only by their stores
    uses = 0

    def count(node: object) -> None:
        nonlocal uses
        if node is first.var or node is second.var:
            uses += 1

    post_order_visit(e1, count)
    for s in stores:
        for i in s.indices:
            post_order_visit(i, count)
    if uses:
        return None
    init0, init1 = init_by_buffer[id(index)].value, init_by_buffer[id(value)].value
    expected = value.dtype.min_value if isinstance(cond, GE) else value.dtype.max_value
    if _constant(init0) != -1 or _constant(init1) != expected:
        return None
    return ArgReducer(
        type(cond),
        index,
        value,
        tuple(indices),
        (y0, y1),
        (init0, init1),
        (first.var.name, second.var.name),
    )
