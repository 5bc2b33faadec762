"""Visitors and mutators over expressions and statements.

Dispatch is by node class: a subclass overrides ``visit_<snake_name>_`` (for
example ``visit_add_``, ``visit_buffer_load_``, ``visit_for_``) and calls the
``generic_*`` method to recurse. The default traversal walks the dataclass
fields of each node, so the field list is the single schema.

Definition sites (loop vars, let vars, allocated data vars, iter vars) are not
visited as expressions, and Buffers are not entered: their shapes are
declarations, not uses. Mutators return the very same object when nothing
below changed, so ``new is old`` tells whether a pass did anything.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

from .buffer import Buffer, BufferRegion, IterVar, MatchBufferRegion, Range
from .expr import PrimExpr
from .function import PrimFunc
from .stmt import Stmt

__all__ = [
    "DEFINITION_FIELDS",
    "ExprMutator",
    "ExprVisitor",
    "StmtExprMutator",
    "StmtExprVisitor",
    "StmtMutator",
    "StmtVisitor",
    "child_fields",
    "method_name",
    "post_order_visit",
    "rebuild",
]

DEFINITION_FIELDS: dict[str, frozenset[str]] = {
    "For": frozenset({"loop_var"}),
    "LetStmt": frozenset({"var"}),
    "Let": frozenset({"var"}),
    "Allocate": frozenset({"buffer_var"}),
    "IterVar": frozenset({"var"}),
}

"""Node fields (by class name) that define a variable rather than use it."""

_FIELD_CACHE: dict[type, tuple[str, ...]] = {}
_NAME_CACHE: dict[type, str] = {}
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def method_name(cls: type) -> str:
    """``visit_<snake>_`` for a node class (``BufferLoad`` -> ``visit_buffer_load_``)."""
    name = _NAME_CACHE.get(cls)
    if name is None:
        name = "visit_" + _CAMEL.sub("_", cls.__name__).lower() + "_"
        _NAME_CACHE[cls] = name
    return name


def child_fields(cls: type) -> tuple[str, ...]:
    """The constructor fields of a node class that may hold IR (all but ``span``)."""
    names = _FIELD_CACHE.get(cls)
    if names is None:
        defs = DEFINITION_FIELDS.get(cls.__name__, frozenset())
        names = tuple(
            f.name
            for f in dataclasses.fields(cls)
            if f.init and f.name != "span" and f.name not in defs
        )
        _FIELD_CACHE[cls] = names
    return names


def rebuild(node: Any, changes: dict[str, Any]) -> Any:
    """A copy of ``node`` with ``changes`` applied (derived fields recomputed)."""
    if not changes:
        return node
    kwargs = {f.name: getattr(node, f.name) for f in dataclasses.fields(node) if f.init}
    kwargs.update(changes)
    return type(node)(**kwargs)


_NodeT = TypeVar("_NodeT")


class _Dispatch:
    """Per-class cache from node class to the bound handler name."""

    _handlers: ClassVar[dict[tuple[type, type], str | None]] = {}

    def _handler(self, node: object) -> Callable[[Any], Any] | None:
        key = (type(self), type(node))
        name = _Dispatch._handlers.get(key, "")
        if name == "":
            candidate = None
            for klass in type(node).__mro__:
                attr = method_name(klass)
                if hasattr(type(self), attr):
                    candidate = attr
                    break
            _Dispatch._handlers[key] = candidate
            name = candidate
        return None if name is None else getattr(self, name)


class ExprVisitor(_Dispatch):
    """Walks expressions; override ``visit_<node>_`` methods."""

    def visit_expr(self, expr: PrimExpr) -> None:
        handler = self._handler(expr)
        if handler is None:
            self.generic_visit(expr)
        else:
            handler(expr)

    def generic_visit(self, node: Any) -> None:
        """Visit every IR child of ``node``."""
        for name in child_fields(type(node)):
            self.visit_value(getattr(node, name))

    def visit_value(self, value: Any) -> None:
        """Visit any IR value: expressions, statements, tuples, ranges, regions."""
        if isinstance(value, PrimExpr):
            self.visit_expr(value)
        elif isinstance(value, tuple):
            for item in value:
                self.visit_value(item)
        elif isinstance(value, Range):
            self.visit_expr(value.min)
            self.visit_expr(value.extent)
        elif isinstance(value, IterVar):
            self.visit_iter_var(value)
        elif isinstance(value, BufferRegion):
            self.visit_buffer_region(value)
        elif isinstance(value, MatchBufferRegion):
            self.visit_buffer_region(value.source)
        elif isinstance(value, Buffer):
            self.visit_buffer(value)
        elif isinstance(value, Stmt):
            self.visit_stmt(value)

    def visit_stmt(self, stmt: Stmt) -> None:
        """Expression visitors ignore statements; see :class:`StmtExprVisitor`."""

    def visit_iter_var(self, iter_var: IterVar) -> None:
        self.visit_value(iter_var.dom)

    def visit_buffer_region(self, region: BufferRegion) -> None:
        for rng in region.region:
            self.visit_value(rng)

    def visit_buffer(self, buffer: Buffer) -> None:
        """Called where a buffer is used or declared; default does nothing."""


class StmtExprVisitor(ExprVisitor):
    """Walks statements and the expressions inside them."""

    def visit_stmt(self, stmt: Stmt) -> None:
        handler = self._handler(stmt)
        if handler is None:
            self.generic_visit(stmt)
        else:
            handler(stmt)

    def visit_func(self, func: PrimFunc) -> None:
        self.visit_stmt(func.body)


StmtVisitor = StmtExprVisitor


class ExprMutator(_Dispatch):
    """Rewrites expressions bottom-up; unchanged subtrees are returned as is."""

    def visit_expr(self, expr: PrimExpr) -> PrimExpr:
        handler = self._handler(expr)
        if handler is None:
            return self.generic_mutate(expr)
        return handler(expr)  # type: ignore[no-any-return]

    def generic_mutate(self, node: _NodeT) -> _NodeT:
        """Mutate every IR child and rebuild ``node`` only if one changed."""
        changes: dict[str, Any] = {}
        for name in child_fields(type(node)):
            old = getattr(node, name)
            new = self.mutate_value(old)
            if new is not old:
                changes[name] = new
        return rebuild(node, changes)  # type: ignore[no-any-return]

    def mutate_value(self, value: Any) -> Any:
        """Mutate any IR value; containers are rebuilt only when an item changed."""
        if isinstance(value, PrimExpr):
            return self.visit_expr(value)
        if isinstance(value, tuple):
            items = [self.mutate_value(item) for item in value]
            if all(a is b for a, b in zip(items, value)):
                return value
            return tuple(items)
        if isinstance(value, Range):
            return self.generic_mutate(value)
        if isinstance(value, IterVar):
            return self.visit_iter_var(value)
        if isinstance(value, BufferRegion):
            return self.visit_buffer_region(value)
        if isinstance(value, MatchBufferRegion):
            return self.generic_mutate(value)
        if isinstance(value, Buffer):
            return self.visit_buffer(value)
        if isinstance(value, Stmt):
            return self.visit_stmt(value)
        return value

    def visit_stmt(self, stmt: Stmt) -> Stmt:
        """Expression mutators leave statements alone; see :class:`StmtExprMutator`."""
        return stmt

    def visit_iter_var(self, iter_var: IterVar) -> IterVar:
        return self.generic_mutate(iter_var)

    def visit_buffer_region(self, region: BufferRegion) -> BufferRegion:
        return self.generic_mutate(region)

    def visit_buffer(self, buffer: Buffer) -> Buffer:
        """Called for every buffer reference; return a replacement to remap it."""
        return buffer


class StmtExprMutator(ExprMutator):
    """Rewrites statements and the expressions inside them."""

    def visit_stmt(self, stmt: Stmt) -> Stmt:
        handler = self._handler(stmt)
        if handler is None:
            return self.generic_mutate(stmt)
        return handler(stmt)  # type: ignore[no-any-return]

    def visit_func(self, func: PrimFunc) -> PrimFunc:
        body = self.visit_stmt(func.body)
        return func if body is func.body else func.with_body(body)


StmtMutator = StmtExprMutator


class _PostOrder(StmtExprVisitor):
    def __init__(self, callback: Callable[[Any], None]) -> None:
        self.callback = callback

    def visit_expr(self, expr: PrimExpr) -> None:
        self.generic_visit(expr)
        self.callback(expr)

    def visit_stmt(self, stmt: Stmt) -> None:
        self.generic_visit(stmt)
        self.callback(stmt)


def post_order_visit(node: Stmt | PrimExpr, callback: Callable[[Any], None]) -> None:
    """Call ``callback`` on every expression and statement below ``node``, children first."""
    visitor = _PostOrder(callback)
    if isinstance(node, Stmt):
        visitor.visit_stmt(node)
    else:
        visitor.visit_expr(node)
