"""Static race check for ``T.parallel`` loops (pass ``check_parallel_races``).

A parallel loop's iterations run on different threads in no fixed order, so the loop is
refused when one iteration may write a buffer element that another iteration writes or
reads. The check runs on logical N-d indices (before ``flatten_buffer``) and refuses what it
cannot prove independent; ``docs/race-check.md`` states the rule with examples.

For a loop over ``p`` and a write ``a`` with another access ``b`` of the same storage (``b``
may be ``a`` itself, executed by another iteration), ``b`` is renamed as executed by an
iteration ``p'`` (every variable bound inside the loop gets a copy with the same range) and
the pair is independent when one of these holds:

* some dimension's indices are ``c*p + r`` and ``c*p' + r'`` with the same constant ``c`` and
  ``|r - r'| < |c|`` under the loops' ranges (then equal indices force ``p == p'``);
  a symbolic stride ``S*p + r`` with ``0 <= r < S`` on both sides counts the same way;
* some dimension's indices can never be equal (their difference excludes 0);
* both accesses only run in the iteration pinned by their conditions (``if p == 0``).

Buffers allocated inside the loop body are private to an iteration. A pointer to shared
storage that escapes (a data var used as a value, ``T.address_of``) cannot be followed:
the loop is refused. Opt-outs: the loop annotation ``{"tvmscript.allow_races": True}``, or
``PassContext(config={"check_parallel_races": {"enabled": False}})`` (what
``build(..., check_races=False)`` sets), or disabling the pass by name.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from irbuilder.ir import (
    EQ,
    Allocate,
    Block,
    BlockRealize,
    Buffer,
    BufferLoad,
    BufferStore,
    Call,
    CallKind,
    Cast,
    DeclBuffer,
    For,
    ForKind,
    IfThenElse,
    IntImm,
    IterKind,
    Let,
    LetStmt,
    Mul,
    Not,
    PrimExpr,
    PrimFunc,
    Span,
    Stmt,
    StmtExprVisitor,
    Var,
    post_order_visit,
    structural_equal,
)

from .analysis import substitute_expr
from .arith import Analyzer, IntBound, LinearForm, from_linear, supports_linear, to_linear
from .bounds_check import format_expr
from .flatten_buffer import flat_index
from .pass_infra import PassContext, function_pass

__all__ = ["ALLOW_RACES", "PASS_NAME", "RaceError", "check_parallel_races", "find_races"]

ALLOW_RACES = "tvmscript.allow_races"
"""Loop annotation: ``True`` exempts one parallel loop from the check."""

PASS_NAME = "check_parallel_races"

_OPT_OUT = (
    f'annotate the loop with T.parallel(..., annotations={{"{ALLOW_RACES}": True}}) '
    "or build with check_races=False"
)


class RaceError(ValueError):
    """A parallel loop whose iterations may conflict.

    ``span`` locates the access, ``notes`` are ``(message, span)`` pairs: the parallel loop,
    the other access when it is a different one, and how to opt out (no span).
    """

    def __init__(
        self,
        message: str,
        buffer: str,
        span: Span | None,
        notes: list[tuple[str, Span | None]],
    ) -> None:
        self.message = message
        self.buffer = buffer
        self.span = span
        self.notes = notes
        where = f"{span}: " if span is not None else ""
        located = "".join(f"\n  {n}" + (f" ({s})" if s else "") for n, s in notes)
        super().__init__(f"{where}{message}{located}")


@dataclass
class _Loop:
    var: Var
    min: PrimExpr
    extent: PrimExpr


@dataclass
class _Access:
    buffer: Buffer
    indices: tuple[PrimExpr, ...]
    write: bool
    span: Span | None
    conds: tuple[PrimExpr, ...]
    loops: tuple[_Loop, ...]


@dataclass
class _Escape:
    data: Var
    what: str
    span: Span | None


@dataclass
class _Body:
    """What one parallel loop's body does to memory."""

    accesses: list[_Access] = field(default_factory=list)
    escapes: list[_Escape] = field(default_factory=list)
    private: set[Var] = field(default_factory=set)


