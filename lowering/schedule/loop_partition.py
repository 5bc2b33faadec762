"""``loop_partition``: a loop cut into consecutive loops over parts of its range, each in
its own block (TVM v0.16's LoopPartition).

``factors`` are the parts' lengths (one may be None: the rest of the range); when they do
not reach the extent, a last part takes the rest. They must sum to less than the extent
(TVM's rule). Every part ``k`` is ``for <var>k in range(start, end)`` inside an opaque block
``<block>_<var>k_partition``, all inside one block ``<block>_<var>_common``, where
``<block>`` is the first block below the loop. The body is copied into each part with fresh
variables; a block bound directly to the loop variable gets that iter var's domain
narrowed to the part, its name suffixed with the new loop variable's, and its regions of
the buffers it indexes by plain iter vars widened to the iter vars' domains (TVM's
rewriting); other blocks are only renamed.

Refused where TVM applies it: a loop carrying the reduction of a block with an init (each
part would initialize again).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from irbuilder.ir import (
    Block,
    BlockRealize,
    Buffer,
    BufferLoad,
    BufferRegion,
    BufferStore,
    DataType,
    For,
    ForKind,
    IntImm,
    IterKind,
    IterVar,
    MatchBufferRegion,
    PrimExpr,
    Range,
    SeqStmt,
    Stmt,
    StmtExprMutator,
    StmtExprVisitor,
    Var,
    const,
    rebuild,
)
from irbuilder.ir.buffer import make_data_var
from lowering.analysis.substitute import Substituter
from lowering.analysis.vars import depends_on
from lowering.arith import simplify_expr

from .error import fail
from .state import ScheduleState, walk_preorder

__all__ = ["loop_partition"]

_NAME = "loop_partition"


def loop_partition(
    state: ScheduleState, loop: For, factors: Sequence[int | None]
) -> list[For]:
    if loop.annotations or loop.thread_binding is not None or loop.kind == ForKind.THREAD_BINDING:
        raise fail(
            state,
            _NAME,
            f"loop {loop.loop_var.name!r} has annotations or a thread binding; remove them "
            "before this primitive",
            loop,
        )
    if not (isinstance(loop.min, IntImm) and isinstance(loop.extent, IntImm)):
        raise fail(
            state,
            _NAME,
            f"the min and extent of loop {loop.loop_var.name!r} must be constants (dynamic "
            "shape detected)",
            loop,
        )
    if sum(f is None for f in factors) > 1:
        raise fail(state, _NAME, "at most one factor may be None (inferred)", loop)
    for k, f in enumerate(factors):
        if f is not None and f <= 0:
            raise fail(state, _NAME, f"factor {k} is {f}; factors must be positive", loop)
    extent = loop.extent.value
    given = sum(f for f in factors if f is not None)
    if given >= extent:
        raise fail(
            state,
            _NAME,
            f"the factors {list(factors)} sum to {given}, not less than the extent {extent} "
            f"of loop {loop.loop_var.name!r}",
            loop,
        )
    sizes = [extent - given if f is None else f for f in factors]
    ends: list[int] = []
    total = loop.min.value  # a part of an earlier partition starts where that part did
    for size in sizes:
        total += size
        ends.append(total)
    if None not in factors:
        ends.append(loop.min.value + extent)  # the rest of the range is one more part
    _refuse_split_reductions(state, loop)
    first_block = _first_block(loop.body)
    if first_block is None:
        raise fail(
            state,
            _NAME,
            f"no block below loop {loop.loop_var.name!r} through its nested loops names the "
            "partitions",
            loop,
        )
    prefix = f"{first_block}_{loop.loop_var.name}"
    dtype = loop.loop_var.dtype
    start = loop.min.value
    parts: list[Stmt] = []
    new_loops: list[For] = []
    for k, end in enumerate(ends):
        var = Var(f"{loop.loop_var.name}{k}", dtype)
        body = Substituter({loop.loop_var: var}).visit_stmt(loop.body)
        body = _Copier(var, const(start, dtype), const(end, dtype)).visit_stmt(body)
        part = For(var, const(start, dtype), const(end - start, dtype), ForKind.SERIAL, body)
        new_loops.append(part)
        block = Block((), (), (), f"{prefix}{k}_partition", part)
        parts.append(BlockRealize((), const(end > 0), block))
        start = end
    common = Block((), (), (), f"{prefix}_common", SeqStmt(tuple(parts)))
    state.replace(loop, BlockRealize((), const(True), common))
    return new_loops


def _refuse_split_reductions(state: ScheduleState, loop: For) -> None:
    """A block with an init whose reduction is spread over the loop would initialize again
    in every part (TVM applies it and the parts after the first lose the earlier sums)."""
    for node in walk_preorder(loop.body):
        if not (isinstance(node, BlockRealize) and node.block.init is not None):
            continue
        for iv, value in zip(node.block.iter_vars, node.iter_values):
            if iv.kind == IterKind.REDUCE and depends_on(value, loop.loop_var):
                raise fail(
                    state,
                    _NAME,
                    f"loop {loop.loop_var.name!r} carries the reduction {iv.var.name!r} of "
                    f"block {node.block.name_hint!r}, which has an init: every part would "
                    "initialize again (decompose_reduction first)",
                    loop,
                    node.block,
                )


def _first_block(stmt: Stmt) -> str | None:
    """TVM's name source: the block reached through the loop's chain of single loops."""
    while isinstance(stmt, For):
        stmt = stmt.body
    return stmt.block.name_hint if isinstance(stmt, BlockRealize) else None


class _Copier(StmtExprMutator):
    """One part's copy of the body: fresh loop and iter variables, blocks renamed, the
    block bound to the part's loop variable narrowed to the part."""

    def __init__(self, var: Var, start: PrimExpr, end: PrimExpr) -> None:
        self.var = var
        self.start = start
        self.end = end

    def visit_for_(self, loop: For) -> Stmt:
        inner = self.generic_mutate(loop)
        fresh = Var(loop.loop_var.name, loop.loop_var.dtype)
        body = Substituter({loop.loop_var: fresh}).visit_stmt(inner.body)
        return rebuild(inner, {"loop_var": fresh, "body": body})  # type: ignore[no-any-return]

    def visit_block_realize_(self, realize: BlockRealize) -> Stmt:
        bound = next(
            (k for k, v in enumerate(realize.iter_values) if v is self.var), None
        )
        values = tuple(self.visit_expr(v) for v in realize.iter_values)
        predicate = self.visit_expr(realize.predicate)
        block = self._block(realize.block, bound)
        return BlockRealize(values, predicate, block, span=realize.span)

    def visit_block_(self, block: Block) -> Stmt:  # a block without a realize of its own
        return self._block(block, None)

    def _block(self, block: Block, bound: int | None) -> Block:
        inner = _fresh_declarations(self.generic_mutate(block))
        name = f"{block.name_hint}_{self.var.name}"
        if not block.iter_vars:
            return rebuild(inner, {"name_hint": name})  # type: ignore[no-any-return]
        # fresh iter vars: each part defines its own
        iter_vars: list[IterVar] = []
        for k, iv in enumerate(inner.iter_vars):
            dom = iv.dom
            if k == bound:
                dtype = iv.var.dtype
                lo, hi = _cast(self.start, dtype), _cast(self.end, dtype)
                dom = Range(lo, simplify_expr(hi - lo))
            iter_vars.append(rebuild(iv, {"var": Var(iv.var.name, iv.var.dtype), "dom": dom}))
        vmap: dict[Var, PrimExpr] = {
            old.var: new.var for old, new in zip(inner.iter_vars, iter_vars)
        }
        if bound is not None:
            doms = {iv.var.name: iv.dom for iv in iter_vars}
            indices = _indices_by_name(inner)
            inner = rebuild(
                inner,
                {
                    "reads": _widened(inner.reads, indices, doms),
                    "writes": _widened(inner.writes, indices, doms),
                },
            )
        renamed = rebuild(inner, {"iter_vars": tuple(iter_vars), "name_hint": name})
        changed = Substituter(vmap).visit_stmt(renamed)
        assert isinstance(changed, Block)
        return changed


