"""Calls of a module's scalar functions for their value, inlined before lowering.

``A[i] = Module.sq(x)`` calls ``sq``, a private function ``-> T.float32`` whose body is
``T.ret(x * x)``: TVM compiles it to a function returning a float. Our kernels return
through a ``ret_value`` output array (``lower_scalar_return``), which a caller's generated
code has no array for, so the call is replaced by the callee's returned expression, its
parameters bound by ``let`` to the arguments (each argument evaluated once, as a call
would). The callee's body must be made of ``let`` bindings (``x: T.float32 = ...``),
evaluations without effect (``T.evaluate(n)``: dropped), and ``if``s whose returning
branches end in ``T.ret(expr)`` (``if n > 3: T.ret(1)`` then ``T.ret(0)`` is
``T.if_then_else(n > 3, 1, 0)``, lazy like the branches); anything else (loops, stores, an
assert, a call, an array parameter, recursion) is refused with
:class:`UnsupportedConstructError` rather than run as a call whose value would be lost.

A call whose value is discarded (a statement, ``Module.fill(A.data)``) of a function with no
such form calls a private copy of it that returns nothing
(:func:`lowering.transforms.scalar_return.without_return`), added to the module.
"""

from __future__ import annotations

from irbuilder.ir import (
    Call,
    CallKind,
    Cast,
    DataType,
    Evaluate,
    IfThenElse,
    IRModule,
    Let,
    LetStmt,
    PrimExpr,
    PrimFunc,
    SeqStmt,
    Span,
    Stmt,
    Var,
    as_dtype,
    post_order_visit,
)

from ..analysis import substitute_expr
from ..cpu.support import LocatedMutator, UnsupportedConstructError
from .scalar_return import without_return

__all__ = ["inline_scalar_calls"]

MAX_DEPTH = 16
"""Nested inlining deeper than this is taken for recursion and refused."""


class _NoValue(Exception):
    """A statement of a callee that has no expression form (module doc)."""


def _calls(expr: PrimExpr) -> bool:
    found = False

    def visit(node: object) -> None:
        nonlocal found
        found = found or isinstance(node, Call)

    post_order_visit(expr, visit)
    return found


def _choice(cond: PrimExpr, then: PrimExpr, other: PrimExpr, dtype: DataType | None) -> PrimExpr:
    """``T.if_then_else(cond, then, other)`` (lazy, as the branches were), in ``dtype`` when
    the two returned values differ in type."""
    if then.dtype != other.dtype and dtype is not None:
        then, other = Cast(dtype, then), Cast(dtype, other)
    return Call(then.dtype, "if_then_else", (cond, then, other), CallKind.BUILTIN)


def _value(stmt: Stmt, rest: list[Stmt], fresh: dict[Var, PrimExpr],
           dtype: DataType | None) -> PrimExpr:
    """What running ``stmt`` then the statements ``rest`` returns, as one expression;
    :class:`_NoValue` when some statement has no expression form, or none returns."""
    if isinstance(stmt, SeqStmt):
        first, *more = stmt.seq
        return _value(first, [*more, *rest], fresh, dtype)
    if isinstance(stmt, LetStmt):
        var = Var(stmt.var.name, stmt.var.dtype)
        value = substitute_expr(stmt.value, fresh)
        fresh[stmt.var] = var
        return Let(var, value, _value(stmt.body, rest, fresh, dtype))
    if isinstance(stmt, Evaluate):
        call = stmt.value
        if isinstance(call, Call) and call.op == "ret" and len(call.args) == 1:
            return substitute_expr(call.args[0], fresh)  # what follows never runs
        if _calls(call) or not rest:
            raise _NoValue  # a call may have an effect; nothing after it would return
        return _value(rest[0], rest[1:], fresh, dtype)
    if isinstance(stmt, IfThenElse):
        cond = substitute_expr(stmt.condition, fresh)
        then = _value(stmt.then_case, rest, dict(fresh), dtype)
        if stmt.else_case is not None:
            other = _value(stmt.else_case, rest, dict(fresh), dtype)
        elif rest:
            other = _value(rest[0], rest[1:], dict(fresh), dtype)
        else:
            raise _NoValue
        return _choice(cond, then, other, dtype)
    raise _NoValue