class _Collector(StmtExprVisitor):
    """Accesses below a parallel loop, with their conditions and enclosing inner loops.

    Let-bound values are substituted into indices and conditions, so that an index
    computed in a ``LetStmt`` is analysed like the written-out expression.
    """

    def __init__(self, storage: set[Var]) -> None:
        self.body = _Body()
        self.storage = storage
        self.conds: list[PrimExpr] = []
        self.loops: list[_Loop] = []
        self.lets: dict[Var, PrimExpr] = {}
        self.spans: list[Span | None] = []

    def _resolve(self, expr: PrimExpr) -> PrimExpr:
        return substitute_expr(expr, self.lets) if self.lets else expr

    def _span(self, own: Span | None = None) -> Span | None:
        if own is not None:
            return own
        return next((s for s in reversed(self.spans) if s is not None), None)

    def _record(
        self, buffer: Buffer, indices: tuple[PrimExpr, ...], write: bool, span: Span | None
    ) -> None:
        self.body.accesses.append(
            _Access(
                buffer,
                tuple(self._resolve(i) for i in indices),
                write,
                self._span(span),
                tuple(self.conds),
                tuple(self.loops),
            )
        )

    def visit_stmt(self, stmt: Stmt) -> None:
        self.spans.append(stmt.span)
        try:
            super().visit_stmt(stmt)
        finally:
            self.spans.pop()

    def visit_buffer_store_(self, node: BufferStore) -> None:
        self._record(node.buffer, node.indices, True, node.span)
        self.generic_visit(node)

    def visit_buffer_load_(self, node: BufferLoad) -> None:
        self._record(node.buffer, node.indices, False, node.span)
        self.generic_visit(node)

    def visit_var_(self, var: Var) -> None:
        if var.dtype.is_handle and var not in self.body.private:
            self.body.escapes.append(_Escape(var, f"the pointer {var.name!r}", self._span()))

    def visit_call_(self, node: Call) -> None:
        if node.op == "address_of":
            for arg in node.args:
                if isinstance(arg, BufferLoad) and arg.buffer.data not in self.body.private:
                    what = f"T.address_of({arg.buffer.name}[...])"
                    self.body.escapes.append(_Escape(arg.buffer.data, what, self._span(node.span)))
        self.generic_visit(node)

    def visit_for_(self, node: For) -> None:
        self.visit_expr(node.min)
        self.visit_expr(node.extent)
        self.loops.append(_Loop(node.loop_var, self._resolve(node.min), self._resolve(node.extent)))
        self.visit_stmt(node.body)
        self.loops.pop()

    def visit_if_then_else_(self, node: IfThenElse) -> None:
        self.visit_expr(node.condition)
        cond = self._resolve(node.condition)
        self.conds.append(cond)
        self.visit_stmt(node.then_case)
        self.conds.pop()
        if node.else_case is not None:
            self.conds.append(Not(cond))
            self.visit_stmt(node.else_case)
            self.conds.pop()

    def visit_let_stmt_(self, node: LetStmt) -> None:
        self.visit_expr(node.value)
        self.lets[node.var] = self._resolve(node.value)
        self.visit_stmt(node.body)
        del self.lets[node.var]

    def visit_let_(self, node: Let) -> None:
        self.visit_expr(node.value)
        self.lets[node.var] = self._resolve(node.value)
        self.visit_expr(node.body)
        del self.lets[node.var]

    def visit_allocate_(self, node: Allocate) -> None:
        self.body.private.add(node.buffer_var)
        self.generic_visit(node)

    def visit_decl_buffer_(self, node: DeclBuffer) -> None:
        if node.buffer.data not in self.storage:
            self.body.private.add(node.buffer.data)  # it owns its storage
        self.generic_visit(node)

    def visit_block_realize_(self, node: BlockRealize) -> None:
        # Before lower_blocks: the iter vars stand for their bound values.
        for value in node.iter_values:
            self.visit_expr(value)
        self.visit_expr(node.predicate)
        bound = [iv.var for iv in node.block.iter_vars]
        for var, value in zip(bound, node.iter_values):
            self.lets[var] = self._resolve(value)
        guarded = not (isinstance(node.predicate, IntImm) and node.predicate.value)
        if guarded:
            self.conds.append(self._resolve(node.predicate))
        self.visit_stmt(node.block)
        if guarded:
            self.conds.pop()
        for var in bound:
            del self.lets[var]

    def visit_block_(self, node: Block) -> None:
        for buffer in node.alloc_buffers:
            self.body.private.add(buffer.data)
        for match in node.match_buffers:
            # A view whose accesses this analysis does not map back to its source.
            source = match.source.buffer
            if source.data not in self.body.private:
                what = f"the match_buffer view {match.buffer.name!r}"
                self.body.escapes.append(_Escape(source.data, what, self._span(node.span)))
        if node.init is not None:
            # The init runs when every reduction axis is at its start.
            starts = [EQ(iv.var, iv.dom.min) for iv in node.iter_vars if iv.kind is IterKind.REDUCE]
            self.conds.extend(self._resolve(c) for c in starts)
            self.visit_stmt(node.init)
            del self.conds[len(self.conds) - len(starts) :]
        self.visit_stmt(node.body)


