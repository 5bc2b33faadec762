"""reverse_compute_at of a reduction block (TVM's factorized reduction: the final sum moved
under the loop that produces its partial sums).

A complete block may run an instance twice (it writes the same value again), but a
reduction instance adds into its output: each must run exactly once, its init instance
first, and only after what it reads is final. This module proves that, or says why not:

* *Exactly once, init first*: the new block's bindings, over the loops enclosing it inside
  its scope (the target loop and its ancestors, then the new ones), are affine with every
  loop feeding a distinct digit, cover each iter var's domain once, and the loops' iteration
  count equals the domain's size (no loop re-runs instances). With positive digit scales the
  instance whose reduction vars are all at their minimum comes first among those writing
  one element.
* *Inputs final*: each buffer the block reads from under the loop has one producer there,
  storing at distinct iter vars, with full-domain affine bindings whose reduction vars (if
  any) are fed only by loops inside the target loop (a partial sum is complete at the end of
  the iteration), and the loops inside the target loop that feed its spatial vars run as many
  points as the region the block is placed for: that region is then written exactly, in this
  iteration only (the producer's stores are injective), so every instance reading it runs
  after its data is final.
"""

from __future__ import annotations

from collections.abc import Sequence

from irbuilder.ir import (
    Block,
    BlockRealize,
    Buffer,
    BufferRegion,
    BufferStore,
    For,
    IntImm,
    IterKind,
    Stmt,
    Var,
    post_order_visit,
)
from lowering.analysis.vars import depends_on

from .affine import bindings_affine
from .affine_symbolic import covers_once, loop_sums, product
from .analysis import block_access, constant_extents
from .state import TreeIndex

__all__ = ["reduction_consumer_problem"]


def _loops_in_scope(index: TreeIndex, loop: For) -> list[For]:
    """``loop`` and the loops above it up to its scope block, outermost first."""
    out = [loop]
    for node in index.ancestors(loop):
        if isinstance(node, Block):
            break
        if isinstance(node, For):
            out.append(node)
    return out[::-1]


def _runs_once(index: TreeIndex, loop: For, block: Block, nest: Stmt) -> str | None:
    loops = _loops_in_scope(index, loop)
    node = nest
    while isinstance(node, For):
        loops.append(node)
        node = node.body
    assert isinstance(node, BlockRealize)
    if not (isinstance(node.predicate, IntImm) and node.predicate.value == 1):
        return "its new place needs a predicate"
    extents = constant_extents(loops)
    if extents is None:
        return _runs_once_symbolic(loops, node, block)
    sums = bindings_affine(node.iter_values, extents)
    if sums is None:
        return "its new bindings are not affine in the loops around it"
    size = 1
    for iv, found in zip(block.iter_vars, sums):
        lo, ext = iv.dom.min, iv.dom.extent
        if not (isinstance(lo, IntImm) and isinstance(ext, IntImm)):
            return f"iter var {iv.var.name!r} has a symbolic domain"
        if found.base != lo.value or found.extent != ext.value:
            return f"the loops around it do not run iter var {iv.var.name!r} exactly once"
        size *= ext.value
    runs = 1
    for extent in extents.values():
        runs *= extent
    if runs != size:
        return "a loop around its new place would run its instances again"
    return None


def _runs_once_symbolic(loops: Sequence[For], node: BlockRealize, block: Block) -> str | None:
    """:func:`_runs_once` over loops of symbolic extents (monomials of shape vars)."""
    sums = loop_sums(loops, node.iter_values)
    if sums is None:
        return "its new bindings are not affine in the loops around it"
    for iv, found in zip(block.iter_vars, sums):
        if not covers_once(found, iv.dom):
            return f"the loops around it do not run iter var {iv.var.name!r} exactly once"
    runs = product([lp.extent for lp in loops])
    size = product([iv.dom.extent for iv in block.iter_vars])
    if runs is None or runs != size:
        return "a loop around its new place would run its instances again"
    return None


def _point_store(block: Block, buffer: Buffer) -> bool:
    """Every store of ``buffer`` is at distinct iter vars of ``block`` or constants
    (injective)."""
    iter_ids = {id(iv.var) for iv in block.iter_vars}
    ok = True
    seen = False

    def visit(node: object) -> None:
        nonlocal ok, seen
        if isinstance(node, Block) and node is not block:
            ok = False
        if isinstance(node, BufferStore) and node.buffer is buffer:
            seen = True
            # a constant index (``C_rf[v, 0]``) takes nothing from injectivity
            varying = [i for i in node.indices if not isinstance(i, IntImm)]
            ids = [id(i) for i in varying]
            if not all(isinstance(i, Var) and id(i) in iter_ids for i in varying):
                ok = False
            elif len(set(ids)) != len(ids):
                ok = False

    post_order_visit(block.body, visit)
    if block.init is not None:
        post_order_visit(block.init, visit)
    return ok and seen


