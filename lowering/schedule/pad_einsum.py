"""pad_einsum(block, padding): pad an einsum-like block's iteration space to multiples of
``padding`` (TVM v0.16's ``PadEinsum``, padding by factor).

An einsum block reads and writes each buffer once, each access at plain iter vars or
constants (``C[i, j] += A[i, k] * B[k, j]``). Each iter var's extent becomes
``ceildiv(extent, factor) * factor``, and so does the loop bound to it alone. Every buffer
the block accesses at a padded iter var gets a copy ``<name>_pad``, allocated in the scope
block, whose shape is, per axis, the padded extent of the iter var there (1 at a constant,
the buffer's extent at an iter var not padded): a block ``<name>_pad`` before the scope's
statement holding the block fills an input's copy (``T.if_then_else(v < extent, X[v], 0)``
on the axes that grew), the block computes on the copies, and a block ``<name>_pad``
after that statement copies an output's copy back over the output's shape.

Refused, as in TVM: a padding that is not one positive factor per iter var, a block that is
not an einsum, a scope that is not a stage pipeline. Refused here where TVM builds a
program that goes out of bounds: a constant index other than 0 on a padded buffer (the
copy has one element on that axis), an output whose copy is smaller than itself on some
axis (the copy back reads past the copy), and loops above the block holding other blocks
(their iterations would grow too).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from irbuilder.ir import (
    Add,
    Block,
    BlockRealize,
    Buffer,
    BufferLoad,
    BufferRegion,
    BufferStore,
    FloatImm,
    For,
    ForKind,
    IntImm,
    IterKind,
    IterVar,
    PrimExpr,
    Range,
    SeqStmt,
    Stmt,
    StmtExprMutator,
    Sub,
    Var,
    const,
    make_data_var,
    post_order_visit,
    rebuild,
    seq,
    structural_equal,
)
from irbuilder.ir.expr_text import expr_text, strip_parens
from irbuilder.ir.traps import may_trap
from irbuilder.tir.exprs import if_then_else
from lowering.analysis.vars import depends_on
from lowering.arith import simplify_expr

from .edit import refresh_regions
from .error import ScheduleError, fail
from .stage_pipeline import uncovered_read
from .state import ScheduleState
from .tensorize_match import prove_equal

__all__ = ["pad_einsum"]

_NAME = "pad_einsum"


def _einsum_indices(region: BufferRegion) -> list[PrimExpr] | None:
    """The region's indices when each is one element at a Var or a constant."""
    indices: list[PrimExpr] = []
    for rng in region.region:
        if not (isinstance(rng.extent, IntImm) and rng.extent.value == 1):
            return None
        if not isinstance(rng.min, (IntImm, Var)):
            return None
        indices.append(rng.min)
    return indices


def _check_einsum(state: ScheduleState, block: Block) -> None:
    seen: set[int] = set()
    own = {iv.var for iv in block.iter_vars}
    for region in (*block.reads, *block.writes):
        indices = _einsum_indices(region)
        if id(region.buffer) in seen or indices is None:
            raise fail(
                state, _NAME, f"The block {block.name_hint!r} is not a computation of Einsum "
                "pattern: it must read and write each buffer once, at iter vars or constants "
                f"(not {region.buffer.name} as accessed)", block,
            )
        outer = [i for i in indices if isinstance(i, Var) and i not in own]
        if outer:
            # the copies are made at the scope, whole: an index fixed by an enclosing block
            # leaves the other rows of an output's copy unwritten, and they are copied back
            raise fail(
                state, _NAME, f"block {block.name_hint!r} accesses {region.buffer.name} at "
                f"{outer[0].name}, which is not one of its iter vars: its padded copy, made "
                "whole at the scope, would copy back elements the block does not write", block,
            )
        seen.add(id(region.buffer))


@dataclass
class _Padded:
    """A buffer the block accesses at a padded iter var and its padded copy."""

    buffer: Buffer
    copy: Buffer


