"""Block lowering: remove Block/BlockRealize and Reduce, leaving plain loops and stores.

* iteration-variable bindings are substituted into the block body;
* a reduction block's ``init`` becomes ``if <every reduce iter var at its domain
  min>: init`` in front of the body (the condition is on the bound values, so on
  the loop vars that drive the reduction; a value that is a sum of loop variables with
  positive coefficients reaching the min with each loop at its own gives one ``loop var ==
  min`` per loop: ``k_0 == 0 and k_1 == 0`` for ``k_0 * 16 + k_1 == 0``);
* a block predicate (``T.where``) becomes an ``IfThenElse`` around the block;
* ``alloc_buffers`` become ``Allocate`` (one 1-d extent: the product of the shape)
  + ``DeclBuffer``, sunk to the innermost statement that covers every use of the
  buffer -- but never into a loop nested in the block: ``plan_allocation_location``,
  the next pass, decides which loops an allocation enters;
* ``match_buffers`` become views: a ``DeclBuffer`` over the source buffer's data
  var whose ``strides`` are the source's (explicit) strides of the matched dims and
  whose ``elem_offset`` is the source offset plus the region's start; the match
  buffer's own data/shape/stride vars are substituted by those values;
* a ``Reduce`` expression is computed into a one-element local buffer before the
  statement that uses it (init value, then a loop nest over its axes);
* the loops that drive a reduction -- a ``Reduce``'s axes, and each serial loop whose
  variable feeds only reduce iter vars (``vk = k`` or a split's ``vk = k_0 * 16 + k_1``) of
  a block with ``init`` whose body is ``B[...] = B[...] <op> x`` -- get the annotation
  ``{REDUCTION_ANNOTATION: kind}``
  (``"sum"``, ``"prod"``, ``"max"``, ``"min"``): the declared commutative-associative
  update that ``vectorize_reductions`` may reorder into lanes. A block whose body is
  several such updates of independent accumulators (a sum and a sum of squares) is marked
  too: with their common kind, or their kinds in store order joined by ``,``.
"""

from __future__ import annotations

from typing import Any

from irbuilder.ir import (
    REDUCE_COMBINERS,
    Allocate,
    AttrStmt,
    BinaryOp,
    Block,
    BlockRealize,
    Buffer,
    BufferLoad,
    BufferStore,
    DeclBuffer,
    ExprMutator,
    For,
    ForKind,
    IfThenElse,
    IntImm,
    IterKind,
    LetStmt,
    MatchBufferRegion,
    PrimExpr,
    PrimFunc,
    Reduce,
    ReduceKind,
    SeqStmt,
    Stmt,
    StmtExprMutator,
    Sub,
    Var,
    const,
    make_data_var,
    reduce_combine,
    seq,
    structural_equal,
)
from irbuilder.ir.expr_text import expr_text
from irbuilder.ir.linear_form import to_linear

from ..analysis import add, free_vars, mul, product, substitute, uses_buffer_data
from ..pass_infra import function_pass
from .update_lets import inline_update_lets, surely_distinct

__all__ = [
    "LANE_COMBINERS",
    "LANE_REDUCTIONS",
    "REDUCTION_ANNOTATION", "allocation_extent", "contiguous_strides", "lower_blocks"]

REDUCTION_ANNOTATION = "tvmscript.reduction"
"""Loop annotation: the loop drives a declared reduction of this kind (see module doc)."""

LANE_REDUCTIONS: tuple[ReduceKind, ...] = (
    ReduceKind.SUM, ReduceKind.PROD, ReduceKind.MAX, ReduceKind.MIN
)
"""Kinds whose loops are marked (the annotation's value is ``kind.value``); their combiners
are :data:`~irbuilder.ir.reducer.REDUCE_COMBINERS`'."""

LANE_COMBINERS: dict[str, type[BinaryOp]] = {
    kind.value: REDUCE_COMBINERS[kind] for kind in LANE_REDUCTIONS
}
"""Annotation value -> combiner of the marked reductions."""

