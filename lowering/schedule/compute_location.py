"""sample_compute_location: the places a block may be computed at, and a random pick.

The candidates are TVM's: ``-2`` (inline the block) when ``compute_inline`` would accept it,
``-1`` (leave it where it is, TVM's "compute root"), then the positions ``i`` of the first
consumer's loops, outermost first, down to the innermost loop holding every consumer,
skipping unit loops, stopping at a spatial loop found after a reduction loop and at a
reduction loop below the last spatial one, and keeping only loops where ``compute_at``
(with ``preserve_unit_loops=True``) is accepted. Acceptance is decided by running the
primitive on a scratch state, so a candidate is exactly what ``compute_at`` would apply.
"""

from __future__ import annotations

from typing import Final

from irbuilder.ir import Block, BlockRealize, For, IntImm, IterKind, Stmt, Var, post_order_visit

from . import compute_at as compute_at_prims
from . import inline
from .analysis import block_access
from .error import ScheduleError
from .sampling import TvmRandom
from .state import ScheduleState, child_stmts

__all__ = ["INLINE", "ROOT", "LocationMark", "collect_compute_locations", "sample_location"]


class LocationMark:
    """What a sampled ``LoopRV`` stands for when the choice is not a loop: TVM's root and
    inline marks (``compute_at`` at the root mark does nothing, at the inline mark inlines)."""

    __slots__ = ("decision", "name")

    def __init__(self, name: str, decision: int) -> None:
        self.name = name
        self.decision = decision

    def __repr__(self) -> str:
        return f"LocationMark({self.name})"


ROOT: Final = LocationMark("root", -1)
INLINE: Final = LocationMark("inline", -2)

Location = For | LocationMark


def _consumers(state: ScheduleState, block: Block) -> list[Block]:
    """Later blocks of the same scope reading what ``block`` writes (TVM's RAW consumers)."""
    index = state.index
    siblings = index.child_blocks(index.scope_block(index.realize_of(block)))
    writes = {id(b) for b in block_access(block).write_buffers}
    position = next(k for k, b in enumerate(siblings) if b is block)
    return [
        other
        for other in siblings[position + 1 :]
        if writes & {id(b) for b in block_access(other).read_buffers}
    ]


def _sref_parent(state: ScheduleState, stmt: Stmt) -> Stmt | None:
    """The innermost loop or block strictly above ``stmt`` (TVM's sref parent)."""
    for node in state.index.ancestors(stmt):
        if isinstance(node, (For, Block)) and node is not stmt:
            return node
    return None


def _boundary(state: ScheduleState, consumers: list[Block]) -> Stmt | None:
    """The innermost loop or block holding every consumer."""
    if len(consumers) == 1:
        return _sref_parent(state, consumers[0])
    chains = []
    for consumer in consumers:
        chain: list[Stmt] = [consumer]
        chain += [n for n in state.index.ancestors(consumer) if isinstance(n, (For, Block))]
        chains.append(chain)
    others = [{id(n) for n in chain} for chain in chains[1:]]
    for node in chains[0]:
        if all(id(node) in seen for seen in others):
            return node
    return None


def _loop_kind(loop: For) -> IterKind:
    """TVM's loop iter type: the kind of the iter vars bound to the loop's var over the
    blocks right below it (OPAQUE when they mix spatial and reduction, or are of another
    kind)."""
    counts = {IterKind.SPATIAL: 0, IterKind.REDUCE: 0, IterKind.OPAQUE: 0}
    var = loop.loop_var

    def uses(expr: object) -> int:
        hits = 0

        def visit(node: object) -> None:
            nonlocal hits
            if isinstance(node, Var) and node is var:
                hits += 1

        post_order_visit(expr, visit)  # type: ignore[arg-type]
        return hits

    stack: list[Stmt] = [loop.body]
    while stack:
        node = stack.pop()
        if isinstance(node, BlockRealize):
            for iv, value in zip(node.block.iter_vars, node.iter_values):
                kind = iv.kind
                if kind not in (IterKind.SPATIAL, IterKind.REDUCE):
                    kind = IterKind.OPAQUE
                counts[kind] += uses(value)
            continue
        stack.extend(child_stmts(node))
    if counts[IterKind.OPAQUE] or (counts[IterKind.SPATIAL] and counts[IterKind.REDUCE]):
        return IterKind.OPAQUE
    if counts[IterKind.REDUCE]:
        return IterKind.REDUCE
    return IterKind.SPATIAL


def _accepted(state: ScheduleState, action: object) -> bool:
    """Whether a primitive applies, tried on a scratch state (the real one is untouched)."""
    scratch = ScheduleState(state.func, state.had_root)
    scratch.begin()
    try:
        action(scratch)  # type: ignore[operator]
    except ScheduleError:
        return False
    return True


def collect_compute_locations(state: ScheduleState, block: Block) -> list[tuple[int, Location]]:
    """The candidates as (decision, location), in TVM's order (decisions increasing)."""
    found: list[tuple[int, Location]] = []
    if _accepted(state, lambda st: inline.compute_inline(st, block)):
        found.append((INLINE.decision, INLINE))
    found.append((ROOT.decision, ROOT))
    consumers = _consumers(state, block)
    if not consumers:
        return found
    boundary = _boundary(state, consumers)
    if not isinstance(boundary, For):
        return found
    loops = state.index.loops_above(consumers[0])
    position = next((k for k, lp in enumerate(loops) if lp is boundary), None)
    if position is None:
        return found
    candidates = loops[: position + 1]
    kinds = [_loop_kind(lp) for lp in candidates]
    last_spatial = max((k for k, t in enumerate(kinds) if t == IterKind.SPATIAL), default=-1)
    seen_reduce = False
    for k, loop in enumerate(candidates):
        if isinstance(loop.extent, IntImm) and loop.extent.value == 1:
            continue
        if kinds[k] == IterKind.SPATIAL:
            if seen_reduce:
                break
        else:
            seen_reduce = True
            if k > last_spatial:
                break
        if _accepted(
            state,
            lambda st, lp=loop: compute_at_prims.compute_at(st, block, lp, True, -1),
        ):
            found.append((k, loop))
    return found


def sample_location(
    state: ScheduleState, block: Block, decision: int | None, rand: TvmRandom
) -> tuple[int, Location]:
    """One candidate, uniformly at random, or the one ``decision`` names (TVM: a decision
    that is no longer a candidate falls back to the nearest candidate before it)."""
    found = collect_compute_locations(state, block)
    if decision is None:
        return found[rand.sample_int(0, len(found))]
    before = [entry for entry in found if entry[0] <= decision]
    if before:
        return before[-1]
    return ROOT.decision, ROOT
