"""Handler registry keyed by ``(dialect token, doc node class name)``.

A dialect registers free functions ``handler(parser, node)``::

    @dispatch.register(token="tir", type_name="For")
    def visit_for(parser: Parser, node: doc.For) -> None: ...

and the :class:`~tvmscript.parser.core.parser.Parser` looks them up by the token on top
of its dispatch-token stack.  Lookup order for a node of class ``K`` under token ``t``:

1. ``(t, K)``, then ``("default", K)`` -- handlers shared by every dialect;
2. ``(t, "*")``, then ``("default", "*")`` -- a dialect's catch-all for nodes nobody
   handles (the parser's own fallback reports ``unsupported syntax: K``).

Two more names are hooks, not node classes: ``"enter_token"`` and ``"exit_token"``
handlers are called as ``hook(parser)`` when the token is pushed and popped.

:func:`register` returns the function unchanged (so handlers stay testable by name),
rejects a second handler for the same key, and rejects names that are not ``doc``
node classes, which catches ``"for"``-instead-of-``"For"`` typos at import time.

The optional operator table (:func:`register_op`) lets a dialect define an operator for
operand types that do not overload it themselves; the evaluator consults it before
falling back to Python's own operator semantics.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from . import doc

__all__ = [
    "ANY_NODE",
    "DEFAULT_TOKEN",
    "ENTER_TOKEN",
    "EXIT_TOKEN",
    "DispatchTable",
    "Handler",
    "OpHandler",
    "TABLE",
    "get",
    "get_op",
    "register",
    "register_op",
    "unregister",
]

Handler = Callable[..., Any]
"""``handler(parser, node) -> result``; token hooks are called as ``hook(parser)``."""
OpHandler = Callable[..., Any]
"""``op(*operands) -> result`` (one operand for unary operators, two otherwise)."""

DEFAULT_TOKEN = "default"
"""Token whose handlers apply to every dialect without its own."""
ANY_NODE = "*"
"""Type name of a catch-all handler for node classes without a specific handler."""
ENTER_TOKEN = "enter_token"
"""Type name of the hook run when a token is pushed."""
EXIT_TOKEN = "exit_token"
"""Type name of the hook run when a token is popped."""

_H = TypeVar("_H", bound=Callable[..., Any])
_HOOK_NAMES = frozenset({ANY_NODE, ENTER_TOKEN, EXIT_TOKEN})


class DispatchTable:
    """One registry of node handlers and operator overloads (the module keeps a global one)."""

    def __init__(self) -> None:
        self._handlers: dict[tuple[str, str], Handler] = {}
        self._ops: dict[tuple[type, str, int], OpHandler] = {}

    def register(self, token: str, type_name: str) -> Callable[[_H], _H]:
        """Decorator registering a handler for ``(token, type_name)``; returns it unchanged."""
        if type_name not in doc.NODE_CLASSES and type_name not in _HOOK_NAMES:
            raise ValueError(
                f"cannot register a handler for {type_name!r}: not a doc node class name "
                f"(or one of {sorted(_HOOK_NAMES)})"
            )

        def decorate(handler: _H) -> _H:
            key = (token, type_name)
            existing = self._handlers.get(key)
            if existing is not None:
                raise ValueError(
                    f"a handler for ({token!r}, {type_name!r}) is already registered: "
                    f"{_describe(existing)}; cannot also register {_describe(handler)}"
                )
            self._handlers[key] = handler
            return handler

        return decorate

    def unregister(self, token: str, type_name: str) -> None:
        """Remove the handler for ``(token, type_name)`` (for tests and reloading)."""
        self._handlers.pop((token, type_name), None)

    def get(self, token: str, type_name: str, *, fallback: bool = True) -> Handler | None:
        """The handler for ``type_name`` under ``token``, falling back to ``"default"``.

        Only exact entries are returned; the ``"*"`` catch-alls are looked up by
        :meth:`get_fallback` so that a node with a default-token handler never reaches a
        dialect's catch-all.  ``fallback=False`` skips the ``"default"`` token (token
        hooks belong to their own token only).
        """
        found = self._handlers.get((token, type_name))
        if found is None and fallback:
            found = self._handlers.get((DEFAULT_TOKEN, type_name))
        return found

    def get_fallback(self, token: str) -> Handler | None:
        """The catch-all (``"*"``) handler of ``token`` or, failing that, of ``"default"``."""
        return self.get(token, ANY_NODE)

    def register_op(self, operand_type: type, op: str, operand_index: int) -> Callable[[_H], _H]:
        """Decorator registering ``op`` (a doc operator class name such as ``"Add"``).

        The handler applies when the operand at ``operand_index`` (0 = left) is an
        instance of ``operand_type`` (its MRO is searched); it receives all operands.
        """
        if op not in doc.SYMBOLS:
            raise ValueError(f"unknown operator {op!r}; expected one of {sorted(doc.SYMBOLS)}")

        def decorate(handler: _H) -> _H:
            key = (operand_type, op, operand_index)
            if key in self._ops:
                raise ValueError(
                    f"operator {op} for operand {operand_index} of type "
                    f"{operand_type.__name__} is already registered"
                )
            self._ops[key] = handler
            return handler

        return decorate

    def get_op(self, operand_type: type, op: str, operand_index: int) -> OpHandler | None:
        """The registered overload for an operand of ``operand_type``, searching its MRO."""
        if not self._ops:
            return None
        for cls in operand_type.__mro__:
            found = self._ops.get((cls, op, operand_index))
            if found is not None:
                return found
        return None


def _describe(handler: Callable[..., Any]) -> str:
    module = getattr(handler, "__module__", "?")
    return f"{module}.{getattr(handler, '__qualname__', repr(handler))}"


TABLE = DispatchTable()
"""The global table that :func:`register` fills and parsers use by default."""


def register(token: str, type_name: str) -> Callable[[_H], _H]:
    """Register a handler in the global table (see :meth:`DispatchTable.register`)."""
    return TABLE.register(token, type_name)


def unregister(token: str, type_name: str) -> None:
    """Remove a handler from the global table."""
    TABLE.unregister(token, type_name)


def get(token: str, type_name: str) -> Handler | None:
    """Look up a handler in the global table, with the ``"default"`` token fallback."""
    return TABLE.get(token, type_name)


def register_op(operand_type: type, op: str, operand_index: int) -> Callable[[_H], _H]:
    """Register an operator overload in the global table."""
    return TABLE.register_op(operand_type, op, operand_index)


def get_op(operand_type: type, op: str, operand_index: int) -> OpHandler | None:
    """Look up an operator overload in the global table."""
    return TABLE.get_op(operand_type, op, operand_index)