_LANE_KIND_OF_COMBINER = {REDUCE_COMBINERS[kind]: kind for kind in LANE_REDUCTIONS}


def _store_update(store: Stmt) -> tuple[str, PrimExpr] | None:
    """(kind, x) of ``B[i] = B[i] <op> x`` (either operand order), or None."""
    if not isinstance(store, BufferStore):
        return None
    value = store.value
    if not isinstance(value, BinaryOp):
        return None
    lane_kind = _LANE_KIND_OF_COMBINER.get(type(value))
    if lane_kind is None:
        return None
    for acc, x in ((value.a, value.b), (value.b, value.a)):
        if (
            isinstance(acc, BufferLoad)
            and acc.buffer is store.buffer
            and len(acc.indices) == len(store.indices)
            and all(structural_equal(a, b) for a, b in zip(acc.indices, store.indices))
        ):
            return lane_kind.value, x
    return None


def _update_kind(body: Stmt) -> str | None:
    """The annotation of a reduction block's body, or None.

    The body is one update ``B[i] = B[i] <op> x`` or several in sequence (a block with two
    outputs: a sum and a sum of squares). Each update's ``x`` reads no accumulator of the
    block, and updates of different kinds store to different elements, so every update is
    a reduction of its own that may be reordered independently. The value is the kind, or
    the kinds in store order joined by ``,`` when they differ.
    """
    stores = body.seq if isinstance(body, SeqStmt) else (body,)
    updates = [_store_update(store) for store in stores]
    kinds: list[str] = []
    for update in updates:
        if update is None:
            return None
        kind, x = update
        if any(uses_buffer_data(x, other.buffer.data) for other in stores
               if isinstance(other, BufferStore)):
            return None
        kinds.append(kind)
    for i, a in enumerate(stores):
        for b, kind_b in zip(stores[i + 1 :], kinds[i + 1 :]):
            assert isinstance(a, BufferStore) and isinstance(b, BufferStore)
            if kinds[i] != kind_b and not surely_distinct(a, b):
                return None
    return kinds[0] if len(set(kinds)) == 1 else ",".join(kinds)


def _annotated(loop: For, kind: str) -> For:
    annotations = {**loop.annotations, REDUCTION_ANNOTATION: kind}
    return For(
        loop.loop_var, loop.min, loop.extent, loop.kind, loop.body, loop.thread_binding,
        annotations, span=loop.span,
    )


def contiguous_strides(shape: tuple[PrimExpr, ...]) -> tuple[PrimExpr, ...]:
    """Row-major strides (in elements) of ``shape``."""
    strides: list[PrimExpr] = []
    acc: PrimExpr = const(1, shape[-1].dtype) if shape else const(1)
    for extent in reversed(shape):
        strides.append(acc)
        acc = mul(acc, extent)
    return tuple(reversed(strides))


def allocation_extent(buffer: Buffer) -> PrimExpr:
    """Elements an allocation backing ``buffer`` needs (product of shape, or span of strides)."""
    if not buffer.strides:
        return product(buffer.shape)
    extent: PrimExpr = const(1, buffer.shape[0].dtype) if buffer.shape else const(1)
    for dim, stride in zip(buffer.shape, buffer.strides):
        extent = add(extent, mul(dim - 1, stride))
    return extent


def _is_true(expr: PrimExpr) -> bool:
    return isinstance(expr, IntImm) and expr.dtype.is_bool and expr.value == 1


def _wrap_alloc(stmt: Stmt, buf: Buffer) -> Stmt:
    decl = DeclBuffer(buf, stmt, span=buf.span)
    return Allocate(buf.data, buf.dtype, allocation_extent(buf), const(True), decl, span=buf.span)


