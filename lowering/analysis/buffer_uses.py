"""Which buffers a statement loads from and stores to."""

from __future__ import annotations

from dataclasses import dataclass, field

from irbuilder.ir import (
    Buffer,
    BufferLoad,
    BufferStore,
    DeclBuffer,
    PrimExpr,
    Stmt,
    StmtExprVisitor,
    Var,
)

__all__ = ["BufferAccesses", "buffer_accesses", "uses_buffer_data"]


@dataclass
class BufferAccesses:
    """Buffers read and written (identity-keyed, in first-access order) and data vars used."""

    loaded: dict[Buffer, None] = field(default_factory=dict)
    stored: dict[Buffer, None] = field(default_factory=dict)
    data_vars: dict[Var, None] = field(default_factory=dict)
    """Data vars of accessed buffers, plus handle Vars used directly as expressions."""

    def stores_to(self, data: Var) -> bool:
        """Whether some store writes through a buffer over ``data``."""
        return any(b.data is data for b in self.stored)

    def accessed(self) -> list[Buffer]:
        """All accessed buffers, loads first then stores, without duplicates."""
        merged = dict(self.loaded)
        merged.update(self.stored)
        return list(merged)


class _Collector(StmtExprVisitor):
    def __init__(self) -> None:
        self.result = BufferAccesses()

    def visit_buffer_load_(self, node: BufferLoad) -> None:
        self.result.loaded.setdefault(node.buffer, None)
        self.result.data_vars.setdefault(node.buffer.data, None)
        self.generic_visit(node)

    def visit_buffer_store_(self, node: BufferStore) -> None:
        self.result.stored.setdefault(node.buffer, None)
        self.result.data_vars.setdefault(node.buffer.data, None)
        self.generic_visit(node)

    def visit_decl_buffer_(self, node: DeclBuffer) -> None:
        self.result.data_vars.setdefault(node.buffer.data, None)
        self.generic_visit(node)

    def visit_var_(self, var: Var) -> None:
        if var.dtype.is_handle:
            self.result.data_vars.setdefault(var, None)


def buffer_accesses(node: Stmt | PrimExpr) -> BufferAccesses:
    """The loads and stores below ``node``."""
    collector = _Collector()
    if isinstance(node, Stmt):
        collector.visit_stmt(node)
    else:
        collector.visit_expr(node)
    return collector.result


def uses_buffer_data(node: Stmt | PrimExpr, data: Var) -> bool:
    """Whether ``node`` accesses memory at ``data`` (through any buffer) or uses the var."""
    return data in buffer_accesses(node).data_vars
