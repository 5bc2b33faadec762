"""Allocation hoisting (pass ``hoist_allocations``, opt_level 1): allocate once, not per iteration.

On lowered IR (after ``flatten_buffer``). An ``Allocate`` anywhere inside the
body of a serial or unrolled ``For`` moves out of that loop (wrapping it) when
its extent and condition use no variable defined inside the loop (the loop var,
lets, inner loops, other allocations): each iteration's storage is fresh
uninitialised memory anyway, so one allocation reused by every iteration has the
same meaning, and a heap allocation or a stack ``alloca`` per iteration is
avoided. ``DeclBuffer``s over the data var stay where they were. Allocations
never leave parallel, vectorized or thread-bound loops: iterations there run
concurrently and need private storage. Applied bottom-up, an allocation climbs
as many loops as it can.
"""

from __future__ import annotations

from typing import Any

from irbuilder.ir import (
    Allocate,
    For,
    ForKind,
    LetStmt,
    PrimFunc,
    Stmt,
    StmtExprMutator,
    Var,
    post_order_visit,
)

from ..analysis import free_vars
from ..pass_infra import function_pass

__all__ = ["hoist_allocations"]

_HOISTABLE = (ForKind.SERIAL, ForKind.UNROLLED)


def _defined_inside(stmt: Stmt) -> set[Var]:
    defined: set[Var] = set()

    def visit(node: Any) -> None:
        if isinstance(node, For):
            defined.add(node.loop_var)
        elif isinstance(node, LetStmt):
            defined.add(node.var)
        elif isinstance(node, Allocate):
            defined.add(node.buffer_var)

    post_order_visit(stmt, visit)
    return defined


class _Extract(StmtExprMutator):
    """Removes the Allocates whose size does not depend on ``inner`` vars, keeping bodies."""

    def __init__(self, inner: set[Var]) -> None:
        self.inner = inner
        self.taken: list[Allocate] = []

    def visit_for_(self, node: For) -> Stmt:
        # Never pull storage out of a loop whose iterations may run concurrently.
        return node if node.kind not in _HOISTABLE else self.generic_mutate(node)

    def visit_allocate_(self, node: Allocate) -> Stmt:
        body = self.visit_stmt(node.body)
        uses = free_vars(node.extent) + free_vars(node.condition)
        if any(v in self.inner for v in uses):
            return node if body is node.body else _with_body(node, body)
        self.taken.append(node)
        return body


def _with_body(node: Allocate, body: Stmt) -> Allocate:
    return Allocate(
        node.buffer_var,
        node.dtype,
        node.extent,
        node.condition,
        body,
        node.annotations,
        span=node.span,
    )


class _Hoister(StmtExprMutator):
    def visit_for_(self, node: For) -> Stmt:
        loop = self.generic_mutate(node)
        if loop.kind not in _HOISTABLE:
            return loop
        extractor = _Extract(_defined_inside(loop.body) | {loop.loop_var})
        body = extractor.visit_stmt(loop.body)
        if not extractor.taken:
            return loop
        result: Stmt = For(
            loop.loop_var,
            loop.min,
            loop.extent,
            loop.kind,
            body,
            loop.thread_binding,
            loop.annotations,
            span=loop.span,
        )
        for alloc in reversed(extractor.taken):
            result = _with_body(alloc, result)
        return result


@function_pass("hoist_allocations", opt_level=1)
def hoist_allocations(func: PrimFunc) -> PrimFunc:
    """Move loop-invariant allocations out of serial/unrolled loops (see module)."""
    body = _Hoister().visit_stmt(func.body)
    return func if body is func.body else func.with_body(body)
