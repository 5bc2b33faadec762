"""compute_at and reverse_compute_at.

The moved block keeps its body; its loops are regenerated under the target loop as
``ax0, ax1, ...`` over the iter-var ranges one iteration of the target loop needs (unit
ranges become plain bindings unless ``preserve_unit_loops``), as TVM does.

compute_at(B, L): the region each L iteration's consumers read is widened over the loops
inside L and mapped back to B's iter vars through B's stores (which must be at its iter
vars). Legal when B is complete or a reduction whose bindings cover its whole domain once,
B writes only allocated buffers, every reader of them is under L and after B, and no block
that now runs between B's old and new places (or under L) writes what B reads or touches
what B writes.

reverse_compute_at(C, L): the region the producers under L write in one iteration is mapped
to C's iter vars through C's load of it (one load pattern at distinct iter vars). Legal when
C is complete with full-domain bindings, the producers under L write (over all iterations)
everything C reads of that buffer, and no block that C now runs before (or amid) touches what
C reads or writes.
"""

from __future__ import annotations

from collections.abc import Sequence

from irbuilder.ir import (
    Block,
    Buffer,
    BufferLoad,
    BufferRegion,
    For,
    IntImm,
    PrimExpr,
    Range,
    SeqStmt,
    Stmt,
    Var,
    const,
    post_order_visit,
    rebuild,
    seq,
    structural_equal,
)
from lowering.analysis.substitute import substitute_expr

from .analysis import (
    access_regions,
    block_access,
    buffers_conflict,
    constant_offset_hull,
    is_complete_block,
    is_reduction_block,
    refuse_position_dependent,
    relax_region,
    union_regions,
)
from .declared_reads import declared_read_points
from .edit import is_allocated, leaf_root, remove_leaf
from .error import ScheduleError, fail
from .full_domain import check_full_domain
from .interval import Interval, pick_max, pick_min, to_dtype
from .iter_domain import VarDomain, build_nest, outer_analyzer, settle
from .region_inverse import digit_iter_ranges
from .required import digit_domains, inner_loops, needed_intervals, solve_store
from .reverse_reduction import reduction_consumer_problem
from .state import ScheduleState, TreeIndex

__all__ = ["compute_at", "reverse_compute_at"]



def _scope_and_check_loop(state: ScheduleState, block: Block, loop: For, name: str) -> Block:
    index = state.index
    scope = index.scope_block(index.realize_of(block))
    if index.scope_block(loop) is not scope:
        raise fail(
            state,
            name,
            f"block {block.name_hint!r} and the loop are not in the same block scope (a "
            "block lies between them)",
            loop,
            block,
        )
    if index.is_ancestor(loop, block):
        raise fail(
            state,
            name,
            f"the loop is an ancestor of block {block.name_hint!r} (the block is already under it)",
            loop,
            block,
        )
    return scope


def _top_item(index: TreeIndex, scope: Block, node: Stmt) -> Stmt:
    item = node
    for anc in index.ancestors(node):
        if anc is scope.body or anc is scope:
            break
        item = anc
    return item


def _affected_blocks(
    index: TreeIndex, scope: Block, block: Block, loop: For, lo: int, hi: int
) -> list[Block]:
    """Blocks of the scope, not under ``loop``, that run between ``lo`` and ``hi`` (pre-order
    positions) or in the same top-level statement as the loop."""
    loop_item = _top_item(index, scope, loop)
    out: list[Block] = []
    for other in index.child_blocks(scope):
        if other is block or index.is_ancestor(loop, other):
            continue
        pos = index.order[id(other)]
        if lo < pos < hi or index.is_ancestor(loop_item, other):
            out.append(other)
    return out


def _iter_ranges_from_indices(
    block: Block, indices: Sequence[PrimExpr], region: BufferRegion
) -> dict[int, Range] | None:
    """Iter var (by id) -> range, reading ``indices[k]`` (an iter var) as ``region[k]``; a
    constant index must lie in its ``region[k]`` (what the iteration writes there)."""
    iter_ids = {id(iv.var) for iv in block.iter_vars}
    found: dict[int, Range] = {}
    for idx, rng in zip(indices, region.region):
        if isinstance(idx, IntImm):
            lo, ext = rng.min, rng.extent
            if not (isinstance(lo, IntImm) and isinstance(ext, IntImm)):
                return None
            if not lo.value <= idx.value < lo.value + ext.value:
                return None
            continue
        if not isinstance(idx, Var) or id(idx) not in iter_ids or id(idx) in found:
            return None
        found[id(idx)] = rng
    return found


