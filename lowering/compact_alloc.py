"""Buffer compaction (pass ``compact_allocations``): allocate only the region a scope touches.

TVM's ``CompactBufferAllocation``, run right after ``plan_allocation_location``. A
buffer placed in a loop body often uses one slice of its declared shape there: the
TVM user's softmax declares ``M = T.alloc_buffer((4096,))`` at the top and uses
``M[vi]`` inside ``T.parallel`` over ``i``, so after placement every iteration
allocates 4096 floats (a heap allocation: above the stack limit) to use one. This
pass shrinks each dimension to the range the accesses inside the allocation's scope
cover and shifts the indices: ``M`` becomes a one-element buffer indexed ``M[0]``,
a stack slot LLVM keeps in a register.

For each dimension of an ``Allocate``'s buffer, every access index is split into an
*outer* part (variables defined outside the allocation: loop variables of enclosing
loops, parameters) and an *inner* part (loop variables of loops inside the scope,
with constant bounds, and constants). When every access has the same outer part,
the inner parts' range ``[lo, hi]`` is the new extent ``hi - lo + 1`` and each index
becomes its inner part minus ``lo``. The dimension is compacted only when that is
smaller than the declared extent and the shifted region provably lies inside the
declared one (``0 <= outer + lo`` and ``outer + hi < extent`` from the enclosing
loops' ranges), so an access out of the declared bounds stays out of them for
``bounds_check=True`` to report. Dimensions that do not qualify keep their extent;
a buffer whose memory is used in any other way (a view over it, its data pointer in
an expression, an access through another buffer) is left alone.

Iterations of the scope still see the same elements in the same places: the
rewrite is a renaming of memory that only this scope's statements can name.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from irbuilder.ir import (
    Allocate,
    Buffer,
    BufferLoad,
    BufferStore,
    Call,
    DeclBuffer,
    For,
    IntImm,
    LetStmt,
    PrimExpr,
    PrimFunc,
    Stmt,
    StmtExprMutator,
    StmtExprVisitor,
    Var,
    post_order_visit,
    rebuild,
)

from .arith import Analyzer, LinearForm, from_linear, supports_linear, to_linear
from .pass_infra import function_pass

__all__ = ["compact_allocations"]


@dataclass
class _Uses:
    """Every access of one buffer inside its allocation's scope."""

    buffer: Buffer
    data: Var
    indices: list[tuple[PrimExpr, ...]] = field(default_factory=list)
    inner_ranges: dict[Var, tuple[int, int]] = field(default_factory=dict)
    """Inner loop var -> (lowest, highest) value, for loops with constant bounds."""
    inner_opaque: set[Var] = field(default_factory=set)
    """Vars defined inside the scope with no constant range (lets, other loops)."""
    other_use: bool = False


class _Collect(StmtExprVisitor):
    def __init__(self, uses: _Uses) -> None:
        self.uses = uses

    def visit_for_(self, node: For) -> None:
        if isinstance(node.min, IntImm) and isinstance(node.extent, IntImm):
            lo = node.min.value
            self.uses.inner_ranges[node.loop_var] = (lo, lo + max(node.extent.value, 1) - 1)
        else:
            self.uses.inner_opaque.add(node.loop_var)
        self.generic_visit(node)

    def visit_let_stmt_(self, node: LetStmt) -> None:
        self.uses.inner_opaque.add(node.var)
        self.generic_visit(node)

    def visit_decl_buffer_(self, node: DeclBuffer) -> None:
        if node.buffer.data is self.uses.data:
            self.uses.other_use = True
        self.generic_visit(node)

    def visit_call_(self, node: Call) -> None:
        # A pointer into the buffer escapes: whatever it reaches must stay where it was.
        if node.op == "address_of" and any(_loads_from(a, self.uses.data) for a in node.args):
            self.uses.other_use = True
        self.generic_visit(node)

    def visit_var_(self, node: Var) -> None:
        if node is self.uses.data:
            self.uses.other_use = True

    def _access(self, buffer: Buffer, indices: tuple[PrimExpr, ...]) -> None:
        if buffer.data is not self.uses.data:
            return
        if buffer is not self.uses.buffer or any(_loads_from(ix, buffer.data) for ix in indices):
            # Another view, or an index reading the buffer itself: left alone.
            self.uses.other_use = True
        else:
            self.uses.indices.append(indices)

    def visit_buffer_load_(self, node: BufferLoad) -> None:
        self._access(node.buffer, node.indices)
        self.generic_visit(node)

    def visit_buffer_store_(self, node: BufferStore) -> None:
        self._access(node.buffer, node.indices)
        self.generic_visit(node)


