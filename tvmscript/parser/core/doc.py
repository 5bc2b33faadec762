"""A version-stable mirror of Python's ``ast`` for parser handlers.

Handlers never see :mod:`ast` directly: :func:`tvmscript.parser.core.doc_ast.from_ast`
converts a tree into these nodes, so the same handler code runs on Python 3.10 to 3.13.
What is normalised:

* **Positions are absolute and in characters.**  Every node has ``line``/``col``/
  ``end_line``/``end_col``, 1-based, ``end_col`` exclusive (the :class:`Span`
  convention), counted in the *file* (not the parsed snippet) and in characters (``ast``
  counts UTF-8 bytes).  Nodes that ``ast`` leaves unlocated get positions too: operators
  are found in the text between their operands, ``arguments``, ``comprehension`` and
  ``withitem`` cover their children, and an empty ``arguments`` gets a zero-width
  position at its owner's start.  Only nodes built by hand keep the default ``0``
  ("unknown").
* **Fields are fixed.**  ``type_params`` (3.12+) is always present (empty before 3.12);
  ``ctx``, ``type_comment`` and ``Constant.kind`` are dropped (load/store context is
  recomputed when converting back); lists become tuples, so trees are immutable.
* **Removed and legacy classes never appear.**  ``ast.Index``/``ast.ExtSlice``
  (pre-3.9 subscripts) and ``ast.Num``/``ast.Str``/... (pre-3.8 constants, removed in
  3.14) are not produced by the parsers we support and are not mirrored; a subscript's
  ``slice`` is the index expression itself and every literal is a :class:`Constant`.
* **Syntax the language rejects is still mirrored**, just enough to report it at the
  right place: :class:`Match` keeps only its subject (cases are patterns, a separate
  grammar), :class:`TryStar` (3.11+) and :class:`TypeAlias` (3.12+) are kept, and so are
  ``async`` forms, ``await``, ``yield``, and ``global``/``nonlocal``.

Nodes are frozen, compared by identity (usable as dict keys), and constructed with
keyword arguments only.  Class names match :mod:`ast` exactly, including the lower-case
abstract bases (``expr``, ``stmt``, ``operator`` ...), because dispatch is keyed by the
class name (``"For"``, ``"Assign"``).
"""

from __future__ import annotations

from collections.abc import Iterator

from .doc_expr import *  # noqa: F403  (the facade re-exports every expression node)
from .doc_expr import AST, List, Name, Starred, Tuple, _node, arguments, expr, keyword, operator
from .doc_expr import __all__ as _expr_all

__all__ = [
    *_expr_all,
    "alias",
    "AnnAssign",
    "Assert",
    "Assign",
    "AsyncFor",
    "AsyncFunctionDef",
    "AsyncWith",
    "AugAssign",
    "Break",
    "ClassDef",
    "Continue",
    "Delete",
    "excepthandler",
    "ExceptHandler",
    "Expr",
    "For",
    "FunctionDef",
    "Global",
    "If",
    "Import",
    "ImportFrom",
    "iter_child_nodes",
    "Match",
    "mod",
    "Module",
    "NODE_CLASSES",
    "node_fields",
    "Nonlocal",
    "ParamSpec",
    "Pass",
    "Raise",
    "referenced_names",
    "Return",
    "stmt",
    "target_names",
    "Try",
    "TryStar",
    "type_param",
    "TypeAlias",
    "TypeVar",
    "TypeVarTuple",
    "walk",
    "While",
    "With",
    "withitem",
]


@_node
class mod(AST):
    """Base of module-level containers."""


@_node
class stmt(AST):
    """Base of statements."""


@_node
class type_param(AST):
    """Base of PEP 695 type parameters (3.12+ syntax, rejected by dialects)."""


@_node
class excepthandler(AST):
    """Base of ``except`` clauses."""


@_node
class Module(mod):
    """A sequence of statements (a parsed source segment)."""

    body: tuple[stmt, ...]


@_node
class alias(AST):
    """``name as asname`` in an import."""

    name: str
    asname: str | None = None


@_node
class withitem(AST):
    """``context_expr as optional_vars`` in a ``with`` statement."""

    context_expr: expr
    optional_vars: expr | None = None


@_node
class ExceptHandler(excepthandler):
    """``except type as name: body``."""

    type: expr | None
    name: str | None
    body: tuple[stmt, ...]


@_node
class TypeVar(type_param):
    """``T`` or ``T: bound`` in a type parameter list."""

    name: str
    bound: expr | None = None


@_node
class ParamSpec(type_param):
    """``**P`` in a type parameter list."""

    name: str


@_node
class TypeVarTuple(type_param):
    """``*Ts`` in a type parameter list."""

    name: str


@_node
class FunctionDef(stmt):
    """``def name(args) -> returns: body`` with its decorators."""

    name: str
    args: arguments
    body: tuple[stmt, ...]
    decorator_list: tuple[expr, ...] = ()
    returns: expr | None = None
    type_params: tuple[type_param, ...] = ()


@_node
class AsyncFunctionDef(FunctionDef):
    """``async def``."""


@_node
class ClassDef(stmt):
    """``class name(bases, keywords): body`` with its decorators."""

    name: str
    bases: tuple[expr, ...]
    keywords: tuple[keyword, ...]
    body: tuple[stmt, ...]
    decorator_list: tuple[expr, ...] = ()
    type_params: tuple[type_param, ...] = ()