def _store_indices(block: Block, buffer: Buffer) -> tuple[PrimExpr, ...] | None:
    from irbuilder.ir import BufferStore

    seen: list[tuple[PrimExpr, ...]] = []

    def visit(node: object) -> None:
        if isinstance(node, BufferStore) and node.buffer is buffer:
            seen.append(node.indices)

    post_order_visit(block.body, visit)
    if block.init is not None:
        post_order_visit(block.init, visit)
    if not seen:
        return None
    first = seen[0]
    for other in seen[1:]:
        if not all(structural_equal(a, b) for a, b in zip(first, other)):
            return None
    return first


def _enclosing_loops(index: TreeIndex, loop: For) -> list[For]:
    return [loop, *[a for a in index.ancestors(loop) if isinstance(a, For)]]


def _insert_in_loop(
    state: ScheduleState,
    loop: For,
    stmt: Stmt,
    anchors: Sequence[Block],
    before: bool,
    index_hint: int,
    name: str,
) -> None:
    """Insert ``stmt`` into the loop's body: before the first statement holding one of
    ``anchors`` (compute_at's consumers) or after the last (reverse_compute_at's
    producers). ``index_hint`` is TVM's ``index``: -1 the last possible place, -2 the
    first, else a position in the body's statement list within those bounds."""
    body = loop.body
    items = list(body.seq) if isinstance(body, SeqStmt) else [body]
    holding = [
        k
        for k, item in enumerate(items)
        if any(a is item or state.index.is_ancestor(item, a) for a in anchors)
    ]
    lo, hi = (0, holding[0]) if before else (holding[-1] + 1, len(items))
    if index_hint == -1:
        position = hi
    elif index_hint == -2:
        position = lo
    elif lo <= index_hint <= hi:
        position = index_hint
    else:
        raise fail(
            state, name, f"index {index_hint} is outside the legal positions {lo}..{hi}", loop
        )
    items.insert(position, stmt)
    new_loop = rebuild(loop, {"body": seq(items)})
    state.replace(loop, new_loop, {loop: new_loop})