def _stored_vars(block: Block, buffer: Buffer) -> list[Var]:
    found: list[Var] = []

    def visit(node: object) -> None:
        if isinstance(node, BufferStore) and node.buffer is buffer:
            found.extend(i for i in node.indices if isinstance(i, Var))

    post_order_visit(block.body, visit)
    return found


def _exact_producer(
    index: TreeIndex, loop: For, producer: Block, buffer: Buffer, written: BufferRegion
) -> str | None:
    name = producer.name_hint
    if not _point_store(producer, buffer):
        return f"producer {name!r} does not store {buffer.name!r} at distinct iter vars"
    stored = {id(v) for v in _stored_vars(producer, buffer)}
    for iv in producer.iter_vars:
        wide = not (isinstance(iv.dom.extent, IntImm) and iv.dom.extent.value == 1)
        if iv.kind == IterKind.SPATIAL and wide and id(iv.var) not in stored:
            # two instances would write one point: the later one decides its value
            return (
                f"producer {name!r} does not store {buffer.name!r} at its iter var "
                f"{iv.var.name!r}"
            )
    realize = index.realize_of(producer)
    loops = index.loops_above(producer)
    extents = constant_extents(loops)
    if extents is None:
        symbolic = loop_sums(loops, realize.iter_values)
        if symbolic is None:
            return f"producer {name!r} does not have affine bindings"
        if not all(covers_once(f, iv.dom) for iv, f in zip(producer.iter_vars, symbolic)):
            return f"the loops of producer {name!r} do not cover its domain once"
    else:
        sums = bindings_affine(realize.iter_values, extents)
        if sums is None:
            return f"producer {name!r} does not have affine bindings"
        for iv, found in zip(producer.iter_vars, sums):
            lo, ext = iv.dom.min, iv.dom.extent
            if not (isinstance(lo, IntImm) and isinstance(ext, IntImm)):
                return f"producer {name!r} has a symbolic domain"
            if found.base != lo.value or found.extent != ext.value:
                return f"the loops of producer {name!r} do not cover its domain once"
    inner = [lp for lp in loops if lp is not loop and not index.is_ancestor(lp, loop)]
    inner_ids = {id(lp.loop_var) for lp in inner}
    points = 1
    for lp in inner:
        feeds = [
            iv
            for iv, value in zip(producer.iter_vars, realize.iter_values)
            if depends_on(value, lp.loop_var)
        ]
        if len(feeds) > 1:
            return f"loop {lp.loop_var.name!r} feeds several iter vars of producer {name!r}"
        if any(iv.kind == IterKind.SPATIAL for iv in feeds):
            if not isinstance(lp.extent, IntImm):
                return f"loop {lp.loop_var.name!r} inside the target loop has a symbolic extent"
            points *= lp.extent.value
    for iv, value in zip(producer.iter_vars, realize.iter_values):
        if iv.kind == IterKind.SPATIAL:
            continue
        outer = [lp for lp in loops if id(lp.loop_var) not in inner_ids]
        if any(depends_on(value, lp.loop_var) for lp in outer):
            return (
                f"producer {name!r} reduces over a loop outside the target loop: its values "
                "are partial at the end of an iteration"
            )
    volume = 1
    for rng in written.region:
        if not isinstance(rng.extent, IntImm):
            return f"the region of {buffer.name!r} written per iteration is not constant"
        volume *= rng.extent.value
    if volume != points:
        return (
            f"producer {name!r} does not write all of the region of {buffer.name!r} it "
            "spans in one iteration"
        )
    return None


def reduction_consumer_problem(
    index: TreeIndex,
    loop: For,
    block: Block,
    producers: Sequence[Block],
    written: dict[int, BufferRegion],
    nest: Stmt,
) -> str | None:
    """Why moving the reduction ``block`` as ``nest`` under ``loop`` could change its result
    (None: it cannot). ``written``: buffer id -> the region produced per iteration."""
    problem = _runs_once(index, loop, block, nest)
    if problem is not None:
        return problem
    for region in written.values():
        makers = [
            p for p in producers if any(w is region.buffer for w in block_access(p).write_buffers)
        ]
        if len(makers) != 1:
            return f"{len(makers)} blocks under the loop write {region.buffer.name!r}"
        problem = _exact_producer(index, loop, makers[0], region.buffer, region)
        if problem is not None:
            return problem
    return None