def _padded_copy(
    state: ScheduleState, block: Block, region: BufferRegion, extents: dict[Var, PrimExpr]
) -> _Padded:
    buffer = region.buffer
    shape: list[PrimExpr] = []
    for axis, rng in enumerate(region.region):
        index = rng.min
        if isinstance(index, IntImm):
            if index.value != 0:
                raise fail(
                    state, _NAME, f"{buffer.name} is accessed at the constant {index.value} on "
                    f"axis {axis}; its padded copy would have one element there (TVM builds "
                    "an access out of its bounds)", block,
                )
            shape.append(const(1, index.dtype))
        elif isinstance(index, Var) and index in extents:
            shape.append(extents[index])
        else:
            shape.append(buffer.shape[axis])
    name = f"{buffer.name}_pad"
    copy = Buffer(
        name, make_data_var(name, buffer.dtype, buffer.scope), tuple(shape), buffer.dtype,
        scope=buffer.scope,
    )
    return _Padded(buffer, copy)


def _copy_nest(padded: _Padded, reading: bool) -> Stmt:
    """The block ``<name>_pad`` filling the copy of an input (over the copy's shape) or
    copying the copy of an output back (over the output's shape)."""
    source, target = (padded.buffer, padded.copy) if reading else (padded.copy, padded.buffer)
    dims = padded.copy.shape if reading else padded.buffer.shape
    loop_vars = [Var(f"i{k}", d.dtype) for k, d in enumerate(dims)]
    iter_vars = [
        IterVar(Var(f"v{k}", d.dtype), Range(const(0, d.dtype), d), IterKind.SPATIAL)
        for k, d in enumerate(dims)
    ]
    indices = tuple(iv.var for iv in iter_vars)
    value: PrimExpr = BufferLoad(source, indices)
    if reading:
        guard: PrimExpr | None = None
        for index, mine, padded_dim in zip(indices, padded.buffer.shape, padded.copy.shape):
            if not prove_equal(mine, padded_dim):
                term = index < mine
                guard = term if guard is None else guard & term
        if guard is not None:
            value = if_then_else(guard, value, const(0, source.dtype))
    body = BufferStore(target, value, indices)
    block = refresh_regions(Block(tuple(iter_vars), (), (), padded.copy.name, body))
    stmt: Stmt = BlockRealize(tuple(loop_vars), const(True), block)
    for var, dim in reversed(list(zip(loop_vars, dims))):
        stmt = For(var, const(0, dim.dtype), dim, ForKind.SERIAL, stmt)
    return stmt


class _Replacer(StmtExprMutator):
    """The scope's statement holding the block, on the padded copies, with the padded iter
    vars' domains and the loops bound to them extended."""

    def __init__(
        self, block: Block, iter_extents: dict[Var, PrimExpr], loop_extents: dict[Var, PrimExpr],
        copies: dict[Buffer, Buffer],
    ) -> None:
        self.block = block
        self.iter_extents = iter_extents
        self.loop_extents = loop_extents
        self.copies = copies
        self.reuse: dict[Stmt, Stmt] = {}

    def visit_buffer(self, buffer: Buffer) -> Buffer:
        return self.copies.get(buffer, buffer)

    def visit_stmt(self, stmt: Stmt) -> Stmt:
        new = super().visit_stmt(stmt)
        if isinstance(stmt, For):
            assert isinstance(new, For)
            extent = self.loop_extents.get(stmt.loop_var)
            if extent is not None:
                new = rebuild(new, {"extent": extent})
            self.reuse[stmt] = new
        elif isinstance(stmt, Block):
            assert isinstance(new, Block)
            if stmt is self.block:
                ivs = tuple(
                    rebuild(iv, {"dom": Range(iv.dom.min, self.iter_extents[iv.var])})
                    if iv.var in self.iter_extents
                    else iv
                    for iv in new.iter_vars
                )
                new = rebuild(new, {"iter_vars": ivs})
            new = refresh_regions(new)
            self.reuse[stmt] = new
        return new


