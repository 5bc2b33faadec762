"""``T.allocate_const`` to an allocation initialised by stores, before any other lowering.

``T.allocate_const(data, dtype, extents)`` builds an ``Allocate`` annotated with its constants
(``irbuilder.tir.memory.ALLOCATE_CONST_DATA``). This pass drops the annotation and starts the
allocation's body with one store per element through a 1-d ``DeclBuffer`` view, so the later
passes (memory reuse, hoisting) see ordinary writes. The kernel only reads the memory after
that; the stores run once per execution of the allocation.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from irbuilder.ir import (
    Allocate,
    Buffer,
    BufferStore,
    DeclBuffer,
    IntImm,
    PrimFunc,
    SeqStmt,
    Stmt,
    as_dtype,
    const,
)
from irbuilder.ir.functor import StmtExprMutator
from irbuilder.tir.memory import ALLOCATE_CONST_DATA

from ..pass_infra import function_pass

__all__ = ["lower_allocate_const"]


class _Lower(StmtExprMutator):
    def visit_allocate_(self, node: Allocate) -> Stmt:
        body = self.visit_stmt(node.body)
        constants: Any = node.annotations.get(ALLOCATE_CONST_DATA)
        if constants is None:
            return node if body is node.body else dataclasses.replace(node, body=body)
        index_type = as_dtype("int64") if len(constants) >= 2**31 else as_dtype("int32")
        view = Buffer(
            f"{node.buffer_var.name}_const",
            node.buffer_var,
            (IntImm(index_type, len(constants)),),
            node.dtype,
            span=node.span,
        )
        stores = [
            BufferStore(view, const(value, node.dtype), (IntImm(index_type, i),), span=node.span)
            for i, value in enumerate(constants)
        ]
        init = DeclBuffer(view, SeqStmt((*stores, body)), span=node.span)
        notes = {k: v for k, v in node.annotations.items() if k != ALLOCATE_CONST_DATA}
        return dataclasses.replace(node, body=init, annotations=notes)


@function_pass("lower_allocate_const")
def lower_allocate_const(func: PrimFunc) -> PrimFunc:
    """Initialise every ``T.allocate_const`` allocation with stores of its constants."""
    body = _Lower().visit_stmt(func.body)
    return func if body is func.body else func.with_body(body)
