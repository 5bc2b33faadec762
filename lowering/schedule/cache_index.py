"""``cache_index``: index computations of a block precomputed into buffers by new blocks
before it (TVM v0.16's CacheIndex).

The candidates are the block's pure computations without memory reads (more than a leaf,
not a ramp or broadcast), counted over its stores, as TVM's common-subexpression tools
count them: the outermost such computations, each decomposed into its own outermost
sub-computations while it occurs fewer than ``cse_thresh`` times (a sub-computation
inherits the occurrences of each parent it appears in). Those occurring at least
``cse_thresh`` times and appearing in a stored value become stages, largest first (ties in
the order a post-order walk of the value meets them). Stage ``k`` is a block ``index_<k>``
writing ``index_var_<k>[v0, v1, ...]`` (one dimension per iter var of the block the
computation uses) over loops ``ax0, ax1, ...`` of the block's loops those iter vars bind;
the stages go right before the scope statement holding the block, and the block's stores
read the buffers instead of computing.

A deviation from TVM, which declares every cache buffer with the one stride ``[1]``: a
buffer of several dimensions is declared without strides here (one stride for two
dimensions is not a valid buffer).
"""

from __future__ import annotations

from collections.abc import Sequence

from irbuilder.ir import (
    Block,
    BlockRealize,
    Broadcast,
    Buffer,
    BufferLoad,
    BufferRegion,
    BufferStore,
    Call,
    CallKind,
    For,
    ForKind,
    IntImm,
    IterKind,
    IterVar,
    PrimExpr,
    Ramp,
    Range,
    SeqStmt,
    Stmt,
    StmtExprMutator,
    Var,
    as_dtype,
    const,
    expr_text,
    make_data_var,
    rebuild,
    seq,
    strip_parens,
    structural_equal,
    structural_hash,
)
from irbuilder.ir.functor import child_fields
from lowering.analysis.substitute import substitute_expr
from lowering.arith import Analyzer

from .error import fail
from .state import ScheduleState, child_stmts
from .storage_scope import check_scope

__all__ = ["cache_index"]

_NAME = "cache_index"


def cache_index(
    state: ScheduleState, block: Block, scope: str, cse_thresh: int
) -> list[Block]:
    check_scope(state, _NAME, scope, block)
    if cse_thresh < 0:
        raise fail(state, _NAME, f"cse_thresh must not be negative, got {cse_thresh}", block)
    index = state.index
    realize = index.realize_of(block)
    iter_ids = {id(iv.var) for iv in block.iter_vars}
    stores = _own_stores(block.body)
    found: list[PrimExpr] = []
    for store in stores:
        for expr in _selected(store, cse_thresh):
            # a computation of the block's iter vars only (TVM needs their bindings)
            if not _uses_only(expr, iter_ids):
                continue
            if all(not structural_equal(expr, known) for known in found):
                found.append(expr)
    found.sort(key=_complexity, reverse=True)  # stable: ties keep the order found
    if not found:
        return []
    binding = {id(iv.var): v for iv, v in zip(block.iter_vars, realize.iter_values)}
    loops = {id(lp.loop_var): lp for lp in index.loops_above(block)}
    stages: list[Stmt] = []
    blocks: list[Block] = []
    buffers: list[Buffer] = []
    loads: list[BufferLoad] = []
    predicate = realize.predicate
    for expr in found:
        # A stage runs over the loops its iter vars are bound to and nothing else, so it
        # keeps the block's predicate (a non-dividing split's guard) only when that is a
        # condition on those loops: without it the stage would store outside its buffer.
        copied = {id(v) for v in _loop_vars(expr, binding, loops)}
        if not _is_true(predicate) and any(
            id(v) in loops and id(v) not in copied for v in _vars_in_order(predicate)
        ):
            raise fail(
                state,
                _NAME,
                f"block {block.name_hint!r} has the predicate "
                f"{strip_parens(expr_text(predicate))}, which involves loops the index "
                f"computation {strip_parens(expr_text(expr))} does not run over",
                block,
            )
        # the stage's loops are copies placed outside every loop of the block, so their
        # ranges may not depend on one (a loop compute_at made, sized by its outer loop)
        for lv in _loop_vars(expr, binding, loops):
            lp = loops[id(lv)]
            bounds = (*_vars_in_order(lp.min), *_vars_in_order(lp.extent))
            outer = next((v for v in bounds if id(v) in loops), None)
            if outer is not None:
                raise fail(
                    state,
                    _NAME,
                    f"the range of loop {lv.name!r}, which the index computation "
                    f"{strip_parens(expr_text(expr))} runs over, depends on loop {outer.name!r}",
                    block,
                )
    for k, expr in enumerate(found):
        stage, new_block, buffer, load = _stage(k, expr, binding, loops, scope, predicate)
        stages.append(stage)
        blocks.append(new_block)
        buffers.append(buffer)
        loads.append(load)
    new_body = _Replacer(list(zip(found, loads))).visit_stmt(block.body)
    new_block = rebuild(block, {"body": new_body})
    state.replace(realize, rebuild(realize, {"block": new_block}), {block: new_block})
    # the stages go right before the statement of the scope holding the block
    current = state.resolve(block)
    assert isinstance(current, Block)
    index = state.index
    scope_block = index.scope_block(current)
    holder: Stmt = index.realize_of(current)
    while True:
        parent = index.parent[id(holder)]
        if parent is scope_block or (
            isinstance(parent, SeqStmt) and index.parent.get(id(parent)) is scope_block
        ):
            break
        holder = parent
    items: list[Stmt] = []
    for stmt in child_stmts(scope_block.body) if isinstance(scope_block.body, SeqStmt) else [
        scope_block.body
    ]:
        if stmt is holder:
            items += stages
        items.append(stmt)
    new_scope_body = seq(items)
    new_scope = rebuild(
        scope_block,
        {"body": new_scope_body, "alloc_buffers": (*scope_block.alloc_buffers, *buffers)},
    )
    scope_realize = state.index.realize_of(scope_block)
    state.replace(
        scope_realize, rebuild(scope_realize, {"block": new_scope}), {scope_block: new_scope}
    )
    return blocks


