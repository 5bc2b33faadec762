"""What the legality checks need to know about blocks, loops and regions.

Read/write regions are always recomputed from a block's body with
:func:`irbuilder.regions.infer_regions` rather than taken from its ``T.reads``/``T.writes``
annotations, so a hand-written annotation that understates the accesses cannot make an
illegal primitive look legal.
"""

from __future__ import annotations

from collections.abc import Container, Mapping, Sequence
from dataclasses import dataclass

from irbuilder.ir import (
    Block,
    Buffer,
    BufferLoad,
    BufferRegion,
    BufferStore,
    For,
    IntImm,
    IterKind,
    Let,
    LetStmt,
    PrimExpr,
    Ramp,
    Range,
    Stmt,
    Var,
    const,
    post_order_visit,
    structural_equal,
)
from irbuilder.regions import infer_regions
from lowering.analysis.substitute import substitute_expr
from lowering.arith import Analyzer, from_linear, simplify_expr, supports_linear, to_linear

from .affine import bindings_affine
from .error import fail
from .state import ScheduleState, TreeIndex, visible_buffers

__all__ = [
    "BlockAccess",
    "block_access",
    "constant_extents",
    "is_affine_block",
    "is_complete_block",
    "is_reduction_block",
    "mentions_any",
    "position_dependent_vars",
    "refuse_position_dependent",
    "relax_region",
    "union_regions",
    "uses_opaquely",
    "uses_pointer",
    "writes_by_pointer",
]


@dataclass(frozen=True)
class BlockAccess:
    reads: tuple[BufferRegion, ...]
    writes: tuple[BufferRegion, ...]

    @property
    def read_buffers(self) -> list[Buffer]:
        return [r.buffer for r in self.reads]

    @property
    def write_buffers(self) -> list[Buffer]:
        return [r.buffer for r in self.writes]


_ACCESS_CACHE: dict[int, tuple[Block, BlockAccess]] = {}


def block_access(block: Block) -> BlockAccess:
    """The regions one instance of ``block`` reads and writes, inferred from its body.

    Only a data-pointer access (``B.data`` or ``B.access_ptr`` passed to a call) takes the
    block's declared region of its buffer, as TVM's primitives do; without one it is the
    whole buffer, read and written."""
    cached = _ACCESS_CACHE.get(id(block))
    if cached is not None and cached[0] is block:
        return cached[1]
    # Nested blocks' regions are inferred too, not taken from their annotations.
    reads, writes = infer_regions(
        block.body,
        block.init,
        block.alloc_buffers,
        block.match_buffers,
        visible_buffers(),
        recompute_nested=True,
        declared=(block.reads, block.writes),
    )
    access = BlockAccess(reads, writes)
    if len(_ACCESS_CACHE) > 4096:
        _ACCESS_CACHE.clear()
    _ACCESS_CACHE[id(block)] = (block, access)
    return access


def uses_pointer(block: Block, buffer: Buffer) -> bool:
    """Whether ``block`` uses ``buffer``'s data pointer in an expression (``B.data``,
    ``B.access_ptr``: an access the block's loads and stores do not show)."""
    found = False

    def visit(node: object) -> None:
        nonlocal found
        if node is buffer.data:
            found = True

    for part in (block.body, block.init):
        if part is not None:
            post_order_visit(part, visit)
    return found


def uses_opaquely(block: Block, buffer: Buffer) -> bool:
    """Whether ``block`` uses ``buffer`` other than by loads and stores (its data pointer,
    a match_buffer view): such a use cannot be rewritten element by element."""
    found = False

    def visit(node: object) -> None:
        nonlocal found
        if node is buffer.data:
            found = True
        if isinstance(node, Block) and any(m.source.buffer is buffer for m in node.match_buffers):
            found = True

    post_order_visit(block.body, visit)
    if block.init is not None:
        post_order_visit(block.init, visit)
    return found or any(m.source.buffer is buffer for m in block.match_buffers)


def writes_by_pointer(block: Block, buffer: Buffer) -> bool:
    """Whether ``block`` writes ``buffer`` only through its data pointer (``B.data`` or
    ``B.access_ptr`` passed to a call, directly or through a view), with the written region
    declared by ``T.writes``: the region it writes is then the declared one."""
    if not uses_opaquely(block, buffer):
        return False
    if not any(w.buffer is buffer for w in block.writes):
        return False
    views = {id(m.buffer) for m in block.match_buffers if m.source.buffer is buffer}
    stored = False

    def visit(node: object) -> None:
        nonlocal stored
        if isinstance(node, BufferStore) and (node.buffer is buffer or id(node.buffer) in views):
            stored = True

    for part in (block.body, block.init):
        if part is not None:
            post_order_visit(part, visit)
    return not stored


