"""transform_layout with padding: TVM's plans for the elements a padded layout adds.

When the index map pads (``lambda i: [i // 4, i % 4]`` on 14 elements gives a 4 x 4
buffer whose last two elements stand for no index), ``pad_value`` says what they hold.
As TVM, in order of preference:

* *replacement*: a write stage that visits every index in row-major order with loops of
  its own (a perfect nest of serial loops from 0 over the buffer's extents, storing only
  this buffer at those indices) is rewritten to visit the new shape, storing
  ``T.if_then_else(padding, pad_value, value)``;
* *epilogue*: otherwise, after the last write stage, a block ``buffer_<name>_padding``
  stores ``pad_value`` where the padding predicate holds;
* *prologue*: a buffer nobody writes (an input) gets a block of ``T.assume(not padding or
  A[...] == pad_value)`` at the start of the function: the caller provides the padding.

A replacement is refused (the epilogue is used instead) unless it provably computes the
same: the loop variables it re-binds appear only in the stores' indices and (guarded by
the ``if_then_else``) their values, no block in it has a predicate, and either the new
traversal visits the old indices in their old order or each iteration reads the buffer only
at the element it writes. Padding elements are never read as data: every access of the
program lands on the map's image.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from irbuilder.ir import (
    Block,
    BlockRealize,
    Buffer,
    BufferLoad,
    BufferStore,
    Call,
    CallKind,
    Evaluate,
    For,
    ForKind,
    IntImm,
    IterKind,
    IterVar,
    LetStmt,
    Not,
    Or,
    PrimExpr,
    Range,
    SeqStmt,
    Stmt,
    StmtExprMutator,
    Var,
    const,
    rebuild,
)
from irbuilder.ir.structural import structural_equal
from lowering.analysis.substitute import substitute_expr
from lowering.analysis.vars import free_vars
from lowering.arith.analyzer import Analyzer
from lowering.arith.rewrite import simplify_expr

from .edit import refresh_regions
from .layout import IndexMap
from .layout_pad_map import Padding, evaluate
from .state import child_stmts

__all__ = ["ParamLayout", "PadPlan", "plan_padding"]


@dataclass
class ParamLayout:
    """A parameter's new layout, for the proof by execution: the caller's array in the new
    layout is the old one moved by ``index_map``, padding filled with ``pad_value`` (or
    with arbitrary values, which the function must then leave alone)."""

    param: int
    old_shape: tuple[int, ...]
    index_map: IndexMap
    new_shape: tuple[int, ...]
    pad_value: IndexMap | None = None

    def apply(self, array: np.ndarray[Any, Any], seed: int) -> np.ndarray[Any, Any]:
        count = int(np.prod(self.old_shape, dtype=np.int64))  # 1 for a 0-d buffer
        grid = np.indices(self.old_shape, dtype=np.int64).reshape(len(self.old_shape), count)
        env = dict(zip(self.index_map.initial_indices, grid))
        mapped = tuple(
            np.broadcast_to(evaluate(e, env), grid.shape[1:]) for e in self.index_map.final_indices
        )
        if self.pad_value is not None:
            new_grid = np.indices(self.new_shape, dtype=np.int64)
            new_env = dict(zip(self.pad_value.initial_indices, new_grid))
            values = evaluate(self.pad_value.final_indices[0], new_env)
            fill = np.broadcast_to(np.asarray(values), self.new_shape).astype(array.dtype)
        else:
            rng = np.random.default_rng(seed + 7919)
            fill = rng.integers(-5, 6, self.new_shape).astype(array.dtype)
        result = np.array(fill, copy=True)
        if mapped:
            result[mapped] = array.reshape(-1)
        else:  # a 0-d layout holds the one element
            result[()] = array.reshape(-1)[0]
        return result


@dataclass
class _Write:
    store: BufferStore
    indices: list[PrimExpr]  # in loop variables (block bindings substituted)
    realize: BlockRealize | None
    nest: list[For]
    row_major: bool


@dataclass
class PadPlan:
    """What the padding needs: replaced loop nests, an epilogue or a prologue."""

    replacements: dict[int, Stmt] = field(default_factory=dict)
    reuse: dict[Stmt, Stmt] = field(default_factory=dict)
    keep: list[Stmt] = field(default_factory=list)
    epilogue_after: Stmt | None = None
    epilogue: Stmt | None = None
    prologue: Stmt | None = None


class _Collector:
    def __init__(self, buffer: Buffer) -> None:
        self.buffer = buffer
        self.writes: list[_Write] = []

    def walk(
        self, stmt: Stmt, loops: list[For], binds: dict[Var, PrimExpr], realize: BlockRealize | None
    ) -> None:
        if isinstance(stmt, For):
            self.walk(stmt.body, [*loops, stmt], binds, realize)
            return
        if isinstance(stmt, BlockRealize):
            inner = dict(binds)
            for iv, value in zip(stmt.block.iter_vars, stmt.iter_values):
                inner[iv.var] = substitute_expr(value, binds)
            for child in child_stmts(stmt.block):
                self.walk(child, loops, inner, stmt)
            return
        if isinstance(stmt, LetStmt):
            inner = dict(binds)
            inner[stmt.var] = substitute_expr(stmt.value, binds)
            self.walk(stmt.body, loops, inner, realize)
            return
        if isinstance(stmt, BufferStore) and stmt.buffer is self.buffer:
            self.writes.append(self._write(stmt, loops, binds, realize))
            return
        for child in child_stmts(stmt):
            self.walk(child, loops, binds, realize)

    def _write(
        self,
        store: BufferStore,
        loops: list[For],
        binds: dict[Var, PrimExpr],
        realize: BlockRealize | None,
    ) -> _Write:
        indices = [substitute_expr(i, binds) for i in store.indices]
        used = {id(v) for i in indices for v in free_vars(i)}
        depths = [k for k, loop in enumerate(loops) if id(loop.loop_var) in used]
        nest = loops[depths[0] : depths[-1] + 1] if depths else []
        dims = self.buffer.shape
        row_major = bool(nest) and len(nest) == len(dims) == len(indices)
        for loop, index, dim in zip(nest, indices, dims):
            if not (
                index is loop.loop_var
                and isinstance(loop.min, IntImm)
                and loop.min.value == 0
                and structural_equal(loop.extent, dim)
                and loop.kind is ForKind.SERIAL
            ):
                row_major = False
        return _Write(store, indices, realize, nest, row_major)


def _padding_nest(
    found: Padding, buffer: Buffer, name: str, body_of: Any, predicate_on_realize: bool
) -> Stmt:
    """Loops over the new shape around one block with an iter var per axis."""
    loop_vars = [Var(a.name, a.dtype) for a in found.axes]
    block_vars = [Var("v_" + a.name, a.dtype) for a in found.axes]
    assert found.predicate is not None
    pred = substitute_expr(found.predicate, dict(zip(found.axes, block_vars)))
    body: Stmt = body_of(block_vars, pred)
    iter_vars = tuple(
        IterVar(v, Range(const(0, v.dtype), const(n, v.dtype)), IterKind.SPATIAL)
        for v, n in zip(block_vars, found.shape)
    )
    block = refresh_regions(Block(iter_vars, (), (), name, body))
    loop_pred = substitute_expr(found.predicate, dict(zip(found.axes, loop_vars)))
    stmt: Stmt = BlockRealize(
        tuple(loop_vars), loop_pred if predicate_on_realize else const(True), block
    )
    for var, extent in reversed(list(zip(loop_vars, found.shape))):
        stmt = For(var, const(0, var.dtype), const(extent, var.dtype), ForKind.SERIAL, stmt)
    return stmt


def _pad_at(pad_value: IndexMap, indices: Sequence[PrimExpr]) -> PrimExpr:
    return pad_value.map_indices(list(indices))[0]


def _stores(stmt: Stmt) -> list[Stmt]:
    found: list[Stmt] = []

    def walk(node: Stmt) -> None:
        if isinstance(node, (BufferStore, Evaluate)):
            found.append(node)
        for child in child_stmts(node):
            walk(child)

    walk(stmt)
    return found


def _uses(node: Any, names: set[int]) -> bool:
    return any(id(v) in names for v in free_vars(node))


def _rebinds_only_guarded(stmt: Stmt, remapped: set[int], skip: BlockRealize | None) -> bool:
    """Whether the re-bound variables are used only in stores' indices and values."""
    if isinstance(stmt, BufferStore):
        return True  # its indices are rebuilt, its value guarded by the if_then_else
    if isinstance(stmt, For):
        if _uses(stmt.min, remapped) or _uses(stmt.extent, remapped):
            return False
    elif isinstance(stmt, BlockRealize):
        if not (isinstance(stmt.predicate, IntImm) and stmt.predicate.value):
            return False  # a predicate would skip padding elements (or be evaluated there)
        if stmt is not skip and any(_uses(v, remapped) for v in stmt.iter_values):
            return False
    elif isinstance(stmt, Block):
        if stmt.match_buffers or any(_uses(iv.dom.extent, remapped) for iv in stmt.iter_vars):
            return False
    elif isinstance(stmt, LetStmt):
        if _uses(stmt.value, remapped):
            return False
    elif not isinstance(stmt, SeqStmt):
        return False  # conditions, asserts, evaluations: not modelled, refused
    return all(_rebinds_only_guarded(c, remapped, skip) for c in child_stmts(stmt))