# -- TVM's common-subexpression counting -------------------------------------------------
def _children(expr: PrimExpr) -> list[PrimExpr]:
    out: list[PrimExpr] = []
    for name in child_fields(type(expr)):
        value = getattr(expr, name)
        if isinstance(value, PrimExpr):
            out.append(value)
        elif isinstance(value, tuple):
            out += [v for v in value if isinstance(v, PrimExpr)]
    return out


def _complexity(expr: PrimExpr) -> int:
    return 1 + sum(_complexity(c) for c in _children(expr))


def _pure(expr: PrimExpr) -> bool:
    """No memory read and no side effect anywhere in ``expr``."""
    if isinstance(expr, BufferLoad):
        return False
    if isinstance(expr, Call) and expr.kind == CallKind.EXTERN:
        return False
    return all(_pure(c) for c in _children(expr))


def _eligible(expr: PrimExpr) -> bool:
    return (
        not isinstance(expr, (Ramp, Broadcast))
        and bool(_children(expr))  # more than a leaf
        and _pure(expr)
    )


def _outermost(expr: PrimExpr, out: list[PrimExpr]) -> None:
    """The outermost eligible computations in ``expr`` (``expr`` itself if eligible)."""
    if _eligible(expr):
        out.append(expr)
        return
    for child in _children(expr):
        _outermost(child, out)


class _Table:
    """Computations up to structural equality, with their occurrence counts."""

    def __init__(self) -> None:
        self.entries: list[tuple[PrimExpr, int]] = []
        self.complexity: list[int] = []
        self._by_hash: dict[int, list[int]] = {}

    def _find(self, expr: PrimExpr) -> int | None:
        for k in self._by_hash.get(structural_hash(expr), []):
            if structural_equal(self.entries[k][0], expr):
                return k
        return None

    def add(self, expr: PrimExpr, count: int) -> None:
        k = self._find(expr)
        if k is not None:
            self.entries[k] = (self.entries[k][0], self.entries[k][1] + count)
            return
        self._by_hash.setdefault(structural_hash(expr), []).append(len(self.entries))
        self.entries.append((expr, count))
        self.complexity.append(_complexity(expr))

    def count_of(self, expr: PrimExpr) -> int | None:
        k = self._find(expr)
        return None if k is None else self.entries[k][1]


def _selected(store: BufferStore, thresh: int) -> list[PrimExpr]:
    """The computations of one store to cache, in post-order of its value."""
    table = _Table()
    outer: list[PrimExpr] = []
    for expr in (*store.indices, store.value):
        _outermost(expr, outer)
    for expr in outer:
        table.add(expr, 1)
    # decompose the rare ones, larger first: a sub-computation is smaller than each of its
    # parents, so its count is complete when its turn comes
    processed: set[int] = set()
    while len(processed) < len(table.entries):
        k = max(
            (j for j in range(len(table.entries)) if j not in processed),
            key=lambda j: table.complexity[j],
        )
        processed.add(k)
        expr, count = table.entries[k]
        if count < thresh:
            subs: list[PrimExpr] = []
            for child in _children(expr):
                _outermost(child, subs)
            for sub in subs:
                table.add(sub, count)
    chosen: list[PrimExpr] = []

    def visit(expr: PrimExpr) -> None:
        for child in _children(expr):
            visit(child)
        count = table.count_of(expr)
        if count is not None and count >= thresh and _eligible(expr):
            if all(not structural_equal(expr, c) for c in chosen):
                chosen.append(expr)

    visit(store.value)
    return chosen


def _own_stores(stmt: Stmt) -> list[BufferStore]:
    """The stores of a block's body outside the blocks nested in it."""
    if isinstance(stmt, BufferStore):
        return [stmt]
    if isinstance(stmt, Block):
        return []
    return [s for child in child_stmts(stmt) for s in _own_stores(child)]