def constant_extents(loops: Sequence[For]) -> dict[Var, int] | None:
    """Loop var -> extent when every loop starts at 0 with a constant extent."""
    extents: dict[Var, int] = {}
    for loop in loops:
        if not (isinstance(loop.min, IntImm) and loop.min.value == 0):
            return None
        if not isinstance(loop.extent, IntImm):
            return None
        extents[loop.loop_var] = loop.extent.value
    return extents


def is_affine_block(index: TreeIndex, block: Block) -> bool:
    """Whether the block's bindings are an affine, injective map of its loops' vars."""
    realize = index.realize_of(block)
    extents = constant_extents(index.loops_above(block))
    if extents is None:
        return False
    return bindings_affine(realize.iter_values, extents) is not None


def _uses_only(expr: PrimExpr, allowed: set[int], iter_ids: set[int]) -> bool:
    ok = True

    def visit(node: object) -> None:
        nonlocal ok
        if isinstance(node, Var) and id(node) in iter_ids and id(node) not in allowed:
            ok = False

    post_order_visit(expr, visit)
    return ok


def _self_reads_ok(block: Block, allowed_same: bool) -> bool:
    """Reads of a buffer the block writes happen only at the written indices."""
    stores: dict[int, list[tuple[PrimExpr, ...]]] = {}
    loads: list[BufferLoad] = []
    # Buffers allocated inside the block are private to each instance: reading them at
    # other indices than written creates no dependence between instances.
    local = {id(b) for b in block.alloc_buffers}

    def visit(node: object) -> None:
        if isinstance(node, Block):
            local.update(id(b) for b in node.alloc_buffers)
        elif isinstance(node, BufferStore):
            stores.setdefault(id(node.buffer), []).append(node.indices)
        elif isinstance(node, BufferLoad):
            loads.append(node)

    post_order_visit(block.body, visit)
    if block.init is not None:
        post_order_visit(block.init, visit)
    if _has_nested_block(block):
        return _nested_self_reads_ok(block, local, allowed_same)
    for load in loads:
        written = stores.get(id(load.buffer))
        if written is None or id(load.buffer) in local:
            continue
        if not allowed_same:
            return False
        if not all(
            len(w) == len(load.indices)
            and all(structural_equal(a, b) for a, b in zip(w, load.indices))
            for w in written
        ):
            return False
    return True


def _has_nested_block(block: Block) -> bool:
    found = False

    def visit(node: object) -> None:
        nonlocal found
        found = found or isinstance(node, Block)

    post_order_visit(block.body, visit)
    if block.init is not None:
        post_order_visit(block.init, visit)
    return found


def _nested_self_reads_ok(block: Block, local: set[int], allowed_same: bool) -> bool:
    """The rule for a block holding blocks (a blockized reduction): its nested blocks index
    with their own iter vars, so elements are compared as the regions one instance of the
    outer block touches: every region it reads of a buffer it writes is exactly one region
    it writes. An instance then reads only what it writes itself, as a leaf block reading
    at its written indices does."""
    # The body and the init apart: inferred together, the reads of what the block writes
    # would be left out (TVM lists a reduction's accumulation as a write only).
    reads: list[BufferRegion] = []
    written: dict[int, list[BufferRegion]] = {}
    for part in (block.body, block.init):
        if part is None:
            continue
        part_reads, part_writes = infer_regions(
            part, None, block.alloc_buffers, block.match_buffers, recompute_nested=True
        )
        reads += part_reads
        for region in part_writes:
            written.setdefault(id(region.buffer), []).append(region)
    for region in reads:
        same = written.get(id(region.buffer))
        if same is None or id(region.buffer) in local:
            continue
        if not allowed_same:
            return False
        if not any(
            len(w.region) == len(region.region)
            and all(
                structural_equal(a.min, b.min) and structural_equal(a.extent, b.extent)
                for a, b in zip(w.region, region.region)
            )
            for w in same
        ):
            return False
    return True


def _single_writer(index: TreeIndex, block: Block) -> bool:
    scope = index.scope_block(index.realize_of(block))
    mine = {id(b) for b in block_access(block).write_buffers}
    for other in index.child_blocks(scope):
        if other is block:
            continue
        if any(id(b) in mine for b in block_access(other).write_buffers):
            return False
    return True


