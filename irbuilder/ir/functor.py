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
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any, TypeVar, Union

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
    "ir_fields",
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
    cls = type(node)
    names = _INIT_FIELDS.get(cls)
    if names is None:
        names = tuple(f.name for f in dataclasses.fields(cls) if f.init)
        _INIT_FIELDS[cls] = names
    kwargs = {name: getattr(node, name) for name in names}
    kwargs.update(changes)
    return cls(**kwargs)


_INIT_FIELDS: dict[type, tuple[str, ...]] = {}
_IR_FIELDS: dict[type, tuple[str, ...]] = {}


def ir_fields(cls: type) -> tuple[str, ...]:
    """The :func:`child_fields` of a node class whose declared type admits IR the walkers
    enter: what :meth:`ExprVisitor.generic_visit` and :meth:`ExprMutator.generic_mutate`
    walk. A dtype, a name or a loop kind can hold nothing to visit, and visiting such fields
    was most of the walkers' work. A field whose annotation does not resolve counts as IR."""
    names = _IR_FIELDS.get(cls)
    if names is None:
        try:
            hints = typing.get_type_hints(cls, localns=_IR_NAMESPACE)
        except Exception:  # an annotation that does not resolve: walk every field
            hints = {}
        names = tuple(
            name
            for name in child_fields(cls)
            if name not in hints or _may_hold_ir(hints[name])
        )
        _IR_FIELDS[cls] = names
    return names


# Names the annotations of the IR nodes use that their modules import for type checking only.
_IR_NAMESPACE: dict[str, Any] = {
    "Buffer": Buffer,
    "BufferRegion": BufferRegion,
    "IterVar": IterVar,
    "MatchBufferRegion": MatchBufferRegion,
    "PrimExpr": PrimExpr,
    "Range": Range,
    "Stmt": Stmt,
}


def _may_hold_ir(annotation: Any) -> bool:
    """Whether a value of the declared type may be something :meth:`ExprVisitor.visit_value`
    enters (a value of a subclass of the declared class counts)."""
    if annotation is type(None):
        return False
    origin = typing.get_origin(annotation)
    if origin is None:
        if annotation is Any or not isinstance(annotation, type):
            return True  # anything (Any is a class from Python 3.11 on)
        return any(
            issubclass(annotation, entered) or issubclass(entered, annotation)
            for entered in _ENTERED_CLASSES
        )
    args = typing.get_args(annotation)
    if origin is Union or origin is types.UnionType:
        return any(_may_hold_ir(arg) for arg in args)
    if origin is tuple:
        return any(_may_hold_ir(arg) for arg in args if arg is not Ellipsis)
    if isinstance(origin, type) and issubclass(origin, Mapping) and not issubclass(origin, tuple):
        return False  # the walkers do not enter mappings (annotations)
    return True


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


_ENTERED_CLASSES = (PrimExpr, tuple, Range, IterVar, BufferRegion, MatchBufferRegion, Buffer, Stmt)
"""The classes :func:`_value_kind` tells apart: values of any other class are not entered."""


class _Dispatch:
    """Per-class cache from node class to the handler method's name (None: generic)."""

    _handler_names: dict[type, str | None] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._handler_names = {}  # each visitor class answers for its own methods

    def _find_handler(self, node_class: type) -> str | None:
        found = None
        for klass in node_class.__mro__:
            attr = method_name(klass)
            if hasattr(type(self), attr):
                found = attr
                break
        if found is None and issubclass(node_class, PrimExpr) and _ignores_expressions(type(self)):
            found = "_skip_expression"
        self._handler_names[node_class] = found
        return found

    def _skip_expression(self, expr: PrimExpr) -> Any:
        """What walking ``expr`` gives a walker that :func:`_ignores_expressions`."""
        raise NotImplementedError


# Whether a walker class ignores expressions, by class.
_IGNORES_EXPRESSIONS: dict[type, bool] = {}
# The hooks through which a walker could see (or change) something inside an expression.
_EXPRESSION_HOOKS = (
    "visit_expr",
    "generic_visit",
    "generic_mutate",
    "visit_value",
    "mutate_value",
    "visit_buffer",
    "visit_iter_var",
    "visit_buffer_region",
)


def _ignores_expressions(walker: type) -> bool:
    """Whether walking an expression can neither tell ``walker`` anything nor change the
    expression: it keeps the library's expression hooks and every ``visit_<node>_`` handler
    it has names a statement class. Walking expressions is then skipped (many passes
    handle statements only, and most of an IR's nodes are expressions)."""
    known = _IGNORES_EXPRESSIONS.get(walker)
    if known is not None:
        return known
    library = StmtExprMutator if issubclass(walker, ExprMutator) else StmtExprVisitor
    statement_handlers = {method_name(klass) for klass in _subclasses(Stmt)}
    ignores = all(
        getattr(walker, hook, None) is getattr(library, hook, None) for hook in _EXPRESSION_HOOKS
    ) and not any(
        name.startswith("visit_") and name.endswith("_") and name not in statement_handlers
        for name in dir(walker)
    )
    _IGNORES_EXPRESSIONS[walker] = ignores
    return ignores