def _storage_outside(func: PrimFunc) -> set[Var]:
    """Data vars with storage of their own: parameters, allocations, block buffers."""
    found: set[Var] = {b.data for b in func.buffer_map.values()}

    def visit(node: object) -> None:
        if isinstance(node, Allocate):
            found.add(node.buffer_var)
        elif isinstance(node, Block):
            found.update(b.data for b in node.alloc_buffers)

    post_order_visit(func.body, visit)
    return found


def _mentions(expr: PrimExpr, targets: set[Var]) -> bool:
    found = False

    def visit(node: object) -> None:
        nonlocal found
        if isinstance(node, Var) and node in targets:
            found = True

    post_order_visit(expr, visit)
    return found


def _has_memory(expr: PrimExpr) -> bool:
    """Whether ``expr`` reads memory or calls anything (its value depends on data)."""
    found = False

    def visit(node: object) -> None:
        nonlocal found
        if isinstance(node, BufferLoad) or (isinstance(node, Call) and node.op != "likely"):
            found = True

    post_order_visit(expr, visit)
    return found


@dataclass
class _Side:
    """One access as executed by one iteration (its loop vars renamed for the second)."""

    indices: tuple[PrimExpr, ...]
    conds: tuple[PrimExpr, ...]
    p: Var
    loops: tuple[_Loop, ...]