def _uses_only(expr: PrimExpr, ids: set[int]) -> bool:
    ok = True

    def walk(node: PrimExpr) -> None:
        nonlocal ok
        if isinstance(node, Var) and id(node) not in ids:
            ok = False
        for child in _children(node):
            walk(child)

    walk(expr)
    return ok


def _vars_in_order(expr: PrimExpr) -> list[Var]:
    """The distinct vars of ``expr`` in post-order."""
    found: list[Var] = []

    def walk(node: PrimExpr) -> None:
        for child in _children(node):
            walk(child)
        if isinstance(node, Var) and all(node is not v for v in found):
            found.append(node)

    walk(expr)
    return found


# -- the stages ----------------------------------------------------------------------------
def _stage(
    k: int,
    expr: PrimExpr,
    binding: dict[int, PrimExpr],
    loops: dict[int, For],
    scope: str,
    predicate: PrimExpr,
) -> tuple[Stmt, Block, Buffer, BufferLoad]:
    block_vars = _vars_in_order(expr)
    loop_vars = _loop_vars(expr, binding, loops)
    analyzer = Analyzer()
    for lp in loops.values():
        analyzer.bind_range(lp.loop_var, lp.min, lp.extent)
    shape: list[PrimExpr] = []
    for var in block_vars:
        hi = analyzer.const_int_bound(binding[id(var)]).hi
        shape.append(const(hi + 1, var.dtype))
    name = f"index_var_{k}"
    strides = (const(1, "int32"),) if len(shape) == 1 else ()
    # TVM's Buffer() turns its alignment 0 and offset factor 0 into the defaults
    buffer = Buffer(
        name, make_data_var(name, expr.dtype, scope), tuple(shape), expr.dtype, strides,
        scope=scope,
    )
    axes: dict[int, Var] = {}
    for lv in loop_vars:
        lp = loops[id(lv)]
        bound = analyzer.const_int_bound(lv)
        fits = -(2**31) <= bound.lo and bound.hi < 2**31
        axes[id(lv)] = Var(f"ax{len(axes)}", as_dtype("int32" if fits else "int64"))
    by_loop = {id(lv): axes[id(lv)] for lv in loop_vars}
    values = [_substitute_ids(binding[id(v)], by_loop, loops) for v in block_vars]
    new_vars = [Var(f"v{i}", v.dtype) for i, v in enumerate(block_vars)]
    iter_vars = tuple(
        IterVar(nv, Range(const(0, nv.dtype), dim), IterKind.SPATIAL)
        for nv, dim in zip(new_vars, shape)
    )
    indices = tuple(new_vars)
    region = BufferRegion(
        buffer, tuple(Range(v, const(1, v.dtype)) for v in new_vars)
    )
    body = BufferStore(
        buffer, substitute_expr(expr, dict(zip(block_vars, new_vars))), indices
    )
    new_block = Block(iter_vars, (), (region,), f"index_{k}", body)
    guard = const(True) if _is_true(predicate) else _substitute_ids(predicate, by_loop, loops)
    stage: Stmt = BlockRealize(tuple(values), guard, new_block)
    for lv in reversed(loop_vars):
        lp = loops[id(lv)]
        ax = axes[id(lv)]
        stage = For(ax, lp.min, lp.extent, ForKind.SERIAL, stage)
    load = BufferLoad(buffer, tuple(block_vars))
    return stage, new_block, buffer, load


def _loop_vars(expr: PrimExpr, binding: dict[int, PrimExpr], loops: dict[int, For]) -> list[Var]:
    """The loops the iter vars of ``expr`` are bound to, in the order they first appear."""
    out: list[Var] = []
    for var in _vars_in_order(expr):
        for lv in _vars_in_order(binding[id(var)]):
            if id(lv) in loops and all(lv is not v for v in out):
                out.append(lv)
    return out


def _is_true(expr: PrimExpr) -> bool:
    return isinstance(expr, IntImm) and expr.value == 1


def _substitute_ids(
    expr: PrimExpr, by_id: dict[int, Var], loops: dict[int, For]
) -> PrimExpr:
    vmap = {loops[k].loop_var: v for k, v in by_id.items()}
    return substitute_expr(expr, vmap)


class _Replacer(StmtExprMutator):
    """Each cached computation (outermost occurrences first) read from its buffer, in the
    order the stages were chosen."""

    def __init__(self, pairs: Sequence[tuple[PrimExpr, BufferLoad]]) -> None:
        self.pairs = pairs

    def visit_block_(self, block: Block) -> Stmt:
        return block  # a nested block's stores are its own

    def visit_buffer_store_(self, store: BufferStore) -> Stmt:
        out: Stmt = store
        for pair in self.pairs:
            out = _ReplaceOne(pair).visit_stmt(out)
        return out


class _ReplaceOne(StmtExprMutator):
    def __init__(self, pair: tuple[PrimExpr, BufferLoad]) -> None:
        self.expr, self.load = pair
        self.key = structural_hash(self.expr)

    def visit_expr(self, expr: PrimExpr) -> PrimExpr:
        if structural_hash(expr) == self.key and structural_equal(expr, self.expr):
            return self.load
        return super().visit_expr(expr)

