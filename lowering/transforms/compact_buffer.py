"""Buffer compaction (pass ``compact_buffer_allocation``): allocate only the region used.

TVM's ``CompactBufferAllocation`` rule, on our IR right after allocation placement: an
allocated buffer whose accesses under its ``Allocate`` cover only part of its shape is
shrunk to the bounding box of that part, and every access is shifted by the box's
minimum. The box of one dimension is the union, over every load and store, of its index
with the loops under the allocation point relaxed to their ranges; what is bound outside
the allocation stays symbolic in the box's minimum (``C_local[vi - i_0 * 32, ...]``). A
``cache_write`` tile accumulator moved under its tile by ``reverse_compute_at`` then needs
4 x 64 floats, not the whole output: a stack buffer LLVM can keep in registers, where the
full-size one was a heap block per parallel task.

Where we differ from TVM's letter, and why:

- **Serial loops between the allocation and its uses.** TVM's planner puts the
  allocation in the body of the innermost loop holding every use, so the loops above it
  are outside and stay symbolic. Ours (``plan_allocation_location``) stops above serial
  loops, so that values carried across their iterations keep their meaning. Such a loop
  is *folded* (kept symbolic, one box per iteration reusing the same storage) only when
  the boxes of two different iterations are provably disjoint, or the same box: then no
  iteration can read what another wrote, in the full buffer as in the compact one, and
  the meaning is unchanged. Otherwise those loops are relaxed too (TVM's box at the
  allocation point). Parallel, vectorized and thread loops are never folded.
- **Only what can be bounded.** A dimension whose box cannot be proven to lie inside
  ``[0, shape)`` (an index that is not affine in the relaxed loops, a symbolic range
  whose union cannot be ordered, an out-of-bounds access the bounds checker must still
  see) keeps its full extent, as TVM's ``CoverRange`` falls back to the shape. A buffer
  used other than by loads and stores through its one declaration (its data pointer
  passed on, a second view declared over it, strides or an element offset) is left
  alone.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from irbuilder.ir import (
    GE,
    Allocate,
    AttrStmt,
    Broadcast,
    Buffer,
    BufferLoad,
    BufferStore,
    Call,
    DeclBuffer,
    For,
    ForKind,
    IfThenElse,
    IntImm,
    Let,
    LetStmt,
    Max,
    PrimExpr,
    PrimFunc,
    Ramp,
    SeqStmt,
    Stmt,
    StmtExprMutator,
    StmtExprVisitor,
    Sub,
    Var,
    post_order_visit,
    rebuild,
)

from ..analysis import free_vars, product, uses_buffer_data
from ..arith import Analyzer, IntBound, LinearForm, from_linear, supports_linear, to_linear
from ..pass_infra import function_pass

__all__ = ["compact_buffer_allocation"]

_FOLDABLE = (ForKind.SERIAL, ForKind.UNROLLED)


@dataclass
class _Access:
    """One load or store of the compacted buffer, with the loops enclosing it."""

    indices: tuple[PrimExpr, ...]
    loops: tuple[For, ...]


@dataclass
class _Uses:
    """Every access of one allocation's data var, or the reason it cannot be compacted."""

    buffer: Buffer
    accesses: list[_Access] = field(default_factory=list)
    lets: list[LetStmt | Let] = field(default_factory=list)
    opaque: bool = False


