"""Inference of a block's read and write regions from its body, as TVM infers them.

The regions describe what *one block instance* touches, over variables defined outside
the block: the block's own iter vars and anything bound around it are fixed for an
instance, so an index using only them is a single point. Everything bound *inside* is
relaxed over the values it takes there:

* loop variables of loops in the body cover their range (``A[vi, 0:16]``), the range
  narrowed inside an ``if`` (or ``T.if_then_else`` branch) by conditions on the variable
  alone (``j < 8``, ``j >= k + 1``...);
* a nested block is not entered: its own (declared or inferred) regions are used, its iter
  vars replaced by their bindings, then relaxed over the loops around it;
* let-bound variables stand for their value (TVM keeps the variable itself, which is not
  defined outside the block).

Index arithmetic is interval arithmetic (``region_sets``): ``+``, ``-``, ``*``/``//``/``%``
by constants, ``min``/``max``, selects and ``Ramp``; an index that loads memory under a
relaxed variable, or anything else not understood, covers the whole dimension.

Buffers: memory allocated in the block or below it (``alloc_buffer``, ``T.decl_buffer``
without ``data=``, nested blocks' allocations) is left out, compared by data var. Accesses
to one of the block's ``match_buffer`` views count as accesses to the matching part of its
source region (access offsets added to the source region's start). A data pointer used
directly (``A.data`` passed to an extern) is an *opaque* access: the whole buffer (for a
matched view: its whole source region) is listed in both reads and writes, replacing that
buffer's other entries (TVM's ``GetBlockReadWriteRegion``). The block frame refuses such a
block without ``T.reads``/``T.writes``, as TVM's parser (``opaque_access.py``). A block with
``T.init`` (a reduction) does not list the buffers it writes among its reads. Regions are
listed in first-access order, ``T.init`` before the body. Given the block's declared
regions (``declared``), a buffer used through its pointer takes them instead of the whole
buffer (what the schedule's primitives read, as TVM's do).
"""

from __future__ import annotations

from collections.abc import Sequence

from .ir import (
    EQ,
    GE,
    GT,
    LE,
    LT,
    NE,
    Add,
    Allocate,
    And,
    AttrStmt,
    Block,
    BlockRealize,
    Broadcast,
    Buffer,
    BufferLoad,
    BufferRegion,
    BufferStore,
    Call,
    CallKind,
    CmpOp,
    ExprMutator,
    FloorDiv,
    FloorMod,
    For,
    IfThenElse,
    IntImm,
    Let,
    LetStmt,
    MatchBufferRegion,
    Max,
    Min,
    Mul,
    Not,
    Or,
    PrimExpr,
    Ramp,
    Range,
    Select,
    Stmt,
    StmtExprVisitor,
    Sub,
    Var,
    const,
    post_order_visit,
)
from .ir.linear_form import from_linear
from .region_sets import Interval, affine, compare, hull, narrow_hi, narrow_lo, offset

__all__ = ["infer_block_regions", "infer_regions"]

_Entry = tuple[Buffer, list[Interval | None]]
_FLIP = {LT: GT, LE: GE, GT: LT, GE: LE, EQ: EQ, NE: NE}
_NEGATE = {LT: GE, LE: GT, GT: LE, GE: LT, EQ: NE, NE: EQ}


class _Substitute(ExprMutator):
    def __init__(self, vmap: dict[int, PrimExpr]) -> None:
        self.vmap = vmap

    def visit_var_(self, var: Var) -> PrimExpr:
        return self.vmap.get(id(var), var)


