"""The function being scheduled, an index of its tree and in-place-looking replacement.

The IR is immutable, so a primitive builds a new subtree and :meth:`ScheduleState.replace`
rebuilds the path from it to the root. Every Block and For rebuilt on the way is recorded in
the *reuse map* (old node -> new node), which is how random variables (``BlockRV``,
``LoopRV``) keep pointing at "the same" block or loop across primitives, as TVM's srefs do.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from irbuilder.ir import (
    Block,
    BlockRealize,
    Buffer,
    For,
    IfThenElse,
    PrimFunc,
    SeqStmt,
    Stmt,
    const,
    rebuild,
)

__all__ = ["ScheduleState", "TreeIndex", "child_stmts", "with_root_block", "without_implicit_root"]


def child_stmts(stmt: Stmt) -> list[Stmt]:
    """The statements directly below ``stmt``, in execution order (a block's init first)."""
    if isinstance(stmt, SeqStmt):
        return list(stmt.seq)
    if isinstance(stmt, BlockRealize):
        return [stmt.block]
    if isinstance(stmt, Block):
        return [stmt.init, stmt.body] if stmt.init is not None else [stmt.body]
    if isinstance(stmt, IfThenElse):
        return [stmt.then_case] if stmt.else_case is None else [stmt.then_case, stmt.else_case]
    body = getattr(stmt, "body", None)
    return [body] if isinstance(body, Stmt) else []


def replace_child(parent: Stmt, old: Stmt, new: Stmt) -> Stmt:
    """``parent`` with its direct child ``old`` replaced by ``new``."""
    if isinstance(parent, SeqStmt):
        items: list[Stmt] = []
        for stmt in parent.seq:
            if stmt is not old:
                items.append(stmt)
            elif isinstance(new, SeqStmt):  # the parser flattens nested sequences too
                items.extend(new.seq)
            else:
                items.append(new)
        return SeqStmt(tuple(items), span=parent.span)
    for name in ("body", "init", "block", "then_case", "else_case"):
        if getattr(parent, name, None) is old:
            return rebuild(parent, {name: new})  # type: ignore[no-any-return]
    raise ValueError(f"{type(parent).__name__} does not hold the statement to replace")


class TreeIndex:
    """Parents and pre-order positions of every statement of one function body."""

    def __init__(self, body: Stmt) -> None:
        self.parent: dict[int, Stmt] = {}
        self.order: dict[int, int] = {}
        self.nodes: dict[int, Stmt] = {}
        self.buffers: list[Buffer] = []
        """Every buffer a block of the body allocates or matches."""
        stack: list[Stmt] = [body]
        while stack:
            stmt = stack.pop()
            self.order[id(stmt)] = len(self.order)
            self.nodes[id(stmt)] = stmt
            if isinstance(stmt, Block):
                self.buffers += stmt.alloc_buffers
                self.buffers += [m.buffer for m in stmt.match_buffers]
            children = child_stmts(stmt)
            for child in children:
                self.parent[id(child)] = stmt
            stack.extend(reversed(children))

    def contains(self, stmt: Stmt) -> bool:
        return id(stmt) in self.nodes

    def ancestors(self, stmt: Stmt) -> Iterator[Stmt]:
        """The statements above ``stmt``, innermost first."""
        node = self.parent.get(id(stmt))
        while node is not None:
            yield node
            node = self.parent.get(id(node))

    def realize_of(self, block: Block) -> BlockRealize:
        parent = self.parent.get(id(block))
        if not isinstance(parent, BlockRealize):
            raise ValueError(f"block {block.name_hint!r} has no BlockRealize")
        return parent

    def scope_block(self, stmt: Stmt) -> Block:
        """The innermost block strictly above ``stmt`` (through its own realize)."""
        for node in self.ancestors(stmt):
            if isinstance(node, Block) and node is not stmt:
                return node
        raise ValueError("statement is not inside a block")

    def loops_above(self, block: Block) -> list[For]:
        """The loops between ``block`` and its scope block, outermost first."""
        loops: list[For] = []
        for node in self.ancestors(self.realize_of(block)):
            if isinstance(node, Block):
                break
            if isinstance(node, For):
                loops.append(node)
        return loops[::-1]

    def is_ancestor(self, upper: Stmt, lower: Stmt) -> bool:
        return any(node is upper for node in self.ancestors(lower))

    def blocks_below(self, stmt: Stmt, *, direct: bool = True) -> list[Block]:
        """Blocks inside ``stmt`` in execution order; ``direct``: not nested in another block."""
        found: list[Block] = []

        def walk(node: Stmt) -> None:
            if isinstance(node, Block):
                found.append(node)
                if direct:
                    return
            for child in child_stmts(node):
                walk(child)

        for child in child_stmts(stmt) if isinstance(stmt, Block) else [stmt]:
            walk(child)
        return found

    def child_blocks(self, scope: Block) -> list[Block]:
        return self.blocks_below(scope, direct=True)


def with_root_block(func: PrimFunc) -> tuple[PrimFunc, bool]:
    """``func`` whose body is a root BlockRealize (added when missing), and whether it was."""
    body = func.body
    if isinstance(body, BlockRealize) and not body.block.iter_vars:
        return func, True
    root = Block((), (), (), "root", body)
    return func.with_body(BlockRealize((), const(True), root)), False


def without_implicit_root(func: PrimFunc, had_root: bool) -> PrimFunc:
    """Drop a root block the schedule added when it carries nothing (the parser's form)."""
    body = func.body
    del had_root  # a parsed root with no allocations prints (and parses) as no root at all
    if not isinstance(body, BlockRealize):
        return func
    root = body.block
    if root.alloc_buffers or root.match_buffers or root.annotations or root.reads or root.writes:
        return func
    if isinstance(root.body, BlockRealize) and not root.body.block.iter_vars:
        # the body would become the root (a loop_partition's "_common" block): keep "root"
        return func
    return func.with_body(root.body)


@dataclass
class ScheduleState:
    """The scheduled function (always with a root block) and its tree index."""

    func: PrimFunc
    had_root: bool
    _index: TreeIndex | None = field(default=None, repr=False)
    reuse: dict[int, Stmt] = field(default_factory=dict, repr=False)
    """Old Block/For (by id) -> its continuation, accumulated during one primitive."""
    keep: list[Stmt] = field(default_factory=list, repr=False)
    """Nodes whose ids appear in ``reuse`` (kept alive so ids stay unique)."""
    param_layouts: list[Any] = field(default_factory=list, repr=False)
    """Layouts ``transform_layout`` gave parameters (for the proof by execution)."""

    def begin(self) -> None:
        self.reuse = {}
        self.keep = []

    def resolve(self, node: Stmt) -> Stmt | None:
        """Where ``node`` went after this primitive (None when it no longer exists)."""
        seen = 0
        while id(node) in self.reuse and seen < 1000:
            node = self.reuse[id(node)]
            seen += 1
        return node if self.index.contains(node) else None

    @property
    def index(self) -> TreeIndex:
        if self._index is None:
            self._index = TreeIndex(self.func.body)
            _VISIBLE[:] = [*self.func.buffer_map.values(), *self._index.buffers]
        return self._index

    @property
    def root(self) -> Block:
        body = self.func.body
        assert isinstance(body, BlockRealize)
        return body.block

    def output(self) -> PrimFunc:
        return without_implicit_root(self.func, self.had_root)

    def replace(
        self, old: Stmt, new: Stmt, reuse: Mapping[Stmt, Stmt] | None = None
    ) -> dict[int, Stmt]:
        """Put ``new`` where ``old`` is; returns the reuse map by ``id`` of old nodes.

        ``reuse`` names the nodes of ``new`` that continue old Blocks/Fors; the rebuilt
        ancestors are added to it.
        """
        mapping: dict[int, Stmt] = {}
        for key, value in (reuse or {}).items():
            mapping[id(key)] = value
            self.keep.append(key)
        index = self.index
        child_old, child_new = old, new
        for parent in index.ancestors(old):
            rebuilt = replace_child(parent, child_old, child_new)
            mapping[id(parent)] = rebuilt
            self.keep.append(parent)
            child_old, child_new = parent, rebuilt
        self.keep.append(old)
        self.reuse.update(mapping)
        self.func = self.func.with_body(child_new)
        self._index = None
        return mapping

    def set_func(self, func: PrimFunc) -> None:
        self.func = func
        self._index = None


_VISIBLE: list[Buffer] = []


def visible_buffers() -> Sequence[Buffer]:
    """The buffers of the function last indexed: region inference needs them to see a
    block using one by its data pointer (``A.data``, ``T.tvm_access_ptr``), which names
    no buffer by itself."""
    return _VISIBLE


def walk_preorder(stmt: Stmt) -> Iterator[Stmt]:
    """Every statement below ``stmt`` (itself included) in execution order."""
    stack: list[Stmt] = [stmt]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(child_stmts(node)))


def annotations_with(node: Any, key: str, value: Any) -> dict[str, Any]:
    merged = dict(node.annotations)
    merged[key] = value
    return merged