def is_complete_block(index: TreeIndex, block: Block, *, sole_writer: bool = True) -> bool:
    """TVM's complete block: data-parallel iters, sole writer, reads none of its outputs.

    ``sole_writer=False`` drops the scope-wide writer rule (loop primitives check the
    blocks inside the loop against each other instead).
    """
    if block.init is not None or any(iv.kind != IterKind.SPATIAL for iv in block.iter_vars):
        return False
    if not _self_reads_ok(block, allowed_same=False):
        return False
    return not sole_writer or _single_writer(index, block)


def is_reduction_block(
    index: TreeIndex, block: Block, *, need_init: bool = True, sole_writer: bool = True
) -> bool:
    """TVM's reduction block: S/R iters, an init, writes indexed by spatial iters only.

    ``need_init=False`` also accepts the update half left by decompose_reduction: each
    instance still reads and writes only the element its spatial iters select.
    """
    if need_init and block.init is None:
        return False
    if any(iv.kind not in (IterKind.SPATIAL, IterKind.REDUCE) for iv in block.iter_vars):
        return False
    spatial = {id(iv.var) for iv in block.iter_vars if iv.kind == IterKind.SPATIAL}
    iter_ids = {id(iv.var) for iv in block.iter_vars}
    for region in block_access(block).writes:
        for rng in region.region:
            if not _uses_only(rng.min, spatial, iter_ids):
                return False
    if not _self_reads_ok(block, allowed_same=True):
        return False
    return not sole_writer or _single_writer(index, block)


def full_range(buffer: Buffer, dim: int) -> Range:
    extent = buffer.shape[dim]
    return Range(const(0, extent.dtype), extent)


def relax_region(
    region: BufferRegion,
    binding: Mapping[Var, PrimExpr],
    relaxed: Mapping[Var, Range],
    analyzer: Analyzer | None = None,
) -> BufferRegion:
    """``region`` with ``binding`` substituted and ``relaxed`` vars widened over their range.

    A dimension whose index is not linear in the relaxed vars becomes the whole dimension.
    """
    ranges: list[Range] = []
    for dim, rng in enumerate(region.region):
        lo = substitute_expr(rng.min, binding)
        ext = substitute_expr(rng.extent, binding)
        widened = _widen(lo, ext, relaxed, analyzer)
        ranges.append(widened if widened is not None else full_range(region.buffer, dim))
    return BufferRegion(region.buffer, tuple(ranges))


def mentions_any(expr: PrimExpr, ids: Container[int]) -> bool:
    """Whether ``expr`` uses a var whose id is in ``ids``."""
    found = False

    def visit(node: object) -> None:
        nonlocal found
        if isinstance(node, Var) and id(node) in ids:
            found = True

    post_order_visit(expr, visit)
    return found


def _widen(
    lo: PrimExpr, ext: PrimExpr, relaxed: Mapping[Var, Range], analyzer: Analyzer | None
) -> Range | None:
    ids = {id(v) for v in relaxed}
    by_id = {id(v): r for v, r in relaxed.items()}
    if mentions_any(ext, ids) or not supports_linear(lo.dtype):
        return None
    form = to_linear(lo)
    rest = form.copy()
    rest.terms, rest._index = [], {}
    width = 0
    low_shift: PrimExpr = const(0, lo.dtype)
    for atom, coef in form.live_terms():
        if isinstance(atom, Var) and id(atom) in ids:
            dom = by_id[id(atom)]
            if not isinstance(dom.extent, IntImm):
                return None
            span = dom.extent.value - 1
            width += abs(coef) * span
            shift = dom.min * coef if coef > 0 else (dom.min + span) * coef
            low_shift = (
                shift
                if isinstance(low_shift, IntImm) and low_shift.value == 0
                else low_shift + shift
            )
        elif mentions_any(atom, ids):
            return None
        else:
            rest.add_term(atom, coef)
    new_lo = simplify_expr(from_linear(rest) + low_shift, analyzer)
    new_ext = simplify_expr(ext + width, analyzer) if width else ext
    return Range(new_lo, new_ext)


def union_regions(regions: Sequence[BufferRegion]) -> BufferRegion:
    """A region covering all of ``regions`` (of one buffer); the whole dim when unsure."""
    buffer = regions[0].buffer
    ranges: list[Range] = []
    for dim in range(len(buffer.shape)):
        dims = [r.region[dim] for r in regions]
        first = dims[0]
        if all(structural_equal(first, d) for d in dims[1:]):
            ranges.append(first)
            continue
        hull = constant_offset_hull(dims)
        ranges.append(hull if hull is not None else full_range(buffer, dim))
    return BufferRegion(buffer, tuple(ranges))


