"""Which attributes parse-time evaluation may read or write (docs/eval-scope.md).

Names give a kernel exactly what its author made visible (the evaluator's namespace);
this module closes the other road, attribute walking (``().__class__.__base__
.__subclasses__()``, ``T.builtins.open``).  The rules, applied to every attribute in
code the parser evaluates -- ``a.b`` in an expression, an assignment target, a lambda
or comprehension, and the builtins ``getattr``/``hasattr``:

1. a **dunder** name (``__x__``) is refused, whatever the object;
2. a **frame or code introspection** name (:data:`INTROSPECTION_ATTRIBUTES`:
   ``gi_frame``, ``f_globals``, ``tb_frame``, ...) is refused, whatever the object;
3. on a **built-in namespace** of the parser (the ``T``/``I`` modules it injects), a
   private name (``_x``) is refused, and so is any attribute whose value is a module
   (``T.builtins`` is Python's ``builtins``, an import of ``tvmscript.tir``);
4. an attribute **assignment** whose object is a module is refused (a kernel must not
   patch ``T`` or a captured module).

Objects the user captured keep their public attributes: capturing ``np`` makes
``np.random`` reachable, by the author's choice.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Callable, Collection
from types import ModuleType
from typing import Any, TypeVar

from . import doc

_T = TypeVar("_T", bound=ast.AST)

__all__ = [
    "INTROSPECTION_ATTRIBUTES",
    "ForbiddenAttributeError",
    "GETATTR_NAME",
    "bound_getattr",
    "bound_hasattr",
    "checked_getattr",
    "checked_hasattr",
    "first_refused",
    "first_refused_node",
    "is_dunder",
    "refusal",
    "route_attribute_loads",
    "text_may_refuse",
    "value_refusal",
]

INTROSPECTION_ATTRIBUTES = frozenset(
    {
        "gi_frame", "gi_code", "gi_yieldfrom", "cr_frame", "cr_code", "cr_await",
        "ag_frame", "ag_code", "ag_await", "f_back", "f_globals", "f_locals",
        "f_builtins", "f_code", "tb_frame", "tb_next",
    }
)  # fmt: skip
"""Attribute names that lead from a generator, coroutine, frame or traceback to
interpreter frames (and through them to unrestricted globals and builtins)."""

_DOC = "see docs/eval-scope.md"


class ForbiddenAttributeError(Exception):
    """An attribute that parse-time evaluation refuses to read or write."""


def is_dunder(name: str) -> bool:
    """Whether ``name`` has the ``__x__`` form of Python's special attributes."""
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def refusal(name: str) -> str | None:
    """Why the attribute ``name`` is refused on any object (rules 1-2), or None."""
    if is_dunder(name):
        return (
            f"attribute '{name}' is not accessible in TVMScript: dunder attributes "
            f"(__x__) are refused ({_DOC})"
        )
    if name in INTROSPECTION_ATTRIBUTES:
        return (
            f"attribute '{name}' is not accessible in TVMScript: frame and code "
            f"introspection is refused ({_DOC})"
        )
    return None


def value_refusal(
    obj: Any, name: str, namespaces: Collection[ModuleType], value: Any = None
) -> str | None:
    """Why reading ``obj.name`` (whose value is ``value``) is refused by rule 3, or None.

    ``namespaces`` are the parser's built-in namespace modules (compared by identity).
    """
    if not any(obj is ns for ns in namespaces):
        return None
    label = getattr(obj, "__name__", "namespace")
    if name.startswith("_"):
        return f"'{name}' is a private name of {label}, not part of the TVMScript namespace"
    if isinstance(value, ModuleType):
        return (
            f"'{label}.{name}' is the module {value.__name__!r}, not part of the TVMScript "
            f"namespace ({_DOC})"
        )
    return None


def checked_getattr(
    obj: Any, name: str, *default: Any, namespaces: Collection[ModuleType] = ()
) -> Any:
    """``getattr(obj, name[, default])`` under the rules above (refusals always raise)."""
    why = refusal(name) if isinstance(name, str) else None
    if why is None and isinstance(name, str) and any(obj is ns for ns in namespaces):
        why = value_refusal(obj, name, namespaces)
        if why is None:
            value = builtins.getattr(obj, name, *default)
            why = value_refusal(obj, name, namespaces, value)
            if why is None:
                return value
    if why is not None:
        raise ForbiddenAttributeError(why)
    return builtins.getattr(obj, name, *default)


def checked_hasattr(obj: Any, name: str, *, namespaces: Collection[ModuleType] = ()) -> bool:
    """``hasattr(obj, name)`` under the rules above (a refused name raises)."""
    sentinel = object()
    return checked_getattr(obj, name, sentinel, namespaces=namespaces) is not sentinel


def bound_getattr(namespaces: Collection[ModuleType]) -> Callable[..., Any]:
    """``getattr`` for evaluated code, with rule 3 over ``namespaces``."""

    def getattr(obj: Any, name: str, *default: Any) -> Any:  # shadows the builtin on purpose
        return checked_getattr(obj, name, *default, namespaces=namespaces)

    return getattr


def bound_hasattr(namespaces: Collection[ModuleType]) -> Callable[[Any, str], bool]:
    """``hasattr`` for evaluated code, with rule 3 over ``namespaces``."""

    def hasattr(obj: Any, name: str) -> bool:  # shadows the builtin on purpose
        return checked_hasattr(obj, name, namespaces=namespaces)

    return hasattr


GETATTR_NAME = "__tvms_getattr__"
"""The global through which compiled user code (lambdas, comprehensions, macro
definitions) reads attributes: ``a.b`` is compiled as ``__tvms_getattr__(a, "b")``."""


def first_refused(tree: ast.AST) -> tuple[ast.Attribute, str] | None:
    """The first attribute under ``tree`` refused by rules 1-2, with the reason."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            why = refusal(node.attr)
            if why is not None:
                return node, why
    return None


def text_may_refuse(text: str) -> bool:
    """Whether ``text`` could hold an attribute refused by rules 1-2 (a superset test: any
    ``__`` or introspection name anywhere, comments included); when False, no attribute node
    parsed from it is refused and :func:`first_refused_node` need not walk its trees."""
    return "__" in text or any(name in text for name in INTROSPECTION_ATTRIBUTES)


def first_refused_node(tree: doc.AST) -> doc.Attribute | None:
    """The refused (rules 1-2) attribute under ``tree`` that ends first in the source."""
    refused = [
        node
        for node in doc.walk(tree)
        if isinstance(node, doc.Attribute) and refusal(node.attr) is not None
    ]
    return min(refused, key=lambda n: (n.end_line, n.end_col)) if refused else None


class _RouteAttributeLoads(ast.NodeTransformer):
    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        self.generic_visit(node)
        if not isinstance(node.ctx, ast.Load):
            return node
        func = ast.copy_location(ast.Name(id=GETATTR_NAME, ctx=ast.Load()), node)
        name = ast.copy_location(ast.Constant(node.attr), node)
        return ast.copy_location(ast.Call(func=func, args=[node.value, name], keywords=[]), node)


def route_attribute_loads(tree: _T) -> _T:
    """``tree`` with every attribute read turned into a ``__tvms_getattr__`` call (in place).

    The calls keep the attribute's position, so a refusal raised at run time (inside a
    lambda called later) is located at the attribute.
    """
    result = _RouteAttributeLoads().visit(tree)
    assert isinstance(result, type(tree))
    return result
