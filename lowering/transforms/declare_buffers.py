"""Implicit buffers get the ``DeclBuffer`` the DeclBuffer RFC asks for.

Before ``DeclBuffer`` existed, TVMScript wrote a view over existing memory as
``B = T.Buffer((4, 4), "float32", data=A.data)`` inside a body: the Buffer object is
used by loads and stores but no statement declares it. The parser keeps that form (as
TVM v0.16 does, so printing gives it back); this pass, first in the pipeline, declares
each such buffer with a ``DeclBuffer`` placed where its data var and layout vars are all
defined (the function body for a parameter's data, the body of the ``T.allocate`` /
``LetStmt`` / loop / block that defines the last of them). A buffer whose data var is
defined nowhere is an error naming the buffer and the place of its first use.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from irbuilder.ir import (
    Allocate,
    Block,
    Buffer,
    BufferLoad,
    BufferRegion,
    DeclBuffer,
    For,
    LetStmt,
    PrimExpr,
    PrimFunc,
    Span,
    Stmt,
    StmtExprMutator,
    StmtExprVisitor,
    Var,
    post_order_visit,
)

from ..pass_infra import function_pass

__all__ = [
    "buffers_used",
    "declare_buffers",
    "implicit_buffers",
    "layout_vars",
    "statement_definitions",
]


class _BufferUses(StmtExprVisitor):
    """Buffers by first reference (with the span of a statement using them), and the
    buffers a statement declares."""

    def __init__(self) -> None:
        self.used: dict[Buffer, Span | None] = {}
        self.declared: set[Buffer] = set()
        self.span: Span | None = None

    def visit_buffer(self, buffer: Buffer) -> None:
        if buffer not in self.used:
            self.used[buffer] = self.span

    def visit_buffer_region(self, region: BufferRegion) -> None:
        self.visit_buffer(region.buffer)
        super().visit_buffer_region(region)

    def visit_expr(self, expr: PrimExpr) -> None:
        if isinstance(expr, BufferLoad) and expr.span is not None:
            outer, self.span = self.span, expr.span
            super().visit_expr(expr)
            self.span = outer
            return
        super().visit_expr(expr)

    def visit_stmt(self, stmt: Stmt) -> None:
        if isinstance(stmt, DeclBuffer):
            self.declared.add(stmt.buffer)
        elif isinstance(stmt, Block):
            self.declared.update(stmt.alloc_buffers)
            self.declared.update(m.buffer for m in stmt.match_buffers)
        outer = self.span
        if stmt.span is not None:
            self.span = stmt.span
        super().visit_stmt(stmt)
        self.span = outer


def _uses(*stmts: Stmt | None) -> _BufferUses:
    uses = _BufferUses()
    for stmt in stmts:
        if stmt is not None:
            uses.visit_stmt(stmt)
    return uses


def buffers_used(*stmts: Stmt | None) -> dict[Buffer, Span | None]:
    """Every buffer referenced in ``stmts`` (declared or used), with a span near its first
    use."""
    return _uses(*stmts).used


def implicit_buffers(
    stmt: Stmt, declared: set[Buffer] | frozenset[Buffer] = frozenset()
) -> list[Buffer]:
    """Buffers used in ``stmt`` that neither a statement of it nor ``declared`` declares,
    in order of first use."""
    uses = _uses(stmt)
    return [b for b in uses.used if b not in uses.declared and b not in declared]


def layout_vars(buffer: Buffer) -> list[Var]:
    """The vars of a buffer's data pointer, shape, strides and offset."""
    found: list[Var] = []

    def visit(node: Any) -> None:
        if isinstance(node, Var):
            found.append(node)

    for expr in (buffer.data, *buffer.shape, *buffer.strides, buffer.elem_offset):
        post_order_visit(expr, visit)
    return found