class _Replacer(StmtExprMutator):
    def __init__(
        self,
        write: _Write,
        new: Buffer,
        index_map: IndexMap,
        indices: list[PrimExpr],
        predicate: PrimExpr,
        pad_value: IndexMap,
        var_remap: dict[Var, PrimExpr],
        realize: tuple[BlockRealize, tuple[IterVar, ...], tuple[PrimExpr, ...]] | None,
        analyzer: Analyzer,
    ) -> None:
        self.write, self.new, self.index_map = write, new, index_map
        self.indices, self.predicate, self.pad_value = indices, predicate, pad_value
        self.var_remap, self.realize, self.analyzer = var_remap, realize, analyzer
        self.reuse: dict[Stmt, Stmt] = {}
        self.all_replaced = True

    def visit_var_(self, var: Var) -> PrimExpr:
        return self.var_remap.get(var, var)

    def visit_buffer_load_(self, load: BufferLoad) -> PrimExpr:
        if load.buffer is not self.write.store.buffer:
            return self.generic_mutate(load)
        indices = [self.visit_expr(i) for i in load.indices]
        mapped = self.index_map.map_indices(indices)
        return BufferLoad(self.new, tuple(simplify_expr(m, self.analyzer) for m in mapped))

    def visit_buffer_store_(self, store: BufferStore) -> Stmt:
        same = store.buffer is self.write.store.buffer and all(
            structural_equal(a, b) for a, b in zip(store.indices, self.write.store.indices)
        )
        if not same:
            self.all_replaced = False
            return self.generic_mutate(store)
        value = self.visit_expr(store.value)
        pad = _pad_at(self.pad_value, self.indices)
        guarded = Call(value.dtype, "if_then_else", (self.predicate, pad, value), CallKind.BUILTIN)
        return BufferStore(self.new, guarded, tuple(self.indices), span=store.span)

    def visit_block_realize_(self, realize: BlockRealize) -> Stmt:
        new = self.generic_mutate(realize)
        if self.realize is not None and realize is self.realize[0]:
            assert isinstance(new, BlockRealize)
            block = rebuild(new.block, {"iter_vars": self.realize[1]})
            block = refresh_regions(block)
            self.reuse[realize.block] = block
            rebuilt: Stmt = rebuild(new, {"iter_values": self.realize[2], "block": block})
            return rebuilt
        return new

    def visit_block_(self, block: Block) -> Stmt:
        new = self.generic_mutate(block)
        if new is not block:
            new = refresh_regions(new)
            self.reuse[block] = new
        return new


