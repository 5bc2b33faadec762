"""``T.tvm_thread_allreduce`` on the CPU: under a ``"reduce_scope"`` attribute of a
``T.comm_reducer`` it becomes a serial reduction, and the ``T.thread_binding`` loops around it
run serially (other thread-bound loops are refused by the build).

On a GPU every thread of the bound loops gets the reduction of ``values`` over all threads
(where ``cond`` holds). Serially, each iteration computes that whole reduction itself: the
results start at the reducer's identity and a loop over the thread domain combines the
values with the thread vars replaced by the loop's var (multi-value reducers, e.g. argmax,
compute every new result before storing any; values read through let variables or block
iterators bound to the thread vars follow the loop's var too). The values must not read
memory the thread loop writes (thread-local partial results would be those of the current
thread only): such an allreduce is refused, as are allreduces whose thread vars are not bound
by enclosing loops.
"""

from __future__ import annotations

import dataclasses

from irbuilder.ir import (
    AttrStmt,
    BlockRealize,
    BufferLoad,
    BufferStore,
    Call,
    CallKind,
    CommReducer,
    Evaluate,
    For,
    ForKind,
    IfThenElse,
    IntImm,
    LetStmt,
    PrimExpr,
    PrimFunc,
    Span,
    Stmt,
    Var,
)
from irbuilder.ir.functor import StmtExprMutator, post_order_visit
from irbuilder.ir.stmt import seq

from ..analysis.substitute import substitute_expr
from .support import LocatedMutator, UnsupportedConstructError

__all__ = ["lower_thread_allreduce"]


def _written_buffers(stmt: Stmt) -> set[int]:
    written: set[int] = set()

    def visit(node: object) -> None:
        if isinstance(node, BufferStore):
            written.add(id(node.buffer.data))

    post_order_visit(stmt, visit)
    return written


def _read_data(expr: PrimExpr) -> set[int]:
    read: set[int] = set()

    def visit(node: object) -> None:
        if isinstance(node, BufferLoad):
            read.add(id(node.buffer.data))

    post_order_visit(expr, visit)
    return read


