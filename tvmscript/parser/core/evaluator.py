"""Parse-time evaluation of expressions and assignments with Python's ``eval``/``exec``.

:func:`eval_expr` works **bottom-up**: it evaluates a node's children first, binds their
values to temporaries ``_0``, ``_1``, ... and ``eval``s a tiny expression built from the
temporaries (``_0 + _1``, ``_0[_1]``, ``_0(*_1, k=_2)``).  Python's own operator
semantics (and the IR's operator overloading) do the real work, while an exception is
attributed to the smallest sub-expression that raised it: in ``a + b.c(1)`` a missing
attribute is reported at ``b.c``.  Four constructs are not left to Python, because
Python would call ``bool()`` on a symbolic value, which IR expressions refuse:

* ``a and b``/``a or b``: while the value so far is *static* (``hooks.is_static``),
  Python's short-circuit rules apply exactly; once it is symbolic the remaining operands
  are all evaluated and combined with ``hooks.logical_and``/``logical_or``.
* ``not a``: ``not`` for a static value, ``hooks.logical_not`` otherwise.
* ``a < b < c``: evaluated as ``(a < b) and (b < c)`` with ``b`` evaluated once, through
  the same rules (so a symbolic chain becomes ``logical_and`` of its links).
* ``x if c else y``: a static ``c`` picks the branch at parse time (the other is not
  evaluated); a symbolic ``c`` evaluates both and calls ``hooks.select(c, x, y)``.

With the default :class:`EvalHooks` every value is static, i.e. plain Python semantics.

Lambdas and comprehensions (list/set/dict/generator) are compiled and evaluated as a
whole, over a snapshot of the current bindings, so ``T.compute((4,), lambda i: A[i] + 1)``
works; they are compiled with their real file positions, and an error raised inside one
(even when it is called later, e.g. by ``T.compute``) is located, on Python 3.11+, at the
exact sub-expression of the lambda that failed.

What ``eval`` and ``exec`` can see
----------------------------------
A single ``dict`` serves as globals (so names inside lambdas and comprehensions resolve
the same way as at top level), built from, later entries winning:

1. ``__builtins__``: :data:`EVAL_BUILTINS`, a fixed list of side-effect-free builtins
   (types, ``len``, ``range``, ``min``, ``max``, ``zip``, ``isinstance``, ``print``,
   ...) -- not ``__import__``, ``open``, ``eval``, ``exec``, ``compile``, ``globals``,
   ``vars``, ``input``, ``breakpoint`` or the class machinery.  A name refused by the
   capture policy is removed from the builtins, so an uncaptured module-level ``max``
   is reported rather than silently replaced by the builtin ``max``;
2. the captured environment's values (:mod:`capture`);
3. the caller's extra names (the ``T`` and ``I`` namespaces);
4. the variable table's visible bindings;
5. the ``extra_vars`` of this call.

Nothing else is reachable by name: not the parser's modules, not uncaptured globals.
Attributes obey the rules of :mod:`.attributes` (dunder and frame-introspection names are
refused on any object, checked on the tree before evaluation; private names and modules
are refused on the ``T``/``I`` namespaces; module attributes cannot be assigned); the
builtins ``getattr``/``hasattr`` are checked versions.  docs/eval-scope.md states the
whole contract.  (This is not a security sandbox: a captured object's public attributes
lead wherever they lead.)  The tiny per-node expressions see only their temporaries.

Long left-leaning operator chains (``a + b + ... `` with 10,000 terms, ``- - - x``) are
folded in a loop, not by recursion, so their depth is bounded only by what
:class:`~.source.Source` can parse.
"""

from __future__ import annotations

import ast
import builtins
import difflib
import operator
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from types import CodeType, MappingProxyType, ModuleType, TracebackType
from typing import Any, Protocol

from irbuilder.ir.span import Span
from tvmscript.diagnostics import DiagnosticError, debug_frontend, describe_exception

