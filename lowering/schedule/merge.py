"""``merge``: loop nests of equal shape under one scope become one nest whose innermost
loop runs their bodies one after the other (TVM v0.16's Merge).

Given loops ``L_1..L_n``, each nest is the chain of loops from ``L_k`` up to (not
including) the loops' lowest common ancestor. The nests must have the same depth and
provably equal extents, every loop of them starting at 0 with no annotation or thread
binding, each the only statement of the loop above it, all under the same block. The new
nest (serial loops named after the first nest's with ``_m``) stands where the last given
nest stood; the other nests are removed.

As in TVM, the data dependences between the nests are not checked: merging runs the
second nest's iteration ``x`` before the first nest's iteration ``x + 1``, which is the
user's call (``debug_mask="all"`` runs both functions and reports a changed result).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from irbuilder.ir import (
    Block,
    Evaluate,
    For,
    ForKind,
    IntImm,
    PrimExpr,
    SeqStmt,
    Stmt,
    StmtExprMutator,
    Var,
    const,
    rebuild,
    seq,
)
from lowering.analysis.substitute import Substituter
from lowering.arith import Analyzer

from .error import fail
from .state import ScheduleState, walk_preorder

__all__ = ["merge"]

_NAME = "merge"


def merge(state: ScheduleState, loops: Sequence[For]) -> For:
    index = state.index
    if len(loops) < 2 or len({id(lp) for lp in loops}) != len(loops):
        raise fail(state, _NAME, "needs at least two distinct loops", *loops)
    lca = _lowest_common_ancestor(state, loops)
    nests: list[list[For]] = []  # each outermost first
    scope: Block | None = None
    for loop in loops:
        chain: list[For] = []
        node: Stmt = loop
        while node is not lca:
            if isinstance(node, For):
                chain.append(node)
            parent = index.parent.get(id(node))
            assert parent is not None  # the root block is an ancestor of every loop
            node = parent
        chain.reverse()
        if not chain:
            raise fail(
                state, _NAME, f"loop {loop.loop_var.name!r} holds another of the merged loops",
                loop,
            )
        for member in chain:
            if member.annotations or member.thread_binding is not None:
                raise fail(
                    state,
                    _NAME,
                    f"loop {member.loop_var.name!r} has annotations or a thread binding; "
                    "remove them before this primitive",
                    member,
                )
            if not (isinstance(member.min, IntImm) and member.min.value == 0):
                raise fail(state, _NAME, f"loop {member.loop_var.name!r} does not start at 0",
                           member)
        for outer, inner in itertools.pairwise(chain):
            if outer.body is not inner:
                raise fail(
                    state,
                    _NAME,
                    f"loop {inner.loop_var.name!r} is not the only statement directly inside "
                    f"loop {outer.loop_var.name!r}",
                    outer,
                    inner,
                )
        own_scope = index.scope_block(loop)
        if scope is None:
            scope = own_scope
        elif own_scope is not scope:
            raise fail(state, _NAME, "the loops are not under the same block scope", *loops)
        nests.append(chain)
    assert scope is not None
    _check_same_shape(state, nests)
    first = nests[0]
    new_vars = [Var(lp.loop_var.name + "_m", lp.loop_var.dtype) for lp in first]
    reuse: dict[Stmt, Stmt] = {}
    bodies: list[Stmt] = []
    for chain in nests:
        vmap: dict[Var, PrimExpr] = {lp.loop_var: v for lp, v in zip(chain, new_vars)}
        old_body = chain[-1].body
        new_body = Substituter(vmap).visit_stmt(old_body)
        _match_nodes(old_body, new_body, reuse)
        bodies.append(new_body)
    # the given loops' level runs the bodies in the order the loops were given
    innermost = For(new_vars[-1], const(0, new_vars[-1].dtype), first[-1].extent,
                    ForKind.SERIAL, seq(bodies))
    outer = innermost
    for var, loop in reversed(list(zip(new_vars[:-1], first[:-1]))):
        outer = For(var, const(0, var.dtype), loop.extent, ForKind.SERIAL, outer)
    rewriter = _Rewriter(nests[-1][0], {id(c[0]) for c in nests[:-1]}, outer, reuse)
    new_scope_body = rewriter.visit_stmt(scope.body)
    new_scope = rebuild(scope, {"body": new_scope_body})
    reuse[scope] = new_scope
    realize = index.realize_of(scope)
    state.replace(realize, rebuild(realize, {"block": new_scope}), reuse)
    return innermost


def _lowest_common_ancestor(state: ScheduleState, loops: Sequence[For]) -> Stmt:
    index = state.index
    paths = [[*reversed(list(index.ancestors(lp))), lp] for lp in loops]
    common: Stmt = paths[0][0]
    for depth in range(min(len(p) for p in paths)):
        node = paths[0][depth]
        if all(p[depth] is node for p in paths):
            common = node
        else:
            break
    return common


def _check_same_shape(state: ScheduleState, nests: list[list[For]]) -> None:
    first = nests[0]
    analyzer = Analyzer()
    for chain in nests[1:]:
        if len(chain) != len(first):
            raise fail(
                state,
                _NAME,
                f"the merged loops' nests must have the same depth below their common "
                f"ancestor: {len(first)} and {len(chain)} loops",
                first[-1],
                chain[-1],
            )
        for mine, theirs in zip(first, chain):
            if not analyzer.can_prove(mine.extent == theirs.extent):
                raise fail(
                    state,
                    _NAME,
                    f"loops {mine.loop_var.name!r} and {theirs.loop_var.name!r} do not have "
                    "the same extent",
                    mine,
                    theirs,
                )


def _match_nodes(old: Stmt, new: Stmt, reuse: dict[Stmt, Stmt]) -> None:
    """Blocks and loops of a substituted body continue the old ones (same tree shape)."""
    olds = [n for n in walk_preorder(old) if isinstance(n, (Block, For))]
    news = [n for n in walk_preorder(new) if isinstance(n, (Block, For))]
    for a, b in zip(olds, news):
        if a is not b:
            reuse[a] = b


class _Rewriter(StmtExprMutator):
    """The scope's body with the last nest replaced by the merged one and the others
    dropped; blocks below are left alone (the nests are directly in this scope)."""

    def __init__(
        self, last: For, dropped: set[int], merged: For, reuse: dict[Stmt, Stmt]
    ) -> None:
        self.last = last
        self.dropped = dropped
        self.merged = merged
        self.reuse = reuse

    def visit_block_(self, block: Block) -> Stmt:
        return block

    def visit_for_(self, loop: For) -> Stmt:
        if loop is self.last:
            return self.merged
        if id(loop) in self.dropped:
            return Evaluate(const(0, "int32"))
        new = self.generic_mutate(loop)
        if new is not loop:
            self.reuse[loop] = new
        return new

    def visit_seq_stmt_(self, stmt: SeqStmt) -> Stmt:
        items = [self.visit_stmt(s) for s in stmt.seq]
        kept = [s for s in items if not _is_no_op(s)]
        if len(kept) == len(stmt.seq) and all(a is b for a, b in zip(kept, stmt.seq)):
            return stmt
        if not kept:
            return Evaluate(const(0, "int32"))
        return seq(kept)


def _is_no_op(stmt: Stmt) -> bool:
    return isinstance(stmt, Evaluate) and isinstance(stmt.value, IntImm)