class _Pair:
    """Decides whether accesses ``a`` (iteration ``p``) and ``b`` (iteration ``p'``) can
    touch the same element in different iterations."""

    def __init__(
        self,
        loop: For,
        enclosing: tuple[_Loop, ...],
        a: _Access,
        b: _Access,
        layout: str,
        written: set[Var],
    ) -> None:
        self.loop = loop
        self.written = written
        self.analyzer = Analyzer()
        p = loop.loop_var
        q = Var(p.name + "'", p.dtype)
        rename: dict[Var, PrimExpr] = {p: q}
        for inner in b.loops:
            rename[inner.var] = Var(inner.var.name + "'", inner.var.dtype)
        self.inner: set[Var] = {p, q, *(lp.var for lp in a.loops), *(lp.var for lp in b.loops)}
        self.inner.update(v for v in rename.values() if isinstance(v, Var))

        def renamed(e: PrimExpr) -> PrimExpr:
            return substitute_expr(e, rename)

        b_loops = tuple(
            _Loop(rename[lp.var], renamed(lp.min), renamed(lp.extent))  # type: ignore[arg-type]
            for lp in b.loops
        )
        self.a = _Side(_indices(a, layout), a.conds, p, a.loops)
        self.b = _Side(
            tuple(renamed(i) for i in _indices(b, layout)),
            tuple(renamed(c) for c in b.conds),
            q,
            b_loops,
        )
        an = self.analyzer
        for outer in enclosing:  # the same value in both iterations
            an.bind_range(outer.var, outer.min, outer.extent)
        an.bind_range(p, loop.min, loop.extent)
        an.bind_range(q, loop.min, loop.extent)
        for side in (self.a, self.b):
            for lp in side.loops:
                an.bind_range(lp.var, lp.min, lp.extent)
        for side in (self.a, self.b):
            for cond in side.conds:
                an.add_constraint(cond)

    def independent(self) -> bool:
        if self._pinned():
            return True
        return any(self._separates(ia, ib) for ia, ib in zip(self.a.indices, self.b.indices))

    def _always_run(self) -> bool:
        """Whether both accesses run in every iteration (no condition, no inner loop that
        may be empty)."""
        if self.a.conds or self.b.conds:
            return False
        loops = (*self.a.loops, *self.b.loops)
        return all(self.analyzer.const_int_bound(lp.extent).lo >= 1 for lp in loops)

    def same_element_always(self) -> bool:
        """Whether both accesses always touch one fixed element, in every iteration."""
        if not self._always_run():
            return False
        for ia, ib in zip(self.a.indices, self.b.indices):
            if _mentions(ia, self.inner) or _mentions(ib, self.inner):
                return False
            if _has_memory(ia) or _has_memory(ib):
                return False
            diff = self.analyzer.compare(ia, ib)
            if diff is None or diff != IntBound.point(0):
                return False
        return self.analyzer.const_int_bound(self.loop.extent).lo >= 2

    def definite_offset(self) -> int | None:
        """``k`` when iteration ``p + k`` always meets iteration ``p`` (no conditions, one
        dimension ``c*p + r`` against ``c*p' + r'`` with ``r - r'`` a multiple of ``c``,
        every other dimension the same element), else None."""
        if self.a.conds or self.b.conds:
            return None
        extent = self.analyzer.const_int_bound(self.loop.extent).lo
        offset: int | None = None
        for ia, ib in zip(self.a.indices, self.b.indices):
            if _has_memory(ia) or _has_memory(ib) or not supports_linear(ia.dtype):
                return None
            if ia.dtype != ib.dtype:
                return None
            split_a, split_b = self._split(ia, self.a.p), self._split(ib, self.b.p)
            if split_a is None or split_b is None:
                return None
            (sa, ra), (sb, rb) = split_a, split_b
            if not (isinstance(sa, int) and isinstance(sb, int) and sa == sb):
                return None
            diff = self.analyzer.compare(ra, rb)
            if diff is None or not diff.is_point:
                return None
            if sa == 0:
                if diff.lo != 0:
                    return None
                continue
            if diff.lo % sa != 0 or offset is not None:
                return None
            offset = diff.lo // sa
        if offset is None or offset == 0 or abs(offset) >= extent:
            return None
        return offset

    def certain(self) -> bool:
        """Whether the two accesses provably meet in two different iterations."""
        return self.same_element_always() or self.definite_offset() is not None

    def _pinned(self) -> bool:
        """Both accesses run only when ``p == e`` for one loop-invariant ``e``."""
        pa, pb = self._pin(self.a), self._pin(self.b)
        return pa is not None and pb is not None and structural_equal(pa, pb)

    def _pin(self, side: _Side) -> PrimExpr | None:
        for cond in side.conds:
            if isinstance(cond, EQ):
                for var, other in ((cond.a, cond.b), (cond.b, cond.a)):
                    if (
                        var is side.p
                        and not _mentions(other, self.inner)
                        and not _has_memory(other)
                    ):
                        return other
        bound = self.analyzer.const_int_bound(side.p)
        if bound.is_point:
            return IntImm(side.p.dtype, bound.lo)
        return None

    def _separates(self, ia: PrimExpr, ib: PrimExpr) -> bool:
        if ia.dtype != ib.dtype or not supports_linear(ia.dtype):
            return False
        if _varies(ia, self.written) or _varies(ib, self.written):
            return False  # a load of memory the loop writes may differ between iterations
        diff = self.analyzer.compare(ia, ib)
        if diff is not None and (diff.lo > 0 or diff.hi < 0):
            return True  # never the same element
        split_a, split_b = self._split(ia, self.a.p), self._split(ib, self.b.p)
        if split_a is None or split_b is None:
            return False
        (stride_a, rest_a), (stride_b, rest_b) = split_a, split_b
        if isinstance(stride_a, int) and isinstance(stride_b, int):
            if stride_a != stride_b or stride_a == 0:
                return False
            bound = self.analyzer.compare(rest_a, rest_b)
            return bound is not None and max(-bound.lo, bound.hi) < abs(stride_a)
        if isinstance(stride_a, int) or isinstance(stride_b, int):
            return False
        if not structural_equal(stride_a, stride_b):
            return False
        return self._below(rest_a, stride_a, self.a) and self._below(rest_b, stride_b, self.b)

    def _split(self, index: PrimExpr, p: Var) -> tuple[int | PrimExpr, PrimExpr] | None:
        """``index`` as ``stride * p + rest``: an int stride, or a symbolic loop-invariant
        one (``p * n``); None when ``p`` appears any other way."""
        form = to_linear(index)
        stride: int | PrimExpr = 0
        rest = LinearForm(form.dtype)
        rest.const = form.const
        for atom, coef in form.live_terms():
            if atom is p:
                if not isinstance(stride, int):
                    return None
                stride += coef
                continue
            factor = _symbolic_factor(atom, p)
            if factor is not None and not _mentions(factor, self.inner) and coef == 1:
                if stride != 0:
                    return None
                stride = factor
                continue
            widened = self._split_widening(atom, p)
            if widened is not None and isinstance(stride, int):
                inner_stride, inner_rest = widened
                stride += coef * inner_stride
                rest.add_term(inner_rest, coef)
                continue
            if _mentions(atom, {p}):
                return None
            rest.add_term(atom, coef)
        return stride, from_linear(rest)

    def _split_widening(self, atom: PrimExpr, p: Var) -> tuple[int, PrimExpr] | None:
        """``Cast(int64, c*p + r)`` as ``c`` and ``Cast(int64, r)`` (indices do not
        overflow, see docs/race-check.md); None for anything else."""
        if not (isinstance(atom, Cast) and supports_linear(atom.dtype)):
            return None
        source = atom.value.dtype
        if not (supports_linear(source) and source.bits <= atom.dtype.bits):
            return None
        split = self._split(atom.value, p)
        if split is None:
            return None
        stride, rest = split
        if not isinstance(stride, int):
            return None
        return stride, Cast(atom.dtype, rest)

    def _below(self, rest: PrimExpr, stride: PrimExpr, side: _Side) -> bool:
        """``0 <= rest < stride``: a constant range below the stride's least value, or one
        inner loop var running over ``range(stride)``."""
        bound = self.analyzer.const_int_bound(rest)
        if bound.lo >= 0 and bound.hi < self.analyzer.const_int_bound(stride).lo:
            return True
        for lp in side.loops:
            if rest is lp.var:
                lo = self.analyzer.const_int_bound(lp.min)
                return lo.lo >= 0 and _is_zero(lp.min) and structural_equal(lp.extent, stride)
        return False