def _loads_from(expr: PrimExpr, data: Var) -> bool:
    found = False

    def visit(node: object) -> None:
        nonlocal found
        found = found or (isinstance(node, BufferLoad) and node.buffer.data is data)

    post_order_visit(expr, visit)
    return found


def _mentions_any(expr: PrimExpr, names: set[Var] | dict[Var, tuple[int, int]]) -> bool:
    found = False

    def visit(node: object) -> None:
        nonlocal found
        if isinstance(node, (BufferLoad,)) or (isinstance(node, Var) and node in names):
            found = True

    post_order_visit(expr, visit)
    return found


@dataclass
class _Split:
    outer: LinearForm
    lo: int
    hi: int
    inner: LinearForm


def _split(index: PrimExpr, uses: _Uses) -> _Split | None:
    """``index`` as outer part + inner part with the inner part's constant range."""
    if not supports_linear(index.dtype):
        return None
    form = to_linear(index)
    outer = LinearForm(index.dtype)
    inner = LinearForm(index.dtype)
    lo = hi = form.const
    for atom, coef in form.live_terms():
        if isinstance(atom, Var) and atom in uses.inner_ranges:
            a, b = uses.inner_ranges[atom]
            lo += min(coef * a, coef * b)
            hi += max(coef * a, coef * b)
            inner.add_term(atom, coef)
        elif _mentions_any(atom, uses.inner_ranges) or _mentions_any(atom, uses.inner_opaque):
            return None  # a non-affine use of an inner var, or a load (memory may change)
        else:
            outer.add_term(atom, coef)
    inner.const = form.const
    return _Split(outer, lo, hi, inner)


def _same_form(a: LinearForm, b: LinearForm) -> bool:
    diff = a.copy()
    diff.add_form(b, -1)
    return diff.is_const and diff.const == 0


def _compact_dim(
    splits: list[_Split], extent: PrimExpr, analyzer: Analyzer
) -> tuple[int, list[PrimExpr]] | None:
    """The new extent and rewritten indices of one dimension, or None to keep it."""
    first = splits[0]
    if not all(_same_form(s.outer, first.outer) for s in splits[1:]):
        return None
    lo = min(s.lo for s in splits)
    hi = max(s.hi for s in splits)
    size = hi - lo + 1
    if isinstance(extent, IntImm) and size >= extent.value:
        return None
    dtype = first.outer.dtype
    base = first.outer.copy()
    base.const = lo
    start = from_linear(base)
    if not (
        analyzer.can_prove(start >= IntImm(dtype, 0))
        and analyzer.can_prove(start + IntImm(dtype, size) <= extent.astype(dtype))
    ):
        return None
    rewritten = []
    for s in splits:
        local = s.inner.copy()
        local.const = s.inner.const - lo
        rewritten.append(from_linear(local))
    return size, rewritten