def _order_preserved(found: Padding, dims: Sequence[int]) -> bool:
    """Whether the new shape's row-major traversal meets the old indices in their order."""
    if math.prod(found.shape) > (1 << 22):
        return False
    grid = np.indices(tuple(found.shape), dtype=np.int64).reshape(len(found.shape), -1)
    env = dict(zip(found.axes, grid))
    keep = np.ones(grid.shape[1:], dtype=bool)
    if found.predicate is not None:
        keep = ~np.broadcast_to(evaluate(found.predicate, env), grid.shape[1:])
    back = [np.broadcast_to(evaluate(e, env), grid.shape[1:])[keep] for e in found.inverse]
    linear = np.ravel_multi_index(tuple(back), tuple(dims))
    return bool(np.all(np.diff(linear) > 0))


def _replacement(
    write: _Write,
    new: Buffer,
    index_map: IndexMap,
    found: Padding,
    pad_value: IndexMap,
    order_kept: bool,
) -> tuple[Stmt, dict[Stmt, Stmt]] | None:
    if not write.row_major:
        return None
    nest = write.nest
    if any(outer.body is not inner for outer, inner in itertools.pairwise(nest)):
        return None  # statements between the loops would be lost
    body = nest[-1].body
    stores = _stores(body)
    if any(
        not isinstance(s, BufferStore)
        or s.buffer is not write.store.buffer
        or not all(structural_equal(a, b) for a, b in zip(s.indices, write.store.indices))
        for s in stores
    ):
        return None
    if not order_kept and not _loads_only_own_element(body, write):
        return None
    loop_vars = [Var(a.name, a.dtype) for a in found.axes]
    axes_to_loops = dict(zip(found.axes, loop_vars))
    var_remap: dict[Var, PrimExpr] = {
        loop.loop_var: substitute_expr(e, axes_to_loops) for loop, e in zip(nest, found.inverse)
    }
    analyzer = Analyzer()
    for var, n in zip(loop_vars, found.shape):
        analyzer.bind_range(var, const(0, var.dtype), const(n, var.dtype))
    indices: list[PrimExpr] = list(loop_vars)
    assert found.predicate is not None
    predicate = substitute_expr(found.predicate, axes_to_loops)
    realize_plan = None
    skip: BlockRealize | None = None
    realize = write.realize
    inside = realize is not None and _contains(body, realize)
    if realize is not None and inside:
        block_plan = _block_update(realize, write, found, loop_vars, analyzer)
        if block_plan is not None:
            iter_vars, values, index_vars, virtual = block_plan
            for var, expr in zip(index_vars, found.inverse):
                var_remap[var] = substitute_expr(expr, dict(zip(found.axes, virtual)))
            indices = list(virtual)
            predicate = substitute_expr(found.predicate, dict(zip(found.axes, virtual)))
            realize_plan = (realize, iter_vars, values)
            skip = realize
    remapped = {id(v) for v in var_remap}
    if not _rebinds_only_guarded(body, remapped, skip):
        return None
    replacer = _Replacer(
        write, new, index_map, indices, predicate, pad_value, var_remap, realize_plan, analyzer
    )
    stmt = replacer.visit_stmt(body)
    if not replacer.all_replaced:
        return None
    for var, extent in reversed(list(zip(loop_vars, found.shape))):
        stmt = For(var, const(0, var.dtype), const(extent, var.dtype), ForKind.SERIAL, stmt)
    return stmt, replacer.reuse


