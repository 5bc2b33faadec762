"""Expression nodes of the :mod:`~tvmscript.parser.core.doc` mirror, with their helpers.

Split from :mod:`doc` only to keep modules short; import nodes through ``doc``.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

from typing_extensions import dataclass_transform

__all__ = [
    "Add",
    "And",
    "arg",
    "arguments",
    "AST",
    "Attribute",
    "Await",
    "BinOp",
    "BitAnd",
    "BitOr",
    "BitXor",
    "BoolOp",
    "boolop",
    "Call",
    "cmpop",
    "Compare",
    "comprehension",
    "Constant",
    "Dict",
    "DictComp",
    "Div",
    "Eq",
    "expr",
    "FloorDiv",
    "FormattedValue",
    "GeneratorExp",
    "Gt",
    "GtE",
    "IfExp",
    "In",
    "Invert",
    "Is",
    "IsNot",
    "JoinedStr",
    "keyword",
    "Lambda",
    "List",
    "ListComp",
    "LShift",
    "Lt",
    "LtE",
    "MatMult",
    "Mod",
    "Mult",
    "Name",
    "NamedExpr",
    "Not",
    "NotEq",
    "NotIn",
    "operator",
    "Or",
    "Pow",
    "RShift",
    "Set",
    "SetComp",
    "Slice",
    "Starred",
    "Sub",
    "Subscript",
    "SYMBOLS",
    "Tuple",
    "UAdd",
    "unaryop",
    "UnaryOp",
    "USub",
    "Yield",
    "YieldFrom",
]

_N = TypeVar("_N")


_REQUIRED: Any = object()  # the default of a field that has none


@dataclass_transform(eq_default=False, kw_only_default=True, frozen_default=True)
def _node(cls: type[_N]) -> type[_N]:
    """Make ``cls`` a node class: its annotated attributes become keyword-only, frozen
    fields stored in slots, after the inherited ones.

    Frozen and keyword-only, compared by identity: nodes are values handlers must not
    mutate, yet two textually equal sub-trees are still different source locations. Not
    ``dataclasses.dataclass``: it generates and compiles every method of every class, about
    0.3 ms a class, 20 ms of ``import tvmscript`` for the 76 node classes. These record
    their fields (``_node_spec``) and share :class:`_NodeBase`'s methods; a class's
    ``__init__`` is compiled the first time the class is instantiated (a parse uses a few
    dozen of the classes)."""
    namespace = dict(cls.__dict__)
    spec = dict(getattr(cls, "_node_spec", ()))
    inherited = set(spec)
    for name in namespace.get("__annotations__", {}):
        spec[name] = namespace.pop(name, _REQUIRED)
    namespace["__slots__"] = tuple(name for name in spec if name not in inherited)
    namespace["_node_spec"] = tuple(spec.items())
    namespace["__init__"] = _first_init  # its own, so that a subclass never runs a base's
    namespace.pop("__dict__", None)
    namespace.pop("__weakref__", None)
    node = type(cls.__name__, cls.__bases__, namespace)
    node.__qualname__ = cls.__qualname__
    return node


def _first_init(self: _NodeBase, **fields: Any) -> None:
    cls = type(self)
    init = _compiled_init(cls)
    cls.__init__ = init  # type: ignore[method-assign]
    init(self, **fields)


def _compiled_init(cls: type[_NodeBase]) -> Any:
    """``__init__(self, *, <field>=<default>, ...)`` storing each field (keyword-only;
    a field without a default is a required keyword)."""
    scope: dict[str, Any] = {"_store": object.__setattr__}
    params, stores = [], []
    for index, (name, default) in enumerate(cls._node_spec):
        if default is _REQUIRED:
            params.append(name)
        else:
            scope[f"_default{index}"] = default
            params.append(f"{name}=_default{index}")
        stores.append(f"    _store(self, {name!r}, {name})\n")
    signature = f"self, *, {', '.join(params)}" if params else "self"
    exec(f"def __init__({signature}):\n{''.join(stores) or '    pass'}\n", scope)
    init = scope["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    return init


class _NodeBase:
    """The methods every node class shares (see :func:`_node`)."""

    __slots__ = ()
    _node_spec: tuple[tuple[str, Any], ...] = ()

    def __setattr__(self, name: str, value: Any) -> None:
        raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")

    def __getstate__(self) -> list[Any]:
        # copy and pickle (the frozen __setattr__ refuses their default restore)
        return [getattr(self, name) for name, _ in self._node_spec]

    def __setstate__(self, state: list[Any]) -> None:
        for (name, _), value in zip(self._node_spec, state):
            object.__setattr__(self, name, value)

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name, _ in self._node_spec)
        return f"{type(self).__qualname__}({shown})"


@_node
class AST(_NodeBase):
    """Base of every node: absolute 1-based positions, ``end_col`` exclusive."""

    line: int = 0
    col: int = 0
    end_line: int = 0
    end_col: int = 0


@_node
class expr(AST):
    """Base of expressions."""


@_node
class operator(AST):
    """Base of binary operators (``+``, ``-``, ...); located at the operator token."""


@_node
class boolop(AST):
    """Base of ``and``/``or``."""


@_node
class unaryop(AST):
    """Base of unary operators."""


@_node
class cmpop(AST):
    """Base of comparison operators."""


@_node
class arg(AST):
    """One parameter: its name and optional annotation."""

    arg: str
    annotation: expr | None = None


@_node
class arguments(AST):
    """A parameter list; ``kw_defaults`` holds ``None`` for keyword-only args without one."""

    posonlyargs: tuple[arg, ...] = ()
    args: tuple[arg, ...] = ()
    vararg: arg | None = None
    kwonlyargs: tuple[arg, ...] = ()
    kw_defaults: tuple[expr | None, ...] = ()
    kwarg: arg | None = None
    defaults: tuple[expr, ...] = ()


@_node
class keyword(AST):
    """A keyword argument ``name=value``; ``arg`` is ``None`` for ``**value``."""

    arg: str | None
    value: expr


@_node
class comprehension(AST):
    """``for target in iter if ...`` inside a comprehension."""

    target: expr
    iter: expr
    ifs: tuple[expr, ...] = ()
    is_async: int = 0


@_node
class BoolOp(expr):
    """``v1 and v2 and ...`` (or ``or``): one operator, two or more values."""

    op: boolop
    values: tuple[expr, ...]


@_node
class NamedExpr(expr):
    """``target := value``."""

    target: expr
    value: expr


@_node
class BinOp(expr):
    """``left op right``."""

    left: expr
    op: operator
    right: expr


@_node
class UnaryOp(expr):
    """``op operand``."""

    op: unaryop
    operand: expr


@_node
class Lambda(expr):
    """``lambda args: body``."""

    args: arguments
    body: expr


@_node
class IfExp(expr):
    """``body if test else orelse``."""

    test: expr
    body: expr
    orelse: expr


@_node
class Dict(expr):
    """``{k: v, **m}``; a ``None`` key marks ``**value``."""

    keys: tuple[expr | None, ...]
    values: tuple[expr, ...]


@_node
class Set(expr):
    """``{a, b}``."""

    elts: tuple[expr, ...]


@_node
class ListComp(expr):
    """``[elt for ...]``."""

    elt: expr
    generators: tuple[comprehension, ...]


@_node
class SetComp(expr):
    """``{elt for ...}``."""

    elt: expr
    generators: tuple[comprehension, ...]


@_node
class DictComp(expr):
    """``{key: value for ...}``."""

    key: expr
    value: expr
    generators: tuple[comprehension, ...]


@_node
class GeneratorExp(expr):
    """``(elt for ...)``."""

    elt: expr
    generators: tuple[comprehension, ...]


@_node
class Await(expr):
    """``await value``."""

    value: expr


@_node
class Yield(expr):
    """``yield value``."""

    value: expr | None = None


@_node
class YieldFrom(expr):
    """``yield from value``."""

    value: expr


@_node
class Compare(expr):
    """``left op1 c1 op2 c2 ...`` (a chain: ``len(ops) == len(comparators)``)."""

    left: expr
    ops: tuple[cmpop, ...]
    comparators: tuple[expr, ...]


@_node
class Call(expr):
    """``func(args, keywords)``; ``*x`` arguments are :class:`Starred` in ``args``."""

    func: expr
    args: tuple[expr, ...] = ()
    keywords: tuple[keyword, ...] = ()


@_node
class FormattedValue(expr):
    """``{value!conversion:format_spec}`` inside an f-string; conversion -1 means none."""

    value: expr
    conversion: int = -1
    format_spec: expr | None = None


@_node
class JoinedStr(expr):
    """An f-string: :class:`Constant` parts and :class:`FormattedValue` parts."""

    values: tuple[expr, ...]


@_node
class Constant(expr):
    """A literal: ``None``, bool, int, float, complex, str, bytes or ``...``."""

    value: Any


@_node
class Attribute(expr):
    """``value.attr``."""

    value: expr
    attr: str


@_node
class Subscript(expr):
    """``value[slice]``; ``A[i, j]`` has a :class:`Tuple` slice, ``A[*i]`` a starred one."""

    value: expr
    slice: expr


@_node
class Starred(expr):
    """``*value``."""

    value: expr


@_node
class Name(expr):
    """A name (load or store, the context is not recorded)."""

    id: str


@_node
class List(expr):
    """``[a, b]``."""

    elts: tuple[expr, ...]


@_node
class Tuple(expr):
    """``(a, b)`` or ``a, b``."""

    elts: tuple[expr, ...]


@_node
class Slice(expr):
    """``lower:upper:step``, only inside a subscript."""

    lower: expr | None = None
    upper: expr | None = None
    step: expr | None = None


# Operators carry no fields, only the position of their token.


class And(boolop):
    """``and``"""


class Or(boolop):
    """``or``"""


class Add(operator):
    """``+``"""


class Sub(operator):
    """``-``"""


class Mult(operator):
    """``*``"""


class MatMult(operator):
    """``@``"""


class Div(operator):
    """``/``"""


class Mod(operator):
    """``%``"""


class Pow(operator):
    """``**``"""


class LShift(operator):
    """``<<``"""


class RShift(operator):
    """``>>``"""


class BitOr(operator):
    """``|``"""


class BitXor(operator):
    """``^``"""


class BitAnd(operator):
    """``&``"""


class FloorDiv(operator):
    """``//``"""


