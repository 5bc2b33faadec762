"""``T.ret(value)`` (and ``return <scalar>``) to an output parameter, for the code generator.

A function whose body calls ``T.ret`` gets one more buffer parameter, ``ret_value`` of shape
``(1,)`` and the return type, appended after the others (attrs ``num_outputs`` += 1 and
``scalar_return``); each ``T.ret(v)`` becomes ``ret_value[0] = v``. The caller of the built
kernel passes a zeroed array and returns its element (``tvmscript.build``). Where every
``T.ret`` ends the function on its path (the last statement, possibly inside trailing ifs,
lets, attributes, allocations or the root block) that is all. Otherwise (an early return)
a ``ret_flag`` is allocated: ``T.ret`` also sets it, and the rest of each enclosing sequence
and the body of each enclosing serial loop run only while it is clear; ``T.ret`` inside a
parallel or vectorized loop (or a ``while``) is refused with :class:`UnsupportedConstructError`.
"""

from __future__ import annotations

import dataclasses

from irbuilder.ir import (
    Allocate,
    AttrStmt,
    Block,
    BlockRealize,
    Buffer,
    BufferLoad,
    BufferStore,
    Call,
    CallKind,
    DeclBuffer,
    Evaluate,
    For,
    ForKind,
    IfThenElse,
    IntImm,
    LetStmt,
    PrimExpr,
    PrimFunc,
    SeqStmt,
    Span,
    Stmt,
    Var,
    as_dtype,
    make_data_var,
)
from irbuilder.ir.functor import StmtExprVisitor, post_order_visit
from irbuilder.ir.stmt import seq

from ..cpu.support import UnsupportedConstructError
from ..pass_infra import function_pass

__all__ = ["RETURN_PARAM", "has_scalar_return", "lower_scalar_return", "without_return"]

RETURN_PARAM = "ret_value"
"""Name of the output parameter that receives the returned scalar."""


def _is_ret(stmt: Stmt) -> bool:
    value = stmt.value if isinstance(stmt, Evaluate) else None
    return isinstance(value, Call) and value.kind is CallKind.BUILTIN and value.op == "ret"


def has_scalar_return(func: PrimFunc) -> bool:
    """Whether ``func``'s body calls ``T.ret``."""
    found: list[bool] = []

    def visit(node: object) -> None:
        if isinstance(node, Call) and node.kind is CallKind.BUILTIN and node.op == "ret":
            found.append(True)

    post_order_visit(func.body, visit)
    return bool(found)


class _Rewriter:
    def __init__(self, func: PrimFunc, buffer: Buffer) -> None:
        self.func = func
        self.buffer = buffer

    def refuse(self, span: Span | None) -> None:
        raise UnsupportedConstructError(
            "T.ret before the end of the function (an early return)", span, self.func.name
        )

    def check_none_inside(self, stmt: Stmt) -> None:
        def visit(node: object) -> None:
            if isinstance(node, Evaluate) and _is_ret(node):
                self.refuse(node.span or stmt.span)

        post_order_visit(stmt, visit)

    def tail(self, stmt: Stmt) -> Stmt:
        """Rewrite ``stmt``, which ends the function on its paths."""
        if _is_ret(stmt):
            assert isinstance(stmt, Evaluate) and isinstance(stmt.value, Call)
            value = stmt.value.args[0]
            if value.dtype != self.buffer.dtype:
                value = value.astype(self.buffer.dtype)
            zero = IntImm(as_dtype("int32"), 0)
            return BufferStore(self.buffer, value, (zero,), span=stmt.span)
        if isinstance(stmt, SeqStmt):
            for item in stmt.seq[:-1]:
                self.check_none_inside(item)
            return dataclasses.replace(stmt, seq=(*stmt.seq[:-1], self.tail(stmt.seq[-1])))
        if isinstance(stmt, IfThenElse):
            else_case = None if stmt.else_case is None else self.tail(stmt.else_case)
            then_case = self.tail(stmt.then_case)
            return dataclasses.replace(stmt, then_case=then_case, else_case=else_case)
        if isinstance(stmt, (LetStmt, AttrStmt, DeclBuffer, Allocate, Block)):
            return dataclasses.replace(stmt, body=self.tail(stmt.body))
        if isinstance(stmt, BlockRealize):
            if stmt.block.init is not None:
                self.check_none_inside(stmt.block.init)
            return dataclasses.replace(stmt, block=self.tail(stmt.block))  # type: ignore[arg-type]
        self.check_none_inside(stmt)
        return stmt


