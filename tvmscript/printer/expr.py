"""Printing of expressions: constants, operators with minimal parentheses, calls.

The text is evaluated back by the parser with Python's operators, which fold
``IntImm op IntImm`` and reflect comparisons whose left side is a plain number
(``0 < x`` becomes ``x > 0``); the printer therefore spells such nodes in a form
that rebuilds exactly the same node (``T.Add(1, 2)``, ``T.int32(0) < x``).
"""

from __future__ import annotations

import math

from irbuilder.ir import (
    EQ,
    GE,
    GT,
    INTRINSICS,
    LE,
    LT,
    NE,
    Add,
    And,
    BinaryOp,
    Broadcast,
    Buffer,
    BufferLoad,
    Call,
    CallKind,
    Cast,
    CommReducer,
    DataType,
    Div,
    FloatImm,
    FloorDiv,
    FloorMod,
    IntImm,
    IterKind,
    IterVar,
    Let,
    Max,
    Min,
    Mod,
    Mul,
    Not,
    Operands,
    Or,
    PrimExpr,
    Ramp,
    Reduce,
    Result,
    Select,
    Shuffle,
    SizeVar,
    StringImm,
    Sub,
    Var,
    as_dtype,
    structural_equal,
)
from irbuilder.ir.expr import folds_at_construction
from irbuilder.tir.runtime import RUNTIME_BUILTINS
from irbuilder.tir.tvm_ops import AS_ARG, AS_ARG0, DTYPE_FIRST, DTYPE_LAST, TVM_OPS

from .doc import py_str
from .names import NameTable

__all__ = [
    "ATOM",
    "IDENTITY_DTYPE_INTRINSICS",
    "ITER_TYPE_NAMES",
    "ExprPrinter",
    "float_literal",
]

# Python operator precedences (higher binds tighter).
ATOM = 100
UNARY = 14
MUL = 12
ADD = 11
CMP = 6
NOT = 5
AND = 4
OR = 3
LOWEST = 0

_INFIX: dict[type[BinaryOp], tuple[str, int]] = {
    Add: ("+", ADD),
    Sub: ("-", ADD),
    Mul: ("*", MUL),
    FloorDiv: ("//", MUL),
    FloorMod: ("%", MUL),
    EQ: ("==", CMP),
    NE: ("!=", CMP),
    LT: ("<", CMP),
    LE: ("<=", CMP),
    GT: (">", CMP),
    GE: (">=", CMP),
    And: ("and", AND),
    Or: ("or", OR),
}
_CALL_FORM: dict[type[BinaryOp], str] = {
    Mod: "T.truncmod",
    Min: "T.min",
    Max: "T.max",
}

IDENTITY_DTYPE_INTRINSICS = frozenset(
    spec.name for spec in INTRINSICS.values() if spec.script and spec.result is Result.SAME
)
"""Intrinsics printed as ``T.<op>(args)`` when the call's type is its first argument's."""

_BOOL_INTRINSICS = frozenset(
    spec.name for spec in INTRINSICS.values() if spec.script and spec.result is Result.BOOL
)
_FIXED_BUILTINS: dict[str, str] = {
    "array_data": "handle",
    "array_ndim": "int32",
    "array_shape": "int64",
    "array_stride": "int64",
    "array_flags": "int32",
    "array_dtype_is": "bool",
    "array_descr": "handle",
    "format_message": "handle",
}

ITER_TYPE_NAMES: dict[IterKind, str] = {
    IterKind.SPATIAL: "DataPar",
    IterKind.REDUCE: "CommReduce",
    IterKind.SCAN: "Ordered",
    IterKind.OPAQUE: "Opaque",
    IterKind.THREAD: "ThreadIndex",
}
"""TVM's ``T.iter_var`` type names of each iteration kind."""


def float_literal(value: float) -> str:
    """The argument text of ``T.float32(...)``: inf/nan as strings, integral values bare."""
    if math.isnan(value):
        return '"nan"'
    if math.isinf(value):
        return '"inf"' if value > 0 else '"-inf"'
    if value == 0.0 and math.copysign(1.0, value) < 0:
        return "-0.0"  # int(-0.0) would lose the sign
    if value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(value)