class _Detector(StmtExprVisitor):
    def __init__(
        self,
        alloc_buffers: Sequence[Buffer],
        match_buffers: Sequence[MatchBufferRegion],
        visible: Sequence[Buffer],
        recompute_nested: bool = False,
        honour_nested: bool = False,
    ) -> None:
        self.visible = visible
        self.recompute_nested = recompute_nested
        self.honour_nested = honour_nested  # recomputed nested blocks honour their declarations
        self.local: set[int] = {id(b.data) for b in alloc_buffers}
        self.matched: dict[int, MatchBufferRegion] = {id(m.buffer.data): m for m in match_buffers}
        self.by_data: dict[int, Buffer] = {id(b.data): b for b in visible}
        for m in match_buffers:
            self.by_data[id(m.buffer.data)] = m.buffer
        self.dom: dict[int, Interval | None] = {}
        self.reads: dict[int, _Entry] = {}
        self.writes: dict[int, _Entry] = {}
        self.opaque_data: dict[int, Var] = {}
        # what loads, stores and nested blocks alone access, and the buffers reached through
        # ``T.tvm_access_ptr``: a declared region may stand in for the pointer's whole buffer
        self.direct_reads: dict[int, _Entry] = {}
        self.direct_writes: dict[int, _Entry] = {}
        self.pointer_keys: set[int] = set()
        self.rw_pointers: dict[int, Var] = {}  # T.tvm_access_ptr(..., 3): TVM's opaque access

    # -- interval evaluation ----------------------------------------------------------
    def relaxed(self, expr: PrimExpr) -> bool:
        if isinstance(expr, Var):
            return id(expr) in self.dom
        found = False

        def check(node: object) -> None:
            nonlocal found
            if isinstance(node, Var) and id(node) in self.dom:
                found = True

        post_order_visit(expr, check)
        return found

    def eval(self, expr: PrimExpr) -> Interval | None:
        """The values ``expr`` takes over the relaxed variables (both ends included)."""
        if not self.relaxed(expr) and expr.dtype.lanes == 1:
            return expr, expr  # a vector index (a ramp) spans its lanes even when constant
        if isinstance(expr, Var):
            return self.dom[id(expr)]
        if isinstance(expr, (Add, Sub)):
            a, b = self.eval(expr.a), self.eval(expr.b)
            if a is None or b is None:
                return None
            if isinstance(expr, Add):
                return offset(a[0], b[0]), offset(a[1], b[1])
            return offset(a[0], b[1], -1), offset(a[1], b[0], -1)
        if isinstance(expr, Mul):
            if isinstance(expr.b, IntImm):
                return self.scaled(expr.a, expr.b.value)
            if isinstance(expr.a, IntImm):
                return self.scaled(expr.b, expr.a.value)
            return None
        if isinstance(expr, (FloorDiv, FloorMod)) and isinstance(expr.b, IntImm):
            return self.divided(expr, expr.b.value)
        if isinstance(expr, (Min, Max)):
            a, b = self.eval(expr.a), self.eval(expr.b)
            if a is None or b is None:
                return None
            kind = type(expr)
            return _pick(a[0], b[0], kind), _pick(a[1], b[1], kind)
        if isinstance(expr, Select):
            return hull(self.eval(expr.true_value), self.eval(expr.false_value))
        if isinstance(expr, Call) and expr.op == "if_then_else" and len(expr.args) == 3:
            return hull(self.eval(expr.args[1]), self.eval(expr.args[2]))
        if isinstance(expr, Ramp) and isinstance(expr.stride, IntImm):
            base = self.eval(expr.base)
            if base is None:
                return None
            span = expr.stride.value * (expr.lanes - 1)
            return offset(base[0], min(span, 0)), offset(base[1], max(span, 0))
        if isinstance(expr, Broadcast):
            return self.eval(expr.value)
        return None  # loads at relaxed indices, casts, calls: anything

    def scaled(self, expr: PrimExpr, factor: int) -> Interval | None:
        inner = self.eval(expr)
        if inner is None:
            return None
        lo, hi = (inner[0], inner[1]) if factor >= 0 else (inner[1], inner[0])
        return _times(lo, factor), _times(hi, factor)

    def divided(self, expr: FloorDiv | FloorMod, divisor: int) -> Interval | None:
        inner = self.eval(expr.a)
        if inner is None or divisor <= 0:
            return None
        lo, hi = inner
        if isinstance(expr, FloorDiv):
            return _floordiv(lo, divisor), _floordiv(hi, divisor)
        same_period = compare(_floordiv(hi, divisor), _floordiv(lo, divisor)) == 0
        if same_period:
            return _floormod(lo, divisor), _floormod(hi, divisor)
        return const(0, expr.dtype), const(divisor - 1, expr.dtype)

    # -- conditions ----------------------------------------------------------------------
    def narrowed(self, cond: PrimExpr, holds: bool) -> dict[int, Interval | None]:
        """Narrow the relaxed vars' ranges by ``cond`` (or its negation); the old ranges."""
        saved: dict[int, Interval | None] = {}
        for op, a, b in _comparisons(cond, holds):
            form = affine(a)
            form.add_form(affine(b), -1)
            live = form.live_terms()
            hits = [(atom, c) for atom, c in live if isinstance(atom, Var) and id(atom) in self.dom]
            if len(hits) != 1 or hits[0][1] not in (1, -1):
                continue
            var, coef = hits[0]
            if any(self.relaxed(atom) for atom, _ in live if atom is not var):
                continue
            dom = self.dom[id(var)]
            if dom is None:
                continue
            rest = affine(const(form.const, form.dtype))
            for atom, c in live:
                if atom is not var:
                    rest.add_term(atom, c)
            # coef * var + rest  op  0
            if coef == 1:
                bound = affine(const(0, form.dtype))
                bound.add_form(rest, -1)
            else:
                op, bound = _FLIP[op], rest
            edge = from_linear(bound)
            if op in (LT, LE, EQ):
                dom = narrow_hi(dom, offset(edge, -1) if op is LT else edge)
            if op in (GT, GE, EQ):
                dom = narrow_lo(dom, offset(edge, 1) if op is GT else edge)
            saved.setdefault(id(var), self.dom[id(var)])
            self.dom[id(var)] = dom
        return saved

    def restore(self, saved: dict[int, Interval | None]) -> None:
        self.dom.update(saved)

    # -- recording -----------------------------------------------------------------------
    def record(
        self, table: dict[int, _Entry], buffer: Buffer, region: list[Interval | None]
    ) -> None:
        if id(buffer.data) in self.local:
            return
        self.by_data.setdefault(id(buffer.data), buffer)
        match = self.matched.get(id(buffer.data))
        if match is not None:
            buffer, region = match.source.buffer, _to_source(match, buffer, region)
            if id(buffer.data) in self.local:
                return  # a view of the block's own allocation: local too
        entry = table.get(id(buffer))
        if entry is None:
            table[id(buffer)] = (buffer, list(region))
            return
        merged = entry[1]
        for dim, rng in enumerate(region):
            merged[dim] = hull(merged[dim], rng)

    def access(self, table: dict[int, _Entry], buffer: Buffer, indices: Sequence[PrimExpr]) -> None:
        self.record(table, buffer, [self.eval(i) for i in indices])

    def nested(self, block: Block, bindings: dict[int, PrimExpr]) -> None:
        subst = _Substitute(bindings)
        reads, writes = block.reads, block.writes
        if self.recompute_nested:
            around = [*self.visible, *self.by_data.values()]  # with this block's own views
            reads, writes = infer_block_regions(
                block, around, recompute_nested=True, honour_declared=self.honour_nested
            )
        for table, regions in ((self.reads, reads), (self.writes, writes)):
            for region in regions:
                relaxed: list[Interval | None] = []
                for rng in region.region:
                    lo = self.eval(subst.visit_expr(rng.min))
                    last = offset(rng.min, rng.extent)
                    hi = self.eval(subst.visit_expr(offset(last, -1)))
                    relaxed.append(None if lo is None or hi is None else (lo[0], hi[1]))
                self.record(table, region.buffer, relaxed)
                direct = self.direct_reads if table is self.reads else self.direct_writes
                self.record(direct, region.buffer, list(relaxed))

    # -- traversal -----------------------------------------------------------------------
    def visit_buffer_load_(self, load: BufferLoad) -> None:
        self.access(self.reads, load.buffer, load.indices)
        self.access(self.direct_reads, load.buffer, load.indices)
        self.generic_visit(load)

    def visit_buffer_store_(self, store: BufferStore) -> None:
        self.access(self.writes, store.buffer, store.indices)
        self.access(self.direct_writes, store.buffer, store.indices)
        self.generic_visit(store)

    def visit_var_(self, var: Var) -> None:
        if var.dtype.is_handle and id(var) not in self.local:
            self.opaque_data.setdefault(id(var), var)

    def visit_for_(self, loop: For) -> None:
        self.visit_expr(loop.min)
        self.visit_expr(loop.extent)
        lo = self.eval(loop.min)
        hi = self.eval(offset(offset(loop.min, loop.extent), -1))
        self.dom[id(loop.loop_var)] = None if lo is None or hi is None else (lo[0], hi[1])
        self.visit_stmt(loop.body)
        del self.dom[id(loop.loop_var)]

    def visit_let_stmt_(self, stmt: LetStmt) -> None:
        self.visit_expr(stmt.value)
        self.dom[id(stmt.var)] = self.eval(stmt.value)
        self.visit_stmt(stmt.body)
        del self.dom[id(stmt.var)]

    def visit_let_(self, expr: Let) -> None:
        self.visit_expr(expr.value)
        self.dom[id(expr.var)] = self.eval(expr.value)
        self.visit_expr(expr.body)
        del self.dom[id(expr.var)]

    def visit_if_then_else_(self, stmt: IfThenElse) -> None:
        self.visit_expr(stmt.condition)
        saved = self.narrowed(stmt.condition, True)
        self.visit_stmt(stmt.then_case)
        self.restore(saved)
        if stmt.else_case is not None:
            saved = self.narrowed(stmt.condition, False)
            self.visit_stmt(stmt.else_case)
            self.restore(saved)

    def visit_call_(self, call: Call) -> None:
        if call.op == "if_then_else" and len(call.args) == 3 and call.kind is CallKind.BUILTIN:
            cond, then, other = call.args
            self.visit_expr(cond)
            for branch, holds in ((then, True), (other, False)):
                saved = self.narrowed(cond, holds)
                self.visit_expr(branch)
                self.restore(saved)
            return
        if call.op == "tvm_access_ptr" and len(call.args) == 5 and self.access_ptr(call):
            return
        self.generic_visit(call)

    def access_ptr(self, call: Call) -> bool:
        """``T.tvm_access_ptr(type, A.data, offset, extent, rw_mask)`` with a constant mask:
        the whole buffer is read (mask bit 1) and/or written (bit 2), as TVM's detector
        reads it; a pointer of an unknown buffer or a computed mask stays opaque."""
        data, mask = call.args[1], call.args[4]
        if not isinstance(data, Var) or not isinstance(mask, IntImm) or not 1 <= mask.value <= 3:
            return False
        if id(data) in self.local:
            return True
        buffer = self.by_data.get(id(data))
        if buffer is None:
            return False
        self.visit_expr(call.args[2])
        self.visit_expr(call.args[3])
        full: list[Interval | None] = [(const(0, e.dtype), offset(e, -1)) for e in buffer.shape]
        if mask.value == 3:
            self.rw_pointers.setdefault(id(data), data)
        if mask.value & 1:
            self.record(self.reads, buffer, list(full))
        if mask.value & 2:
            self.record(self.writes, buffer, list(full))
        self.pointer_keys.update(self.source_key(buffer))
        return True

    def source_key(self, buffer: Buffer) -> set[int]:
        """The key a pointer of ``buffer`` is recorded under (its source for a view)."""
        match = self.matched.get(id(buffer.data))
        return {id(match.source.buffer if match is not None else buffer)}

    def honour_declared(
        self,
        opaque: dict[int, _Entry],
        reads: Sequence[BufferRegion],
        writes: Sequence[BufferRegion],
    ) -> None:
        """For a buffer reached through its data pointer that the block's ``T.reads``/
        ``T.writes`` mention, take those declared regions (with what loads, stores and nested
        blocks access) instead of the whole buffer in both directions: TVM's primitives read
        the declared regions, and a pointer's extent is known only from them."""
        declared = {id(r.buffer) for r in (*reads, *writes)}
        trusted = (set(opaque) | self.pointer_keys) & declared
        for key in trusted:
            opaque.pop(key, None)
            pairs = ((self.reads, self.direct_reads), (self.writes, self.direct_writes))
            for table, direct in pairs:
                table.pop(key, None)
                if key in direct:
                    buffer, intervals = direct[key]
                    table[key] = (buffer, list(intervals))
        for table, regions in ((self.reads, reads), (self.writes, writes)):
            for region in regions:
                if id(region.buffer) in trusted:
                    self.record(table, region.buffer, [_interval(r) for r in region.region])

    def visit_attr_stmt_(self, stmt: AttrStmt) -> None:
        self.visit_expr(stmt.value)  # the node an attribute is about is not an access
        self.visit_stmt(stmt.body)

    def visit_allocate_(self, stmt: Allocate) -> None:
        self.local.add(id(stmt.buffer_var))
        self.generic_visit(stmt)

    def visit_block_realize_(self, realize: BlockRealize) -> None:
        block = realize.block
        bindings = {id(iv.var): v for iv, v in zip(block.iter_vars, realize.iter_values)}
        self.nested(block, bindings)

    def visit_block_(self, block: Block) -> None:
        self.nested(block, {})  # a block without realize: no iter vars to bind

    # -- result -------------------------------------------------------------------------
    def opaque(self) -> dict[int, _Entry]:
        table: dict[int, _Entry] = {}
        for key in self.opaque_data:
            buffer = self.by_data.get(key)
            if buffer is not None:
                full: list[Interval | None] = [
                    (const(0, e.dtype), offset(e, -1)) for e in buffer.shape
                ]
                self.record(table, buffer, full)
        return table