def _varies(expr: PrimExpr, written: set[Var]) -> bool:
    """Whether ``expr`` loads memory the loop writes, or calls out (not a loop invariant)."""
    found = False

    def visit(node: object) -> None:
        nonlocal found
        if isinstance(node, BufferLoad) and node.buffer.data in written:
            found = True
        elif isinstance(node, Call) and node.kind in (CallKind.EXTERN, CallKind.BUILTIN):
            found = found or node.op not in ("likely", "if_then_else")

    post_order_visit(expr, visit)
    return found


def _is_zero(expr: PrimExpr) -> bool:
    return isinstance(expr, IntImm) and expr.value == 0


def _symbolic_factor(atom: PrimExpr, p: Var) -> PrimExpr | None:
    if isinstance(atom, Mul):
        if atom.a is p and not _mentions(atom.b, {p}):
            return atom.b
        if atom.b is p and not _mentions(atom.a, {p}):
            return atom.a
    return None


def _indices(access: _Access, layout: str) -> tuple[PrimExpr, ...]:
    if layout == "nd":
        return access.indices
    return (flat_index(access.buffer, access.indices),)


def _same_layout(buffers: list[Buffer]) -> bool:
    first = buffers[0]
    return all(
        b is first
        or (
            len(b.shape) == len(first.shape)
            and all(structural_equal(x, y) for x, y in zip(b.shape, first.shape))
            and len(b.strides) == len(first.strides)
            and all(structural_equal(x, y) for x, y in zip(b.strides, first.strides))
            and structural_equal(b.elem_offset, first.elem_offset)
        )
        for b in buffers
    )