class _UseCollector(StmtExprVisitor):
    def __init__(self, uses: _Uses) -> None:
        self.uses = uses
        self.data = uses.buffer.data
        self.loops: list[For] = []

    def _access(self, buffer: Buffer, indices: tuple[PrimExpr, ...]) -> None:
        if buffer.data is not self.data:
            return
        if buffer is not self.uses.buffer or len(indices) != len(buffer.shape):
            self.uses.opaque = True
            return
        self.uses.accesses.append(_Access(indices, tuple(self.loops)))

    def visit_buffer_load_(self, node: BufferLoad) -> None:
        self._access(node.buffer, node.indices)
        self.generic_visit(node)

    def visit_buffer_store_(self, node: BufferStore) -> None:
        self._access(node.buffer, node.indices)
        self.generic_visit(node)

    def visit_decl_buffer_(self, node: DeclBuffer) -> None:
        if node.buffer.data is self.data:
            self.uses.opaque = True  # a second view (match_buffer, implicit alias)
        self.generic_visit(node)

    def visit_call_(self, node: Call) -> None:
        if node.op == "address_of" and any(
            isinstance(arg, BufferLoad) and arg.buffer.data is self.data for arg in node.args
        ):
            self.uses.opaque = True  # an element's address lets anything be reached
        self.generic_visit(node)

    def visit_var_(self, var: Var) -> None:
        if var is self.data:
            self.uses.opaque = True  # the pointer itself escapes (address_of, a call)

    def visit_for_(self, node: For) -> None:
        self.visit_expr(node.min)
        self.visit_expr(node.extent)
        self.loops.append(node)
        self.visit_stmt(node.body)
        self.loops.pop()

    def visit_let_stmt_(self, node: LetStmt) -> None:
        self.uses.lets.append(node)
        self.generic_visit(node)

    def visit_let_(self, node: Let) -> None:
        self.uses.lets.append(node)
        self.generic_visit(node)


def _path_loops(body: Stmt, data: Var) -> list[For]:
    """The loops on the way from the allocation to the innermost statement holding every
    use of ``data`` (their iterations are candidates for folding)."""
    loops: list[For] = []
    node: Stmt | None = body
    while node is not None:
        if isinstance(node, For):
            if uses_buffer_data(node.min, data) or uses_buffer_data(node.extent, data):
                break
            loops.append(node)
            node = node.body
        elif isinstance(node, (LetStmt, AttrStmt)):
            node = node.body
        elif isinstance(node, (DeclBuffer, Allocate)):
            node = node.body
        elif isinstance(node, SeqStmt):
            using = [s for s in node.seq if uses_buffer_data(s, data)]
            node = using[0] if len(using) == 1 else None
        elif isinstance(node, IfThenElse):
            branches = [b for b in (node.then_case, node.else_case) if b is not None]
            using = [b for b in branches if uses_buffer_data(b, data)]
            node = using[0] if len(using) == 1 else None
        else:
            node = None
    return loops


@dataclass
class _Box:
    """One dimension's accessed interval ``[lo, hi]`` as exact linear forms."""

    lo: LinearForm
    hi: LinearForm


def _exact(form: LinearForm) -> LinearForm:
    out = LinearForm(form.dtype, wrap=False)
    out.add_form(form)
    return out


def _difference(a: LinearForm, b: LinearForm) -> LinearForm:
    out = LinearForm(a.dtype, wrap=False)
    out.add_form(a)
    out.add_form(b, -1)
    return out


def _const_difference(a: LinearForm, b: LinearForm) -> int | None:
    diff = _difference(a, b)
    return diff.const if diff.is_const else None