def _fresh_declarations(block: Stmt) -> Block:
    """``block`` with its own copies of the buffers it declares (alloc_buffers,
    match_buffers: their data and offset variables too), every use inside it renamed: each
    part's copy declares its own, as a buffer may be defined once."""
    assert isinstance(block, Block)
    declared = [*block.alloc_buffers, *(m.buffer for m in block.match_buffers)]
    if not declared:
        return block
    bmap: dict[Buffer, Buffer] = {}
    vmap: dict[Var, PrimExpr] = {}
    for buffer in declared:
        data = make_data_var(buffer.name, buffer.dtype, buffer.scope)
        vmap[buffer.data] = data
        changes: dict[str, object] = {"data": data}
        if isinstance(buffer.elem_offset, Var):
            offset = Var(buffer.elem_offset.name, buffer.elem_offset.dtype)
            vmap[buffer.elem_offset] = offset
            changes["elem_offset"] = offset
        strides = []
        for stride in buffer.strides:
            if isinstance(stride, Var):
                vmap[stride] = Var(stride.name, stride.dtype)
            strides.append(vmap.get(stride, stride) if isinstance(stride, Var) else stride)
        changes["strides"] = tuple(strides)
        bmap[buffer] = rebuild(buffer, changes)
    renamed = Substituter(vmap, bmap).visit_stmt(block)
    assert isinstance(renamed, Block)
    matches = tuple(
        MatchBufferRegion(bmap[m.buffer], m.source) if m.buffer in bmap else m
        for m in renamed.match_buffers
    )
    allocs = tuple(bmap.get(b, b) for b in renamed.alloc_buffers)
    return rebuild(renamed, {"match_buffers": matches, "alloc_buffers": allocs})  # type: ignore[no-any-return]