from . import attributes, doc
from .capture import CapturedEnv
from .dispatch import DispatchTable
from .doc_ast import to_ast
from .host_frames import failing_host_frame
from .source import Source
from .var_table import VarTable

__all__ = [
    "BINARY_OPERATORS",
    "EVAL_BUILTINS",
    "EvalContext",
    "EvalHooks",
    "diagnostic_for",
    "eval_assign",
    "eval_expr",
    "eval_namespace",
]

_BUILTIN_NAMES = (
    "Ellipsis NotImplemented abs all any ascii bin bool bytes callable chr complex dict "
    "divmod enumerate filter float format frozenset getattr hasattr hash hex int "
    "isinstance issubclass iter len list map max min next object oct ord pow print "
    "range repr reversed round set slice sorted str sum tuple type zip"
).split()
EVAL_BUILTINS: Mapping[str, Any] = MappingProxyType(
    {
        **{name: getattr(builtins, name) for name in _BUILTIN_NAMES},
        # Attribute reads by name obey the same rules as ``a.b`` (see attributes.py); an
        # evaluator replaces these two with versions that also know its T/I namespaces.
        "getattr": attributes.bound_getattr(()),
        "hasattr": attributes.bound_hasattr(()),
    }
)
"""The builtins visible to evaluated code (read-only)."""
_CHECKED = {"getattr": attributes.bound_getattr, "hasattr": attributes.bound_hasattr}

_MARKER = "__tvmscript_eval__"  # in the globals of every frame running user code we compiled
_RHS = "__tvms_rhs__"
_WHOLE = frozenset({"Lambda", "ListComp", "SetComp", "DictComp", "GeneratorExp"})
_REJECTED = {
    "NamedExpr": "assignment expressions (:=) are not supported",
    "Await": "'await' is not supported",
    "Yield": "'yield' is not supported",
    "YieldFrom": "'yield from' is not supported",
    "Starred": "a starred expression is only allowed in calls, displays and subscripts",
}
_code_cache: weakref.WeakKeyDictionary[Source, dict[tuple[doc.AST, str], CodeType]] = (
    weakref.WeakKeyDictionary()
)


def _static(_value: Any) -> bool:
    return True


def _and(lhs: Any, rhs: Any) -> Any:
    return lhs and rhs


def _or(lhs: Any, rhs: Any) -> Any:
    return lhs or rhs


def _not(value: Any) -> Any:
    return not value


def _select(cond: Any, true_value: Any, false_value: Any) -> Any:
    return true_value if cond else false_value


def _same(value: Any) -> Any:
    return value


_REGION_CALLS = frozenset({"reads", "writes", "match_buffer", "realize"})
"""``ns.f(...)`` whose sliced arguments stay regions (:attr:`EvalHooks.sliced_operand`)."""


def _bounded_slice(node: doc.expr) -> bool:
    """Whether ``node`` is a subscript with a ``lo:hi`` slice (both bounds, no step)."""
    if not isinstance(node, doc.Subscript):
        return False
    parts = node.slice.elts if isinstance(node.slice, doc.Tuple) else (node.slice,)
    return any(
        isinstance(p, doc.Slice) and p.lower is not None and p.upper is not None
        and p.step is None
        for p in parts
    )


def _accept(_value: Any) -> None:
    return None


def _exact_node(func: Any) -> bool:
    """Whether ``func`` constructs an IR node exactly as told (a node class, or a function
    marked ``exact_node`` such as ``T.FloorDiv``): its result is not checked."""
    return isinstance(func, type) or getattr(func, "exact_node", False) is True