class _Lower(LocatedMutator):
    def __init__(self, func: PrimFunc) -> None:
        self.func = func
        self.loops: list[For] = []
        self.thread_bodies: list[Stmt] = []
        self.span: Span | None = func.span
        # Variables bound around the allreduce (let values, block iterators' bindings), each
        # in terms of the loop variables: a value read through ``vk`` (a block iterator bound
        # to the thread var ``k``) must follow the serial loop's variable as ``k`` does.
        self.bindings: dict[Var, PrimExpr] = {}

    def _bound(self, pairs: list[tuple[Var, PrimExpr]], visit: object) -> Stmt:
        assert callable(visit)
        saved = dict(self.bindings)
        for var, value in pairs:
            self.bindings[var] = substitute_expr(value, saved) if saved else value
        try:
            result = visit()
            assert isinstance(result, Stmt)
            return result
        finally:
            self.bindings = saved

    def visit_let_stmt_(self, node: LetStmt) -> Stmt:
        return self._bound([(node.var, node.value)], lambda: self.generic_mutate(node))

    def visit_block_realize_(self, node: BlockRealize) -> Stmt:
        pairs = [(iv.var, value) for iv, value in zip(node.block.iter_vars, node.iter_values)]
        return self._bound(pairs, lambda: self.generic_mutate(node))

    def refuse(self, what: str) -> None:
        raise UnsupportedConstructError(what, self.span, self.func.name)

    def visit_for_(self, node: For) -> Stmt:
        # Only thread loops around an allreduce run serially; other thread-bound loops stay
        # (the build refuses them).
        thread = node.kind is ForKind.THREAD_BINDING and _has_allreduce(node.body)
        self.loops.append(node)
        if thread:
            self.thread_bodies.append(node.body)
        try:
            new = self.generic_mutate(node)
        finally:
            self.loops.pop()
            if thread:
                self.thread_bodies.pop()
        if thread:
            new = dataclasses.replace(new, kind=ForKind.SERIAL, thread_binding=None)
        return new

    def visit_attr_stmt_(self, node: AttrStmt) -> Stmt:
        if node.attr_key != "reduce_scope" or not isinstance(node.node, CommReducer):
            return self.generic_mutate(node)
        reducer = node.node
        body = self.visit_stmt(node.body)
        return _replace_allreduce(body, lambda call, span: self.serial(reducer, call, span))

    def serial(self, reducer: CommReducer, call: Call, span: Span | None) -> Stmt:
        self.span = span or self.span
        n = len(reducer.result)
        args = call.args
        if len(args) < 2 + 2 * n:
            self.refuse("T.tvm_thread_allreduce with too few arguments for its comm_reducer")
        values = tuple(substitute_expr(v, self.bindings) for v in args[1 : 1 + n])
        cond = substitute_expr(args[1 + n], self.bindings)
        results, threads = args[2 + n : 2 + 2 * n], args[2 + 2 * n :]
        loops: list[For] = []
        for thread in threads:
            loop = next((f for f in self.loops if f.loop_var is thread), None)
            if loop is None:
                self.refuse("T.tvm_thread_allreduce over a thread var no enclosing loop binds")
            assert loop is not None
            loops.append(loop)
        written: set[int] = set()
        for thread_body in self.thread_bodies:
            written |= _written_buffers(thread_body)
        for value in (*values, cond):
            if _read_data(value) & written:
                self.refuse("T.tvm_thread_allreduce of values the thread loop computes in memory")
        targets: list[BufferLoad] = []
        for result in results:
            if not isinstance(result, BufferLoad):
                self.refuse("T.tvm_thread_allreduce whose results are not buffer elements")
            assert isinstance(result, BufferLoad)
            targets.append(result)
        fresh = {
            loop.loop_var: Var(f"{loop.loop_var.name}_r", loop.loop_var.dtype) for loop in loops
        }
        vmap: dict[Var, PrimExpr] = dict(fresh)
        temps = [Var(f"red_{i}", r.dtype) for i, r in enumerate(reducer.result)]
        combine: dict[Var, PrimExpr] = dict(zip(reducer.lhs, targets))
        combine.update({rhs: substitute_expr(v, vmap) for rhs, v in zip(reducer.rhs, values)})
        stores: Stmt = seq(
            [BufferStore(t.buffer, temp, t.indices, span=span) for t, temp in zip(targets, temps)]
        )
        for temp, result in reversed(list(zip(temps, reducer.result))):
            stores = LetStmt(temp, substitute_expr(result, combine), stores, span=span)
        step: Stmt = stores
        condition = substitute_expr(cond, vmap)
        if not (isinstance(condition, IntImm) and condition.value == 1):
            step = IfThenElse(condition, step, None, span=span)
        for loop in reversed(loops):
            step = For(fresh[loop.loop_var], loop.min, loop.extent, ForKind.SERIAL, step, span=span)
        init = tuple(
            BufferStore(t.buffer, identity, t.indices, span=span)
            for t, identity in zip(targets, reducer.identity)
        )
        return seq([*init, step])


def _has_allreduce(stmt: Stmt) -> bool:
    found: list[bool] = []

    def visit(node: object) -> None:
        if (
            isinstance(node, AttrStmt)
            and node.attr_key == "reduce_scope"
            and isinstance(node.node, CommReducer)
        ):
            found.append(True)

    post_order_visit(stmt, visit)
    return bool(found)


def _replace_allreduce(stmt: Stmt, make: object) -> Stmt:
    class _Replace(StmtExprMutator):
        def visit_evaluate_(self, node: Evaluate) -> Stmt:
            value = node.value
            if (
                isinstance(value, Call)
                and value.kind is CallKind.BUILTIN
                and value.op == "tvm_thread_allreduce"
            ):
                return make(value, node.span)  # type: ignore[operator,no-any-return]
            return node

    return _Replace().visit_stmt(stmt)


def lower_thread_allreduce(func: PrimFunc) -> PrimFunc:
    """``func`` with comm_reducer allreduces computed serially and the thread-bound loops
    around them serial."""
    if not _has_allreduce(func.body):
        return func
    return _Lower(func).visit_func(func)