class _Rewrite(StmtExprMutator):
    def __init__(self, old: Buffer, new: Buffer, indices: list[tuple[PrimExpr, ...]]) -> None:
        super().__init__()
        self.old = old
        self.new = new
        self.indices = iter(indices)

    def visit_buffer_load_(self, node: BufferLoad) -> PrimExpr:
        # Same traversal order as _Collect (fields in order, index before value), so the
        # rewritten indices come out in the order they were collected.
        if node.buffer is not self.old:
            return self.generic_mutate(node)
        load: PrimExpr = rebuild(node, {"buffer": self.new, "indices": next(self.indices)})
        return load

    def visit_buffer_store_(self, node: BufferStore) -> Stmt:
        if node.buffer is not self.old:
            return self.generic_mutate(node)
        indices = next(self.indices)
        value = self.visit_expr(node.value)
        store: Stmt = rebuild(node, {"buffer": self.new, "indices": indices, "value": value})
        return store


class _Compactor(StmtExprMutator):
    def __init__(self) -> None:
        super().__init__()
        self.analyzer = Analyzer()

    def visit_for_(self, node: For) -> Stmt:
        with self.analyzer.scope():
            self.analyzer.bind_range(node.loop_var, node.min, node.extent)
            return self.generic_mutate(node)

    def visit_allocate_(self, node: Allocate) -> Stmt:
        node = self.generic_mutate(node)
        decl = node.body
        if not isinstance(decl, DeclBuffer) or decl.buffer.data is not node.buffer_var:
            return node
        buffer = decl.buffer
        if buffer.strides or buffer.axis_separators or not _is_zero(buffer.elem_offset):
            return node
        uses = _Uses(buffer, node.buffer_var)
        _Collect(uses).visit_stmt(decl.body)
        if uses.other_use or not uses.indices:
            return node
        compacted = self._compact(uses)
        if compacted is None:
            return node
        shape, indices = compacted
        new_buffer = rebuild(buffer, {"shape": shape})
        body = _Rewrite(buffer, new_buffer, indices).visit_stmt(decl.body)
        extent: PrimExpr = IntImm(node.extent.dtype, 1)
        for dim in shape:
            extent = _mul(extent, dim)
        new_decl = DeclBuffer(new_buffer, body, span=decl.span)
        result: Stmt = rebuild(node, {"extent": extent, "body": new_decl})
        return result

    def _compact(
        self, uses: _Uses
    ) -> tuple[tuple[PrimExpr, ...], list[tuple[PrimExpr, ...]]] | None:
        ndim = len(uses.buffer.shape)
        if any(len(ix) != ndim for ix in uses.indices):
            return None
        shape = list(uses.buffer.shape)
        columns: list[list[PrimExpr]] = [[ix[d] for ix in uses.indices] for d in range(ndim)]
        changed = False
        for d in range(ndim):
            splits = [_split(ix, uses) for ix in columns[d]]
            if any(s is None for s in splits):
                continue
            result = _compact_dim([s for s in splits if s is not None], shape[d], self.analyzer)
            if result is None:
                continue
            size, rewritten = result
            shape[d] = IntImm(shape[d].dtype, size)
            columns[d] = rewritten
            changed = True
        if not changed:
            return None
        rows = [tuple(columns[d][k] for d in range(ndim)) for k in range(len(uses.indices))]
        return tuple(shape), rows


def _is_zero(expr: PrimExpr) -> bool:
    return isinstance(expr, IntImm) and expr.value == 0


def _mul(a: PrimExpr, b: PrimExpr) -> PrimExpr:
    if isinstance(a, IntImm) and a.value == 1:
        return b.astype(a.dtype) if b.dtype != a.dtype else b
    if isinstance(a, IntImm) and isinstance(b, IntImm):
        return IntImm(a.dtype, a.value * b.value)
    return a * (b.astype(a.dtype) if b.dtype != a.dtype else b)


@function_pass("compact_allocations")
def compact_allocations(func: PrimFunc) -> PrimFunc:
    """Shrink each allocation to the region its scope accesses (see module)."""
    body = _Compactor().visit_stmt(func.body)
    return func if body is func.body else func.with_body(body)