def compute_at(
    state: ScheduleState, block: Block, loop: For, preserve_unit_loops: bool, index_hint: int
) -> None:
    name = "compute_at"
    index = state.index
    refuse_position_dependent(state, name, block)
    scope = _scope_and_check_loop(state, block, loop, name)
    if not (is_complete_block(index, block) or is_reduction_block(index, block)):
        raise fail(
            state,
            name,
            f"block {block.name_hint!r} is neither a complete block nor a reduction block",
            block,
        )
    check_full_domain(state, block, name)
    access = block_access(block)
    outputs = access.write_buffers
    for buf in outputs:
        if not is_allocated(state.func, index, buf):
            raise fail(
                state,
                name,
                f"block {block.name_hint!r} is an output block: it writes {buf.name!r}, a "
                "parameter of the function; computing only the part the loop needs would "
                "leave the rest unwritten",
                block,
            )
    leaf = leaf_root(index, block)
    leaf_pos = index.order[id(leaf)]
    if index.order[id(loop)] < leaf_pos:
        raise fail(
            state,
            name,
            f"the loop runs before block {block.name_hint!r}; its consumers must come after it",
            loop,
            block,
        )
    out_ids = {id(b) for b in outputs}
    consumers: list[Block] = []
    for other in index.child_blocks(scope):
        if other is block:
            continue
        if any(id(r) in out_ids for r in block_access(other).read_buffers):
            if not index.is_ancestor(loop, other):
                raise fail(
                    state,
                    name,
                    f"{name} requires all the consumers of block {block.name_hint!r} to be "
                    f"under the target loop, but block {other.name_hint!r} (which reads what "
                    "it writes) is not",
                    other,
                    loop,
                )
            consumers.append(other)
    if not consumers:
        raise fail(
            state,
            name,
            f"no block under the loop reads what {block.name_hint!r} writes",
            block,
            loop,
        )
    loop_end = max(index.order[id(n)] for n in _subtree_nodes(index, loop))
    read_ids = {id(b) for b in access.read_buffers}
    for other in index.child_blocks(scope):
        if other is block or not index.is_ancestor(loop, other):
            continue
        for w in block_access(other).write_buffers:
            if id(w) in read_ids or id(w) in out_ids:
                raise fail(
                    state,
                    name,
                    f"block {other.name_hint!r} under the loop writes {w.name!r}, which "
                    f"{block.name_hint!r} reads or writes",
                    other,
                )
    for other in _affected_blocks(index, scope, block, loop, leaf_pos, loop_end):
        shared = buffers_conflict(access, block_access(other))
        if shared is not None:
            raise fail(
                state,
                name,
                f"block {other.name_hint!r} runs between {block.name_hint!r}'s old and new "
                f"places and accesses {shared.name!r}, which {block.name_hint!r} writes or reads",
                other,
                block,
            )
    outer = _enclosing_loops(index, loop)
    analyzer, _ = outer_analyzer(outer)
    solved: dict[int, tuple[Interval, Interval]] = {}
    keys_seen: set[int] | None = None
    for buf in outputs:
        needed = needed_intervals(index, loop, consumers, buf, analyzer)
        if needed is None:
            continue
        stores = _store_indices(block, buf)
        mapped = None
        if stores is not None:
            points = [Range(idx, const(1, idx.dtype)) for idx in stores]
            mapped = solve_store(block, points, needed, buf, analyzer)
            if mapped is None:
                mapped = digit_domains(block, stores, buf, needed, analyzer)
        written = [r for r in access.writes if r.buffer is buf]
        if mapped is None and len(written) == 1:
            # a blockized block: what one instance writes, nested blocks relaxed
            mapped = solve_store(block, written[0].region, needed, buf, analyzer)
        if mapped is None:
            raise fail(
                state,
                name,
                f"block {block.name_hint!r} does not store {buf.name!r} at iter vars (or "
                "digits of them) the needed region can be mapped back through",
                block,
            )
        constrained = {key for key in mapped}
        if keys_seen is not None and constrained != keys_seen:
            # an instance outside one buffer's range may still write another buffer's
            # needed point (last writer wins there): the ranges cannot be combined
            raise fail(
                state,
                name,
                f"block {block.name_hint!r} stores its buffers at different iter vars",
                block,
            )
        keys_seen = constrained
        for key, (dom, bound) in mapped.items():
            if key in solved:
                (d_lo, d_hi), (b_lo, b_hi) = solved[key]
                dom = (pick_min(d_lo, dom[0], analyzer), pick_max(d_hi, dom[1], analyzer))
                bound = (pick_min(b_lo, bound[0], analyzer), pick_max(b_hi, bound[1], analyzer))
            solved[key] = (dom, bound)
    doms: list[VarDomain] = []
    for iv in block.iter_vars:
        whole = (iv.dom.min, iv.dom.min + iv.dom.extent - 1)
        if id(iv.var) not in solved:
            doms.append(settle(whole, whole, analyzer))
            continue
        (d_lo, d_hi), (b_lo, b_hi) = solved[id(iv.var)]
        # the needed region comes in the buffer's index type (int64 shapes), the iter var
        # may be int32: its range is in the iter var's type
        dt = iv.var.dtype
        dom = (to_dtype(d_lo, dt), to_dtype(d_hi, dt))
        b_lo, b_hi = to_dtype(b_lo, dt), to_dtype(b_hi, dt)
        # only instances of the iter domain exist
        bound = (pick_max(b_lo, whole[0], analyzer), pick_min(b_hi, whole[1], analyzer))
        doms.append(settle(dom, bound, analyzer))
    nest = build_nest(block, doms, preserve_unit_loops, outer)
    remove_leaf(state, block, name)
    new_loop = state.resolve(loop)
    assert isinstance(new_loop, For)
    _insert_in_loop(state, new_loop, nest, consumers, True, index_hint, name)