def _place_alloc(stmt: Stmt, buf: Buffer) -> Stmt:
    """Wrap the innermost statement (not inside a loop) covering every use of ``buf``."""

    def uses(node: Any) -> bool:
        return node is not None and uses_buffer_data(node, buf.data)

    if isinstance(stmt, SeqStmt):
        hits = [i for i, s in enumerate(stmt.seq) if uses(s)]
        if not hits:
            return _wrap_alloc(stmt, buf)
        lo, hi = hits[0], hits[-1]
        if lo == hi:
            inner = _place_alloc(stmt.seq[lo], buf)
        elif lo == 0 and hi == len(stmt.seq) - 1:
            return _wrap_alloc(stmt, buf)
        else:
            inner = _wrap_alloc(SeqStmt(stmt.seq[lo : hi + 1], span=stmt.span), buf)
        return SeqStmt((*stmt.seq[:lo], inner, *stmt.seq[hi + 1 :]), span=stmt.span)
    if isinstance(stmt, LetStmt) and not uses(stmt.value):
        return LetStmt(stmt.var, stmt.value, _place_alloc(stmt.body, buf), span=stmt.span)
    if isinstance(stmt, AttrStmt) and not uses(stmt.value):
        body = _place_alloc(stmt.body, buf)
        return AttrStmt(stmt.node, stmt.attr_key, stmt.value, body, span=stmt.span)
    if isinstance(stmt, DeclBuffer) and stmt.buffer.data is not buf.data:
        return DeclBuffer(stmt.buffer, _place_alloc(stmt.body, buf), span=stmt.span)
    if isinstance(stmt, IfThenElse) and not uses(stmt.condition):
        in_then, in_else = uses(stmt.then_case), uses(stmt.else_case)
        if in_then and not in_else:
            then = _place_alloc(stmt.then_case, buf)
            return IfThenElse(stmt.condition, then, stmt.else_case, span=stmt.span)
        if in_else and not in_then and stmt.else_case is not None:
            other = _place_alloc(stmt.else_case, buf)
            return IfThenElse(stmt.condition, stmt.then_case, other, span=stmt.span)
    return _wrap_alloc(stmt, buf)


class _ReduceExtractor(ExprMutator):
    """Replaces each outermost Reduce in a statement's own expressions by a temp load."""

    def __init__(self) -> None:
        self.found: list[tuple[Reduce, Buffer]] = []

    def visit_reduce_(self, node: Reduce) -> PrimExpr:
        dtype = node.dtype
        name = f"{node.kind.value}_red"
        data = make_data_var(f"{name}_data", dtype, "local")
        temp = Buffer(name, data, (const(1),), dtype, scope="local", span=node.span)
        self.found.append((node, temp))
        return BufferLoad(temp, (const(0),), span=node.span)


