"""A tiny evaluator of printed TVMScript *expressions*, for printer tests.

It stands in for the parser (not yet written) to check that printed
expressions rebuild the same nodes under Python's operator semantics,
constant folding and comparison reflection included. Only the expression
subset of the syntax is understood.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

from irbuilder import ir
from irbuilder.ir import CallKind, PrimExpr, as_dtype, const, convert, promote

__all__ = ["evaluate", "make_T"]

_BINOPS: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
}
_CMPOPS: dict[type[ast.cmpop], Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
}


def _dtype_ctor(name: str) -> Callable[..., Any]:
    def make(value: Any = None, is_size_var: bool = False) -> Any:
        if value is None:
            return (ir.SizeVar if is_size_var else ir.Var)("v", as_dtype(name))
        if isinstance(value, str):
            value = float(value)
        return const(value, name)

    return make


def _node(cls: Any) -> Callable[..., Any]:
    return lambda *args: cls(*(convert(a) for a in args))


def _promoted(cls: Any) -> Callable[[Any, Any], Any]:
    return lambda a, b: cls(*promote(a, b))


def make_T() -> SimpleNamespace:
    """A mock ``T`` namespace with the expression constructors the printer uses."""
    ns: dict[str, Any] = {}
    for name in ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                 "float16", "float32", "float64", "bool"]:  # fmt: skip
        ns[name] = _dtype_ctor(name)
    for cls_name in ["Add", "Sub", "Mul", "Div", "Mod", "FloorDiv", "FloorMod", "Min", "Max",
                     "EQ", "NE", "LT", "LE", "GT", "GE", "And", "Or", "Not"]:  # fmt: skip
        ns[cls_name] = _node(getattr(ir, cls_name))
    ns["truncdiv"] = _promoted(ir.Div)
    ns["truncmod"] = _promoted(ir.Mod)
    ns["min"] = _promoted(ir.Min)
    ns["max"] = _promoted(ir.Max)
    ns["Cast"] = lambda dtype, x: ir.Cast(as_dtype(dtype), convert(x))
    ns["Select"] = lambda c, a, b: ir.Select(convert(c), *promote(a, b))
    ns["Ramp"] = lambda b, s, lanes: ir.Ramp(*promote(b, s), lanes)
    ns["Broadcast"] = lambda v, lanes: ir.Broadcast(convert(v), lanes)
    ns["Shuffle"] = lambda vs, idx: ir.Shuffle(tuple(vs), tuple(idx))

    def let(body: Any, where: dict[Any, Any]) -> Any:
        ((var, value),) = where.items()
        return ir.Let(var, convert(value), convert(body))

    ns["Let"] = let

    def intrin(op: str) -> Callable[..., Any]:
        def make(*args: Any) -> Any:
            exprs = [convert(a) for a in args]
            dtype = as_dtype("bool") if op in ("isnan", "isinf", "isfinite") else exprs[0].dtype
            return ir.Call(dtype, op, tuple(exprs))

        return make

    for op in ["exp", "sqrt", "pow", "log", "bitwise_and", "bitwise_or", "bitwise_xor",
               "bitwise_not", "shift_left", "shift_right", "isnan"]:  # fmt: skip
        ns[op] = intrin(op)
    ns["likely"] = lambda c: ir.Call(c.dtype, "likely", (c,), CallKind.BUILTIN)
    ns["if_then_else"] = lambda c, a, b: ir.Call(
        promote(a, b)[0].dtype, "if_then_else", (c, *promote(a, b)), CallKind.BUILTIN
    )
    ns["reinterpret"] = lambda d, x: ir.Call(as_dtype(d), "reinterpret", (x,), CallKind.BUILTIN)
    ns["call_intrin"] = lambda d, op, *a: ir.Call(as_dtype(d), op, tuple(map(convert, a)))
    ns["call_extern"] = lambda d, op, *a: ir.Call(
        as_dtype(d), op, tuple(map(convert, a)), CallKind.EXTERN
    )
    ns["call_pure_extern"] = lambda d, op, *a: ir.Call(
        as_dtype(d), op, tuple(map(convert, a)), CallKind.PURE_EXTERN
    )
    return SimpleNamespace(**ns)


def evaluate(text: str, names: dict[str, Any]) -> Any:
    """Evaluate the expression ``text`` with ``names`` (vars, buffers) and a mock ``T``."""
    env = {"T": make_T(), **names}
    result = _eval(ast.parse(text, mode="eval").body, env)
    # A bare literal becomes a constant where the parser uses it (index, value...).
    return convert(result) if isinstance(result, (bool, int, float)) else result


def _eval(node: ast.expr, env: dict[str, Any]) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        return env[node.id]
    if isinstance(node, ast.Attribute):
        return getattr(_eval(node.value, env), node.attr)
    if isinstance(node, ast.BinOp):
        return _BINOPS[type(node.op)](_eval(node.left, env), _eval(node.right, env))
    if isinstance(node, ast.UnaryOp):
        operand = _eval(node.operand, env)
        if isinstance(node.op, ast.Not):
            return ir.Not(convert(operand))
        if isinstance(node.op, ast.USub):
            return -operand
        raise NotImplementedError(ast.dump(node))
    if isinstance(node, ast.Compare):
        assert len(node.ops) == 1, "the printer never chains comparisons"
        return _CMPOPS[type(node.ops[0])](_eval(node.left, env), _eval(node.comparators[0], env))
    if isinstance(node, ast.BoolOp):
        cls = ir.And if isinstance(node.op, ast.And) else ir.Or
        values = [convert(_eval(v, env)) for v in node.values]
        result: PrimExpr = values[0]
        for value in values[1:]:
            result = cls(result, value)
        return result
    if isinstance(node, ast.Call):
        func = _eval(node.func, env)
        args = [_eval(a, env) for a in node.args]
        kwargs = {k.arg: _eval(k.value, env) for k in node.keywords if k.arg is not None}
        return func(*args, **kwargs)
    if isinstance(node, ast.Subscript):
        base = _eval(node.value, env)
        return base[_eval(node.slice, env)]
    if isinstance(node, ast.Tuple):
        return tuple(_eval(e, env) for e in node.elts)
    if isinstance(node, ast.List):
        return [_eval(e, env) for e in node.elts]
    if isinstance(node, ast.Dict):
        return {_eval(k, env): _eval(v, env) for k, v in zip(node.keys, node.values) if k}
    raise NotImplementedError(ast.dump(node))