def _widest(a: Range, b: Range) -> Range:
    if structural_equal(a.min, b.min) and structural_equal(a.extent, b.extent):
        return a
    hull = constant_offset_hull([a, b])
    if hull is None:
        raise ScheduleError("compute_at", "cannot bound the region needed by several consumers")
    return hull


def _subtree_nodes(index: TreeIndex, stmt: Stmt) -> list[Stmt]:
    from .state import walk_preorder

    return [n for n in walk_preorder(stmt) if id(n) in index.nodes]


def reverse_compute_at(
    state: ScheduleState, block: Block, loop: For, preserve_unit_loops: bool, index_hint: int
) -> None:
    name = "reverse_compute_at"
    index = state.index
    refuse_position_dependent(state, name, block)
    scope = _scope_and_check_loop(state, block, loop, name)
    complete = is_complete_block(index, block)
    if not (complete or is_reduction_block(index, block)):
        raise fail(
            state,
            name,
            f"block {block.name_hint!r} is neither a complete block nor a reduction block",
            block,
        )
    check_full_domain(state, block, name)
    leaf = leaf_root(index, block)
    leaf_pos = index.order[id(leaf)]
    if index.order[id(loop)] > leaf_pos:
        raise fail(state, name, f"the loop runs after block {block.name_hint!r}", loop, block)
    access = block_access(block)
    under = [b for b in index.child_blocks(scope) if index.is_ancestor(loop, b)]
    read_ids = {id(b) for b in access.read_buffers}
    write_ids = {id(b) for b in access.write_buffers}
    producers: list[Block] = []
    for other in under:
        other_access = block_access(other)
        if any(id(r) in write_ids for r in other_access.read_buffers + other_access.write_buffers):
            raise fail(
                state,
                name,
                f"block {other.name_hint!r} under the loop accesses what {block.name_hint!r} "
                "writes",
                other,
            )
        if any(id(w) in read_ids for w in other_access.write_buffers):
            producers.append(other)
    if not producers:
        raise fail(
            state,
            name,
            f"no block under the loop writes what {block.name_hint!r} reads",
            block,
            loop,
        )
    for other in index.child_blocks(scope):
        if other is block or index.is_ancestor(loop, other):
            continue
        if any(id(w) in read_ids for w in block_access(other).write_buffers):
            # TVM's precondition (the mirror of compute_at's consumer rule)
            raise fail(
                state,
                name,
                f"{name} requires all the producers of block {block.name_hint!r} to be under "
                f"the target loop, but block {other.name_hint!r} (which writes what it reads) "
                "is not",
                other,
                loop,
            )
    loop_item = _top_item(index, scope, loop)
    lo = index.order[id(loop_item)]
    for other in _affected_blocks(index, scope, block, loop, lo, leaf_pos):
        shared = buffers_conflict(access, block_access(other))
        if shared is not None:
            raise fail(
                state,
                name,
                f"block {other.name_hint!r} runs between the loop and "
                f"{block.name_hint!r} and accesses {shared.name!r}",
                other,
                block,
            )
    produced_ids = {id(w) for p in producers for w in block_access(p).write_buffers}
    realize = index.realize_of(block)
    own_binding = {iv.var: v for iv, v in zip(block.iter_vars, realize.iter_values)}
    own_loops = {lp.loop_var: Range(lp.min, lp.extent) for lp in index.loops_above(block)}
    ranges: dict[int, Range] = {}
    written_per_iter: dict[int, BufferRegion] = {}
    for buf in access.read_buffers:
        if id(buf) not in produced_ids:
            continue
        loads = _loads(block, buf)
        if loads and not all(
            all(structural_equal(a, b) for a, b in zip(loads[0], other)) for other in loads[1:]
        ):
            raise fail(
                state,
                name,
                f"block {block.name_hint!r} reads {buf.name!r} at several indices",
                block,
            )
        per_iter: list[BufferRegion] = []
        total: list[BufferRegion] = []
        for producer in producers:
            p_realize = index.realize_of(producer)
            p_binding = {iv.var: v for iv, v in zip(producer.iter_vars, p_realize.iter_values)}
            p_inner = inner_loops(index, loop, producer)
            p_all = {lp.loop_var: Range(lp.min, lp.extent) for lp in index.loops_above(producer)}
            for region in access_regions(producer, buf, writes=True):
                per_iter.append(relax_region(region, p_binding, p_inner))
                total.append(relax_region(region, p_binding, p_all))
        needed_all = [relax_region(r, own_binding, own_loops) for r in access_regions(block, buf)]
        if not _covers(union_regions(total), union_regions(needed_all)):
            raise fail(
                state,
                name,
                f"the blocks under the loop do not provably write all of {buf.name!r} that "
                f"{block.name_hint!r} reads",
                block,
            )
        written = written_per_iter[id(buf)] = union_regions(per_iter)
        if loads:
            first = loads[0]
        else:
            # read by its data pointer or a view of a larger region: the read region (for a
            # pointer, the declared one) stands for the loads
            points = declared_read_points(block, buf, written)
            if isinstance(points, str):
                raise fail(
                    state,
                    name,
                    f"block {block.name_hint!r} reads {buf.name!r} neither by loads nor "
                    "through match_buffer views of single elements, and its read region "
                    f"cannot stand for them: {points}",
                    block,
                )
            first, written = points
        mapped = _iter_ranges_from_indices(block, first, written)
        if mapped is None:
            # a loop running once is its only value: its var is that constant here
            _, single = outer_analyzer(_enclosing_loops(index, loop))
            fixed = BufferRegion(
                buf,
                tuple(
                    Range(substitute_expr(r.min, single), substitute_expr(r.extent, single))
                    for r in written.region
                ),
            )
            mapped = digit_iter_ranges(block, first, fixed)
        if mapped is None:
            raise fail(
                state,
                name,
                f"block {block.name_hint!r} reads {buf.name!r} at indices that are not "
                "distinct iter vars",
                block,
            )
        for key, rng in mapped.items():
            ranges[key] = _widest(ranges[key], rng) if key in ranges else rng
    outer = _enclosing_loops(index, loop)
    analyzer, _ = outer_analyzer(outer)
    doms: list[VarDomain] = []
    for iv in block.iter_vars:
        whole = (iv.dom.min, iv.dom.min + iv.dom.extent - 1)
        found = ranges.get(id(iv.var))
        dom = whole if found is None else (found.min, found.min + found.extent - 1)
        doms.append(settle(dom, whole, analyzer))
    nest = build_nest(block, doms, preserve_unit_loops, outer)
    if not complete:
        problem = reduction_consumer_problem(index, loop, block, producers, written_per_iter, nest)
        if problem is not None:
            raise fail(
                state,
                name,
                f"reduction block {block.name_hint!r} cannot be moved under the loop: {problem}",
                block,
                loop,
            )
    remove_leaf(state, block, name)
    new_loop = state.resolve(loop)
    assert isinstance(new_loop, For)
    _insert_in_loop(state, new_loop, nest, producers, False, index_hint, name)