class _Region:
    """Bounds indices with the ``relaxed`` vars over their ranges, the others symbolic."""

    def __init__(self, analyzer: Analyzer, relaxed: set[Var], ranges: dict[Var, For]) -> None:
        self.analyzer = analyzer
        self.relaxed = relaxed
        self.ranges = ranges

    def _mentions_relaxed(self, expr: PrimExpr) -> bool:
        # A term reading memory is bounded like a relaxed one: the memory may change
        # between two accesses, so two equal-looking terms need not be one value.
        return _reads_memory(expr) or any(v in self.relaxed for v in free_vars(expr))

    def scalar_box(self, index: PrimExpr) -> _Box | None:
        if not supports_linear(index.dtype):
            return None
        form = to_linear(index)
        lo = LinearForm(index.dtype, const=form.const, wrap=False)
        hi = LinearForm(index.dtype, const=form.const, wrap=False)
        for atom, coef in form.live_terms():
            if not self._mentions_relaxed(atom):
                lo.add_term(atom, coef)
                hi.add_term(atom, coef)
                continue
            loop = self.ranges.get(atom) if isinstance(atom, Var) else None
            if (
                loop is not None
                and not self._mentions_relaxed(loop.min)
                and not (self._mentions_relaxed(loop.extent))
            ):
                first = _exact(to_linear(loop.min))
                last = _exact(to_linear(loop.min))
                last.add_form(_exact(to_linear(loop.extent)))
                last.const -= 1
                low, high = (first, last) if coef > 0 else (last, first)
                lo.add_form(low, coef)
                hi.add_form(high, coef)
                continue
            bound = self.analyzer.const_int_bound(atom)
            if bound == IntBound.of_dtype(atom.dtype):
                return None  # unbounded: the dimension keeps its full extent
            low_value, high_value = (bound.lo, bound.hi) if coef > 0 else (bound.hi, bound.lo)
            lo.const += coef * low_value
            hi.const += coef * high_value
        return _Box(lo, hi)

    def inside(self, access: _Access, index: PrimExpr, dim: PrimExpr) -> _Box | None:
        """The box of one access's index, None unless it provably lies in ``[0, dim)``
        whenever the access runs (its loops then have at least one iteration)."""
        box = self.box(index)
        if box is None:
            return None
        with self.analyzer.scope():
            for loop in access.loops:
                if supports_linear(loop.extent.dtype):
                    self.analyzer.add_constraint(GE(loop.extent, IntImm(loop.extent.dtype, 1)))
            fits = _inside_shape(self.analyzer, box, dim, self.ranges)
        return box if fits else None

    def box(self, index: PrimExpr) -> _Box | None:
        if isinstance(index, Broadcast):
            return self.scalar_box(index.value)
        if isinstance(index, Ramp):
            base = self.scalar_box(index.base)
            stride = index.stride
            if base is None or not isinstance(stride, IntImm):
                return None
            span = stride.value * (index.lanes - 1)
            base.lo.const += min(0, span)
            base.hi.const += max(0, span)
            return base
        if index.dtype.is_vector:
            return None
        return self.scalar_box(index)


def _reads_memory(expr: PrimExpr) -> bool:
    found = False

    def visit(node: object) -> None:
        nonlocal found
        found = found or isinstance(node, (BufferLoad, Call))

    post_order_visit(expr, visit)
    return found


def _union(boxes: Iterable[_Box | None]) -> _Box | None:
    result: _Box | None = None
    for box in boxes:
        if box is None:
            return None
        if result is None:
            result = box
            continue
        if box.lo.dtype != result.lo.dtype:
            return None
        lower = _const_difference(box.lo, result.lo)
        upper = _const_difference(box.hi, result.hi)
        if lower is None or upper is None:
            return None  # symbolic ends that cannot be ordered
        result = _Box(box.lo if lower < 0 else result.lo, box.hi if upper > 0 else result.hi)
    return result


def _form_bound(analyzer: Analyzer, form: LinearForm) -> IntBound:
    """A sound interval of a form's mathematical value (each atom within its dtype)."""
    lo = hi = form.const
    for atom, coef in form.live_terms():
        bound = analyzer.const_int_bound(atom)
        part = (coef * bound.lo, coef * bound.hi)
        lo += min(part)
        hi += max(part)
    return IntBound(lo, hi)


def _extreme(form: LinearForm, loops: dict[Var, For], upper: bool) -> LinearForm:
    """``form`` with each loop var replaced by its last (``upper``) or first value, in
    the direction its coefficient asks; repeated for loop bounds naming outer loops."""
    for _ in range(8):
        out = LinearForm(form.dtype, const=form.const, wrap=False)
        changed = False
        for atom, coef in form.live_terms():
            loop = loops.get(atom) if isinstance(atom, Var) else None
            if loop is None or not supports_linear(loop.min.dtype):
                out.add_term(atom, coef)
                continue
            changed = True
            end = _exact(to_linear(loop.min))
            if (coef > 0) == upper:
                end.add_form(_exact(to_linear(loop.extent)))
                end.const -= 1
            out.add_form(end, coef)
        form = out
        if not changed:
            break
    return form


