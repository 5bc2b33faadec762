"""Statement nodes. Statements that scope something carry their ``body``."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .buffer import Buffer, BufferRegion, IterVar, MatchBufferRegion
from .dtype import DataType, as_dtype
from .expr import BufferLoad, IntImm, PrimExpr, Var, _set, check_indices, convert
from .span import Span

__all__ = [
    "Allocate",
    "AssertStmt",
    "AttrStmt",
    "Block",
    "BlockRealize",
    "BufferStore",
    "DeclBuffer",
    "Evaluate",
    "For",
    "ForKind",
    "IfThenElse",
    "LetStmt",
    "SeqStmt",
    "Stmt",
    "While",
    "bare_root_body",
    "seq",
]

_EMPTY: Mapping[str, Any] = {}


@dataclass(frozen=True, eq=False, slots=True)
class Stmt:
    """Base of all statements."""

    span: Span | None = field(default=None, kw_only=True, repr=False)

    __hash__ = object.__hash__

    def same_as(self, other: object) -> bool:
        """TVM's object identity test (the same node, not an equal one)."""
        return self is other


@dataclass(frozen=True, eq=False, slots=True)
class BufferStore(Stmt):
    """``buffer[indices] = value``; a Ramp last index stores a vector."""

    buffer: Buffer
    value: PrimExpr
    indices: tuple[PrimExpr, ...]

    def __post_init__(self) -> None:
        _set(self, "indices", tuple(self.indices))
        check_indices(self.buffer.name, self.indices)


@dataclass(frozen=True, eq=False, slots=True)
class Evaluate(Stmt):
    """Evaluate an expression for its side effects (``T.evaluate``)."""

    value: PrimExpr


@dataclass(frozen=True, eq=False, slots=True)
class LetStmt(Stmt):
    """Bind ``var`` to ``value`` for the scope of ``body``."""

    var: Var
    value: PrimExpr
    body: Stmt


@dataclass(frozen=True, eq=False, slots=True)
class AttrStmt(Stmt):
    """Attach the attribute ``attr_key = value`` to ``node`` for ``body``."""

    node: Any
    attr_key: str
    value: PrimExpr
    body: Stmt


@dataclass(frozen=True, eq=False, slots=True)
class AssertStmt(Stmt):
    """Fail with ``message`` when ``condition`` is false.

    A message that starts with ``"TypeError: "``, ``"ValueError: "`` or
    ``"IndexError: "`` raises that Python exception from a compiled kernel;
    any other message raises ``AssertionError``.
    """

    condition: PrimExpr
    message: PrimExpr


class ForKind(enum.Enum):
    """How the iterations of a loop run."""

    SERIAL = "serial"
    PARALLEL = "parallel"
    VECTORIZED = "vectorized"
    UNROLLED = "unroll"
    THREAD_BINDING = "thread_binding"


@dataclass(frozen=True, eq=False, slots=True)
class For(Stmt):
    """``for loop_var in [min, min + extent)``; the loop defines ``loop_var``."""

    loop_var: Var
    min: PrimExpr
    extent: PrimExpr
    kind: ForKind
    body: Stmt
    thread_binding: IterVar | None = None
    annotations: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, eq=False, slots=True)
class While(Stmt):
    """Run ``body`` while ``condition`` holds."""

    condition: PrimExpr
    body: Stmt


@dataclass(frozen=True, eq=False, slots=True)
class IfThenElse(Stmt):
    """Run ``then_case`` if ``condition`` holds, else ``else_case`` (optional)."""

    condition: PrimExpr
    then_case: Stmt
    else_case: Stmt | None = None


@dataclass(frozen=True, eq=False, slots=True)
class SeqStmt(Stmt):
    """Statements run in order."""

    seq: tuple[Stmt, ...]

    def __post_init__(self) -> None:
        _set(self, "seq", tuple(self.seq))

    # TVM's SeqStmt is indexed like its list of statements (``func.body.block.body[1]``).
    def __getitem__(self, index: int) -> Stmt:
        return self.seq[index]

    def __len__(self) -> int:
        return len(self.seq)

    def __bool__(self) -> bool:
        return True  # a statement, not an empty container, even with no statements


def seq(stmts: list[Stmt] | tuple[Stmt, ...]) -> Stmt:
    """One statement for a list: flattens nested SeqStmts, unwraps a single one.

    An empty list becomes ``T.evaluate(0)``.
    """
    flat: list[Stmt] = []
    for stmt in stmts:
        if isinstance(stmt, SeqStmt):
            flat.extend(stmt.seq)
        else:
            flat.append(stmt)
    if not flat:
        return Evaluate(IntImm(as_dtype("int32"), 0))
    if len(flat) == 1:
        return flat[0]
    return SeqStmt(tuple(flat))


@dataclass(frozen=True, eq=False, slots=True)
class Allocate(Stmt):
    """Allocate ``extent`` elements of ``dtype`` at ``buffer_var`` for ``body``.

    The extent is one 1-d element count (the Allocate 1-d extent RFC): the
    logical shape lives only in the buffers declared over ``buffer_var``.
    """

    buffer_var: Var
    dtype: DataType
    extent: PrimExpr
    condition: PrimExpr
    body: Stmt
    annotations: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        _set(self, "dtype", as_dtype(self.dtype))
        _set(self, "extent", convert(self.extent))
        _set(self, "condition", convert(self.condition))


@dataclass(frozen=True, eq=False, slots=True)
class DeclBuffer(Stmt):
    """Declare ``buffer`` (a view over an existing data var) for ``body``."""

    buffer: Buffer
    body: Stmt


@dataclass(frozen=True, eq=False, slots=True)
class Block(Stmt):
    """A schedulable unit: iteration vars, declared accesses and a body.

    ``init`` runs before the first iteration of the reduction axes.
    """

    iter_vars: tuple[IterVar, ...]
    reads: tuple[BufferRegion, ...]
    writes: tuple[BufferRegion, ...]
    name_hint: str
    body: Stmt
    init: Stmt | None = None
    alloc_buffers: tuple[Buffer, ...] = ()
    match_buffers: tuple[MatchBufferRegion, ...] = ()
    annotations: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in ("iter_vars", "reads", "writes", "alloc_buffers", "match_buffers"):
            _set(self, name, tuple(getattr(self, name)))


@dataclass(frozen=True, eq=False, slots=True)
class BlockRealize(Stmt):
    """Run ``block`` with its iter vars bound to ``iter_values`` when ``predicate``."""

    iter_values: tuple[PrimExpr, ...]
    predicate: PrimExpr
    block: Block

    def __post_init__(self) -> None:
        _set(self, "iter_values", tuple(self.iter_values))
        _set(self, "predicate", convert(self.predicate))


def bare_root_body(stmt: Stmt) -> Stmt | None:
    """The body of ``stmt`` when it is a bare root block (a ``BlockRealize`` always run, of a
    block named ``root`` holding nothing but its body), else None. TVM gives a function
    holding blocks such a root, so whether it was written out says nothing."""
    if not isinstance(stmt, BlockRealize) or stmt.iter_values:
        return None
    root = stmt.block
    bare = (
        root.name_hint == "root"
        and isinstance(stmt.predicate, IntImm)
        and bool(stmt.predicate.value)
        and not root.iter_vars
        and not root.reads
        and not root.writes
        and root.init is None
        and not root.alloc_buffers
        and not root.match_buffers
        and not root.annotations
    )
    return root.body if bare else None


def store_dtype_matches(store: BufferStore) -> bool:
    """Whether the stored value's type equals what the indexed location holds."""
    expected = BufferLoad(store.buffer, store.indices).dtype
    return store.value.dtype == expected