def _contains(stmt: Stmt, target: Stmt) -> bool:
    if stmt is target:
        return True
    return any(_contains(c, target) for c in child_stmts(stmt))


def _loads_only_own_element(body: Stmt, write: _Write) -> bool:
    """Each iteration reads the buffer only at the element it writes."""
    ok = True

    class _Check(StmtExprMutator):
        def visit_buffer_load_(self, load: BufferLoad) -> PrimExpr:
            nonlocal ok
            if load.buffer is write.store.buffer and not all(
                structural_equal(a, b) for a, b in zip(load.indices, write.store.indices)
            ):
                ok = False
            return self.generic_mutate(load)

    _Check().visit_stmt(body)
    return ok


def _block_update(
    realize: BlockRealize,
    write: _Write,
    found: Padding,
    loop_vars: list[Var],
    analyzer: Analyzer,
) -> tuple[tuple[IterVar, ...], tuple[PrimExpr, ...], list[Var], list[Var]] | None:
    """TVM's new block iter vars when the store indexes consecutive spatial iter vars."""
    block = realize.block
    old = list(write.store.indices)
    ivs = list(block.iter_vars)
    starts = [
        k
        for k in range(len(ivs) - len(old) + 1)
        if all(
            old[m] is ivs[k + m].var and ivs[k + m].kind is IterKind.SPATIAL
            for m in range(len(old))
        )
    ]
    if not old or not starts:
        return None
    start = starts[0]
    virtual = [Var("v_" + a.name, a.dtype) for a in found.axes]
    for var, n in zip(virtual, found.shape):
        analyzer.bind_range(var, const(0, var.dtype), const(n, var.dtype))
    nest_vars = {id(loop.loop_var) for loop in write.nest}
    rest = ivs[:start] + ivs[start + len(old) :]
    rest_values = list(realize.iter_values[:start]) + list(realize.iter_values[start + len(old) :])
    if any(_uses(v, nest_vars) for v in rest_values):
        return None
    new_ivs = [
        IterVar(v, Range(const(0, v.dtype), const(n, v.dtype)), IterKind.SPATIAL)
        for v, n in zip(virtual, found.shape)
    ]
    iter_vars = tuple(ivs[:start] + new_ivs + ivs[start + len(old) :])
    values = tuple(
        list(realize.iter_values[:start])
        + list(loop_vars)
        + list(realize.iter_values[start + len(old) :])
    )
    del rest
    return iter_vars, values, [iv.var for iv in ivs[start : start + len(old)]], virtual