def _inside_shape(analyzer: Analyzer, box: _Box, dim: PrimExpr, loops: dict[Var, For]) -> bool:
    """Whether ``0 <= lo`` and ``hi < dim`` provably hold for every value of the loops."""
    if not supports_linear(dim.dtype):
        return False
    last = _exact(to_linear(dim))
    last.const -= 1
    if last.dtype != box.hi.dtype:
        last = LinearForm(box.hi.dtype, list(last.terms), last.const, wrap=False)
    below = _difference(last, _extreme(box.hi, loops, upper=True))
    lowest = _extreme(box.lo, loops, upper=False)
    return _form_bound(analyzer, lowest).lo >= 0 and _form_bound(analyzer, below).lo >= 0


def _folding_is_exact(
    boxes: Sequence[_Box | None], folded: Sequence[For], inner: Iterable[Var]
) -> bool:
    """Whether two iterations of the folded loops always use the same or disjoint boxes.

    Per dimension, the folded loop vars in the box's minimum, sorted by coefficient, must
    form a mixed radix whose smallest digit steps over the box's extent: different digits
    then give disjoint intervals. A dimension without folded vars is the same box for
    every iteration. Each folded loop's first value must be the same in every iteration
    of the loops around it (set outside the allocation), so its var spans its extent.

    A box must also never come back once left: the loops whose vars place the box are
    the outer ones of the folded chain. Were a loop not placing it outside one that does
    (``for t: for v: B[v]``), iteration ``(1, 0)`` would return to the box ``(0, 0)``
    used, and find in the shared storage what ``(0, 7)`` wrote there."""
    extents = {loop.loop_var: loop.extent for loop in folded}
    mins = {loop.loop_var: loop.min for loop in folded}
    defined_inside = set(inner)
    if any(v in defined_inside for m in mins.values() for v in free_vars(m)):
        return False
    placing = {
        atom
        for box in boxes
        if box is not None
        for atom, _ in box.lo.live_terms()
        if isinstance(atom, Var) and atom in extents
    }
    places = [loop.loop_var in placing for loop in folded]
    first_free = next((k for k, p in enumerate(places) if not p), len(places))
    if any(places[first_free:]):
        return False
    for box in boxes:
        if box is None:
            continue
        terms: list[tuple[int, Var]] = []
        for atom, coef in box.lo.live_terms():
            if isinstance(atom, Var) and atom in extents:
                terms.append((abs(coef), atom))
            elif any(v in extents for v in free_vars(atom)):
                return False  # a folded var inside a non-affine term
        if not terms:
            continue
        width = _const_difference(box.hi, box.lo)
        if width is None:
            return False
        reach = width + 1  # the distance the next digit must step over
        for coef, var in sorted(terms, key=lambda t: t[0]):
            if coef < reach:
                return False
            extent = extents[var]
            if not isinstance(extent, IntImm):
                # Only the largest digit may have a symbolic count.
                if (coef, var) != max(terms, key=lambda t: t[0]):
                    return False
                continue
            reach += coef * (extent.value - 1)
    return True


def _const_extent(box: _Box | None, dim: PrimExpr) -> int | None:
    if box is None:
        return dim.value if isinstance(dim, IntImm) else None
    width = _const_difference(box.hi, box.lo)
    return None if width is None else width + 1