def constant_offset_hull(dims: Sequence[Range]) -> Range | None:
    base = dims[0].min
    if not supports_linear(base.dtype):
        return None
    lows: list[int] = []
    highs: list[int] = []
    for rng in dims:
        if not isinstance(rng.extent, IntImm):
            return None
        diff = to_linear(rng.min - base)
        if diff.live_terms():
            return None
        lows.append(diff.const)
        highs.append(diff.const + rng.extent.value)
    lo_shift = min(lows)
    new_lo = simplify_expr(base + lo_shift) if lo_shift else base
    return Range(new_lo, const(max(highs) - lo_shift, dims[0].extent.dtype))


def stmt_accesses(index: TreeIndex, stmt: Stmt) -> BlockAccess:
    """Buffers read and written by the blocks directly inside ``stmt`` (regions not relaxed)."""
    reads: list[BufferRegion] = []
    writes: list[BufferRegion] = []
    blocks = [stmt] if isinstance(stmt, Block) else index.blocks_below(stmt)
    for block in blocks:
        assert isinstance(block, Block)
        access = block_access(block)
        reads.extend(access.reads)
        writes.extend(access.writes)
    return BlockAccess(tuple(reads), tuple(writes))


def buffers_conflict(a: BlockAccess, b: BlockAccess) -> Buffer | None:
    """A buffer one side writes and the other reads or writes, if any."""
    a_writes = {id(x): x for x in a.write_buffers}
    b_writes = {id(x): x for x in b.write_buffers}
    for buf in b.read_buffers + b.write_buffers:
        if id(buf) in a_writes:
            return buf
    for buf in a.read_buffers:
        if id(buf) in b_writes:
            return buf
    return None


def access_regions(block: Block, buffer: Buffer, *, writes: bool = False) -> list[BufferRegion]:
    """The regions of ``buffer`` one instance reads (or writes), one per access when every
    access indexes by values fixed for the instance; else the inferred union.

    Keeping the accesses apart lets a caller widen each over loops and hull them
    (``B[vi]``, ``B[vi + 1]`` -> ``B[lo:lo + n + 1]``) instead of losing the dimension.
    """
    inner: set[int] = set()
    points: list[BufferRegion] = []

    def visit(node: object) -> None:
        if isinstance(node, For):
            inner.add(id(node.loop_var))
        elif isinstance(node, (LetStmt, Let)):
            inner.add(id(node.var))
        elif isinstance(node, Block):
            inner.update(id(iv.var) for iv in node.iter_vars)
        elif isinstance(node, BufferStore if writes else BufferLoad) and node.buffer is buffer:
            if not any(isinstance(i, Ramp) for i in node.indices):
                one = [Range(i, const(1, i.dtype)) for i in node.indices]
                points.append(BufferRegion(buffer, tuple(one)))

    post_order_visit(block.body, visit)
    if block.init is not None:
        post_order_visit(block.init, visit)
    fallback = [
        r
        for r in (block_access(block).writes if writes else block_access(block).reads)
        if r.buffer is buffer
    ]
    if not points or block.alloc_buffers or block.match_buffers:
        return fallback
    for region in points:
        for rng in region.region:
            if mentions_any(rng.min, inner):
                return fallback
    return points


def position_dependent_vars(index: TreeIndex, block: Block) -> list[Var]:
    """Vars of enclosing loops, lets or blocks that the block uses other than through its
    bindings: such a block cannot be moved, inlined or rebuilt elsewhere."""
    from irbuilder.ir import LetStmt as _LetStmt
    from lowering.analysis.vars import free_vars

    outer: set[int] = set()
    for node in index.ancestors(block):
        if isinstance(node, For):
            outer.add(id(node.loop_var))
        elif isinstance(node, _LetStmt):
            outer.add(id(node.var))
        elif isinstance(node, Block):
            outer.update(id(iv.var) for iv in node.iter_vars)
    return [v for v in free_vars(block) if id(v) in outer]


def refuse_position_dependent(state: ScheduleState, name: str, block: Block) -> None:
    """Refuse ``name`` on a block that uses a var of an enclosing loop or block other than
    through its bindings (:func:`position_dependent_vars`)."""
    direct_uses = position_dependent_vars(state.index, block)
    if direct_uses:
        raise fail(
            state,
            name,
            f"block {block.name_hint!r} uses {direct_uses[0].name!r} of an enclosing loop or "
            "block directly (not through its bindings)",
            block,
        )