def _interval(rng: Range) -> Interval:
    """A declared range as an interval, a single point kept as its own expression."""
    if isinstance(rng.extent, IntImm) and rng.extent.value == 1:
        return (rng.min, rng.min)
    return (rng.min, offset(offset(rng.min, rng.extent), -1))


def _pick(a: PrimExpr, b: PrimExpr, kind: type[Min] | type[Max]) -> PrimExpr:
    diff = compare(a, b)
    if diff is None:
        return kind(a, b)
    if kind is Min:
        return a if diff <= 0 else b
    return a if diff >= 0 else b


def _times(expr: PrimExpr, factor: int) -> PrimExpr:
    form = affine(expr)
    scaled = affine(const(form.const * factor, form.dtype))
    for atom, coef in form.live_terms():
        scaled.add_term(atom, coef * factor)
    return from_linear(scaled)


def _floordiv(expr: PrimExpr, divisor: int) -> PrimExpr:
    # (divisor * q + r) // divisor == q + r // divisor when every term's coefficient divides.
    form = affine(expr)
    live = form.live_terms()
    if all(c % divisor == 0 for _, c in live):
        out = affine(const(form.const // divisor, form.dtype))
        for atom, coef in live:
            out.add_term(atom, coef // divisor)
        return from_linear(out)
    return FloorDiv(expr, const(divisor, expr.dtype))


def _floormod(expr: PrimExpr, divisor: int) -> PrimExpr:
    form = affine(expr)
    live = form.live_terms()
    if all(c % divisor == 0 for _, c in live):
        return const(form.const % divisor, form.dtype)
    return FloorMod(expr, const(divisor, expr.dtype))


def _comparisons(cond: PrimExpr, holds: bool) -> list[tuple[type[CmpOp], PrimExpr, PrimExpr]]:
    """The comparisons that all hold when ``cond`` is ``holds`` (those it implies simply)."""
    if isinstance(cond, Call) and cond.op == "likely" and len(cond.args) == 1:
        return _comparisons(cond.args[0], holds)
    if isinstance(cond, Not):
        return _comparisons(cond.a, not holds)
    if (isinstance(cond, And) and holds) or (isinstance(cond, Or) and not holds):
        return [*_comparisons(cond.a, holds), *_comparisons(cond.b, holds)]
    if isinstance(cond, CmpOp) and cond.a.dtype.is_integer and cond.a.dtype.is_scalar:
        op = type(cond) if holds else _NEGATE[type(cond)]
        return [(op, cond.a, cond.b)]
    return []


def _to_source(
    match: MatchBufferRegion, view: Buffer, region: list[Interval | None]
) -> list[Interval | None]:
    """An access region of a matched view as a region of its source buffer."""
    source = match.source.region
    skipped = len(source) - len(region)
    out: list[Interval | None] = [(r.min, r.min) for r in source[:skipped]]
    for dim, rng in enumerate(region):
        start = source[skipped + dim].min
        if rng is None:  # the whole view's dimension
            rng = (const(0, view.shape[dim].dtype), offset(view.shape[dim], -1))
        out.append((offset(start, rng[0]), offset(start, rng[1])))
    return out


def _cover(buffer: Buffer, region: list[Interval | None]) -> BufferRegion:
    ranges: list[Range] = []
    for dim, rng in enumerate(region):
        extent_of_dim = buffer.shape[dim]
        if rng is None:
            ranges.append(Range(const(0, extent_of_dim.dtype), extent_of_dim))
            continue
        lo, hi = rng
        if lo is hi:
            ranges.append(Range(lo, const(1, lo.dtype)))
            continue
        extent = affine(hi)
        extent.add_form(affine(lo), -1)
        extent.add_const(1)
        ranges.append(Range(lo, from_linear(extent)))
    return BufferRegion(buffer, tuple(ranges))


def infer_regions(
    body: Stmt,
    init: Stmt | None,
    alloc_buffers: Sequence[Buffer],
    match_buffers: Sequence[MatchBufferRegion],
    visible: Sequence[Buffer] = (),
    recompute_nested: bool = False,
    declared: tuple[Sequence[BufferRegion], Sequence[BufferRegion]] | None = None,
) -> tuple[tuple[BufferRegion, ...], tuple[BufferRegion, ...]]:
    """The (reads, writes) of a block with this body (see the module doc).

    ``visible`` are buffers defined outside the block (parameters, enclosing
    allocations): a data pointer used in the body names one of them, or one the body
    accesses, to be an opaque access. ``recompute_nested`` infers nested blocks' regions
    from their bodies instead of taking what they declare (TVM takes them as declared),
    so that an understated annotation cannot hide an access. ``declared`` are the block's
    own ``T.reads``/``T.writes``: a buffer used through its data pointer that they mention
    gets its declared regions instead of the whole buffer (TVM reads nothing else of such
    an access); a pointer the declaration does not mention stays the whole buffer.
    """
    detector = _Detector(
        alloc_buffers, match_buffers, visible, recompute_nested, declared is not None
    )
    if init is not None:
        detector.visit_stmt(init)
    detector.visit_stmt(body)
    opaque = detector.opaque()
    if declared is not None:
        detector.honour_declared(opaque, *declared)
    left_out = set(opaque)
    if init is not None:
        # A reduction's update reads what it accumulates into: TVM lists it as written only.
        left_out.update(detector.writes)
    reads = [e for key, e in detector.reads.items() if key not in left_out]
    writes = [e for key, e in detector.writes.items() if key not in opaque]
    reads += opaque.values()
    writes += opaque.values()
    return (
        tuple(_cover(b, r) for b, r in reads),
        tuple(_cover(b, r) for b, r in writes),
    )


def infer_block_regions(
    block: Block,
    visible: Sequence[Buffer] = (),
    recompute_nested: bool = False,
    honour_declared: bool = False,
) -> tuple[tuple[BufferRegion, ...], tuple[BufferRegion, ...]]:
    """The (reads, writes) ``block``'s body implies, ignoring the ones it declares: what a
    transformation that changed the body (a schedule primitive) should store back. With
    ``honour_declared``, a data-pointer access takes the declared regions of its buffer
    (see :func:`infer_regions`), in nested blocks too."""
    return infer_regions(
        block.body,
        block.init,
        block.alloc_buffers,
        block.match_buffers,
        visible,
        recompute_nested,
        (block.reads, block.writes) if honour_declared else None,
    )
