"""``rolling_buffer``: an intermediate buffer computed tile by tile (a block computed at a
consumer's tile loop) shrunk along one axis to one tile's extent and addressed modulo that
extent, the rows adjacent tiles share computed once (TVM v0.16's RollingBuffer).

The written region, widened over the loops between the block and the lowest common
ancestor of the block and its consumers (which must be a loop), must have a dimension whose
start is ``v``, ``v * stride`` or ``(v * stride) // d`` for a loop variable ``v`` with an
extent larger than the (rounded-up) stride: the tiles overlap there. The outermost such
loop picks the rolling dimension; the buffer keeps that dimension's tile extent, every
access indexes it modulo the extent, and each overlapping dimension gets the predicate
``v < 1 or overlap <= <index with v = 0>`` on the writing block (later tiles skip the rows
the previous one computed).

Kept from TVM: in every block of the scope the iter var at the rolling dimension's position
becomes opaque (TVM marks it so that lowering does not compact the loops it carries), and
the blocks' regions of the buffer are inferred again.
"""

from __future__ import annotations

from irbuilder.ir import (
    LE,
    LT,
    And,
    Block,
    BlockRealize,
    Buffer,
    BufferLoad,
    BufferRegion,
    BufferStore,
    FloorDiv,
    FloorMod,
    For,
    IntImm,
    IterKind,
    Mul,
    Or,
    PrimExpr,
    Range,
    Stmt,
    StmtExprMutator,
    Var,
    const,
    rebuild,
)
from irbuilder.regions import infer_regions
from lowering.analysis.substitute import substitute_expr
from lowering.arith import simplify_expr

from .analysis import block_access, relax_region
from .cache_checks import buffer_at
from .error import fail
from .state import ScheduleState, visible_buffers, walk_preorder

__all__ = ["rolling_buffer"]

_NAME = "rolling_buffer"


def rolling_buffer(state: ScheduleState, block: Block, buffer_index: int) -> None:
    index = state.index
    realize = index.realize_of(block)
    buffer = buffer_at(state, _NAME, block.writes, buffer_index, "writes", block)
    region = next(r for r in block.writes if r.buffer is buffer)
    scope = index.scope_block(realize)
    outputs = {id(b) for b in state.func.buffer_map.values()}
    if any(id(r.buffer) in outputs for r in block.writes):
        raise fail(
            state, _NAME, f"block {block.name_hint!r} is an output block (it writes a "
            "parameter of the function)", block,
        )
    # The rewrite shrinks the buffer and predicates the block from this block's own tiling;
    # a second writer would keep writing at rows the rolled buffer no longer holds (TVM
    # refuses it too).
    others = [
        b.name_hint
        for b in index.child_blocks(scope)
        if b is not block and any(w is buffer for w in block_access(b).write_buffers)
    ]
    if others:
        names = ", ".join(repr(n) for n in others)
        raise fail(
            state, _NAME, f"buffer {buffer.name!r} is also written by block(s) {names}: "
            f"rolling_buffer needs {block.name_hint!r} to be its only writer", block,
        )
    lca = _consumers_lca(state, block, scope)
    if not isinstance(lca, For):
        raise fail(
            state,
            _NAME,
            f"the lowest common ancestor of block {block.name_hint!r} and its consumers is "
            f"not a loop: compute {block.name_hint!r} at a tile loop of its consumer first",
            block,
        )
    relaxed: dict[Var, Range] = {}
    for node in index.ancestors(realize):
        if node is lca:
            break
        if isinstance(node, For):
            relaxed[node.loop_var] = Range(node.min, node.extent)
    binding = {iv.var: v for iv, v in zip(block.iter_vars, realize.iter_values)}
    widened = relax_region(region, binding, relaxed)
    matched = _match(widened)
    if matched is None:
        raise _no_pattern(state, block, widened)
    vars_, overlaps = matched
    axis = None
    for lp in index.loops_above(block):
        hits = [k for k, v in enumerate(vars_) if v is lp.loop_var]
        if hits:
            axis = hits[0]
            break
    if axis is None:
        raise _no_pattern(state, block, widened)
    extent = widened.region[axis].extent
    assert isinstance(extent, IntImm)
    shape = list(buffer.shape)
    shape[axis] = extent
    new_buffer = rebuild(buffer, {"shape": tuple(shape)})  # the same data, a smaller shape
    rewriter = _Rewriter(scope, buffer, new_buffer, axis, extent.value, vars_, overlaps)
    new_scope = rewriter.visit_stmt(scope)
    assert isinstance(new_scope, Block)
    reuse: dict[Stmt, Stmt] = {}
    olds = [n for n in walk_preorder(scope) if isinstance(n, (Block, For))]
    news = [n for n in walk_preorder(new_scope) if isinstance(n, (Block, For))]
    for old, new in zip(olds, news):
        if old is not new:
            reuse[old] = new
    scope_realize = index.realize_of(scope)
    state.replace(scope_realize, rebuild(scope_realize, {"block": new_scope}), reuse)


def _no_pattern(state: ScheduleState, block: Block, region: BufferRegion) -> Exception:
    dims = ", ".join(f"{r.min}:{r.min} + {r.extent}" for r in region.region)
    return fail(
        state,
        _NAME,
        f"the region of {region.buffer.name!r} the tiles write ([{dims}]) has no dimension "
        "matching the rolling pattern (tile_var * stride + inner, the tiles overlapping)",
        block,
    )


