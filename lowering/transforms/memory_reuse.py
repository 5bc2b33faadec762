"""Memory reuse (pass ``reuse_memory``, opt_level 1): a dead allocation's memory serves a later one.

On lowered IR (after ``flatten_buffer``/``hoist_allocations``). Liveness is
structural: an ``Allocate``'s live range is its body, so two ``Allocate``
siblings of one ``SeqStmt`` never overlap. When a later sibling ``B`` has the
same dtype and scope as the nearest earlier sibling allocation ``A`` (no other
allocation between them), an extent provably no larger (constants, or
structurally equal expressions) and a true condition, ``B`` stops allocating:
``A``'s scope is extended over the statements in between and ``B``'s body,
where every buffer over ``B``'s data var is re-declared over ``A``'s (a
``DeclBuffer`` alias). Requiring no allocation in between keeps the peak from
growing: nothing else is allocated while ``A`` is held longer. Applied
bottom-up on every ``SeqStmt``, so a chain of intermediates shares one block.
"""

from __future__ import annotations

from typing import Any

from irbuilder.ir import (
    Allocate,
    Buffer,
    IntImm,
    PrimExpr,
    PrimFunc,
    SeqStmt,
    Stmt,
    StmtExprMutator,
    Var,
    post_order_visit,
    rebuild,
    seq,
    structural_equal,
)

from ..pass_infra import function_pass

__all__ = ["reuse_memory"]


def _is_true(expr: PrimExpr) -> bool:
    return isinstance(expr, IntImm) and expr.value == 1


def _scope(var: Var) -> str:
    return str(getattr(var.type_annotation, "scope", "global"))


def _fits(small: PrimExpr, big: PrimExpr) -> bool:
    if isinstance(small, IntImm) and isinstance(big, IntImm):
        return small.value <= big.value
    return structural_equal(small, big)


def _allocates(stmt: Stmt) -> bool:
    found = False

    def visit(node: Any) -> None:
        nonlocal found
        found = found or isinstance(node, Allocate)

    post_order_visit(stmt, visit)
    return found


class _Rebase(StmtExprMutator):
    """Moves every use of data var ``old`` (and the buffers over it) onto ``new``."""

    def __init__(self, old: Var, new: Var) -> None:
        self.old, self.new = old, new
        self.buffers: dict[Buffer, Buffer] = {}

    def visit_var_(self, var: Var) -> PrimExpr:
        return self.new if var is self.old else var

    def visit_buffer(self, buffer: Buffer) -> Buffer:
        if buffer.data is not self.old:
            return buffer
        moved = self.buffers.get(buffer)
        if moved is None:
            moved = rebuild(buffer, {"data": self.new})
            self.buffers[buffer] = moved
        return moved


def _compatible(a: Allocate, b: Allocate) -> bool:
    return (
        a.dtype == b.dtype
        and _scope(a.buffer_var) == _scope(b.buffer_var)
        and _is_true(a.condition)
        and _is_true(b.condition)
        and _fits(b.extent, a.extent)
    )


def _merge(items: list[Stmt]) -> list[Stmt]:
    out: list[Stmt] = []
    for item in items:
        if isinstance(item, Allocate):
            k = len(out) - 1
            while k >= 0 and not isinstance(out[k], Allocate) and not _allocates(out[k]):
                k -= 1
            prev = out[k] if k >= 0 else None
            if isinstance(prev, Allocate) and _compatible(prev, item):
                body = _Rebase(item.buffer_var, prev.buffer_var).visit_stmt(item.body)
                merged = seq([prev.body, *out[k + 1 :], body])
                out[k:] = [rebuild(prev, {"body": merged})]
                continue
        out.append(item)
    return out


class _Reuse(StmtExprMutator):
    def visit_seq_stmt_(self, node: SeqStmt) -> Stmt:
        visited = self.generic_mutate(node)
        items = list(visited.seq) if isinstance(visited, SeqStmt) else [visited]
        merged = _merge(items)
        if len(merged) == len(items) and all(a is b for a, b in zip(merged, items)):
            return visited
        return seq(merged)


@function_pass("reuse_memory", opt_level=1)
def reuse_memory(func: PrimFunc) -> PrimFunc:
    """Share one allocation between sibling allocations with disjoint lifetimes (see module)."""
    body = _Reuse().visit_stmt(func.body)
    return func if body is func.body else func.with_body(body)