def _subclasses(root: type) -> set[type]:
    """``root`` and every class derived from it so far."""
    found = {root}
    sub: type
    for sub in root.__subclasses__():
        found |= _subclasses(sub)
    return found


class ExprVisitor(_Dispatch):
    """Walks expressions; override ``visit_<node>_`` methods."""

    def visit_expr(self, expr: PrimExpr) -> None:
        name = self._handler_names.get(type(expr), "")
        if name == "":
            name = self._find_handler(type(expr))
        if name is None:
            self.generic_visit(expr)
        else:
            getattr(self, name)(expr)

    def generic_visit(self, node: Any) -> None:
        """Visit every IR child of ``node``."""
        cls = type(node)
        names = _IR_FIELDS.get(cls)
        if names is None:
            names = ir_fields(cls)
        for name in names:
            value = getattr(node, name)
            # Expressions and statements, most children, skip visit_value's dispatch.
            kind = _VALUE_KINDS.get(type(value))
            if kind == _EXPR:
                self.visit_expr(value)
            elif kind == _STMT:
                self.visit_stmt(value)
            else:
                self.visit_value(value)

    def visit_value(self, value: Any) -> None:
        """Visit any IR value: expressions, statements, tuples, ranges, regions.

        :meth:`generic_visit` hands expression and statement children straight to
        :meth:`visit_expr` and :meth:`visit_stmt`: intercept those, not this."""
        kind = _VALUE_KINDS.get(type(value))
        if kind is None:
            kind = _value_kind(type(value))
        if kind == _EXPR:
            self.visit_expr(value)
        elif kind == _TUPLE:
            for item in value:
                if _VALUE_KINDS.get(type(item)) == _EXPR:
                    self.visit_expr(item)
                else:
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

    def _skip_expression(self, expr: PrimExpr) -> None:
        """Visiting an expression tells this visitor nothing (see _ignores_expressions)."""


class StmtExprVisitor(ExprVisitor):
    """Walks statements and the expressions inside them."""

    def visit_stmt(self, stmt: Stmt) -> None:
        name = self._handler_names.get(type(stmt), "")
        if name == "":
            name = self._find_handler(type(stmt))
        if name is None:
            self.generic_visit(stmt)
        else:
            getattr(self, name)(stmt)

    def visit_func(self, func: PrimFunc) -> None:
        self.visit_stmt(func.body)


StmtVisitor = StmtExprVisitor


class ExprMutator(_Dispatch):
    """Rewrites expressions bottom-up; unchanged subtrees are returned as is."""

    def visit_expr(self, expr: PrimExpr) -> PrimExpr:
        name = self._handler_names.get(type(expr), "")
        if name == "":
            name = self._find_handler(type(expr))
        if name is None:
            return self.generic_mutate(expr)
        return getattr(self, name)(expr)  # type: ignore[no-any-return]

    def generic_mutate(self, node: _NodeT) -> _NodeT:
        """Mutate every IR child and rebuild ``node`` only if one changed."""
        cls = type(node)
        names = _IR_FIELDS.get(cls)
        if names is None:
            names = ir_fields(cls)
        changes: dict[str, Any] | None = None
        for name in names:
            old = getattr(node, name)
            # Expressions and statements, most children, skip mutate_value's dispatch.
            kind = _VALUE_KINDS.get(type(old))
            new: Any
            if kind == _EXPR:
                new = self.visit_expr(old)
            elif kind == _STMT:
                new = self.visit_stmt(old)
            else:
                new = self.mutate_value(old)
            if new is not old:
                if changes is None:
                    changes = {}
                changes[name] = new
        return node if changes is None else rebuild(node, changes)

    def mutate_value(self, value: Any) -> Any:
        """Mutate any IR value; containers are rebuilt only when an item changed.

        :meth:`generic_mutate` hands expression and statement children straight to
        :meth:`visit_expr` and :meth:`visit_stmt`: intercept those, not this."""
        kind = _VALUE_KINDS.get(type(value))
        if kind is None:
            kind = _value_kind(type(value))
        if kind == _EXPR:
            return self.visit_expr(value)
        if kind == _TUPLE:
            items: list[Any] | None = None  # the new items, once one changed
            for index, item in enumerate(value):
                if _VALUE_KINDS.get(type(item)) == _EXPR:
                    new = self.visit_expr(item)
                else:
                    new = self.mutate_value(item)
                if items is not None:
                    items.append(new)
                elif new is not item:
                    items = [*value[:index], new]
            return value if items is None else tuple(items)
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

    def _skip_expression(self, expr: PrimExpr) -> PrimExpr:
        """This mutator changes no expression (see _ignores_expressions)."""
        return expr


class StmtExprMutator(ExprMutator):
    """Rewrites statements and the expressions inside them."""

    def visit_stmt(self, stmt: Stmt) -> Stmt:
        name = self._handler_names.get(type(stmt), "")
        if name == "":
            name = self._find_handler(type(stmt))
        if name is None:
            return self.generic_mutate(stmt)
        return getattr(self, name)(stmt)  # type: ignore[no-any-return]

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
