"""Calls of a module's scalar functions for their value, inlined before lowering.

``A[i] = Module.sq(x)`` calls ``sq``, a private function ``-> T.float32`` whose body is
``T.ret(x * x)``: TVM compiles it to a function returning a float. Our kernels return
through a ``ret_value`` output array (``lower_scalar_return``), which a caller's generated
code has no array for, so the call is replaced by the callee's returned expression, its
parameters bound by ``let`` to the arguments (each argument evaluated once, as a call
would). The callee's body must be ``let`` bindings (``x: T.float32 = ...``) around one
``T.ret(expr)``; anything else (loops, stores, an array parameter, recursion) is refused
with :class:`UnsupportedConstructError` rather than run as a call whose value would be lost.
"""

from __future__ import annotations

from irbuilder.ir import (
    Call,
    CallKind,
    Evaluate,
    IRModule,
    Let,
    LetStmt,
    PrimExpr,
    PrimFunc,
    Span,
    Var,
)

from ..analysis import substitute_expr
from ..cpu.support import LocatedMutator, UnsupportedConstructError

__all__ = ["inline_scalar_calls"]

MAX_DEPTH = 16
"""Nested inlining deeper than this is taken for recursion and refused."""


def _returned(
    name: str, func: PrimFunc, fresh: dict[Var, PrimExpr], where: tuple[Span | None, str]
) -> PrimExpr:
    """``func``'s returned expression, its ``let`` bindings as ``Let`` expressions, every
    variable of ``fresh`` (the parameters) and every bound one renamed (one copy per call)."""
    lets: list[tuple[Var, PrimExpr]] = []
    body = func.body
    while isinstance(body, LetStmt):
        var = Var(body.var.name, body.var.dtype)
        lets.append((var, substitute_expr(body.value, fresh)))
        fresh[body.var] = var
        body = body.body
    if not (isinstance(body, Evaluate) and isinstance(body.value, Call)
            and body.value.op == "ret" and len(body.value.args) == 1):
        raise UnsupportedConstructError(
            f"calling {name!r} for its value when its body is more than let bindings around "
            "one T.ret(value) (such a function returns through an output array here: call "
            "it as a statement and pass the array)", *where)
    expr = substitute_expr(body.value.args[0], fresh)
    for var, value in reversed(lets):
        expr = Let(var, value, expr)
    return expr


class _Inline(LocatedMutator):
    def __init__(self, scalar: dict[str, PrimFunc], func_name: str, depth: int = 0) -> None:
        self.scalar = scalar
        self.func_name = func_name
        self.depth = depth

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
    for name, func in mod.items():
        body = _Inline(scalar, name).visit_stmt(func.body)
        if body is not func.body:
            out = out.with_function(name, func.with_body(body))
    return out