def _loads(block: Block, buffer: Buffer) -> list[tuple[PrimExpr, ...]]:
    """The indices at which ``block`` reads ``buffer``: its loads, and its views of one
    element (``T.match_buffer(B[vi, vj], ())`` reads through the view at ``vi, vj``)."""
    found: list[tuple[PrimExpr, ...]] = [
        tuple(r.min for r in m.source.region)
        for m in block.match_buffers
        if m.source.buffer is buffer and all(_is_one(r.extent) for r in m.source.region)
    ]

    def visit(node: object) -> None:
        if isinstance(node, BufferLoad) and node.buffer is buffer:
            found.append(node.indices)

    post_order_visit(block.body, visit)
    return found


def _is_one(expr: PrimExpr) -> bool:
    return isinstance(expr, IntImm) and expr.value == 1


def _covers(outer: BufferRegion, inner: BufferRegion) -> bool:
    for a, b in zip(outer.region, inner.region):
        if structural_equal(a.min, b.min) and structural_equal(a.extent, b.extent):
            continue
        a_lo, a_ext, b_lo, b_ext = a.min, a.extent, b.min, b.extent
        if not (
            isinstance(a_lo, IntImm)
            and isinstance(a_ext, IntImm)
            and isinstance(b_lo, IntImm)
            and isinstance(b_ext, IntImm)
        ):
            return False
        if not (a_lo.value <= b_lo.value and b_lo.value + b_ext.value <= a_lo.value + a_ext.value):
            return False
    return True