@dataclass(frozen=True)
class EvalHooks:
    """How a dialect gives ``and``/``or``/``not``/chains/``if``-``else`` IR meaning.

    ``is_static(v)`` says whether ``v``'s truth can be decided at parse time (for TIR:
    anything that is not a symbolic expression).  The other hooks receive already
    evaluated operands, of which at least one is not static.
    """

    is_static: Callable[[Any], bool] = _static
    logical_and: Callable[[Any, Any], Any] = _and
    logical_or: Callable[[Any, Any], Any] = _or
    logical_not: Callable[[Any], Any] = _not
    select: Callable[[Any, Any, Any], Any] = _select
    check_result: Callable[[Any], None] = _accept
    """Called on the value of every operator and call (not of an IR node constructor such
    as ``T.FloorDiv(a, b)``, which builds exactly what it is told: the printer's spelling
    of such nodes); raises to refuse the value, reported at that operator or call."""
    sliced_operand: Callable[[Any], Any] = _same
    """Maps the value of ``x[lo:hi]`` (both bounds, no step) that is an operand of an
    operator, a comparison, ``and``/``or``, or a positional argument of ``ns.f(...)`` other
    than ``reads``/``writes``/``match_buffer``/``realize``: TVM's parser reads a buffer
    sliced there as a vector load (``A[0:4] * 2``), elsewhere as a region."""


class EvalContext(Protocol):
    """What evaluation needs from the parser (:class:`Parser` provides all of it)."""

    @property
    def source(self) -> Source: ...
    @property
    def var_table(self) -> VarTable: ...
    @property
    def captured(self) -> CapturedEnv: ...
    @property
    def extra_names(self) -> Mapping[str, Any]: ...
    @property
    def hooks(self) -> EvalHooks: ...
    @property
    def builtins(self) -> Mapping[str, Any]: ...
    @property
    def table(self) -> DispatchTable: ...


def eval_expr(ctx: EvalContext, node: doc.expr, extra_vars: Mapping[str, Any] | None = None) -> Any:
    """Evaluate ``node`` bottom-up (see the module docstring) and return its value.

    Any failure becomes a :class:`DiagnosticError` at the innermost failing
    sub-expression, with the original exception as ``__cause__`` and ``.original``; an
    existing ``DiagnosticError`` passes through unchanged.
    """
    evaluator = _Evaluator(ctx, extra_vars or {})
    evaluator.check_attributes(node)
    return evaluator.eval(node)


def eval_assign(ctx: EvalContext, target: doc.expr, value: Any) -> dict[str, Any]:
    """Assign ``value`` to ``target`` as Python would, and return the names bound.

    Runs ``exec("<target> = __tvms_rhs__")`` on the user's own target (compiled from its
    tree), so tuple unpacking, ``first, *rest = ...`` and nested targets behave exactly as
    in Python.  Attribute and subscript targets are assigned but bind no name.  Errors
    (``not enough values to unpack``) are located at the target, or on Python 3.11+ at
    the nested part of it that failed.
    """
    evaluator = _Evaluator(ctx, {})
    evaluator.check_attributes(target)
    evaluator.check_attribute_targets(target)
    if isinstance(target, doc.Name) and target.id != "__debug__":
        # What the exec below does for a bare name (most assignments in a kernel), without
        # compiling code or building the namespace.
        return {target.id: value}
    bound: dict[str, Any] = {_RHS: value}
    try:
        exec(evaluator.compiled(target, "exec"), evaluator.namespace(), bound)
    except DiagnosticError:
        raise
    except Exception as err:
        if debug_frontend():
            raise
        raise evaluator.wrap(err, target) from err
    del bound[_RHS]
    return bound