class _EarlyReturn:
    """An early ``T.ret``: store the value, set a flag, and skip what follows while it is set
    (the rest of each enclosing sequence, the later iterations of each enclosing loop)."""

    def __init__(self, func: PrimFunc, buffer: Buffer, flag: Buffer) -> None:
        self.func = func
        self.buffer = buffer
        self.flag = flag
        self.zero = IntImm(as_dtype("int32"), 0)

    def refuse(self, what: str, span: Span | None) -> None:
        raise UnsupportedConstructError(what, span, self.func.name)

    def may_return(self, stmt: Stmt) -> bool:
        found: list[bool] = []

        def visit(node: object) -> None:
            if isinstance(node, Evaluate) and _is_ret(node):
                found.append(True)

        post_order_visit(stmt, visit)
        return bool(found)

    def running(self) -> PrimExpr:
        return BufferLoad(self.flag, (self.zero,)) == IntImm(as_dtype("int32"), 0)

    def rewrite(self, stmt: Stmt) -> Stmt:
        if _is_ret(stmt):
            assert isinstance(stmt, Evaluate) and isinstance(stmt.value, Call)
            value = stmt.value.args[0]
            if value.dtype != self.buffer.dtype:
                value = value.astype(self.buffer.dtype)
            one = IntImm(as_dtype("int32"), 1)
            store = BufferStore(self.buffer, value, (self.zero,), span=stmt.span)
            return seq([store, BufferStore(self.flag, one, (self.zero,), span=stmt.span)])
        if not self.may_return(stmt):
            return stmt
        if isinstance(stmt, SeqStmt):
            out: list[Stmt] = []
            for k, item in enumerate(stmt.seq):
                out.append(self.rewrite(item))
                rest = stmt.seq[k + 1 :]
                if rest and self.may_return(item):
                    guarded = self.rewrite(seq(list(rest)))
                    out.append(IfThenElse(self.running(), guarded, None, span=rest[0].span))
                    break
            return seq(out)
        if isinstance(stmt, IfThenElse):
            else_case = None if stmt.else_case is None else self.rewrite(stmt.else_case)
            then_case = self.rewrite(stmt.then_case)
            return dataclasses.replace(stmt, then_case=then_case, else_case=else_case)
        if isinstance(stmt, (LetStmt, AttrStmt, DeclBuffer, Allocate, Block)):
            return dataclasses.replace(stmt, body=self.rewrite(stmt.body))
        if isinstance(stmt, BlockRealize):
            if stmt.block.init is not None and self.may_return(stmt.block.init):
                self.refuse("T.ret in a block's T.init", stmt.span)
            return dataclasses.replace(stmt, block=self.rewrite(stmt.block))  # type: ignore[arg-type]
        if isinstance(stmt, For):
            if stmt.kind not in (ForKind.SERIAL, ForKind.UNROLLED):
                self.refuse(f"T.ret inside a {stmt.kind.value} loop", stmt.span)
            body = IfThenElse(self.running(), self.rewrite(stmt.body), None, span=stmt.span)
            return dataclasses.replace(stmt, body=body)
        self.refuse(f"T.ret inside a {type(stmt).__name__}", stmt.span)
        return stmt


def _with_flag(body: Stmt, flag: Buffer) -> Stmt:
    zero = IntImm(as_dtype("int32"), 0)
    init = BufferStore(flag, zero, (zero,), span=body.span)
    declared = DeclBuffer(flag, seq([init, body]), span=body.span)
    return Allocate(
        flag.data,
        flag.dtype,
        IntImm(as_dtype("int32"), 1),
        IntImm(as_dtype("bool"), 1),
        declared,
        span=body.span,
    )