def _padded_extent(extent: PrimExpr, factor: int) -> PrimExpr:
    step = const(factor, extent.dtype)
    return simplify_expr((extent + step - const(1, extent.dtype)) // step * step)


def pad_einsum(state: ScheduleState, block: Block, padding: Sequence[int]) -> None:
    index = state.index
    realize = index.realize_of(block)
    scope = index.scope_block(realize)
    if scope.init is not None and any(
        a is scope.init for a in (realize, *index.ancestors(realize))
    ):
        raise fail(
            state, _NAME, f"block {block.name_hint!r} is in the init of block "
            f"{scope.name_hint!r}; only a block of its scope's body can be padded", block,
        )
    uncovered = uncovered_read(state, scope)
    if uncovered is not None:
        reader, region = uncovered
        raise fail(
            state, _NAME, f"The scope root is not a stage pipeline: block {reader.name_hint!r} "
            f"reads elements of {region.buffer.name!r} that no earlier block is shown to "
            "write", block,
        )
    if len(padding) != len(block.iter_vars) or any(p <= 0 for p in padding):
        raise fail(
            state, _NAME, f"The padding for the block {block.name_hint!r} are invalid. It "
            f"should be a list of {len(block.iter_vars)} positive integers. Got "
            f"{list(padding)}", block,
        )
    _check_einsum(state, block)
    iter_extents: dict[Var, PrimExpr] = {}
    loop_extents: dict[Var, PrimExpr] = {}
    loops = {lp.loop_var: lp for lp in index.loops_above(block)}
    for iv, value, factor in zip(block.iter_vars, realize.iter_values, padding):
        extent = _padded_extent(iv.dom.extent, factor)
        if prove_equal(extent, iv.dom.extent):
            continue
        iter_extents[iv.var] = extent
        if not isinstance(value, Var):
            continue  # TVM grows only a loop bound alone to the iter var
        loop = loops.get(value)
        if loop is None:
            continue
        inside = index.blocks_below(loop)
        if len(inside) != 1 or inside[0] is not block:
            raise fail(
                state, _NAME, f"loop {loop.loop_var.name} holds other blocks than "
                f"{block.name_hint!r}, whose iterations would grow with it", loop,
            )
        loop_extents[value] = extent
    _check_padded_iterations(state, block, iter_extents)
    holder = _scope_statement(state, scope, realize)
    visible = _scope_buffers(state, scope)
    inputs: list[_Padded] = []
    outputs: list[_Padded] = []
    for regions, found in ((block.reads, inputs), (block.writes, outputs)):
        for region in regions:
            if any(isinstance(r.min, Var) and r.min in iter_extents for r in region.region):
                if region.buffer not in visible:
                    raise fail(
                        state, _NAME, f"{region.buffer.name!r} is declared inside the scope "
                        f"of block {scope.name_hint!r} (T.decl_buffer, T.allocate_const, a "
                        "view): its padded copy, made at the scope, could not read or write "
                        "it there", block,
                    )
                found.append(_padded_copy(state, block, region, iter_extents))
    for out in outputs:
        for axis, (mine, padded_dim) in enumerate(zip(out.buffer.shape, out.copy.shape)):
            if isinstance(mine, IntImm) and isinstance(padded_dim, IntImm) and (
                padded_dim.value < mine.value
            ):
                raise fail(
                    state, _NAME, f"block {block.name_hint!r} writes {padded_dim.value} of the "
                    f"{mine.value} elements of {out.buffer.name} on axis {axis}; copying its "
                    "padded copy back would read past the copy (TVM builds that)", block,
                )
    replacer = _Replacer(
        block, iter_extents, loop_extents, {p.buffer: p.copy for p in (*inputs, *outputs)}
    )
    rewritten = replacer.visit_stmt(holder)
    stmts = [
        *(_copy_nest(p, reading=True) for p in inputs),
        rewritten,
        *(_copy_nest(p, reading=False) for p in outputs),
    ]
    new_scope = rebuild(
        scope,
        {
            "body": _replace_in_body(scope.body, holder, stmts),
            "alloc_buffers": (*scope.alloc_buffers, *(p.copy for p in (*inputs, *outputs))),
        },
    )
    reuse = dict(replacer.reuse)
    reuse[scope] = new_scope
    state.replace(scope, new_scope, reuse)


class _PadZero(StmtExprMutator):
    """Loads at an index of the padded reduction variables read the padding's zero."""

    def __init__(self, reduce_vars: list[Var]) -> None:
        self.reduce_vars = reduce_vars

    def visit_buffer_load_(self, load: BufferLoad) -> PrimExpr:
        if any(depends_on(i, v) for i in load.indices for v in self.reduce_vars):
            return const(0, load.dtype)
        return self.generic_mutate(load)


def _without_zero_terms(expr: PrimExpr) -> PrimExpr:
    """``x + 0``, ``0 + x``, ``x - 0`` as ``x`` (floats too: the simplifier keeps ``x + 0.0``,
    which turns a -0.0 into 0.0 and is otherwise ``x``; TVM folds it)."""
    while isinstance(expr, (Add, Sub)):
        if _is_zero(expr.b):
            expr = expr.a
        elif isinstance(expr, Add) and _is_zero(expr.a):
            expr = expr.b
        else:
            break
    return expr


def _is_zero(expr: PrimExpr) -> bool:
    return isinstance(expr, (IntImm, FloatImm)) and expr.value == 0


def _check_padded_iterations(
    state: ScheduleState, block: Block, padded: dict[Var, PrimExpr]
) -> None:
    """The iterations padding adds must change nothing the block's consumers see: their
    value may not trap (an integer division by a padded zero), and an added iteration of a
    reduction must leave the accumulator as it is once every load at a padded reduction
    index reads the padding's zero (``S + A*B`` does; ``max(M, A)``, ``S + exp(A)`` do not:
    TVM pads them all the same and the result changes)."""
    if not padded:
        return
    stores: list[BufferStore] = []
    post_order_visit(block.body, lambda n: stores.append(n) if isinstance(n, BufferStore) else None)
    for store in stores:
        if may_trap(store.value):
            raise fail(
                state, _NAME, f"block {block.name_hint!r} divides by a value the padding "
                "may make zero (an integer division or modulo): the added iterations would "
                "trap", block,
            )
    reduce_vars = [iv.var for iv in block.iter_vars
                   if iv.var in padded and iv.kind is IterKind.REDUCE]
    if not reduce_vars:
        return
    for store in stores:
        acc = BufferLoad(store.buffer, store.indices)
        value = simplify_expr(_PadZero(reduce_vars).visit_expr(store.value))
        if not structural_equal(_without_zero_terms(value), acc):
            names = ", ".join(v.name for v in reduce_vars)
            raise fail(
                state, _NAME, f"padding the reduction over {names} of block "
                f"{block.name_hint!r} adds iterations whose update is not the identity on "
                f"the padding's zeros ({store.buffer.name} becomes "
                f"{strip_parens(expr_text(value))}): only a sum of products pads exactly",
                block,
            )


def _scope_buffers(state: ScheduleState, scope: Block) -> set[Buffer]:
    """The buffers a statement of ``scope``'s body sees from outside it: the parameters'
    and those the scope and the blocks around it allocate."""
    visible = set(state.func.buffer_map.values())
    for node in (scope, *state.index.ancestors(scope)):
        if isinstance(node, Block):
            visible.update(node.alloc_buffers)
    return visible


def _scope_statement(state: ScheduleState, scope: Block, realize: BlockRealize) -> Stmt:
    """The statement of the scope's body (an item of its sequence) holding ``realize``."""
    node: Stmt = realize
    for parent in state.index.ancestors(realize):
        if parent is scope or (isinstance(parent, SeqStmt) and state.index.parent.get(
            id(parent)) is scope):
            return node
        node = parent
    raise ScheduleError(_NAME, "the block is not inside its scope block")


def _replace_in_body(body: Stmt, holder: Stmt, stmts: list[Stmt]) -> Stmt:
    if isinstance(body, SeqStmt):
        items: list[Stmt] = []
        for stmt in body.seq:
            items.extend(stmts if stmt is holder else [stmt])
        return seq(items)
    assert body is holder
    return seq(stmts)
