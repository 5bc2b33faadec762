"""Inference of a block's read and write regions from its body.

The regions describe what *one block instance* touches, as in TVM: the
block's own iter vars and anything defined outside the block are fixed for an
instance, so an index that uses only them is a single point ``[e, e + 1)``.
Variables bound *inside* the body (loops, nested blocks' iter vars) are relaxed
over their domain with interval arithmetic on affine indices (``+``, ``-``,
``*`` and ``//``/``%`` by constants, ``Ramp``). Anything else (loads inside an
index, a let-bound var, a non-affine use) falls back to the whole dimension.

Accesses to a matched buffer count as accesses to its source region; buffers
allocated by the block or inside it are excluded.
"""

from __future__ import annotations

from collections.abc import Sequence

from .ir import (
    Add,
    Block,
    Buffer,
    BufferLoad,
    BufferRegion,
    BufferStore,
    DeclBuffer,
    FloorDiv,
    FloorMod,
    For,
    IntImm,
    Let,
    LetStmt,
    MatchBufferRegion,
    Mul,
    PrimExpr,
    Ramp,
    Range,
    Stmt,
    StmtExprVisitor,
    Sub,
    Var,
    const,
    post_order_visit,
    structural_equal,
)

__all__ = ["infer_regions"]

# (lo, diff): the index lies in [lo, lo + diff]; diff is an expression.
_Bound = tuple[PrimExpr, PrimExpr]


class _Accesses(StmtExprVisitor):
    def __init__(self, excluded: Sequence[Buffer], matched: Sequence[MatchBufferRegion]) -> None:
        self.local: set[int] = {id(b) for b in excluded}
        self.matched: dict[int, BufferRegion] = {id(m.buffer): m.source for m in matched}
        self.inner: dict[int, Range | None] = {}
        self.reads: dict[int, tuple[Buffer, list[tuple[Range, ...]]]] = {}
        self.writes: dict[int, tuple[Buffer, list[tuple[Range, ...]]]] = {}

    def record(
        self,
        table: dict[int, tuple[Buffer, list[tuple[Range, ...]]]],
        buffer: Buffer,
        indices: Sequence[PrimExpr],
    ) -> None:
        if id(buffer) in self.local:
            return
        source = self.matched.get(id(buffer))
        if source is not None:
            buffer, ranges = source.buffer, source.region
        else:
            ranges = tuple(self.index_range(buffer, d, e) for d, e in enumerate(indices))
        entry = table.setdefault(id(buffer), (buffer, []))
        entry[1].append(ranges)

    def index_range(self, buffer: Buffer, dim: int, index: PrimExpr) -> Range:
        bound = self.bound(index)
        if bound is None:
            return Range(const(0, buffer.shape[dim].dtype), buffer.shape[dim])
        lo, diff = bound
        return Range(lo, _add(diff, 1))

    def uses_inner(self, expr: PrimExpr) -> bool:
        found = False

        def check(node: object) -> None:
            nonlocal found
            if isinstance(node, Var) and id(node) in self.inner:
                found = True

        if isinstance(expr, Var):
            return id(expr) in self.inner
        post_order_visit(expr, check)
        return found

    def bound(self, expr: PrimExpr) -> _Bound | None:
        if not self.uses_inner(expr):
            return expr, const(0, expr.dtype.element_of())
        if isinstance(expr, Var):
            dom = self.inner[id(expr)]
            if dom is None:
                return None
            return dom.min, _add(dom.extent, -1)
        if isinstance(expr, (Add, Sub)):
            a, b = self.bound(expr.a), self.bound(expr.b)
            if a is None or b is None:
                return None
            if isinstance(expr, Add):
                return _add(a[0], b[0]), _add(a[1], b[1])
            return a[0] - (_add(b[0], b[1])), _add(a[1], b[1])
        if isinstance(expr, Mul):
            return self.scaled(expr.a, expr.b) or self.scaled(expr.b, expr.a)
        if isinstance(expr, (FloorDiv, FloorMod)) and isinstance(expr.b, IntImm):
            divisor = expr.b.value
            a = self.bound(expr.a)
            if a is None or divisor <= 0:
                return None
            if isinstance(expr, FloorMod):
                return const(0, expr.dtype), const(divisor - 1, expr.dtype)
            if isinstance(a[0], IntImm) and isinstance(a[1], IntImm):
                lo = a[0].value // divisor
                hi = (a[0].value + a[1].value) // divisor
                return const(lo, expr.dtype), const(hi - lo, expr.dtype)
            return None
        if isinstance(expr, Ramp) and isinstance(expr.stride, IntImm) and expr.stride.value >= 0:
            base = self.bound(expr.base)
            if base is None:
                return None
            return base[0], _add(base[1], expr.stride.value * (expr.lanes - 1))
        return None

    def scaled(self, expr: PrimExpr, factor: PrimExpr) -> _Bound | None:
        if not isinstance(factor, IntImm) or factor.value < 0:
            return None
        inner = self.bound(expr)
        if inner is None:
            return None
        return inner[0] * factor, inner[1] * factor

    # -- traversal ----------------------------------------------------------------
    def visit_buffer_load_(self, load: BufferLoad) -> None:
        self.generic_visit(load)
        self.record(self.reads, load.buffer, load.indices)

    def visit_buffer_store_(self, store: BufferStore) -> None:
        self.generic_visit(store)
        self.record(self.writes, store.buffer, store.indices)

    def visit_for_(self, loop: For) -> None:
        self.inner[id(loop.loop_var)] = Range(loop.min, loop.extent)
        self.generic_visit(loop)

    def visit_let_stmt_(self, stmt: LetStmt) -> None:
        self.inner[id(stmt.var)] = None
        self.generic_visit(stmt)

    def visit_let_(self, expr: Let) -> None:
        self.inner[id(expr.var)] = None
        self.generic_visit(expr)

    def visit_decl_buffer_(self, stmt: DeclBuffer) -> None:
        self.local.add(id(stmt.buffer))
        self.generic_visit(stmt)

    def visit_block_(self, block: Block) -> None:
        self.local.update(id(b) for b in block.alloc_buffers)
        for match in block.match_buffers:
            self.matched[id(match.buffer)] = match.source
        for iv in block.iter_vars:
            self.inner[id(iv.var)] = iv.dom
        self.generic_visit(block)


