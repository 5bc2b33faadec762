"""``read_at`` / ``write_at``: a copy of a buffer's region in another storage scope, made
at a loop (TVM v0.16's ReadAt/WriteAt, which the GPU auto-copy passes lower).

Inside each iteration of the loop, ``read_at`` copies the region of the buffer the blocks
below the loop read into ``<buffer>_<scope>`` right before the first statement of the
loop's body that reads it, and those statements read the copy instead; ``write_at`` makes
the statements up to the last one writing the buffer use the copy and copies it back right
after. The region is the blocks' accesses widened over the loops between them and the
loop, and over the thread loops whose threads share the new scope (``shared``: threadIdx
and vthread), as TVM widens it. The copy block is annotated ``auto_copy``, iterates over
the loops its region depends on (``v0, v1, ...``) and holds plain ``ax`` loops.

As in TVM, only the order of the statements is checked (no write of the buffer before its
first read for ``read_at``, no read after its last write for ``write_at``): a copy-out of
elements the loop did not write, or a read of the copy before it is written, is the user's
call (``debug_mask="all"`` reports a changed result).
"""

from __future__ import annotations

from collections.abc import Sequence

from irbuilder.ir import (
    Block,
    BlockRealize,
    Buffer,
    BufferLoad,
    BufferRegion,
    BufferStore,
    For,
    ForKind,
    IntImm,
    IterKind,
    IterVar,
    PrimExpr,
    Range,
    SeqStmt,
    Stmt,
    Var,
    const,
    make_data_var,
    post_order_visit,
    rebuild,
    seq,
)
from lowering.analysis.substitute import Substituter, substitute_expr
from lowering.arith import simplify_expr

from .analysis import relax_region, union_regions
from .cache_checks import buffer_at
from .error import fail
from .required import thread_relaxed_loops
from .stage_pipeline import uncovered_read
from .state import ScheduleState, child_stmts, walk_preorder
from .storage_scope import check_scope

__all__ = ["read_at", "write_at"]


def read_at(
    state: ScheduleState, loop: For, block: Block, buffer_index: int, scope: str
) -> Block:
    return _stage(state, "read_at", loop, block, buffer_index, scope, is_read=True)


def write_at(
    state: ScheduleState, loop: For, block: Block, buffer_index: int, scope: str
) -> Block:
    return _stage(state, "write_at", loop, block, buffer_index, scope, is_read=False)


def _stage(
    state: ScheduleState,
    name: str,
    loop: For,
    block: Block,
    buffer_index: int,
    scope: str,
    *,
    is_read: bool,
) -> Block:
    index = state.index
    check_scope(state, name, scope, block)
    regions = block.reads if is_read else block.writes
    src = buffer_at(state, name, regions, buffer_index, "reads" if is_read else "writes", block)
    dst = _with_scope(src, scope)
    scope_block = index.scope_block(loop)
    if uncovered_read(state, scope_block) is not None:
        raise fail(
            state,
            name,
            f"the scope of the loop (block {scope_block.name_hint!r}) is not a stage "
            "pipeline: a block reads elements no earlier block is shown to write",
            scope_block,
        )
    subtrees = list(loop.body.seq) if isinstance(loop.body, SeqStmt) else [loop.body]
    read_pos: list[int] = []
    write_pos: list[int] = []
    found: list[BufferRegion] = []
    for k, subtree in enumerate(subtrees):
        reads = writes = False
        for inner in _top_blocks(subtree):
            has_r = any(r.buffer is src for r in inner.reads)
            has_w = any(r.buffer is src for r in inner.writes)
            reads, writes = reads or has_r, writes or has_w
            if has_r if is_read else has_w:
                found += _relaxed(state, loop, inner, src, dst, is_read)
        if reads:
            read_pos.append(k)
        if writes:
            write_pos.append(k)
    side = "reads" if is_read else "writes"
    if not (read_pos if is_read else write_pos):
        raise fail(
            state, name, f"no block below loop {loop.loop_var.name!r} {side} {src.name!r}",
            loop, block,
        )
    if is_read:
        if write_pos and write_pos[-1] >= read_pos[0]:
            raise fail(
                state,
                name,
                f"{src.name!r} is written below loop {loop.loop_var.name!r} at or after its "
                "first read there; the copy would miss the writes",
                loop,
            )
        insert, first, last = read_pos[0], read_pos[0], len(subtrees)
    else:
        if read_pos and read_pos[-1] > write_pos[-1]:
            raise fail(
                state,
                name,
                f"{src.name!r} is read below loop {loop.loop_var.name!r} after its last "
                "write there; the copy back would come too late",
                loop,
            )
        insert, first, last = write_pos[-1] + 1, 0, write_pos[-1] + 1
    region = union_regions(found)
    domain = [
        Range(simplify_expr(r.min), simplify_expr(r.extent)) for r in region.region
    ]
    reuse: dict[Stmt, Stmt] = {}
    swap = Substituter(bmap={src: dst})
    for k in range(first, last):
        new = swap.visit_stmt(subtrees[k])
        _match(subtrees[k], new, reuse)
        subtrees[k] = new
    copy = _copy_block(
        _loops_up(state, loop),
        domain,
        src if is_read else dst,
        dst if is_read else src,
        f"{src.name}_{scope}",
    )
    subtrees.insert(insert, copy)
    new_loop = rebuild(loop, {"body": seq(subtrees)})
    reuse[loop] = new_loop  # the same loop variable: the loop's handles follow it (TVM)
    state.replace(loop, new_loop, reuse)
    # the new buffer is allocated by the loop's scope block (rebuilt by the replacement)
    current = state.resolve(scope_block)
    assert isinstance(current, Block)
    with_alloc = rebuild(current, {"alloc_buffers": (*current.alloc_buffers, dst)})
    realize = state.index.realize_of(current)
    state.replace(realize, rebuild(realize, {"block": with_alloc}), {current: with_alloc})
    return copy.block


