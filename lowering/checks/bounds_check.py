"""The ``insert_bounds_checks`` pass: an ``IndexError`` assert before every buffer access.

Every statement that evaluates a ``BufferLoad`` or performs a ``BufferStore`` is
preceded by one ``AssertStmt`` per accessed index::

    IndexError: A: index i + 3 = 17 out of bounds for shape (16,)

The message (a ``format_message``) names the buffer, the index expression with its
value at run time (for a Ramp index, the range its lanes span) and the shape. On
flattened code (``A_flat`` aliases of a logical buffer) the message names the logical
buffer and says the index is flat: ``A: flat index i * 4 + j = 17 out of bounds for
shape (4, 4) (16 elements)``.

Where it runs: anywhere without ``Reduce`` nodes, best after ``vectorize_loop``'s
``simplify`` and before ``insert_entry_checks`` (accesses are 1-d; vector accesses have Ramp
indices whose first and last lanes are checked). Loads in an ``if_then_else`` branch
are checked only when that branch is taken; loads under a ``Let`` see the binding.
Loads in a ``While`` condition are checked before the loop and at the end of each
iteration. A gather index (a vector index that is not a Ramp, ``T[I[Ramp]]``) is checked
lane by lane before the vector access; its message gives the first failing lane's value
and the lane: ``T: index I[...] = 70000 (lane 3) out of bounds for shape (4096,)``.

Loop nests whose indices are affine in their loop variables are then versioned on one
range test of the indices' extremes (:mod:`lowering.checks.bounds_hoist`): when it passes, a copy
of the nest without those asserts runs, so a checked build stays close to an unchecked
one; when it fails, the checked nest runs and raises exactly as described above.
The asserts left, whose indices read memory or are not affine, are validated a chunk of
iterations at a time in a branch-free loop before the chunk runs without them
(:mod:`lowering.checks.bounds_validate`); a failing chunk runs with every assert in place.
``PassContext(config={"insert_bounds_checks": {"hoist": False, "validate": False}})`` keeps
every assert in place.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from irbuilder.ir import (
    GE,
    LT,
    Allocate,
    And,
    AssertStmt,
    Broadcast,
    Buffer,
    BufferLoad,
    BufferStore,
    Call,
    Cast,
    Evaluate,
    For,
    ForKind,
    IfThenElse,
    IntImm,
    Let,
    LetStmt,
    Max,
    Min,
    Not,
    Or,
    PrimExpr,
    PrimFunc,
    Ramp,
    Reduce,
    Select,
    SeqStmt,
    Shuffle,
    Stmt,
    StmtExprMutator,
    StringImm,
    Var,
    While,
    const,
    expr_text,
    format_message,
    post_order_visit,
    rebuild,
    seq,
    strip_parens,
)

from ..analysis.loads import LocalAllocations
from ..pass_infra import PassContext, function_pass
from ..transforms.auto_parallel import PARALLEL_IF
from .bounds_hoist import hoist_bounds_checks
from .bounds_validate import validate_in_chunks

__all__ = ["PIPELINE_POSITION", "insert_bounds_checks"]


class _Serialize(StmtExprMutator):
    """Loops ``parallelize_loops`` made parallel go back to serial where a check sits
    inside: a failing access must raise after exactly the serial loop's writes, with its
    index in the message (a parallel body cannot format it)."""

    def visit_expr(self, expr: PrimExpr) -> PrimExpr:
        return expr

    def visit_for_(self, node: For) -> Stmt:
        if node.kind is ForKind.PARALLEL and PARALLEL_IF in node.annotations:
            found: list[bool] = []
            post_order_visit(
                node.body, lambda n: found.append(True) if isinstance(n, AssertStmt) else None
            )
            if found:
                annotations = {k: v for k, v in node.annotations.items() if k != PARALLEL_IF}
                serial: Stmt = rebuild(
                    node, {"kind": ForKind.SERIAL, "annotations": annotations}
                )
                return serial
        return self.generic_mutate(node)


def serialize_checked_loops(func: PrimFunc) -> PrimFunc:
    """``func`` with the automatically parallel loops holding a check made serial again."""
    body = _Serialize().visit_stmt(func.body)
    return func if body is func.body else func.with_body(body)


PIPELINE_POSITION = "before:insert_entry_checks"
"""Where ``build(..., bounds_check=True)`` runs the pass: after vectorization (so vector
accesses are Ramps and no assert sits in a loop still to be vectorized), before the entry
checks (which must stay last)."""

def _shape_text(shape: Sequence[PrimExpr]) -> str:
    dims = [expr_text(d, limit=None) for d in shape]
    return "(" + ", ".join(dims) + ("," if len(dims) == 1 else "") + ")"


def _braces(text: str) -> str:
    """``text`` as literal text of a ``format_message`` template."""
    return text.replace("{", "{{").replace("}", "}}")


@dataclass(frozen=True)
class _Check:
    """An in-bounds condition and its message (a format_message template and values)."""

    cond: PrimExpr
    template: str
    values: tuple[PrimExpr, ...] = ()


class _Checker:
    """Collects the checks (condition and message) for the accesses inside expressions."""

    def __init__(self, logical: dict[Var, Buffer]) -> None:
        self.logical = logical  # data var -> buffer_map buffer, to name flat aliases
        self.names = {var: buf.name for var, buf in logical.items()}

    def access(self, buffer: Buffer, indices: Sequence[PrimExpr]) -> Iterator[_Check]:
        """Checks of ``buffer[indices]`` itself (not of loads inside the indices)."""
        for dim, (index, extent) in enumerate(zip(indices, buffer.shape)):
            if index.dtype.lanes != 1 and not isinstance(index, Ramp):
                yield self._gather(buffer, index, extent, dim, len(indices))
                continue
            cond = self._in_bounds(index, extent)
            if cond is None:
                continue
            template, values = self._message(buffer, index, dim, len(indices))
            yield _Check(cond, template, values)

    def _gather(
        self, buffer: Buffer, index: PrimExpr, extent: PrimExpr, dim: int, ndim: int
    ) -> _Check:
        """The check of a vector index that is not a Ramp (``T[I[Ramp]]``): every lane in
        bounds; the message names the first failing lane and its value."""
        element = index.dtype.element_of()
        ext = extent if extent.dtype == element else Cast(element, extent)

        def lanes() -> tuple[Var, list[PrimExpr], list[PrimExpr]]:
            # Each expression binds the index vector once, with its own Let variable.
            vec = Var("index_lanes", index.dtype)
            items: list[PrimExpr] = [Shuffle((vec,), (k,)) for k in range(index.dtype.lanes)]
            ok: list[PrimExpr] = [And(GE(v, const(0, element)), LT(v, ext)) for v in items]
            return vec, items, ok

        def first_failing(pick_lane: bool) -> PrimExpr:
            vec, items, ok = lanes()
            last = len(items) - 1
            out: PrimExpr = const(last, "int32") if pick_lane else items[last]
            for k in range(last - 1, -1, -1):
                out = Select(ok[k], out, const(k, "int32") if pick_lane else items[k])
            return Let(vec, index, out)

        vec, _, ok = lanes()
        cond = ok[0]
        for more in ok[1:]:
            cond = And(cond, more)
        template, _ = self._message(buffer, index, dim, ndim)
        # `_message` ends the index text with " = {}": the failing lane follows the value.
        template = template.replace(" = {}", " = {} (lane {})", 1)
        values = (first_failing(pick_lane=False), first_failing(pick_lane=True))
        return _Check(Let(vec, index, cond), template, values)

    def _in_bounds(self, index: PrimExpr, extent: PrimExpr) -> PrimExpr | None:
        lo: PrimExpr
        hi: PrimExpr
        if isinstance(index, Ramp):
            last = index.base + index.stride * (index.lanes - 1)
            lo, hi = Min(index.base, last), Max(index.base, last)
        elif index.dtype.lanes != 1:
            return None  # a gather: no scalar condition covers it
        else:
            lo = hi = index
        if isinstance(lo, IntImm) and isinstance(hi, IntImm) and isinstance(extent, IntImm) \
                and 0 <= lo.value and hi.value < extent.value:
            return None  # statically in bounds
        ext = extent if extent.dtype == hi.dtype else Cast(hi.dtype, extent)
        return And(GE(lo, const(0, lo.dtype)), LT(hi, ext))

    def _message(
        self, buffer: Buffer, index: PrimExpr, dim: int, ndim: int
    ) -> tuple[str, tuple[PrimExpr, ...]]:
        text = _braces(strip_parens(expr_text(index, self.names)))
        values: tuple[PrimExpr, ...]
        if isinstance(index, Ramp):
            last = index.base + index.stride * (index.lanes - 1)
            text += " (lanes from {} to {})"
            values = (index.base, last)
        elif isinstance(index, IntImm):
            values = ()
        else:
            text += " = {}"
            values = (index,)
        origin = self.logical.get(buffer.data)
        if origin is not None and origin is not buffer and ndim == 1 and origin.ndim == 1:
            buffer = origin  # the flat alias of a 1-d parameter: same indices
        elif origin is not None and origin is not buffer and ndim == 1:
            n = _braces(expr_text(buffer.shape[0], limit=None))
            return (f"IndexError: {origin.name}: flat index {text} out of bounds for shape "
                    f"{_braces(_shape_text(origin.shape))} ({n} elements)"), values
        where = f" in dimension {dim}" if ndim > 1 else ""
        return (f"IndexError: {buffer.name}: index {text}{where} out of bounds for shape "
                f"{_braces(_shape_text(buffer.shape))}"), values

    def expr(self, e: PrimExpr) -> list[_Check]:
        """Checks of every load ``e`` evaluates, guarded as ``e`` evaluates it."""
        out: list[_Check] = []
        self._walk(e, out)
        return out

    def _walk(self, e: Any, out: list[_Check]) -> None:
        if not isinstance(e, PrimExpr) or isinstance(e, Reduce):
            return  # a Reduce's axes are not in scope here: lower blocks first
        if isinstance(e, BufferLoad):
            for index in e.indices:
                self._walk(index, out)
            out.extend(self.access(e.buffer, e.indices))
            return
        if isinstance(e, Call) and e.op == "if_then_else" and len(e.args) == 3:
            cond, then, other = e.args
            self._walk(cond, out)
            for branch, guard in ((then, cond), (other, Not(cond))):
                inner: list[_Check] = []
                self._walk(branch, inner)
                # The values are computed only when the check fails, i.e. the guard held.
                out.extend(_Check(Or(Not(guard), c.cond), c.template, c.values) for c in inner)
            return
        if isinstance(e, Let):
            self._walk(e.value, out)
            inner = []
            self._walk(e.body, inner)
            for c in inner:
                values = tuple(Let(e.var, e.value, v) for v in c.values)
                out.append(_Check(Let(e.var, e.value, c.cond), c.template, values))
            return
        if isinstance(e, Broadcast):
            self._walk(e.value, out)
            return
        for name in getattr(type(e), "__dataclass_fields__", {}):
            if name in ("span", "dtype"):
                continue
            value = getattr(e, name)
            if isinstance(value, tuple):
                for item in value:
                    self._walk(item, out)
            else:
                self._walk(value, out)


def _asserts(checks: list[_Check], span: Any) -> list[Stmt]:
    out: list[Stmt] = []
    for check in checks:
        message: PrimExpr
        if check.values:
            message = format_message(check.template, *check.values)
        else:
            message = StringImm(check.template.replace("{{", "{").replace("}}", "}"))
        out.append(AssertStmt(check.cond, message, span=span))
    return out


class _Inserter(StmtExprMutator):
    """Puts the checks of each statement's own expressions right before it."""

    def __init__(self, checker: _Checker) -> None:
        self.checker = checker

    def _prefixed(self, checks: list[_Check], stmt: Stmt) -> Stmt:
        if not checks:
            return stmt
        return seq([*_asserts(checks, stmt.span), stmt])

    def visit_buffer_store_(self, node: BufferStore) -> Stmt:
        c = self.checker
        checks = [x for i in node.indices for x in c.expr(i)]
        checks += c.expr(node.value)
        checks += list(c.access(node.buffer, node.indices))
        return self._prefixed(checks, node)

    def visit_evaluate_(self, node: Evaluate) -> Stmt:
        return self._prefixed(self.checker.expr(node.value), node)

    def visit_assert_stmt_(self, node: AssertStmt) -> Stmt:
        return self._prefixed(self.checker.expr(node.condition), node)

    def visit_let_stmt_(self, node: LetStmt) -> Stmt:
        body = self.visit_stmt(node.body)
        new = node if body is node.body else LetStmt(node.var, node.value, body, span=node.span)
        return self._prefixed(self.checker.expr(node.value), new)

    def visit_if_then_else_(self, node: IfThenElse) -> Stmt:
        then = self.visit_stmt(node.then_case)
        other = self.visit_stmt(node.else_case) if node.else_case is not None else None
        new: Stmt = node
        if then is not node.then_case or other is not node.else_case:
            new = IfThenElse(node.condition, then, other, span=node.span)
        return self._prefixed(self.checker.expr(node.condition), new)

    def visit_for_(self, node: For) -> Stmt:
        new = self.generic_mutate(node)
        return self._prefixed(self.checker.expr(node.min) + self.checker.expr(node.extent), new)

    def visit_allocate_(self, node: Allocate) -> Stmt:
        new = self.generic_mutate(node)
        return self._prefixed(self.checker.expr(node.extent), new)

    def visit_while_(self, node: While) -> Stmt:
        checks = self.checker.expr(node.condition)
        body = self.visit_stmt(node.body)
        if checks:
            body = seq([body, *_asserts(checks, node.span)])
        new = node if body is node.body else While(node.condition, body, span=node.span)
        return self._prefixed(checks, new)

    # Containers: default traversal (SeqStmt, DeclBuffer, AttrStmt, Block, BlockRealize).
    def visit_seq_stmt_(self, node: SeqStmt) -> Stmt:
        items = [self.visit_stmt(s) for s in node.seq]
        if all(a is b for a, b in zip(items, node.seq)):
            return node
        return seq(items)


@function_pass("insert_bounds_checks")
def insert_bounds_checks(func: PrimFunc) -> PrimFunc:
    """``func`` with an ``IndexError`` assert before every buffer access; each loop nest
    tests its affine indices' extremes once and runs unchecked when they are in bounds
    (:mod:`lowering.checks.bounds_hoist`)."""
    logical = {buf.data: buf for buf in func.buffer_map.values()}
    checked = _Inserter(_Checker(logical)).visit_func(func)
    context = PassContext.current()
    if context.option("insert_bounds_checks", "hoist", True):
        body = hoist_bounds_checks(checked.body)
        checked = checked if body is checked.body else checked.with_body(body)
    if context.option("insert_bounds_checks", "validate", True):
        # Before serializing: a parallel loop validated whole stays parallel; the checked
        # copies, which keep their asserts, are serialized below.
        local = LocalAllocations()
        local.visit_stmt(checked.body)
        body = validate_in_chunks(checked.body, local.vars)
        checked = checked if body is checked.body else checked.with_body(body)
    return serialize_checked_loops(checked)