def _cast(expr: PrimExpr, dtype: DataType) -> PrimExpr:
    """A constant bound in the iter var's dtype (TVM casts it)."""
    return const(expr.value, dtype) if isinstance(expr, IntImm) else expr


def _indices_by_name(block: Block) -> dict[str, list[str]]:
    """Per buffer name, the index variable names of its first access (in program order: a
    store before the loads of its value) indexed by variables only (TVM's
    BufferIndicesMapExtractor)."""
    finder = _FirstAccesses()
    finder.visit_stmt(block.body)
    return finder.found


class _FirstAccesses(StmtExprVisitor):
    def __init__(self) -> None:
        self.found: dict[str, list[str]] = {}

    def _note(self, name: str, indices: Sequence[PrimExpr]) -> None:
        if name not in self.found and all(isinstance(i, Var) for i in indices):
            self.found[name] = [i.name for i in indices if isinstance(i, Var)]

    def visit_buffer_store_(self, store: BufferStore) -> None:
        self._note(store.buffer.name, store.indices)
        self.generic_visit(store)

    def visit_buffer_load_(self, load: BufferLoad) -> None:
        self._note(load.buffer.name, load.indices)
        self.generic_visit(load)


def _widened(
    regions: Sequence[BufferRegion],
    indices: Mapping[str, list[str]],
    doms: Mapping[str, Range],
) -> tuple[BufferRegion, ...]:
    out: list[BufferRegion] = []
    for region in regions:
        names = indices.get(region.buffer.name)
        if names is None or len(names) != len(region.region):
            out.append(region)
            continue
        out.append(
            BufferRegion(
                region.buffer,
                tuple(doms.get(n, old) for n, old in zip(names, region.region)),
            )
        )
    return tuple(out)