class _Compactor(StmtExprMutator):
    def __init__(self) -> None:
        super().__init__()
        self.outer_loops: list[For] = []

    def visit_for_(self, node: For) -> Stmt:
        self.outer_loops.append(node)
        try:
            return self.generic_mutate(node)
        finally:
            self.outer_loops.pop()

    def visit_allocate_(self, node: Allocate) -> Stmt:
        alloc: Allocate = self.generic_mutate(node)
        decl = alloc.body
        if not isinstance(decl, DeclBuffer) or decl.buffer.data is not alloc.buffer_var:
            return alloc
        buffer = decl.buffer
        if buffer.strides or buffer.axis_separators or not _is_zero(buffer.elem_offset):
            return alloc
        uses = _Uses(buffer)
        _UseCollector(uses).visit_stmt(decl.body)
        if uses.opaque or not uses.accesses:
            return alloc
        boxes = self._boxes(uses, decl.body)
        if boxes is None:
            return alloc
        return self._rewrite(alloc, decl, boxes)

    def _boxes(self, uses: _Uses, body: Stmt) -> list[_Box | None] | None:
        """Per dimension the compact box (None: full extent), or None if nothing shrinks."""
        analyzer = Analyzer()
        ranges: dict[Var, For] = {}
        inner: dict[Var, None] = {}
        for loop in self.outer_loops:
            analyzer.bind_range(loop.loop_var, loop.min, loop.extent)
            ranges[loop.loop_var] = loop
            if supports_linear(loop.extent.dtype):  # the allocation runs: so do its loops
                analyzer.add_constraint(GE(loop.extent, IntImm(loop.extent.dtype, 1)))
        seen: set[For] = set()
        for access in uses.accesses:
            for loop in access.loops:
                if loop not in seen:
                    seen.add(loop)
                    analyzer.bind_range(loop.loop_var, loop.min, loop.extent)
                    ranges[loop.loop_var] = loop
                    inner[loop.loop_var] = None
        for let in uses.lets:
            inner[let.var] = None
            if let.var.dtype.is_integer and let.var.dtype.is_scalar:
                analyzer.bind(let.var, analyzer.const_int_bound(let.value))
        shape = uses.buffer.shape
        folded: list[For] = []
        for loop in _path_loops(body, uses.buffer.data):
            if loop.kind not in _FOLDABLE:
                break
            folded.append(loop)
        # The longest chain of folded loops that passes, down to none (TVM's box at the
        # allocation point).
        attempts = [folded[:depth] for depth in range(len(folded), -1, -1)]
        for fold in attempts:
            relaxed = set(inner) - {loop.loop_var for loop in fold}
            region = _Region(analyzer, relaxed, ranges)
            boxes: list[_Box | None] = []
            for dim_index, dim in enumerate(shape):
                boxes.append(
                    _union(
                        region.inside(access, access.indices[dim_index], dim)
                        for access in uses.accesses
                    )
                )
            if fold and not _folding_is_exact(boxes, fold, inner):
                continue
            with analyzer.scope():
                for loop in seen:  # sizes compared where the accesses run
                    if supports_linear(loop.extent.dtype):
                        analyzer.add_constraint(GE(loop.extent, IntImm(loop.extent.dtype, 1)))
                if _shrinks(boxes, shape, analyzer):
                    return boxes
        return None

    def _rewrite(self, alloc: Allocate, decl: DeclBuffer, boxes: list[_Box | None]) -> Stmt:
        old = decl.buffer
        shape = tuple(
            dim if box is None else _extent_expr(box, dim)
            for box, dim in zip(boxes, old.shape, strict=True)
        )
        new = dataclasses.replace(old, shape=shape)
        mins = [None if box is None else from_linear(_wrapped(box.lo)) for box in boxes]
        body = _Shift(old, new, mins).visit_stmt(decl.body)
        extent = product(shape)
        if extent.dtype != alloc.extent.dtype and isinstance(extent, IntImm):
            extent = IntImm(alloc.extent.dtype, extent.value)
        result: Allocate = rebuild(
            alloc, {"extent": extent, "body": DeclBuffer(new, body, span=decl.span)}
        )
        return result