def eval_namespace(ctx: EvalContext, extra_vars: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The globals dict that ``eval``/``exec`` of whole expressions receive (a new dict)."""
    return _Evaluator(ctx, extra_vars or {}).namespace()


def _blamed_span(err: Exception) -> Span | None:
    """The span an error names for the IR at fault (``IRBuilderError(..., span=...)``)."""
    span = getattr(err, "span", None)
    return span if isinstance(span, Span) else None


def diagnostic_for(ctx: EvalContext, err: Exception, node: doc.AST) -> DiagnosticError:
    """The diagnostic for ``err`` raised while handling ``node``.

    Located at ``node`` unless the traceback runs through user code compiled by the
    evaluator (a lambda, say), whose failing sub-expression is more precise; a
    ``NameError`` for a name the capture policy refused gets the capture message.
    """
    return _Evaluator(ctx, {}).wrap(err, node)


# Python's arithmetic operators by ``ast`` class name, as functions: each does exactly what
# the operator does (same protocol, same errors), without compiling an expression; augmented
# assignments (``x += v``) use the binary ones too. ``not`` is the evaluator's own.
BINARY_OPERATORS: dict[str, Callable[[Any, Any], Any]] = {
    "Add": operator.add,
    "Sub": operator.sub,
    "Mult": operator.mul,
    "MatMult": operator.matmul,
    "Div": operator.truediv,
    "Mod": operator.mod,
    "Pow": operator.pow,
    "LShift": operator.lshift,
    "RShift": operator.rshift,
    "BitOr": operator.or_,
    "BitXor": operator.xor,
    "BitAnd": operator.and_,
    "FloorDiv": operator.floordiv,
}
_UNARY: dict[str, Callable[[Any], Any]] = {
    "Invert": operator.invert,
    "UAdd": operator.pos,
    "USub": operator.neg,
}


@lru_cache(maxsize=512)
def _compile_tiny(text: str) -> CodeType:
    return compile(text, "<tvmscript-eval>", "eval")


class _Evaluator:
    def __init__(self, ctx: EvalContext, extra: Mapping[str, Any]) -> None:
        self.ctx = ctx
        self.extra = extra
        self.hooks = ctx.hooks
        # The built-in namespaces (T, I): attribute rule 3 of attributes.py applies to them.
        self.namespaces = tuple(v for v in ctx.extra_names.values() if isinstance(v, ModuleType))

    def builtin(self, name: str) -> Any:
        """The builtin ``name`` as evaluated code sees it (getattr/hasattr bound to T/I)."""
        value = self.ctx.builtins[name]
        if name in _CHECKED and value is EVAL_BUILTINS[name]:
            return _CHECKED[name](self.namespaces)
        return value

    # ------------------------------------------------------------------ dispatch

    def eval(self, node: doc.expr) -> Any:
        kind = type(node).__name__
        try:
            if kind in _REJECTED:
                raise DiagnosticError(_REJECTED[kind], self.ctx.source.span(node))
            if kind in _WHOLE:
                return self.whole(node)
            method: Callable[[_Evaluator, Any], Any] | None = getattr(
                _Evaluator, "eval_" + kind, None
            )
            if method is None:
                raise DiagnosticError(f"unsupported expression: {kind}", self.ctx.source.span(node))
            return method(self, node)
        except DiagnosticError:
            raise
        except Exception as err:
            if debug_frontend():
                raise
            raise self.wrap(err, node) from err

    def tiny(self, text: str, *values: Any) -> Any:
        """``eval`` the expression ``text`` over temporaries ``_0``, ``_1``, ... = values."""
        scope: dict[str, Any] = {"__builtins__": {}}
        scope.update((f"_{i}", v) for i, v in enumerate(values))
        return eval(_compile_tiny(text), scope)

    # --------------------------------------------------------------- leaf nodes

    def eval_Constant(self, node: doc.Constant) -> Any:
        return node.value

    def eval_Name(self, node: doc.Name) -> Any:
        name = node.id
        if name in self.extra:
            return self.extra[name]
        try:
            return self.ctx.var_table.lookup(name)
        except KeyError:
            pass
        for layer in (self.ctx.extra_names, self.ctx.captured.values):
            if name in layer:
                return layer[name]
        refusal = self.ctx.captured.refusal(name)
        if refusal is not None:
            raise DiagnosticError(refusal, self.ctx.source.span(node))
        if name in self.ctx.builtins:
            return self.builtin(name)
        raise self.undefined(name, self.ctx.source.span(node))

    # ---------------------------------------------------- operators and access

    def eval_BinOp(self, node: doc.BinOp) -> Any:
        # A long ``a + b + c + ...`` is a left-leaning tree as deep as it is long: walk
        # down the left spine and fold back up in a loop instead of recursing.
        spine: list[doc.BinOp] = []
        current: doc.expr = node
        while isinstance(current, doc.BinOp):
            spine.append(current)
            current = current.left
        value = self.operand(current)
        for link in reversed(spine):
            rhs = self.operand(link.right)
            value = self.located(link, self.binary, type(link.op).__name__, value, rhs)
        return value

    def operand(self, node: doc.expr) -> Any:
        """``node``'s value as an operand: a bounded slice passes through
        :attr:`EvalHooks.sliced_operand` (a vector load in TIR), reported at ``node``."""
        value = self.eval(node)
        if _bounded_slice(node):
            value = self.located(node, self.hooks.sliced_operand, value)
        return value

    def located(self, node: doc.AST, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)``, any failure reported at ``node`` (one link of a folded chain)."""
        try:
            return fn(*args)
        except DiagnosticError:
            raise
        except Exception as err:
            if debug_frontend():
                raise
            raise self.wrap(err, node) from err

    def binary(self, op: str, lhs: Any, rhs: Any) -> Any:
        result = self._binary(op, lhs, rhs)
        self.ctx.hooks.check_result(result)
        return result

    def _binary(self, op: str, lhs: Any, rhs: Any) -> Any:
        table = self.ctx.table
        handler = table.get_op(type(lhs), op, 0) or table.get_op(type(rhs), op, 1)
        if handler is not None:
            return handler(lhs, rhs)
        direct = BINARY_OPERATORS.get(op)
        if direct is not None:
            return direct(lhs, rhs)
        return self.tiny(f"_0 {doc.SYMBOLS[op]} _1", lhs, rhs)  # comparisons

    def eval_UnaryOp(self, node: doc.UnaryOp) -> Any:
        spine: list[doc.UnaryOp] = []  # ``- - - x``: iterative, as for BinOp
        current: doc.expr = node
        while isinstance(current, doc.UnaryOp):
            spine.append(current)
            current = current.operand
        value = self.operand(current)
        for link in reversed(spine):
            value = self.located(link, self.unary, type(link.op).__name__, value)
        return value

    def unary(self, op: str, value: Any) -> Any:
        handler = self.ctx.table.get_op(type(value), op, 0)
        if handler is not None:
            return handler(value)
        if op == "Not":
            return not value if self.hooks.is_static(value) else self.hooks.logical_not(value)
        return _UNARY[op](value)

    def eval_Attribute(self, node: doc.Attribute) -> Any:
        self.check_attribute(node)
        base = self.eval(node.value)
        return attributes.checked_getattr(base, node.attr, namespaces=self.namespaces)

    def check_attribute(self, node: doc.Attribute) -> None:
        """Refuse a dunder or introspection attribute, at the attribute (attributes.py)."""
        why = attributes.refusal(node.attr)
        if why is not None:
            raise DiagnosticError(why, self.ctx.source.span(node))

    def check_attributes(self, node: doc.AST) -> None:
        """Rules 1-2 of attributes.py over the whole tree, before any of it runs; the
        refused attribute that comes first in the source is reported. Skipped for a source
        whose text holds no refusable name (each attribute is still checked as it is read)."""
        if not self.ctx.source.may_refuse_attributes:
            return
        refused = attributes.first_refused_node(node)
        if refused is not None:
            self.check_attribute(refused)

    def check_attribute_targets(self, target: doc.expr) -> None:
        """Refuse assigning an attribute of a module (``T.exp = ...``): rule 4."""
        if isinstance(target, (doc.Tuple, doc.List)):
            for elt in target.elts:
                self.check_attribute_targets(elt)
        elif isinstance(target, doc.Starred):
            self.check_attribute_targets(target.value)
        elif isinstance(target, doc.Attribute):
            self.check_attribute(target)
            base = self.eval(target.value)
            if isinstance(base, ModuleType):
                raise DiagnosticError(
                    f"cannot assign attribute '{target.attr}' of module {base.__name__!r} "
                    "in a kernel",
                    self.ctx.source.span(target),
                )

    def eval_Subscript(self, node: doc.Subscript) -> Any:
        value = self.eval(node.value)
        return operator.getitem(value, self.index(node.slice))

    def index(self, node: doc.expr) -> Any:
        """A subscript's index: slices become ``slice`` objects, ``A[*i]`` a tuple."""
        if isinstance(node, doc.Slice):
            return self.eval_Slice(node)
        if isinstance(node, doc.Tuple) and node.elts:
            return self.display("({},)", node.elts, self.index, tuple)
        return self.eval(node)

    def eval_Slice(self, node: doc.Slice) -> slice:
        parts = (node.lower, node.upper, node.step)
        lower, upper, step = (None if p is None else self.eval(p) for p in parts)
        return slice(lower, upper, step)

    def eval_Call(self, node: doc.Call) -> Any:
        func = self.eval(node.func)
        positional = (
            self.operand
            if isinstance(node.func, doc.Attribute) and node.func.attr not in _REGION_CALLS
            else self.eval
        )
        if not any(isinstance(a, doc.Starred) for a in node.args) and all(
            kw.arg is not None for kw in node.keywords
        ):
            # Plain positional and keyword arguments (keyword names are distinct: Python
            # rejects repeats when parsing), evaluated left to right as Python does.
            args = [positional(item) for item in node.args]
            kwargs = {kw.arg: self.eval(kw.value) for kw in node.keywords if kw.arg is not None}
            result = func(*args, **kwargs)
            if not _exact_node(func):
                self.ctx.hooks.check_result(result)
            return result
        values = [func]
        pieces = []
        for item in node.args:
            star = isinstance(item, doc.Starred)
            values.append(self.eval(item.value) if isinstance(item, doc.Starred)
                          else positional(item))
            pieces.append(f"{'*' if star else ''}_{len(values) - 1}")
        for kw in node.keywords:
            values.append(self.eval(kw.value))
            prefix = "**" if kw.arg is None else f"{kw.arg}="
            pieces.append(f"{prefix}_{len(values) - 1}")
        result = self.tiny(f"_0({', '.join(pieces)})", *values)
        if not _exact_node(func):
            self.ctx.hooks.check_result(result)
        return result

    # ------------------------------------------------------------------ displays

    def display(
        self,
        template: str,
        elts: tuple[doc.expr, ...],
        each: Callable[[doc.expr], Any],
        build: Callable[[list[Any]], Any],
    ) -> Any:
        """A tuple/list/set display: ``build`` of the elements, or with ``*x`` elements the
        ``template`` evaluated (Python's own unpacking and its errors)."""
        if not any(isinstance(elt, doc.Starred) for elt in elts):
            return build([each(elt) for elt in elts])
        values: list[Any] = []
        pieces: list[str] = []
        for elt in elts:
            if isinstance(elt, doc.Starred):
                values.append(self.eval(elt.value))
                pieces.append(f"*_{len(values) - 1}")
            else:
                values.append(each(elt))
                pieces.append(f"_{len(values) - 1}")
        return self.tiny(template.format(", ".join(pieces)), *values)

    def eval_Tuple(self, node: doc.Tuple) -> Any:
        return self.display("({},)" if node.elts else "()", node.elts, self.eval, tuple)

    def eval_List(self, node: doc.List) -> Any:
        return self.display("[{}]", node.elts, self.eval, list)

    def eval_Set(self, node: doc.Set) -> Any:
        return self.display("{{{}}}", node.elts, self.eval, set)

    def eval_Dict(self, node: doc.Dict) -> Any:
        values: list[Any] = []
        pieces: list[str] = []
        for key, value in zip(node.keys, node.values):
            if key is None:
                values.append(self.eval(value))
                pieces.append(f"**_{len(values) - 1}")
            else:
                values.extend((self.eval(key), self.eval(value)))
                pieces.append(f"_{len(values) - 2}: _{len(values) - 1}")
        return self.tiny("{" + ", ".join(pieces) + "}", *values)

    def eval_JoinedStr(self, node: doc.JoinedStr) -> Any:
        values: list[Any] = []
        template = ast.Expression(self.fstring_template(node, values))
        code = compile(ast.fix_missing_locations(template), "<tvmscript-eval>", "eval")
        scope: dict[str, Any] = {"__builtins__": {}}
        scope.update((f"_{i}", v) for i, v in enumerate(values))
        return eval(code, scope)

    def fstring_template(self, node: doc.JoinedStr, values: list[Any]) -> ast.JoinedStr:
        parts: list[ast.expr] = []
        for part in node.values:
            if isinstance(part, doc.FormattedValue):
                values.append(self.eval(part.value))
                name = ast.Name(id=f"_{len(values) - 1}", ctx=ast.Load())
                spec = part.format_spec
                spec_ast = (
                    self.fstring_template(spec, values) if isinstance(spec, doc.JoinedStr) else None
                )
                parts.append(ast.FormattedValue(name, part.conversion, spec_ast))
            elif isinstance(part, doc.Constant):
                parts.append(ast.Constant(part.value))
        return ast.JoinedStr(values=parts)

    # ------------------------------------------------ logic with parse-time meaning

    def eval_BoolOp(self, node: doc.BoolOp) -> Any:
        is_and = isinstance(node.op, doc.And)
        combine = self.hooks.logical_and if is_and else self.hooks.logical_or
        result = self.operand(node.values[0])
        for operand in node.values[1:]:
            if self.hooks.is_static(result):
                if bool(result) != is_and:  # Python's short circuit
                    return result
                result = self.operand(operand)
            else:
                result = combine(result, self.operand(operand))
        return result

    def eval_Compare(self, node: doc.Compare) -> Any:
        lhs_node: doc.expr = node.left
        lhs = self.operand(lhs_node)
        result: Any = True
        for op, rhs_node in zip(node.ops, node.comparators):
            rhs = self.operand(rhs_node)
            link = self.compare_link(type(op).__name__, lhs, rhs, lhs_node, rhs_node)
            if self.hooks.is_static(result):
                result = link  # ``True and link`` is ``link``
            else:
                result = self.hooks.logical_and(result, link)
            if self.hooks.is_static(result) and not result:
                return result
            lhs, lhs_node = rhs, rhs_node
        return result

    def compare_link(
        self, op: str, lhs: Any, rhs: Any, lhs_node: doc.expr, rhs_node: doc.expr
    ) -> Any:
        """One ``lhs op rhs`` of a chain; errors point at just that pair."""
        try:
            return self.binary(op, lhs, rhs)
        except DiagnosticError:
            raise
        except Exception as err:
            if debug_frontend():
                raise
            span = self.ctx.source.span(lhs_node).merge(self.ctx.source.span(rhs_node))
            raise DiagnosticError(describe_exception(err), span, original=err) from err

    def eval_IfExp(self, node: doc.IfExp) -> Any:
        cond = self.eval(node.test)
        if self.hooks.is_static(cond):
            return self.eval(node.body if cond else node.orelse)
        return self.hooks.select(cond, self.eval(node.body), self.eval(node.orelse))

    # -------------------------------------------------- whole-expression evaluation

    def whole(self, node: doc.expr) -> Any:
        return eval(self.compiled(node, "eval"), self.namespace())

    def compiled(self, node: doc.expr, mode: str) -> CodeType:
        """Code for ``node`` (``eval``) or for ``node = __tvms_rhs__`` (``exec``), cached."""
        source = self.ctx.source
        cache = _code_cache.setdefault(source, {})
        code = cache.get((node, mode))
        if code is not None:
            return code
        self.check_attributes(node)
        tree: ast.mod
        if mode == "eval":
            tree = ast.Expression(to_ast(node, byte_col=source.byte_col))
        else:
            target = to_ast(node, store=True, byte_col=source.byte_col)
            rhs = ast.copy_location(ast.Name(id=_RHS, ctx=ast.Load()), target)
            assign = ast.copy_location(ast.Assign(targets=[target], value=rhs), target)
            tree = ast.Module(body=[assign], type_ignores=[])
        tree = attributes.route_attribute_loads(tree)  # rule 3, checked when the code runs
        code = compile(ast.fix_missing_locations(tree), source.filename, mode)
        cache[node, mode] = code
        return code

    def namespace(self) -> dict[str, Any]:
        captured = self.ctx.captured
        visible_builtins = {
            k: self.builtin(k) for k in self.ctx.builtins if k not in captured.refused
        }
        namespace: dict[str, Any] = {"__builtins__": visible_builtins}
        namespace.update(captured.values)
        namespace.update(self.ctx.extra_names)
        namespace.update(self.ctx.var_table.get())
        namespace.update(self.extra)
        namespace[_MARKER] = True
        namespace[attributes.GETATTR_NAME] = attributes.bound_getattr(self.namespaces)
        return namespace

    # ------------------------------------------------------------------- errors

    def wrap(self, err: Exception, node: doc.AST) -> DiagnosticError:
        """``err`` as a diagnostic at ``node``, or deeper inside code we compiled."""
        node_span = self.ctx.source.span(node)
        host = failing_host_frame(err.__traceback__, _MARKER)
        if host is not None:
            # A captured Python helper failed: the call in the kernel, then the helper's line.
            result = DiagnosticError(describe_exception(err), node_span, original=err)
            result.add_note(
                f"{type(err).__name__} raised here, in host function '{host.function}'",
                host.span,
            )
            return result
        span = self.locate_in_traceback(err.__traceback__) or _blamed_span(err) or node_span
        name = err.name if isinstance(err, NameError) else None
        refusal = self.ctx.captured.refusal(name) if name else None
        if refusal is not None:
            result = DiagnosticError(refusal, span, original=err)
        elif name and type(err) is NameError:
            result = self.undefined(name, span)
            result.original = err
        else:
            result = DiagnosticError(describe_exception(err), span, original=err)
        if not _within(span, node_span):
            result.add_note("raised while evaluating this expression", node_span)
        return result

    def locate_in_traceback(self, tb: TracebackType | None) -> Span | None:
        """Position of the innermost traceback entry that runs user code we compiled."""
        found: Span | None = None
        filename = self.ctx.source.filename
        while tb is not None:
            frame = tb.tb_frame
            if frame.f_globals.get(_MARKER) is True and frame.f_code.co_filename == filename:
                found = self.instruction_span(frame.f_code, tb.tb_lasti) or found
            tb = tb.tb_next
        return found

    def instruction_span(self, code: CodeType, lasti: int) -> Span | None:
        co_positions = getattr(code, "co_positions", None)  # Python 3.11+
        if co_positions is None or lasti < 0:
            return None  # 3.10 records lines only; the node's own span is more precise
        positions = list(co_positions())
        if lasti // 2 >= len(positions):
            return None
        line, end_line, col, end_col = positions[lasti // 2]
        if line is None or end_line is None or col is None or end_col is None:
            return None
        source = self.ctx.source
        return Span(
            source.filename,
            line,
            source.char_col(line, col),
            end_line,
            source.char_col(end_line, end_col),
        )

    def undefined(self, name: str, span: Span) -> DiagnosticError:
        error = DiagnosticError(f"name '{name}' is not defined", span)
        known = [*self.namespace(), *self.ctx.builtins]
        candidates = [k for k in known if not k.startswith("__")]
        close = difflib.get_close_matches(name, candidates, n=1, cutoff=0.75)
        if close:
            error.add_note(f"did you mean '{close[0]}'?")
        return error


def _within(inner: Span, outer: Span) -> bool:
    return (outer.line, outer.col) <= (inner.line, inner.col) and (
        inner.end_line,
        inner.end_col,
    ) <= (outer.end_line, outer.end_col)