class _RetInExpression(StmtExprVisitor):
    """Finds a ``T.ret`` that is not a statement's whole value: ``T.ret`` is a statement
    (``return x``, ``T.evaluate(T.ret(x))``), one nested in an expression is refused at the
    statement holding it."""

    def __init__(self, func: PrimFunc) -> None:
        self.func = func
        self.holder: Stmt | None = None

    def visit_stmt(self, stmt: Stmt) -> None:
        outer, self.holder = self.holder, stmt
        if isinstance(stmt, Evaluate) and _is_ret(stmt):
            assert isinstance(stmt.value, Call)
            for arg in stmt.value.args:
                self.visit_expr(arg)
        else:
            super().visit_stmt(stmt)
        self.holder = outer

    def visit_call_(self, call: Call) -> None:
        if call.kind is CallKind.BUILTIN and call.op == "ret":
            raise UnsupportedConstructError(
                "T.ret inside an expression (T.ret is a statement: `return x` or "
                "`T.evaluate(T.ret(x))`)", None if self.holder is None else self.holder.span,
                self.func.name,
            )
        self.generic_visit(call)


def _returning_into(func: PrimFunc, buffer: Buffer) -> Stmt:
    """``func``'s body with each ``T.ret(v)`` storing ``v`` into ``buffer[0]`` (and, for an
    early return, skipping what follows)."""
    _RetInExpression(func).visit_stmt(func.body)
    try:
        return _Rewriter(func, buffer).tail(func.body)
    except UnsupportedConstructError:
        flag_data = make_data_var("ret_flag_data", as_dtype("int32"))
        flag = Buffer("ret_flag", flag_data, (IntImm(as_dtype("int32"), 1),), as_dtype("int32"))
        return _with_flag(_EarlyReturn(func, buffer, flag).rewrite(func.body), flag)


def without_return(func: PrimFunc) -> PrimFunc:
    """``func`` returning nothing, for a call that discards its value (a statement call): each
    ``T.ret(v)`` stores ``v`` into a local scratch element instead of an output parameter the
    statement call could not pass, an early return still skipping the rest. The result is
    private (no ``global_symbol``)."""
    dtype = func.ret_type
    assert dtype is not None
    one = IntImm(as_dtype("int32"), 1)
    data = make_data_var("ret_scratch_data", dtype)
    buffer = Buffer("ret_scratch", data, (one,), dtype)
    body = _returning_into(func, buffer)
    scratch = Allocate(data, dtype, one, IntImm(as_dtype("bool"), 1),
                       DeclBuffer(buffer, body, span=body.span), span=body.span)
    attrs = {k: v for k, v in func.attrs.items() if k != "global_symbol"}
    return PrimFunc(func.params, scratch, None, func.buffer_map, attrs, span=func.span)


@function_pass("lower_scalar_return")
def lower_scalar_return(func: PrimFunc) -> PrimFunc:
    """Turn ``T.ret`` into a store to a trailing ``ret_value`` output parameter."""
    if not has_scalar_return(func):
        return func
    dtype = func.ret_type
    if dtype is None:
        raise ValueError(f"{func.name}: T.ret in a function without a return type")
    handle = Var(RETURN_PARAM, as_dtype("handle"))
    data = make_data_var(f"{RETURN_PARAM}_data", dtype)
    buffer = Buffer(RETURN_PARAM, data, (IntImm(as_dtype("int32"), 1),), dtype)
    body = _returning_into(func, buffer)
    attrs = dict(func.attrs)
    attrs["num_outputs"] = int(attrs.get("num_outputs", 0)) + 1
    attrs["scalar_return"] = True
    buffer_map = {**func.buffer_map, handle: buffer}
    return PrimFunc((*func.params, handle), body, dtype, buffer_map, attrs, span=func.span)