def statement_definitions(stmt: Stmt) -> set[Var]:
    """Vars that statements of ``stmt`` define (loops, lets, allocations, blocks)."""
    found: set[Var] = set()

    def visit(node: Any) -> None:
        if isinstance(node, For):
            found.add(node.loop_var)
        elif isinstance(node, LetStmt):
            found.add(node.var)
        elif isinstance(node, Allocate):
            found.add(node.buffer_var)
        elif isinstance(node, Block):
            found.update(iv.var for iv in node.iter_vars)
            found.update(b.data for b in node.alloc_buffers)
            found.update(m.buffer.data for m in node.match_buffers)

    post_order_visit(stmt, visit)
    return found


class _Declarer(StmtExprMutator):
    def __init__(self, pending: list[Buffer], later: set[Var]) -> None:
        self.pending = pending
        self.later = later
        self.defined: set[Var] = set()

    def _ready(self, *scopes: Stmt | None) -> list[Buffer]:
        ready = [
            b
            for b in self.pending
            if all(v in self.defined or v not in self.later for v in layout_vars(b))
        ]
        if not ready:
            return []
        used = _uses(*scopes).used
        return [b for b in ready if b in used]

    def declare_in(self, body: Stmt, new: tuple[Var, ...] = ()) -> Stmt:
        """``body`` mutated, wrapped in the declarations that ``new`` vars make possible."""
        self.defined.update(new)
        ready = self._ready(body) if self.pending else []
        for buffer in ready:
            self.pending.remove(buffer)
        out = self.visit_stmt(body)
        for buffer in reversed(ready):
            out = DeclBuffer(buffer, out, span=buffer.span)
        return out

    def visit_expr(self, expr: PrimExpr) -> PrimExpr:
        return expr  # declarations are statements: expressions never change

    def visit_for_(self, node: For) -> Stmt:
        body = self.declare_in(node.body, (node.loop_var,))
        return node if body is node.body else replace(node, body=body)

    def visit_let_stmt_(self, node: LetStmt) -> Stmt:
        body = self.declare_in(node.body, (node.var,))
        return node if body is node.body else replace(node, body=body)

    def visit_allocate_(self, node: Allocate) -> Stmt:
        body = self.declare_in(node.body, (node.buffer_var,))
        return node if body is node.body else replace(node, body=body)

    def visit_block_(self, node: Block) -> Stmt:
        new = (
            *(iv.var for iv in node.iter_vars),
            *(b.data for b in node.alloc_buffers),
            *(m.buffer.data for m in node.match_buffers),
        )
        init = None if node.init is None else self.declare_in(node.init, new)
        body = self.declare_in(node.body, new)
        if init is node.init and body is node.body:
            return node
        return replace(node, init=init, body=body)


def _undefined_data_error(func: PrimFunc, buffer: Buffer, span: Span | None) -> ValueError:
    where = f" (first used at {span})" if span is not None else ""
    return ValueError(
        f"{func.name}: buffer {buffer.name!r} is accessed but not declared{where}, and its "
        f"data pointer {buffer.data.name!r} is defined nowhere in the function; declare it "
        "with T.decl_buffer / T.alloc_buffer, or give T.Buffer(..., data=X.data) the data "
        "of a buffer in scope"
    )


@function_pass("declare_buffers")
def declare_buffers(func: PrimFunc) -> PrimFunc:
    """Give every implicitly declared buffer a ``DeclBuffer`` (see the module docstring)."""
    declared = set(func.buffer_map.values())
    pending = implicit_buffers(func.body, declared)
    if not pending:
        return func
    later = statement_definitions(func.body)
    available = set(func.params)
    for buffer in func.buffer_map.values():
        available.update(layout_vars(buffer))
    uses = _uses(func.body).used
    for buffer in pending:
        data = buffer.data
        if data not in later and data not in available:
            raise _undefined_data_error(func, buffer, uses.get(buffer) or buffer.span)
    declarer = _Declarer(list(pending), later)
    body = declarer.declare_in(func.body)
    if declarer.pending:  # used only where its vars are not all in scope
        buffer = declarer.pending[0]
        where = uses.get(buffer) or buffer.span
        raise ValueError(
            f"{func.name}: buffer {buffer.name!r} (first used at {where}) is used outside "
            "the scope of the variables of its data, shape or strides"
        )
    return func.with_body(body)