class Invert(unaryop):
    """``~``"""


class Not(unaryop):
    """``not``"""


class UAdd(unaryop):
    """``+``"""


class USub(unaryop):
    """``-``"""


class Eq(cmpop):
    """``==``"""


class NotEq(cmpop):
    """``!=``"""


class Lt(cmpop):
    """``<``"""


class LtE(cmpop):
    """``<=``"""


class Gt(cmpop):
    """``>``"""


class GtE(cmpop):
    """``>=``"""


class Is(cmpop):
    """``is``"""


class IsNot(cmpop):
    """``is not``"""


class In(cmpop):
    """``in``"""


class NotIn(cmpop):
    """``not in``"""


SYMBOLS: dict[str, str] = {
    "And": "and",
    "Or": "or",
    "Add": "+",
    "Sub": "-",
    "Mult": "*",
    "MatMult": "@",
    "Div": "/",
    "Mod": "%",
    "Pow": "**",
    "LShift": "<<",
    "RShift": ">>",
    "BitOr": "|",
    "BitXor": "^",
    "BitAnd": "&",
    "FloorDiv": "//",
    "Invert": "~",
    "Not": "not",
    "UAdd": "+",
    "USub": "-",
    "Eq": "==",
    "NotEq": "!=",
    "Lt": "<",
    "LtE": "<=",
    "Gt": ">",
    "GtE": ">=",
    "Is": "is",
    "IsNot": "is not",
    "In": "in",
    "NotIn": "not in",
}
"""Python spelling of every operator class, by class name (``"Add"`` -> ``"+"``)."""