class _BlockLowerer(StmtExprMutator):
    def __init__(self) -> None:
        self.vmap: dict[Var, PrimExpr] = {}
        self.bmap: dict[Buffer, Buffer] = {}
        self.reduce_loops: dict[Var, str] = {}
        self.loop_mins: dict[int, PrimExpr] = {}
        """The lower bound of each loop around the statement being lowered (by var id)."""

    def visit_for_(self, node: For) -> Stmt:
        self.loop_mins[id(node.loop_var)] = node.min
        try:
            lowered = self.generic_mutate(node)
        finally:
            del self.loop_mins[id(node.loop_var)]
        kind = self.reduce_loops.get(node.loop_var)
        if kind is None or not isinstance(lowered, For) or lowered.kind is not ForKind.SERIAL:
            return lowered
        return _annotated(lowered, kind)

    def visit_var_(self, var: Var) -> PrimExpr:
        return self.vmap.get(var, var)

    def visit_buffer(self, buffer: Buffer) -> Buffer:
        return self.bmap.get(buffer, buffer)

    def visit_stmt(self, stmt: Stmt) -> Stmt:
        lowered = super().visit_stmt(stmt)
        return self._expand_reduces(lowered)

    # -- Reduce ----------------------------------------------------------------
    def _expand_reduces(self, stmt: Stmt) -> Stmt:
        if isinstance(stmt, SeqStmt):
            return stmt
        extractor = _ReduceExtractor()
        rewritten = extractor.generic_mutate(stmt)
        if not extractor.found:
            return stmt
        parts: list[Stmt] = []
        for reduce, temp in extractor.found:
            parts.append(BufferStore(temp, reduce.init, (const(0),), span=reduce.span))
            load = BufferLoad(temp, (const(0),))
            # Fresh loop vars: one axis object may serve several reductions, and each
            # loop must define its own variable.
            fresh = {axis.var: Var(axis.var.name, axis.var.dtype) for axis in reduce.axes}
            source = substitute(reduce.source, fresh)
            update: Stmt = BufferStore(
                temp, reduce_combine(reduce.kind, load, source), (const(0),), span=reduce.span
            )
            update = self._expand_reduces(update)  # a Reduce nested in the source
            if reduce.condition is not None and not _is_true(reduce.condition):
                condition = substitute(reduce.condition, fresh)
                update = IfThenElse(condition, update, span=reduce.span)
            lane = reduce.kind in LANE_REDUCTIONS
            marks = {REDUCTION_ANNOTATION: reduce.kind.value} if lane else {}
            for axis in reversed(reduce.axes):
                update = For(
                    fresh[axis.var], substitute(axis.dom.min, fresh),
                    substitute(axis.dom.extent, fresh), ForKind.SERIAL, update,
                    annotations=dict(marks), span=axis.span,
                )
            parts.append(update)
        result = seq([*parts, rewritten])
        for _, temp in reversed(extractor.found):
            result = _wrap_alloc(result, temp)
        return result

    # -- blocks ----------------------------------------------------------------
    def visit_block_realize_(self, node: BlockRealize) -> Stmt:
        values = [self.visit_expr(v) for v in node.iter_values]
        predicate = self.visit_expr(node.predicate)
        block = node.block
        if len(values) != len(block.iter_vars):
            raise ValueError(
                f"block {block.name_hint!r}: {len(block.iter_vars)} iteration variables, "
                f"{len(values)} bound values"
            )
        stmt = self._lower_block(block, values)
        if not _is_true(predicate):
            stmt = IfThenElse(predicate, stmt, span=node.span)
        return stmt

    def visit_block_(self, node: Block) -> Stmt:
        if node.iter_vars:
            raise ValueError(
                f"block {node.name_hint!r} has iteration variables but no BlockRealize binds them"
            )
        return self._lower_block(node, [])

    def _lower_block(self, block: Block, values: list[PrimExpr]) -> Stmt:
        saved_v = dict(self.vmap)
        saved_b = dict(self.bmap)
        try:
            for iv, value in zip(block.iter_vars, values):
                self.vmap[iv.var] = value
            views = [self._match_view(m) for m in block.match_buffers]
            body = self.visit_stmt(block.body)
            if block.init is not None:
                body = inline_update_lets(body)  # a tuple reduction's bound values
                self._mark_reduce_loops(block, values, body)
                init = self.visit_stmt(block.init)
                cond = self._init_condition(block, values)
                if not _is_true(cond):
                    init = IfThenElse(cond, init, span=block.init.span)
                body = seq([init, body])
            for buf in reversed(block.alloc_buffers):
                body = _place_alloc(body, buf)
            for view in reversed(views):
                body = DeclBuffer(view, body, span=view.span)
            return body
        finally:
            self.vmap = saved_v
            self.bmap = saved_b

    def _mark_reduce_loops(self, block: Block, values: list[PrimExpr], body: Stmt) -> None:
        kind = _update_kind(body)
        if kind is None:
            return
        # A loop whose variable feeds only reduce iter vars (``k_0 * 16 + k_1`` of a split
        # reduction) drives the reduction alone; one a spatial value also reads does not.
        spatial: set[int] = set()
        reducing: list[Var] = []
        for iv, value in zip(block.iter_vars, values):
            if iv.kind is IterKind.REDUCE:
                reducing += free_vars(value)
            else:
                spatial.update(id(v) for v in free_vars(value))
        for var in reducing:
            if id(var) not in spatial:
                self.reduce_loops[var] = kind

    def _init_condition(self, block: Block, values: list[PrimExpr]) -> PrimExpr:
        cond: PrimExpr = const(True)
        for iv, value in zip(block.iter_vars, values):
            if iv.kind is not IterKind.REDUCE:
                continue
            low = self.visit_expr(iv.dom.min)
            for term in self._at_first(value, low) or [value == low]:
                cond = term if _is_true(cond) else cond & term
        return cond

    def _at_first(self, value: PrimExpr, low: PrimExpr) -> list[PrimExpr] | None:
        """``value == low`` as one ``loop var == its min`` per loop of a split reduction
        (``k_0 * 16 + k_1 == 0`` is ``k_0 == 0 and k_1 == 0``): when ``value`` is a sum of
        loop variables with positive constant coefficients that equals ``low`` with every
        variable at its loop's (constant) minimum, it reaches ``low`` only there."""
        if not (value.dtype.is_int and value.dtype.is_scalar and isinstance(low, IntImm)):
            return None
        form = to_linear(value, wrap=False)
        at_min = form.const
        guards: list[PrimExpr] = []
        for atom, coef in form.live_terms():
            start = self.loop_mins.get(id(atom)) if isinstance(atom, Var) else None
            if coef <= 0 or not isinstance(start, IntImm):
                return None
            at_min += coef * start.value
            guards.append(atom == start)
        return guards if at_min == low.value and len(guards) > 1 else None

    def _bind(self, target: Buffer, src: Buffer, what: str, mine: PrimExpr,
              theirs: PrimExpr) -> None:
        """Bind a match_buffer's declared ``what`` (a var not bound yet) to the source's
        value, or refuse a declared value the source's provably differs from (TVM's
        LowerMatchBuffer: ``strides=[s, s]`` over a row, ``s`` bound to 8 by one dimension
        and asked to be 1 by the other)."""
        if isinstance(mine, Var) and mine not in self.vmap:
            self.vmap[mine] = theirs
            return
        declared = self.visit_expr(mine)
        gap = to_linear(Sub(declared, theirs), wrap=False) if declared.dtype == theirs.dtype \
            else None
        if gap is not None and not list(gap.live_terms()) and gap.const != 0:
            raise ValueError(
                f"match_buffer {target.name!r}: its {what} is {expr_text(declared)} but the "
                f"region of {src.name!r} it matches gives {expr_text(theirs)}"
            )

    def _match_view(self, match: MatchBufferRegion) -> Buffer:
        source = self.visit_buffer_region(match.source)
        src = source.buffer
        target = match.buffer
        src_strides = src.strides or contiguous_strides(src.shape)
        offset = src.elem_offset
        for rng, stride in zip(source.region, src_strides):
            offset = add(offset, mul(rng.min, stride))
        rank, k = len(source.region), target.ndim
        if k > rank:
            raise ValueError(
                f"match_buffer {target.name!r} has {k} dimensions but its source region "
                f"of {src.name!r} has {rank}"
            )
        strides = src_strides[rank - k :]
        extents = [rng.extent for rng in source.region][rank - k :]
        self.vmap[target.data] = src.data
        for dim, (mine, theirs) in enumerate(zip(target.shape, extents)):
            self._bind(target, src, f"shape[{dim}]", mine, theirs)
        for dim, (mine, theirs) in enumerate(zip(target.strides, strides)):
            self._bind(target, src, f"strides[{dim}]", mine, theirs)
        self._bind(target, src, "elem_offset", target.elem_offset, offset)
        view = Buffer(
            target.name,
            src.data,
            tuple(self.visit_expr(s) for s in target.shape),
            target.dtype,
            strides,
            offset,
            scope=src.scope,
            data_alignment=target.data_alignment,
            offset_factor=target.offset_factor,
            span=target.span,
        )
        self.bmap[target] = view
        return view


@function_pass("lower_blocks")
def lower_blocks(func: PrimFunc) -> PrimFunc:
    """Remove blocks and Reduce: init guards, predicates, allocations and views (see module)."""
    body = _BlockLowerer().visit_stmt(func.body)
    return func if body is func.body else func.with_body(body)