def _with_scope(buffer: Buffer, scope: str) -> Buffer:
    """TVM's WithScope: the buffer and its data var renamed ``<name>_<scope>``."""
    name = f"{buffer.name}_{scope}"
    return Buffer(
        name,
        make_data_var(name, buffer.dtype, scope),
        buffer.shape,
        buffer.dtype,
        buffer.strides,
        buffer.elem_offset,
        scope,
        buffer.data_alignment,
        buffer.offset_factor,
        buffer.axis_separators,
    )


def _top_blocks(stmt: Stmt) -> list[Block]:
    """The blocks of ``stmt`` not nested in another block of it, in execution order."""
    found: list[Block] = []

    def walk(node: Stmt) -> None:
        if isinstance(node, Block):
            found.append(node)
            return
        for child in child_stmts(node):
            walk(child)

    walk(stmt)
    return found


def _relaxed(
    state: ScheduleState, loop: For, block: Block, src: Buffer, dst: Buffer, is_read: bool
) -> list[BufferRegion]:
    """The block's regions of ``src`` over every instance in one iteration of ``loop``
    (and over the thread loops sharing ``dst``)."""
    index = state.index
    realize = index.realize_of(block)
    binding = {iv.var: v for iv, v in zip(block.iter_vars, realize.iter_values)}
    relaxed: dict[Var, Range] = {}
    for node in index.ancestors(realize):
        if node is loop:
            break
        if isinstance(node, For):
            relaxed[node.loop_var] = Range(node.min, node.extent)
    relaxed.update(thread_relaxed_loops(index, loop, dst))
    regions = block.reads if is_read else block.writes
    return [relax_region(r, binding, relaxed) for r in regions if r.buffer is src]


def _loops_up(state: ScheduleState, loop: For) -> list[For]:
    """``loop`` and the loops above it up to its scope block, innermost first."""
    out = [loop]
    for node in state.index.ancestors(loop):
        if isinstance(node, Block):
            break
        if isinstance(node, For):
            out.append(node)
    return out


def _copy_block(
    loops: Sequence[For], domain: list[Range], source: Buffer, target: Buffer, name: str
) -> BlockRealize:
    """The auto-copy block: one iter var per loop its region depends on, in the order
    they first appear in the region (TVM's ``v0, v1, ...``)."""
    by_id = {id(lp.loop_var): lp for lp in loops}
    order: list[Var] = []  # the loops' vars, by first appearance
    for rng in domain:
        for expr in (rng.min, rng.extent):
            seen: list[Var] = []

            def visit(node: object, seen: list[Var] = seen) -> None:
                if isinstance(node, Var) and id(node) in by_id:
                    seen.append(node)

            post_order_visit(expr, visit)
            for var in seen:
                if all(var is not known for known in order):
                    order.append(var)
    new_vars = {v: Var(f"v{k}", v.dtype) for k, v in enumerate(order)}
    iter_vars = tuple(
        IterVar(new_vars[v], Range(by_id[id(v)].min, by_id[id(v)].extent), IterKind.SPATIAL)
        for v in order
    )
    dom = [
        Range(substitute_expr(r.min, new_vars), substitute_expr(r.extent, new_vars))
        for r in domain
    ]
    axes = [Var(f"ax{k}", r.min.dtype) for k, r in enumerate(dom)]
    # ``0 + ax`` folds to ``ax``, as TVM's ``+`` folds it
    indices: list[PrimExpr] = [
        ax if isinstance(r.min, IntImm) and r.min.value == 0 else r.min + ax
        for r, ax in zip(dom, axes)
    ]
    body: Stmt = BufferStore(target, BufferLoad(source, tuple(indices)), tuple(indices))
    for ax, r in reversed(list(zip(axes, dom))):
        body = For(ax, const(0, ax.dtype), r.extent, ForKind.SERIAL, body)
    block = Block(
        iter_vars,
        (BufferRegion(source, tuple(dom)),),
        (BufferRegion(target, tuple(dom)),),
        name,
        body,
        annotations={"auto_copy": True},
    )
    return BlockRealize(tuple(order), const(True), block)


def _match(old: Stmt, new: Stmt, reuse: dict[Stmt, Stmt]) -> None:
    """The blocks and loops of a rewritten subtree continue the old ones (same shape)."""
    olds = [n for n in walk_preorder(old) if isinstance(n, (Block, For))]
    news = [n for n in walk_preorder(new) if isinstance(n, (Block, For))]
    for a, b in zip(olds, news):
        if a is not b:
            reuse[a] = b
