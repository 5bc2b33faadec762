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
import sys
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
    "room_for_deep_ir",
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

# What visit_value/mutate_value do with a value, decided once per class (the chain of
# isinstance tests ran for every field of every node, most often for non-IR fields).
_EXPR, _TUPLE, _STMT, _RANGE, _ITER_VAR, _REGION, _MATCH, _BUFFER, _OTHER = range(9)
_VALUE_KINDS: dict[type, int] = {}


def _value_kind(cls: type) -> int:
    kind = _OTHER
    for base, value_kind in (
        (PrimExpr, _EXPR),
        (tuple, _TUPLE),
        (Range, _RANGE),
        (IterVar, _ITER_VAR),
        (BufferRegion, _REGION),
        (MatchBufferRegion, _MATCH),
        (Buffer, _BUFFER),
        (Stmt, _STMT),
    ):
        if issubclass(cls, base):
            kind = value_kind
            break
    _VALUE_KINDS[cls] = kind
    return kind


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
        kind = _VALUE_KINDS.get(type(value))
        if kind is None:
            kind = _value_kind(type(value))
        if kind == _EXPR:
            self.visit_expr(value)
        elif kind == _TUPLE:
            for item in value:
                self.visit_value(item)
        elif kind == _STMT:
            self.visit_stmt(value)
        elif kind == _RANGE:
            self.visit_expr(value.min)
            self.visit_expr(value.extent)
        elif kind == _ITER_VAR:
            self.visit_iter_var(value)
        elif kind == _REGION:
            self.visit_buffer_region(value)
        elif kind == _MATCH:
            self.visit_buffer_region(value.source)
        elif kind == _BUFFER:
            self.visit_buffer(value)

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
        kind = _VALUE_KINDS.get(type(value))
        if kind is None:
            kind = _value_kind(type(value))
        if kind == _EXPR:
            return self.visit_expr(value)
        if kind == _TUPLE:
            items = [self.mutate_value(item) for item in value]
            if all(a is b for a, b in zip(items, value)):
                return value
            return tuple(items)
        if kind == _STMT:
            return self.visit_stmt(value)
        if kind == _RANGE or kind == _MATCH:
            return self.generic_mutate(value)
        if kind == _ITER_VAR:
            return self.visit_iter_var(value)
        if kind == _REGION:
            return self.visit_buffer_region(value)
        if kind == _BUFFER:
            return self.visit_buffer(value)
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



DEEP_IR_RECURSION_LIMIT = 10_000
"""Python's recursion limit while IR is lowered, compiled or interpreted. The walkers here
(and the interpreter) recurse, three to five frames per level of nesting, and programs nest
deeply (each ``x = ...`` binding nests the rest of the body; the row lanes of cosine rows
bind every row's elements: 323 levels): the default limit of 1000 stopped such programs
with a RecursionError inside a pass. 10,000 frames stay well inside an 8 MiB thread
stack."""


def room_for_deep_ir() -> None:
    """Raise the process' recursion limit to :data:`DEEP_IR_RECURSION_LIMIT` (never lower
    it). It stays raised: the limit is one for all threads, and a build on another thread
    may be walking its IR."""
    if sys.getrecursionlimit() < DEEP_IR_RECURSION_LIMIT:
        sys.setrecursionlimit(DEEP_IR_RECURSION_LIMIT)