def _element(access: _Access) -> str:
    return f"{access.buffer.name}[{', '.join(format_expr(i) for i in access.indices)}]"


def _loop_header(loop: For) -> Span | None:
    """The first line of the loop's span (the ``for ... in T.parallel(...)`` line)."""
    span = loop.span
    if span is None or span.end_line == span.line:
        return span
    import linecache

    text = linecache.getline(span.file, span.line).rstrip()
    end = len(text) + 1 if text else span.col + 1
    return Span(span.file, span.line, span.col, span.line, max(end, span.col + 1))


def _problem(loop: For, a: _Access, b: _Access, pair: _Pair) -> RaceError:
    p = loop.loop_var.name
    name = a.buffer.name
    loop_note = (f"in this parallel loop over {p!r}", _loop_header(loop))
    other = "written" if b.write else "read"
    notes: list[tuple[str, Span | None]] = [loop_note]
    if b is not a and b.span != a.span:
        notes.append((f"{_element(b)} is {other} here", b.span))
    definite = pair.definite_offset()
    if pair.same_element_always():
        if b.write:
            message = (
                f"data race on buffer {name!r}: every iteration of the parallel loop over "
                f"{p!r} writes {_element(a)}"
            )
        else:
            message = (
                f"data race on buffer {name!r}: iterations of the parallel loop over {p!r} "
                f"write {_element(a)} while other iterations read it"
            )
        notes.append((f"to allow it anyway, {_OPT_OUT}", None))
    elif definite is not None:
        step = f"{p} + {definite}" if definite > 0 else f"{p} - {-definite}"
        verb = "writes" if b.write else "reads"
        message = (
            f"data race on buffer {name!r}: iteration {p} of the parallel loop writes "
            f"{_element(a)}, which iteration {step} {verb} as {_element(b)}"
        )
        notes.append((f"to allow it anyway, {_OPT_OUT}", None))
    else:
        if b is a:
            clash = f"two iterations may write the same element {_element(a)}"
        elif b.write:
            clash = f"one iteration may write {_element(a)} where another writes {_element(b)}"
        else:
            clash = f"one iteration may write {_element(a)} where another reads {_element(b)}"
        message = (
            f"cannot prove the iterations of the parallel loop over {p!r} independent "
            f"for buffer {name!r}: {clash}"
        )
        reason = _reason(a, b, loop.loop_var)
        if reason:
            notes.append((reason, None))
        notes.append((f"if the iterations never touch the same element, {_OPT_OUT}", None))
    return RaceError(message, name, a.span, notes)


def _reason(a: _Access, b: _Access, p: Var) -> str:
    if any(_has_memory(i) for i in (*a.indices, *b.indices)):
        return "the index depends on values loaded from memory, which the analysis cannot follow"
    if not any(_mentions(i, {p}) for i in a.indices):
        return f"no index of {a.buffer.name!r} depends on {p.name!r}, so iterations may meet"
    return ""


