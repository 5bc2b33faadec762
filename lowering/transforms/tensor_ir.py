"""Recognition of tensor-level IR: compute nests, tensors, and who reads what where.

A *compute nest* is what ``T.compute`` builds: serial loops from 0 over the
output's shape (spatial) then the reduce axes, one BlockRealize binding the loop
vars in order, one block whose body stores to its output at exactly the spatial
iter vars (a reduction: ``init`` storing there too, the update possibly under an
``IfThenElse``). The *program* is the list of top-level statements of the root
block. A *tensor* is a root ``alloc_buffer`` written by exactly one top-level
statement, a compute nest covering its whole shape, never read before it, and
whose data var is never used directly: its value is then immutable once
defined, so where it is stored is free to choose (``bufferize``). A
hand-written nest of the same shape is recognised too -- it has the same
meaning.

The statement order is the program order the analyses use (positions); a
returned tensor is live until the end.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from irbuilder.ir import (
    Block,
    BlockRealize,
    Buffer,
    BufferLoad,
    BufferStore,
    For,
    ForKind,
    IfThenElse,
    IntImm,
    IterKind,
    PrimExpr,
    PrimFunc,
    SeqStmt,
    Span,
    Stmt,
    Var,
    post_order_visit,
    structural_equal,
)
from irbuilder.tir.tensor import RETURNS_ATTR, RETURNS_SPAN_ATTR

__all__ = [
    "ComputeNest",
    "TensorProgram",
    "match_compute",
    "rebuild_nest",
    "same_shape",
    "tensor_program",
]


def same_shape(a: Sequence[PrimExpr], b: Sequence[PrimExpr]) -> bool:
    """Whether two shapes are structurally equal (same rank, equal extents)."""
    return len(a) == len(b) and all(structural_equal(x, y) for x, y in zip(a, b))


def _is_zero(expr: PrimExpr) -> bool:
    return isinstance(expr, IntImm) and expr.value == 0


def _is_true(expr: PrimExpr) -> bool:
    return isinstance(expr, IntImm) and expr.dtype.is_bool and expr.value == 1


@dataclass
class ComputeNest:
    """A top-level statement recognised as a ``T.compute`` loop nest."""

    stmt: Stmt
    loops: list[For]
    realize: BlockRealize
    block: Block
    store: BufferStore
    spatial: tuple[Var, ...]
    """The spatial block iter vars, in the order the output is indexed."""

    @property
    def output(self) -> Buffer:
        """The buffer the nest writes."""
        return self.store.buffer

    @property
    def is_reduction(self) -> bool:
        """Whether the block has reduce axes (and so an init)."""
        return len(self.spatial) != len(self.block.iter_vars)

    @property
    def span(self) -> Span | None:
        """Where the compute was written (the block's span, else the statement's)."""
        return self.block.span or self.stmt.span


def match_compute(stmt: Stmt) -> ComputeNest | None:
    """The compute nest ``stmt`` is, or None (see the module docstring)."""
    loops: list[For] = []
    node = stmt
    while isinstance(node, For):
        if node.kind is not ForKind.SERIAL or not _is_zero(node.min) or node.annotations:
            return None
        loops.append(node)
        node = node.body
    if not isinstance(node, BlockRealize) or not _is_true(node.predicate):
        return None
    block = node.block
    if len(node.iter_values) != len(loops) or len(block.iter_vars) != len(loops):
        return None
    if block.alloc_buffers or block.match_buffers:
        return None
    for value, loop, iv in zip(node.iter_values, loops, block.iter_vars):
        if value is not loop.loop_var or not _is_zero(iv.dom.min):
            return None
        if not structural_equal(iv.dom.extent, loop.extent):
            return None
    kinds = [iv.kind for iv in block.iter_vars]
    n_spatial = 0
    while n_spatial < len(kinds) and kinds[n_spatial] is IterKind.SPATIAL:
        n_spatial += 1
    if any(k is not IterKind.REDUCE for k in kinds[n_spatial:]):
        return None
    reduction = n_spatial != len(kinds)
    body = block.body
    if reduction and isinstance(body, IfThenElse) and body.else_case is None:
        body = body.then_case
    if not isinstance(body, BufferStore):
        return None
    spatial = tuple(iv.var for iv in block.iter_vars[:n_spatial])
    if len(body.indices) != n_spatial or any(i is not v for i, v in zip(body.indices, spatial)):
        return None
    extents = [iv.dom.extent for iv in block.iter_vars[:n_spatial]]
    if not same_shape(body.buffer.shape, extents):
        return None
    if reduction != (block.init is not None):
        return None
    if block.init is not None:
        init = block.init
        if not isinstance(init, BufferStore) or init.buffer is not body.buffer:
            return None
        if any(i is not v for i, v in zip(init.indices, spatial)):
            return None
    return ComputeNest(stmt, loops, node, block, body, spatial)


def rebuild_nest(nest: ComputeNest, block: Block) -> Stmt:
    """The nest's statement with its block replaced by ``block`` (loops kept)."""
    realize = BlockRealize(
        nest.realize.iter_values, nest.realize.predicate, block, span=nest.realize.span
    )
    stmt: Stmt = realize
    for loop in reversed(nest.loops):
        stmt = For(
            loop.loop_var,
            loop.min,
            loop.extent,
            loop.kind,
            stmt,
            loop.thread_binding,
            loop.annotations,
            span=loop.span,
        )
    return stmt