def plan_padding(
    root: Block,
    old: Buffer,
    new: Buffer,
    index_map: IndexMap,
    found: Padding,
    pad_value: IndexMap,
    dims: Sequence[int],
) -> PadPlan | str:
    """The plan for the padding of ``old`` under ``root``, or why there is none."""
    collector = _Collector(old)
    for child in child_stmts(root):
        collector.walk(child, [], {}, None)
    plan = PadPlan()
    assert found.predicate is not None
    if not collector.writes:

        def assume_body(block_vars: list[Var], pred: PrimExpr) -> Stmt:
            load = BufferLoad(new, tuple(block_vars))
            fact = Or(Not(pred), load == _pad_at(pad_value, block_vars))
            return Evaluate(Call(fact.dtype, "assume", (fact,), CallKind.BUILTIN))

        plan.prologue = _padding_nest(
            found, new, f"buffer_{new.name}_assumptions", assume_body, False
        )
        return plan
    order_kept = _order_preserved(found, dims)
    for write in collector.writes:
        if not write.nest or id(write.nest[0]) in plan.replacements:
            continue
        built = _replacement(write, new, index_map, found, pad_value, order_kept)
        if built is not None:
            plan.replacements[id(write.nest[0])] = built[0]
            plan.keep.append(write.nest[0])
            plan.reuse.update(built[1])
    if plan.replacements:
        # a stage the replacement does not cover would leave its own stores unpadded,
        # which is harmless: the replaced stage writes every padding element
        return plan
    last = collector.writes[-1]
    anchor: Stmt | None = last.nest[0] if last.nest else last.realize
    if anchor is None:
        return "the buffer is written outside of any block or loop"

    def pad_body(block_vars: list[Var], pred: PrimExpr) -> Stmt:
        del pred
        return BufferStore(new, _pad_at(pad_value, block_vars), tuple(block_vars))

    plan.epilogue_after = anchor
    plan.epilogue = _padding_nest(found, new, f"buffer_{new.name}_padding", pad_body, True)
    return plan


def flatten_seq(stmt: Stmt) -> Stmt:
    """A SeqStmt without nested SeqStmts (the parser's form)."""
    if not isinstance(stmt, SeqStmt):
        return stmt
    items: list[Stmt] = []
    for item in stmt.seq:
        item = flatten_seq(item)
        items.extend(item.seq if isinstance(item, SeqStmt) else [item])
    return SeqStmt(tuple(items), span=stmt.span)