def _escape_problem(loop: For, escape: _Escape, buffer_name: str) -> RaceError:
    p = loop.loop_var.name
    message = (
        f"cannot prove the iterations of the parallel loop over {p!r} independent: "
        f"{escape.what} of buffer {buffer_name!r} escapes (e.g. to an external call), "
        "and what is written through it cannot be followed"
    )
    notes: list[tuple[str, Span | None]] = [
        (f"in this parallel loop over {p!r}", _loop_header(loop)),
        (f"if the iterations never touch the same element, {_OPT_OUT}", None),
    ]
    return RaceError(message, buffer_name, escape.span, notes)


def _check_loop(
    loop: For, enclosing: tuple[_Loop, ...], storage: set[Var], names: dict[Var, str]
) -> RaceError | None:
    collector = _Collector(storage)
    collector.visit_stmt(loop.body)
    body = collector.body
    for escape in body.escapes:
        if escape.data not in body.private:
            return _escape_problem(loop, escape, names.get(escape.data, escape.data.name))
    groups: dict[Var, list[_Access]] = {}
    for access in body.accesses:
        if access.buffer.data not in body.private:
            groups.setdefault(access.buffer.data, []).append(access)
    written = {x.buffer.data for x in body.accesses if x.write}
    for accesses in groups.values():
        writes = [x for x in accesses if x.write]
        if not writes:
            continue
        buffers = list({id(x.buffer): x.buffer for x in accesses}.values())
        layout = "nd" if _same_layout(buffers) else "flat"
        conflicts = [
            (a, b, pair)
            for a in writes
            for b in [a, *(x for x in accesses if x is not a)]
            if not (pair := _Pair(loop, enclosing, a, b, layout, written)).independent()
        ]
        if conflicts:
            # A certain race explains the refusal better than an undecided pair.
            certain = [c for c in conflicts if c[2].certain()]
            return _problem(loop, *(certain or conflicts)[0])
    return None


class _ParallelLoops(StmtExprVisitor):
    """Parallel loops in source order (an outer loop before the loops inside it)."""

    def __init__(self) -> None:
        self.found: list[tuple[For, tuple[_Loop, ...]]] = []
        self.enclosing: list[_Loop] = []

    def visit_for_(self, node: For) -> None:
        if node.kind is ForKind.PARALLEL:
            self.found.append((node, tuple(self.enclosing)))
        self.enclosing.append(_Loop(node.loop_var, node.min, node.extent))
        self.generic_visit(node)
        self.enclosing.pop()


def _parallel_loops(stmt: Stmt) -> Iterator[tuple[For, tuple[_Loop, ...]]]:
    """Each parallel loop with the loops around it, outer loops first."""
    finder = _ParallelLoops()
    finder.visit_stmt(stmt)
    return iter(finder.found)


def _allowed(loop: For) -> bool:
    value = loop.annotations.get(ALLOW_RACES)
    if isinstance(value, IntImm):
        return bool(value.value)
    return bool(value)


def find_races(func: PrimFunc) -> list[RaceError]:
    """One problem per parallel loop that is not proven race-free (outer loops first)."""
    storage = _storage_outside(func)
    names = {b.data: b.name for b in func.buffer_map.values()}

    def note_names(node: object) -> None:
        if isinstance(node, DeclBuffer):
            names.setdefault(node.buffer.data, node.buffer.name)
        elif isinstance(node, Block):
            for b in node.alloc_buffers:
                names.setdefault(b.data, b.name)

    post_order_visit(func.body, note_names)
    problems = []
    for loop, enclosing in _parallel_loops(func.body):
        if _allowed(loop):
            continue
        problem = _check_loop(loop, enclosing, storage, names)
        if problem is not None:
            problems.append(problem)
    return problems


@function_pass(PASS_NAME)
def check_parallel_races(func: PrimFunc) -> PrimFunc:
    """Raise :class:`RaceError` for the first parallel loop whose iterations may conflict."""
    if not PassContext.current().option(PASS_NAME, "enabled", True):
        return func
    problems = find_races(func)
    if problems:
        raise problems[0]
    return func