def _consumers_lca(state: ScheduleState, block: Block, scope: Block) -> Stmt:
    index = state.index
    siblings = index.child_blocks(scope)
    written = {id(b) for b in block_access(block).write_buffers}
    position = next(k for k, b in enumerate(siblings) if b is block)
    members = [block] + [
        b
        for b in siblings[position + 1 :]
        if any(id(r) in written for r in block_access(b).read_buffers)
    ]
    # TVM's srefs are the blocks and loops: the deepest common one
    paths = [
        [
            n
            for n in reversed(list(index.ancestors(index.realize_of(b))))
            if isinstance(n, (Block, For))
        ]
        for b in members
    ]
    common: Stmt = paths[0][0]
    for depth in range(min(len(p) for p in paths)):
        node = paths[0][depth]
        if all(p[depth] is node for p in paths):
            common = node
        else:
            break
    return common


def _match(region: BufferRegion) -> tuple[list[Var | None], list[int]] | None:
    """Per dimension, the tile variable whose tiles overlap there (or None) and the
    overlap; None when a dimension's start is not of a rolling form (TVM's matcher)."""
    vars_: list[Var | None] = []
    overlaps: list[int] = []
    stride = 0
    for rng in region.region:
        start = rng.min
        divisor = 1
        if isinstance(start, FloorDiv) and isinstance(start.b, IntImm):
            divisor = start.b.value
            start = start.a
        var: Var | None
        if isinstance(start, IntImm):
            var = None
        elif isinstance(start, Var):
            var, stride = start, 1
        elif isinstance(start, Mul) and isinstance(start.a, Var) and isinstance(start.b, IntImm):
            var, stride = start.a, start.b.value
        else:
            return None
        stride = -(-stride // divisor)  # rounded up, as TVM's ceil of the division
        overlap = 0
        if var is not None:
            if not isinstance(rng.extent, IntImm):
                return None
            overlap = rng.extent.value - stride
            if overlap <= 0:  # the tiles do not overlap: nothing to roll there
                var = None
        vars_.append(var)
        overlaps.append(overlap)
    return vars_, overlaps


class _Rewriter(StmtExprMutator):
    def __init__(
        self,
        scope: Block,
        old: Buffer,
        new: Buffer,
        axis: int,
        extent: int,
        vars_: list[Var | None],
        overlaps: list[int],
    ) -> None:
        self.scope = scope
        self.old = old
        self.new = new
        self.axis = axis
        self.extent = extent
        self.vars = vars_
        self.overlaps = overlaps
        self.stored = False  # a store to the buffer since the enclosing realize began

    def _indices(self, indices: tuple[PrimExpr, ...]) -> tuple[PrimExpr, ...]:
        return tuple(
            FloorMod(i, const(self.extent, i.dtype)) if k == self.axis else i
            for k, i in enumerate(indices)
        )

    def visit_buffer_store_(self, store: BufferStore) -> Stmt:
        changed = self.generic_mutate(store)
        if store.buffer is not self.old:
            return changed
        self.stored = True
        return BufferStore(self.new, changed.value, self._indices(changed.indices))

    def visit_buffer_load_(self, load: BufferLoad) -> PrimExpr:
        changed = self.generic_mutate(load)
        if load.buffer is not self.old:
            return changed
        return BufferLoad(self.new, self._indices(changed.indices))

    def visit_block_realize_(self, realize: BlockRealize) -> Stmt:
        outer = self.stored
        self.stored = False
        changed = self.generic_mutate(realize)
        if self.stored:
            # later tiles skip the rows (columns...) the previous tile computed
            predicate = changed.predicate
            for k, var in enumerate(self.vars):
                if var is None or self.overlaps[k] <= 0 or k >= len(realize.iter_values):
                    continue
                at_first = {var: const(0, var.dtype)}
                first = simplify_expr(substitute_expr(realize.iter_values[k], at_first))
                skip = Or(
                    LT(var, const(1, var.dtype)), LE(const(self.overlaps[k], first.dtype), first)
                )
                predicate = skip if _is_true(predicate) else And(predicate, skip)
            changed = rebuild(changed, {"predicate": predicate})
        self.stored = outer
        return changed

    def visit_block_(self, block: Block) -> Stmt:
        changed = self.generic_mutate(block)
        assert isinstance(changed, Block)
        if block is self.scope:
            allocs = tuple(self.new if b is self.old else b for b in changed.alloc_buffers)
            scope: Block = rebuild(changed, {"alloc_buffers": allocs})
            return scope
        iter_vars = tuple(
            rebuild(iv, {"kind": IterKind.OPAQUE}) if k == self.axis else iv
            for k, iv in enumerate(changed.iter_vars)
        )
        changed = rebuild(changed, {"iter_vars": iter_vars})
        assert isinstance(changed, Block)
        if any(r.buffer is self.new for r in (*changed.reads, *changed.writes)):
            reads, writes = infer_regions(
                changed.body, changed.init, changed.alloc_buffers, changed.match_buffers,
                [*visible_buffers(), self.new],
            )
            changed = rebuild(
                changed,
                {
                    "reads": _replaced(changed.reads, reads, self.new),
                    "writes": _replaced(changed.writes, writes, self.new),
                },
            )
        assert isinstance(changed, Block)
        return changed

    def visit_buffer(self, buffer: Buffer) -> Buffer:
        return self.new if buffer is self.old else buffer


def _replaced(
    regions: tuple[BufferRegion, ...], inferred: tuple[BufferRegion, ...], buffer: Buffer
) -> tuple[BufferRegion, ...]:
    mine = [r for r in inferred if r.buffer is buffer]
    return tuple(mine[0] if r.buffer is buffer and mine else r for r in regions)


def _is_true(expr: PrimExpr) -> bool:
    return isinstance(expr, IntImm) and expr.value == 1