@_node
class Return(stmt):
    """``return value``."""

    value: expr | None = None


@_node
class Delete(stmt):
    """``del targets``."""

    targets: tuple[expr, ...]


@_node
class Assign(stmt):
    """``t1 = t2 = value``: one target per ``=``."""

    targets: tuple[expr, ...]
    value: expr


@_node
class TypeAlias(stmt):
    """``type name = value`` (3.12+)."""

    name: expr
    value: expr
    type_params: tuple[type_param, ...] = ()


@_node
class AugAssign(stmt):
    """``target op= value``."""

    target: expr
    op: operator
    value: expr


@_node
class AnnAssign(stmt):
    """``target: annotation = value``; ``simple`` is 1 for a bare name target."""

    target: expr
    annotation: expr
    value: expr | None = None
    simple: int = 1


@_node
class For(stmt):
    """``for target in iter: body else: orelse``."""

    target: expr
    iter: expr
    body: tuple[stmt, ...]
    orelse: tuple[stmt, ...] = ()


@_node
class AsyncFor(For):
    """``async for``."""


@_node
class While(stmt):
    """``while test: body else: orelse``."""

    test: expr
    body: tuple[stmt, ...]
    orelse: tuple[stmt, ...] = ()


@_node
class If(stmt):
    """``if test: body else: orelse`` (``elif`` is a nested ``If`` in ``orelse``)."""

    test: expr
    body: tuple[stmt, ...]
    orelse: tuple[stmt, ...] = ()


@_node
class With(stmt):
    """``with items: body``."""

    items: tuple[withitem, ...]
    body: tuple[stmt, ...]


@_node
class AsyncWith(With):
    """``async with``."""


@_node
class Match(stmt):
    """``match subject: ...``; the cases are not mirrored (dialects reject ``match``)."""

    subject: expr


@_node
class Raise(stmt):
    """``raise exc from cause``."""

    exc: expr | None = None
    cause: expr | None = None


@_node
class Try(stmt):
    """``try``/``except``/``else``/``finally``."""

    body: tuple[stmt, ...]
    handlers: tuple[excepthandler, ...] = ()
    orelse: tuple[stmt, ...] = ()
    finalbody: tuple[stmt, ...] = ()


@_node
class TryStar(Try):
    """``try``/``except*`` (3.11+)."""


@_node
class Assert(stmt):
    """``assert test, msg``."""

    test: expr
    msg: expr | None = None


@_node
class Import(stmt):
    """``import names``."""

    names: tuple[alias, ...]


@_node
class ImportFrom(stmt):
    """``from module import names``; ``level`` counts leading dots."""

    module: str | None
    names: tuple[alias, ...]
    level: int = 0


@_node
class Global(stmt):
    """``global names``."""

    names: tuple[str, ...]


@_node
class Nonlocal(stmt):
    """``nonlocal names``."""

    names: tuple[str, ...]


@_node
class Expr(stmt):
    """An expression used as a statement."""

    value: expr


@_node
class Pass(stmt):
    """``pass``."""


@_node
class Break(stmt):
    """``break``."""


@_node
class Continue(stmt):
    """``continue``."""


def _all_node_classes() -> dict[str, type[AST]]:
    # Read the module namespace rather than AST.__subclasses__(): _node replaces each
    # decorated class, and the discarded originals may still be listed.
    return {
        name: value
        for name, value in globals().items()
        if isinstance(value, type) and issubclass(value, AST)
    }


NODE_CLASSES: dict[str, type[AST]] = _all_node_classes()
"""Every node class by name, abstract bases included (dispatch validates against it)."""

_POSITION_FIELDS = frozenset({"line", "col", "end_line", "end_col"})
_FIELD_CACHE: dict[type[AST], tuple[str, ...]] = {}


def node_fields(cls: type[AST]) -> tuple[str, ...]:
    """Names of the non-position fields of a node class, in declaration order."""
    names = _FIELD_CACHE.get(cls)
    if names is None:
        names = tuple(name for name, _ in cls._node_spec if name not in _POSITION_FIELDS)
        _FIELD_CACHE[cls] = names
    return names


def iter_child_nodes(node: AST) -> Iterator[AST]:
    """Direct child nodes, in field order (``None`` entries skipped)."""
    for name in node_fields(type(node)):
        value = getattr(node, name)
        if isinstance(value, AST):
            yield value
        elif isinstance(value, tuple):
            yield from (item for item in value if isinstance(item, AST))


def walk(node: AST) -> Iterator[AST]:
    """``node`` and all its descendants, parents before children."""
    pending = [node]
    while pending:
        current = pending.pop()
        yield current
        pending.extend(reversed(list(iter_child_nodes(current))))


def referenced_names(node: AST) -> set[str]:
    """Every identifier used as a :class:`Name` anywhere under ``node``."""
    return {n.id for n in walk(node) if isinstance(n, Name)}


def target_names(target: expr) -> list[Name]:
    """The :class:`Name` nodes an assignment to ``target`` binds, left to right.

    Attribute and subscript targets bind no name (``A[i] = v`` stores into ``A``).
    """
    if isinstance(target, Name):
        return [target]
    if isinstance(target, Starred):
        return target_names(target.value)
    if isinstance(target, (Tuple, List)):
        return [name for elt in target.elts for name in target_names(elt)]
    return []