@dataclass
class _Access:
    loads: dict[Buffer, list[tuple[PrimExpr, ...]]] = field(default_factory=dict)
    stores: set[Buffer] = field(default_factory=set)
    data_uses: set[Var] = field(default_factory=set)


def _accesses(stmt: Stmt) -> _Access:
    acc = _Access()

    def visit(node: Any) -> None:
        if isinstance(node, BufferLoad):
            acc.loads.setdefault(node.buffer, []).append(node.indices)
        elif isinstance(node, BufferStore):
            acc.stores.add(node.buffer)
        elif isinstance(node, Var) and node.dtype.is_handle:
            acc.data_uses.add(node)

    post_order_visit(stmt, visit)
    return acc


@dataclass
class TensorProgram:
    """The top-level statements of a tensor-level function and their tensors."""

    func: PrimFunc
    root: Block | None
    stmts: list[Stmt]
    nests: list[ComputeNest | None]
    tensors: dict[Buffer, int]
    """Each tensor and the position of the statement defining it."""
    returns: tuple[Buffer, ...]
    return_span: Span | None
    loads: list[dict[Buffer, list[tuple[PrimExpr, ...]]]]
    """Per statement: the index tuples at which each buffer is loaded."""
    stores: list[set[Buffer]]
    """Per statement: the buffers it stores to (a data var used directly counts too)."""

    @property
    def end(self) -> int:
        """The position after the last statement (where returned tensors are read)."""
        return len(self.stmts)

    def readers(self, buffer: Buffer) -> list[int]:
        """Positions of the statements that read ``buffer``, in order."""
        return [p for p, loads in enumerate(self.loads) if buffer in loads]

    def accessors(self, buffer: Buffer) -> list[int]:
        """Positions of the statements that read or write ``buffer``."""
        return [
            p
            for p in range(len(self.stmts))
            if buffer in self.loads[p] or buffer in self.stores[p]
        ]

    def last_use(self, tensor: Buffer) -> int:
        """Last position reading ``tensor`` (``end`` if returned, its definition if unread)."""
        if any(r is tensor for r in self.returns):
            return self.end
        readers = self.readers(tensor)
        return readers[-1] if readers else self.tensors[tensor]

    def is_returned(self, tensor: Buffer) -> bool:
        """Whether ``tensor`` is one of the function's results."""
        return any(r is tensor for r in self.returns)


def _root(func: PrimFunc) -> Block | None:
    body = func.body
    if isinstance(body, BlockRealize) and not body.block.iter_vars:
        block = body.block
        if block.name_hint == "root" and block.init is None and not block.match_buffers:
            return block
    return None


def tensor_program(func: PrimFunc) -> TensorProgram:
    """Analyse ``func``'s top level: statements, compute nests, tensors and accesses.

    Raises ``ValueError`` when a returned buffer is not a tensor.
    """
    returns: tuple[Buffer, ...] = tuple(func.attrs.get(RETURNS_ATTR, ()))
    return_span = func.attrs.get(RETURNS_SPAN_ATTR)
    root = _root(func)
    if root is None:
        if returns:
            raise ValueError(
                f"function {func.name!r} returns {[b.name for b in returns]} but has no "
                "root block allocating them (return only T.compute results)"
            )
        return TensorProgram(func, None, [], [], {}, (), None, [], [])
    body = root.body
    stmts = list(body.seq) if isinstance(body, SeqStmt) else [body]
    nests = [match_compute(s) for s in stmts]
    loads: list[dict[Buffer, list[tuple[PrimExpr, ...]]]] = []
    stores: list[set[Buffer]] = []
    data_owner = {b.data: b for b in root.alloc_buffers}
    raw_use: set[Buffer] = set()
    for stmt in stmts:
        acc = _accesses(stmt)
        loads.append(acc.loads)
        stores.append(acc.stores)
        for var in acc.data_uses:
            owner = data_owner.get(var)
            if owner is not None:
                raw_use.add(owner)
    tensors: dict[Buffer, int] = {}
    for buffer in root.alloc_buffers:
        writers = [p for p, s in enumerate(stores) if buffer in s]
        if len(writers) != 1 or buffer in raw_use:
            continue
        p = writers[0]
        nest = nests[p]
        if nest is None or nest.output is not buffer:
            continue
        if any(buffer in loads[q] for q in range(p)):
            continue
        # The reduction reads its own output (the accumulator); nothing else may.
        own = loads[p].get(buffer, [])
        if not nest.is_reduction and own:
            continue
        tensors[buffer] = p
    for r in returns:
        if r not in tensors:
            raise ValueError(
                f"function {func.name!r} returns {r.name!r}, which is not a tensor: it must "
                "be computed once, at the top level, by T.compute without out="
            )
    return TensorProgram(func, root, stmts, nests, tensors, returns, return_span, loads, stores)