def _returned(
    name: str, func: PrimFunc, fresh: dict[Var, PrimExpr], where: tuple[Span | None, str]
) -> PrimExpr:
    """``func``'s returned expression (module doc), every variable of ``fresh`` (the
    parameters) and every bound one renamed (one copy per call)."""
    try:
        return _value(func.body, [], fresh, func.ret_type)
    except _NoValue:
        raise UnsupportedConstructError(
            f"calling {name!r} for its value when its body is more than let bindings, "
            "evaluations without effect and ifs around T.ret(value) (such a function returns "
            "through an output array here: call it as a statement and pass the array)",
            *where) from None


def _has_value(func: PrimFunc) -> bool:
    """Whether ``func``'s body has an expression form (it may be inlined for its value)."""
    try:
        _value(func.body, [], {p: p for p in func.params}, func.ret_type)
    except _NoValue:
        return False
    return True


class _Voids:
    """The ``without_return`` copies of the scalar functions called as statements, by the
    name of the function they copy (each added to the module under a fresh name)."""

    def __init__(self, mod: IRModule) -> None:
        self.taken = {name for name, _ in mod.items()}
        self.names: dict[str, str] = {}
        self.funcs: dict[str, PrimFunc] = {}

    def name_for(self, callee: str, func: PrimFunc) -> str:
        if callee not in self.names:
            name, k = f"{callee}_void", 1
            while name in self.taken:
                name, k = f"{callee}_void_{k}", k + 1
            self.taken.add(name)
            self.names[callee] = name
            self.funcs[name] = without_return(func)
        return self.names[callee]


class _Inline(LocatedMutator):
    def __init__(self, scalar: dict[str, PrimFunc], func_name: str, depth: int = 0,
                 voids: _Voids | None = None) -> None:
        self.scalar = scalar
        self.func_name = func_name
        self.depth = depth
        self.voids = voids

    def visit_evaluate_(self, stmt: Evaluate) -> Stmt:
        """A call whose value is discarded (a statement) of a scalar function with no
        expression form calls that function's copy returning nothing: the function runs, as
        TVM runs it, without the output array the returned value would need here."""
        call = stmt.value
        if not (self.voids is not None and isinstance(call, Call) and call.kind is CallKind.EXTERN
                and call.op in self.scalar and not _has_value(self.scalar[call.op])):
            return self.generic_mutate(stmt)
        args = tuple(self.visit_expr(a) for a in call.args)
        name = self.voids.name_for(call.op, self.scalar[call.op])
        return Evaluate(Call(as_dtype("int32"), name, args, CallKind.EXTERN), span=stmt.span)

    def visit_expr(self, expr: PrimExpr) -> PrimExpr:
        expr = super().visit_expr(expr)
        if not (isinstance(expr, Call) and expr.kind is CallKind.EXTERN
                and expr.op in self.scalar):
            return expr
        callee = self.scalar[expr.op]
        where = (self.span, self.func_name)
        if self.depth >= MAX_DEPTH:
            raise UnsupportedConstructError(
                f"a recursive scalar function ({expr.op!r}) called for its value", *where)
        if callee.buffer_map:
            raise UnsupportedConstructError(
                f"calling {expr.op!r}, a scalar function with array parameters, for its value",
                *where)
        params = {p: Var(p.name, p.dtype) for p in callee.params}
        fresh: dict[Var, PrimExpr] = dict(params)
        inner = _Inline(self.scalar, self.func_name, self.depth + 1)
        inner.span = self.span
        value = inner.visit_expr(_returned(expr.op, callee, fresh, where))
        for param, arg in reversed(list(zip(callee.params, expr.args))):
            value = Let(params[param], arg, value)
        return value


def inline_scalar_calls(mod: IRModule) -> IRModule:
    """``mod`` with every call of one of its scalar-returning functions for a value
    replaced by that function's returned expression (module doc)."""
    scalar = {
        name: func for name, func in mod.items()
        if func.ret_type is not None and not func.ret_type.is_handle
    }
    if not scalar:
        return mod
    out = mod
    voids = _Voids(mod)
    for name, func in mod.items():
        body = _Inline(scalar, name, voids=voids).visit_stmt(func.body)
        if body is not func.body:
            out = out.with_function(name, func.with_body(body))
    done: set[str] = set()
    while len(done) < len(voids.funcs):  # a copy's body may call scalar functions too
        for name, func in list(voids.funcs.items()):
            if name not in done:
                done.add(name)
                body = _Inline(scalar, name, voids=voids).visit_stmt(func.body)
                out = out.with_function(name, func.with_body(body))
    return out