def _is_zero(expr: PrimExpr) -> bool:
    return isinstance(expr, IntImm) and expr.value == 0


def _wrapped(form: LinearForm) -> LinearForm:
    out = LinearForm(form.dtype)
    out.add_form(form)
    return out


def _extent_expr(box: _Box, dim: PrimExpr) -> PrimExpr:
    width = _difference(box.hi, box.lo)
    width.const += 1
    expr = from_linear(_wrapped(width))
    if isinstance(expr, IntImm):
        return expr if expr.dtype == dim.dtype else IntImm(dim.dtype, expr.value)
    # A symbolic box is empty when its loops do not run (a loop extent <= 0): the
    # allocation must still have a size >= 0.
    return Max(expr, IntImm(expr.dtype, 0))


def _shrinks(boxes: Sequence[_Box | None], shape: Sequence[PrimExpr], analyzer: Analyzer) -> bool:
    """Whether the compact shape is smaller in some dimension and no larger in any, as far
    as ``analyzer`` (knowing that the loops run) can tell."""
    smaller = False
    for box, dim in zip(boxes, shape, strict=True):
        if box is None:
            continue
        new = _const_extent(box, dim)
        if new is not None and isinstance(dim, IntImm):
            if new > dim.value or new < 1:
                return False
            smaller = smaller or new < dim.value
            continue
        if new is not None:
            # A fixed size instead of a symbolic one (at most the box's elements when the
            # symbolic dimension is smaller: the accesses were proven inside it).
            if new < 1:
                return False
            smaller = True
            continue
        width = _difference(box.hi, box.lo)
        width.const += 1
        if not supports_linear(dim.dtype):
            return False
        gap = _form_bound(analyzer, _difference(_exact(to_linear(dim)), width))
        if gap.lo < 0:
            return False
        smaller = smaller or gap.lo > 0
    return smaller


class _Shift(StmtExprMutator):
    """Points accesses of ``old`` at ``new``, each index minus its dimension's minimum."""

    def __init__(self, old: Buffer, new: Buffer, mins: list[PrimExpr | None]) -> None:
        super().__init__()
        self.old = old
        self.new = new
        self.mins = mins

    def _indices(self, indices: tuple[PrimExpr, ...]) -> tuple[PrimExpr, ...]:
        return tuple(_shifted(i, m) for i, m in zip(indices, self.mins, strict=True))

    def visit_buffer_load_(self, node: BufferLoad) -> PrimExpr:
        load: BufferLoad = self.generic_mutate(node)
        if load.buffer is not self.old:
            return load
        shifted: BufferLoad = rebuild(
            load, {"buffer": self.new, "indices": self._indices(load.indices)}
        )
        return shifted

    def visit_buffer_store_(self, node: BufferStore) -> Stmt:
        store: BufferStore = self.generic_mutate(node)
        if store.buffer is not self.old:
            return store
        shifted: BufferStore = rebuild(
            store, {"buffer": self.new, "indices": self._indices(store.indices)}
        )
        return shifted


def _shifted(index: PrimExpr, minimum: PrimExpr | None) -> PrimExpr:
    if minimum is None or _is_zero(minimum):
        return index
    if isinstance(index, Ramp):
        return Ramp(Sub(index.base, minimum), index.stride, index.lanes, span=index.span)
    if isinstance(index, Broadcast):
        return Broadcast(Sub(index.value, minimum), index.lanes, span=index.span)
    return Sub(index, minimum)


def compacted(stmt: Stmt) -> Stmt:
    """``stmt`` with its allocations compacted, loops outside it unknown."""
    return _Compactor().visit_stmt(stmt)


@function_pass("compact_buffer_allocation")
def compact_buffer_allocation(func: PrimFunc) -> PrimFunc:
    """Shrink every allocation to the box its accesses use (see module)."""
    body = _Compactor().visit_stmt(func.body)
    return func if body is func.body else func.with_body(body)