def _is_zero(expr: PrimExpr) -> bool:
    return isinstance(expr, IntImm) and expr.value == 0 and not expr.dtype.is_bool


def _needs_node_form(expr: BinaryOp) -> bool:
    # Python's operators on two integer constants fold; the node constructor does not.
    if isinstance(expr.a, IntImm) and isinstance(expr.b, IntImm):
        return True
    # ``True and x`` short-circuits to ``x`` when parsed, ``x * 1`` folds to ``x`` (TVM's
    # construction-time identities); ``T.And(True, x)``, ``T.Mul(x, 1)`` keep the node.
    if folds_at_construction(expr):
        return True
    # ``a or b`` of bool vectors parses as ``T.bitwise_or`` (TVM's parser): the node keeps Or
    if isinstance(expr, (And, Or)) and not expr.dtype.is_scalar:
        return True
    # The parser refuses an integer division by the constant 0 unless spelled as the node.
    return (
        isinstance(expr, (Div, Mod, FloorDiv, FloorMod))
        and isinstance(expr.b, IntImm)
        and expr.b.value == 0
        and not expr.dtype.element_of().is_float
    )


class ExprPrinter:
    """Prints expressions of one function; owns its names and variable bookkeeping.

    ``hoist_free`` makes every variable used without a definition site in the
    text (free variables, ``Let`` and ``Reduce`` variables) collect in
    :attr:`hoisted`, to be declared as ``x = T.int32()`` at the top of the body.
    """

    def __init__(self, hoist_free: bool = True) -> None:
        self.names = NameTable()
        self.var_text: dict[int, str] = {}
        self.defined: set[int] = set()
        self.hoisted: list[Var] = []
        self.hoist_free = hoist_free
        # Functions of the module being printed: a call to one prints as `Module.f(...)`.
        # (name -> the dtype the parser gives a call of it)
        self.subroutines: dict[str, str] = {}

    # -- names ---------------------------------------------------------------
    def define_var(self, var: Var) -> str:
        """Name ``var`` at a definition site in the text (local to the open scope)."""
        self.defined.add(id(var))
        return self.names.name(var, var.name, local=True)

    def hoist_var(self, var: Var) -> str:
        """Name ``var`` and declare it at the top of the function body."""
        if id(var) not in self.defined:
            self.defined.add(id(var))
            self.hoisted.append(var)
        return self.names.name(var, var.name)

    def var_ref(self, var: Var) -> str:
        """The text of a use of ``var`` (``A.data`` for an implicit data pointer)."""
        special = self.var_text.get(id(var))
        if special is not None:
            return special
        if self.hoist_free and id(var) not in self.defined:
            return self.hoist_var(var)
        return self.names.name(var, var.name)

    def buffer_ref(self, buffer: Buffer) -> str:
        """The name of ``buffer``."""
        return self.names.name(buffer, buffer.name)

    # -- types ---------------------------------------------------------------
    @staticmethod
    def dtype_ctor(dtype: DataType) -> str:
        """``T.float32``: the T function that makes values of ``dtype``."""
        return f"T.{dtype}"

    def type_annotation(self, var: Var) -> str:
        """The annotation of a parameter or let variable (``T.int32``, ``T.handle(...)``)."""
        pointer = var.type_annotation
        if pointer is not None:
            return f"T.handle({py_str(str(pointer.element))}, {py_str(pointer.scope)})"
        return self.dtype_ctor(var.dtype)

    def var_decl(self, var: Var) -> str:
        """The right-hand side that declares ``var`` alone (``T.int32()``)."""
        pointer = var.type_annotation
        if pointer is not None:
            return f"T.handle({py_str(str(pointer.element))}, {py_str(pointer.scope)})"
        if isinstance(var, SizeVar):
            return f"{self.dtype_ctor(var.dtype)}(is_size_var=True)"
        return f"{self.dtype_ctor(var.dtype)}()"

    # -- expressions ---------------------------------------------------------
    def expr(self, expr: PrimExpr) -> str:
        """``expr`` as TVMScript text."""
        return self._expr(expr)[0]

    def typed_const(self, expr: IntImm) -> str:
        """An integer constant spelled with its type even when int32 or bool."""
        value = bool(expr.value) if expr.dtype.is_bool else expr.value
        return f"{self.dtype_ctor(expr.dtype)}({value})"

    def _const(self, expr: IntImm | FloatImm) -> tuple[str, int]:
        if isinstance(expr, FloatImm):
            return f"{self.dtype_ctor(expr.dtype)}({float_literal(expr.value)})", ATOM
        if expr.dtype.is_bool:
            return ("True" if expr.value else "False"), ATOM
        if str(expr.dtype) == "int32":
            return str(expr.value), (UNARY if expr.value < 0 else ATOM)
        return self.typed_const(expr), ATOM

    def _wrap(self, expr: PrimExpr, parens_below: int) -> str:
        text, prec = self._expr(expr)
        return f"({text})" if prec < parens_below else text

    def _expr(self, expr: PrimExpr) -> tuple[str, int]:
        if isinstance(expr, Var):
            return self.var_ref(expr), ATOM
        if isinstance(expr, (IntImm, FloatImm)):
            return self._const(expr)
        if isinstance(expr, StringImm):
            return py_str(expr.value), ATOM
        if isinstance(expr, BinaryOp):
            return self._binary(expr)
        if isinstance(expr, Not):
            if isinstance(expr.a, IntImm):
                return f"T.Not({self.expr(expr.a)})", ATOM
            return f"not {self._wrap(expr.a, NOT)}", NOT
        if isinstance(expr, Cast):
            return f"T.Cast({py_str(str(expr.dtype))}, {self.expr(expr.value)})", ATOM
        if isinstance(expr, Select):
            args = (expr.condition, expr.true_value, expr.false_value)
            return f"T.Select({self._args(args)})", ATOM
        if isinstance(expr, BufferLoad):
            return f"{self.buffer_ref(expr.buffer)}[{self.indices(expr.indices)}]", ATOM
        if isinstance(expr, Ramp):
            return f"T.Ramp({self.expr(expr.base)}, {self.expr(expr.stride)}, {expr.lanes})", ATOM
        if isinstance(expr, Broadcast):
            return f"T.Broadcast({self.expr(expr.value)}, {expr.lanes})", ATOM
        if isinstance(expr, Shuffle):
            vectors = ", ".join(self.expr(v) for v in expr.vectors)
            indices = ", ".join(str(i) for i in expr.indices)
            return f"T.Shuffle([{vectors}], [{indices}])", ATOM
        if isinstance(expr, Let):
            # The var is declared at the top of the function (x = T.int32()).
            value = self.expr(expr.value)
            name = self.hoist_var(expr.var)
            return f"T.Let({self.expr(expr.body)}, where={{{name}: {value}}})", ATOM
        if isinstance(expr, Call):
            return self._call(expr), ATOM
        if isinstance(expr, Reduce):
            return self._reduce(expr), ATOM
        raise TypeError(f"cannot print {type(expr).__name__} {expr!r} as a TVMScript expression")

    def _args(self, args: tuple[PrimExpr, ...]) -> str:
        return ", ".join(self.expr(a) for a in args)

    def indices(self, indices: tuple[PrimExpr, ...]) -> str:
        """Subscript text of a load or store; ``()`` for a 0-d buffer."""
        if not indices:
            return "()"
        return ", ".join(self.expr(i) for i in indices)

    def _binary(self, expr: BinaryOp) -> tuple[str, int]:
        cls = type(expr)
        if _needs_node_form(expr):
            return f"T.{cls.__name__}({self.expr(expr.a)}, {self.expr(expr.b)})", ATOM
        if cls is Div:
            if expr.dtype.element_of().is_float:
                op, prec = "/", MUL
            else:
                return f"T.truncdiv({self.expr(expr.a)}, {self.expr(expr.b)})", ATOM
        elif cls in _CALL_FORM:
            return f"{_CALL_FORM[cls]}({self.expr(expr.a)}, {self.expr(expr.b)})", ATOM
        else:
            op, prec = _INFIX[cls]
        if prec == CMP:
            # Comparisons chain in Python, so a comparison operand is parenthesised,
            # and a bare literal on the left would be reflected (0 < x -> x > 0).
            if isinstance(expr.a, IntImm) and self._const(expr.a)[0][:2] != "T.":
                left = self.typed_const(expr.a)
            else:
                left = self._wrap(expr.a, CMP + 1)
            right = self._wrap(expr.b, CMP + 1)
        else:
            left = self._wrap(expr.a, prec)
            right = self._wrap(expr.b, prec + 1)
        return f"{left} {op} {right}", prec

    def _call(self, call: Call) -> str:
        args = list(call.args)
        dtype = str(call.dtype)
        op = call.op
        if call.kind is CallKind.EXTERN and self.subroutines.get(op) == dtype:
            return f"Module.{op}({self._args(call.args)})"
        if call.kind is CallKind.EXTERN or call.kind is CallKind.PURE_EXTERN:
            name = "T.call_extern" if call.kind is CallKind.EXTERN else "T.call_pure_extern"
            rest = "".join(", " + self.expr(a) for a in args)
            return f"{name}({py_str(dtype)}, {py_str(op)}{rest})"
        runtime = self._runtime_call(call)
        if runtime is not None:
            return runtime
        if self._short_call_ok(call):
            if op == "reinterpret":
                return f"T.reinterpret({py_str(dtype)}, {self._args(call.args)})"
            return f"T.{op}({self._args(call.args)})"
        rest = "".join(", " + self.expr(a) for a in args)
        return f"T.call_intrin({py_str(dtype)}, {py_str(op)}{rest})"

    def _prefetch(self, call: Call) -> str | None:
        start, extents = call.args[0], call.args[1:]
        if not isinstance(start, BufferLoad) or len(extents) != len(start.indices):
            return None
        ranges = ", ".join(
            f"T.Range({self.expr(m)}, {self.range_stop(m, e)})"
            for m, e in zip(start.indices, extents)
        )
        return f"T.prefetch({self.buffer_ref(start.buffer)}, [{ranges}])"

    def _tvm_op_call(self, call: Call) -> str | None:
        """``T.<op>(...)`` of a builtin of TVM's op table when it rebuilds ``call``, or None."""
        spec = TVM_OPS.get(call.op)
        if spec is None:
            return None
        args, dtype = call.args, call.dtype
        if spec.result == DTYPE_FIRST:
            return f"T.{call.op}({py_str(str(dtype))}{''.join(', ' + self.expr(a) for a in args)})"
        if spec.result == DTYPE_LAST:
            return f"T.{call.op}({''.join(self.expr(a) + ', ' for a in args)}{py_str(str(dtype))})"
        if spec.result in (AS_ARG, AS_ARG0):
            position = 1 if spec.result == AS_ARG else 0
            if len(args) <= position or args[position].dtype != dtype:
                return None
        elif str(dtype) != ("handle" if spec.result == "void" else spec.result):
            return None
        return f"T.{call.op}({self._args(args)})"

    def _runtime_call(self, call: Call) -> str | None:
        """TVM's spelling of a runtime builtin (``T.call_packed("f", x)``), or None."""
        if call.kind is CallKind.BUILTIN and call.op in TVM_OPS:
            return self._tvm_op_call(call)
        if call.kind is CallKind.BUILTIN and call.op == "prefetch" and str(call.dtype) == "int32":
            return self._prefetch(call)
        if call.kind is not CallKind.BUILTIN or call.op not in RUNTIME_BUILTINS:
            return None
        op, args = call.op, call.args
        if op == "type_annotation":
            return f"T.type_annotation({py_str(str(call.dtype))})" if not args else None
        if str(call.dtype) != RUNTIME_BUILTINS[op]:
            return None
        if op in ("tvm_call_packed", "tvm_call_cpacked"):
            if not args or not isinstance(args[0], StringImm):
                return None
            name = "T.call_packed" if op == "tvm_call_packed" else "T.call_cpacked"
            return f"{name}({self._args(args)})"
        if op == "address_of" and (len(args) != 1 or not isinstance(args[0], BufferLoad)):
            return None
        return f"T.{op}({self._args(args)})"

    @staticmethod
    def _short_call_ok(call: Call) -> bool:
        """Whether ``T.<op>(args)`` rebuilds this call with its type and kind."""
        op, args = call.op, call.args
        if call.kind is CallKind.INTRINSIC:
            spec = INTRINSICS.get(op)
            if spec is None or not spec.script or len(args) != spec.arity:
                return False
            if any(a.dtype != args[0].dtype for a in args):
                return False
            element = args[0].dtype.element_of()
            if spec.operands in (Operands.FLOAT, Operands.ROUNDING, Operands.CLASSIFY):
                if not element.is_float:
                    return False  # the builder would refuse or fold it
            elif spec.operands is Operands.INTEGER:
                if not element.is_integer:
                    return False
            elif spec.operands is Operands.BITS:
                if not (element.is_integer or element.is_bool):
                    return False
            elif not (element.is_float or (element.is_int and op == "abs")):
                return False  # fabs of an int builds abs; abs of a uint folds
            if spec.result is Result.BOOL:
                return call.dtype == as_dtype("bool").with_lanes(args[0].dtype.lanes)
            return args[0].dtype == call.dtype
        # Builtins.
        if op == "likely":
            return len(args) == 1 and args[0].dtype == call.dtype
        if op == "if_then_else":
            return len(args) == 3 and args[1].dtype == call.dtype
        if op in ("reinterpret", "assume"):
            return len(args) == 1
        if op == "ret":
            return len(args) == 1 and args[0].dtype == call.dtype
        fixed = _FIXED_BUILTINS.get(op)
        return fixed is not None and str(call.dtype) == fixed

    def range_stop(self, begin: PrimExpr, extent: PrimExpr) -> str:
        """Text of the exclusive end ``begin + extent`` that parses back to ``extent``.

        The parser computes ``extent = stop - begin``; constants fold, and an
        extent that already is ``stop - begin`` prints its ``stop``.
        """
        if _is_zero(begin):
            return self.expr(extent)
        if isinstance(extent, Sub) and structural_equal(extent.b, begin):
            return self.expr(extent.a)
        if (
            isinstance(begin, IntImm)
            and isinstance(extent, IntImm)
            and begin.dtype == extent.dtype
            and extent.dtype.min_value <= begin.value + extent.value <= extent.dtype.max_value
        ):
            return self.expr(IntImm(extent.dtype, begin.value + extent.value))
        if begin.dtype == extent.dtype:
            return self.expr(Add(begin, extent))
        return f"{self._wrap(begin, ADD)} + {self._wrap(extent, ADD + 1)}"

    def iter_var_expr(self, iter_var: IterVar) -> str:
        """``T.iter_var(k, T.Range(0, 16), "CommReduce", "")``; declares the var at the top."""
        dom = iter_var.dom
        rng = f"T.Range({self.expr(dom.min)}, {self.range_stop(dom.min, dom.extent)})"
        name = self.hoist_var(iter_var.var)
        kind = py_str(ITER_TYPE_NAMES[iter_var.kind])
        return f"T.iter_var({name}, {rng}, {kind}, {py_str(iter_var.thread_tag)})"

    def comm_reducer(self, reducer: CommReducer) -> str:
        """``T.comm_reducer(lambda x, y: x + y, [T.float32(0)])``."""
        params = ", ".join(self.define_var(v) for v in (*reducer.lhs, *reducer.rhs))
        results = [self.expr(r) for r in reducer.result]
        body = results[0] if len(results) == 1 else f"({', '.join(results)})"
        identity = ", ".join(
            self.typed_const(i) if isinstance(i, IntImm) else self.expr(i) for i in reducer.identity
        )
        return f"T.comm_reducer(lambda {params}: {body}, [{identity}])"

    def _reduce(self, expr: Reduce) -> str:
        axes = ", ".join(self.iter_var_expr(a) for a in expr.axes)
        text = f"T.reduce({py_str(expr.kind.value)}, {self.expr(expr.source)}, axis=[{axes}]"
        if expr.condition is not None:
            text += f", where={self.expr(expr.condition)}"
        return text + ")"