def _add(a: PrimExpr, b: PrimExpr | int) -> PrimExpr:
    # Keep `vi + 0`-style noise out of inferred regions.
    if isinstance(b, int):
        if b == 0:
            return a
        return a + b
    if isinstance(b, IntImm) and b.value == 0:
        return a
    if isinstance(a, IntImm) and a.value == 0:
        return b
    return a + b


def _union(buffer: Buffer, accesses: list[tuple[Range, ...]]) -> BufferRegion:
    first = accesses[0]
    ranges: list[Range] = []
    for dim, rng in enumerate(first):
        others = [acc[dim] for acc in accesses[1:]]
        if all(structural_equal(rng, o) for o in others):
            ranges.append(rng)
            continue
        every = [rng, *others]
        if all(isinstance(r.min, IntImm) and isinstance(r.extent, IntImm) for r in every):
            lo = min(r.min.value for r in every)  # type: ignore[attr-defined]
            hi = max(r.min.value + r.extent.value for r in every)  # type: ignore[attr-defined]
            dtype = rng.min.dtype
            ranges.append(Range(const(lo, dtype), const(hi - lo, dtype)))
            continue
        extent = buffer.shape[dim]
        ranges.append(Range(const(0, extent.dtype), extent))
    return BufferRegion(buffer, tuple(ranges))


def infer_regions(
    body: Stmt,
    init: Stmt | None,
    alloc_buffers: Sequence[Buffer],
    match_buffers: Sequence[MatchBufferRegion],
) -> tuple[tuple[BufferRegion, ...], tuple[BufferRegion, ...]]:
    """The (reads, writes) of a block with this body, in first-access order."""
    visitor = _Accesses(alloc_buffers, match_buffers)
    if init is not None:
        visitor.visit_stmt(init)
    visitor.visit_stmt(body)
    reads = tuple(_union(buf, acc) for buf, acc in visitor.reads.values())
    writes = tuple(_union(buf, acc) for buf, acc in visitor.writes.values())
    return reads, writes
