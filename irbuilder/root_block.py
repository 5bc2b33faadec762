"""The root block of a finished function, by TVM's rules (its parser's ``ScriptComplete``).

A function whose body holds a block gets an implicit ``root`` block around the body, unless
the body already is one block realized without iter vars (that block is then the root).
Root-level ``T.alloc_buffer`` s always live in an implicit root. The root block's reads and
writes are never inferred: it keeps what ``T.reads``/``T.writes`` declared, else nothing. So
an explicit bare ``with T.block("root"):`` and the implicit root are the same IR.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .ir import (
    Block,
    BlockRealize,
    Buffer,
    BufferRegion,
    IntImm,
    Span,
    Stmt,
    StmtExprMutator,
    StmtExprVisitor,
    as_dtype,
    bare_root_body,
    rebuild,
)

__all__ = ["DeclaredRegions", "complete_root_block", "implied_root_body"]

_TRUE = IntImm(as_dtype("bool"), 1)


@dataclass(frozen=True)
class DeclaredRegions:
    """What a block frame declared before the missing regions were inferred (None: not
    declared). The block is held so that its id stays its own while the function is built."""

    block: Block
    reads: tuple[BufferRegion, ...] | None
    writes: tuple[BufferRegion, ...] | None


def complete_root_block(
    body: Stmt,
    root_alloc_buffers: Sequence[Buffer],
    inferred: Mapping[int, DeclaredRegions],
    span: Span | None,
) -> Stmt:
    """``body`` with its root block made as TVM makes it; ``inferred`` maps ``id(block)`` of
    every block whose regions the builder inferred to what it declared."""
    needs_root, first = _root_needed(body)
    if root_alloc_buffers or needs_root:
        root = Block((), (), (), "root", body, alloc_buffers=tuple(root_alloc_buffers), span=span)
        return BlockRealize((), _TRUE, root, span=span)
    # No implicit root: the outermost block (the first one met, in pre-order) is the root.
    if first is None:
        return body
    declared = inferred.get(id(first))
    if declared is None or declared.block is not first:
        return body
    bare = rebuild(first, {"reads": declared.reads or (), "writes": declared.writes or ()})
    return _ReplaceBlock(first, bare).visit_stmt(body)


def implied_root_body(body: Stmt) -> Stmt | None:
    """When ``body`` is a bare root block that :func:`complete_root_block` would make again
    around its body, that body (a printer may leave such a root out); else None."""
    inner = bare_root_body(body)
    return inner if inner is not None and _root_needed(inner)[0] else None


def _root_needed(body: Stmt) -> tuple[bool, Block | None]:
    """Whether ``body`` needs an implicit root block (it realizes a block and is not one
    block realized without iter vars), and the block that is the root otherwise."""
    if isinstance(body, BlockRealize):
        return bool(body.block.iter_vars), body.block
    search = _FirstBlock()
    try:
        search.visit_stmt(body)
    except _Found:
        pass
    return search.realized, search.bare


class _Found(Exception):
    """Stops :class:`_FirstBlock` at the first realized block."""


class _FirstBlock(StmtExprVisitor):
    """Whether a body realizes a block (``realized``), and its first block not realized
    (``T.block(..., no_realize=True)``) in pre-order (``bare``)."""

    def __init__(self) -> None:
        self.realized = False
        self.bare: Block | None = None

    def visit_block_realize_(self, realize: BlockRealize) -> None:
        self.realized = True
        raise _Found

    def visit_block_(self, block: Block) -> None:
        if self.bare is None:
            self.bare = block
        self.generic_visit(block)


class _ReplaceBlock(StmtExprMutator):
    """Replaces one block, found by identity."""

    def __init__(self, old: Block, new: Block) -> None:
        self.old = old
        self.new = new

    def visit_block_(self, block: Block) -> Stmt:
        if block is self.old:
            return self.new
        return self.generic_mutate(block)
