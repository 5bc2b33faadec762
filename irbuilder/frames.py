"""The concrete frames behind ``T.prim_func``, loops, control flow, memory and blocks.

Each frame collects the statements written inside it and, on a clean exit,
wraps them into its node and appends that node to the enclosing frame.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .builder import Frame, IRBuilder, IRBuilderError
from .ir import (
    Allocate,
    AttrStmt,
    Block,
    BlockRealize,
    Buffer,
    BufferRegion,
    DataType,
    DeclBuffer,
    For,
    ForKind,
    IfThenElse,
    IntImm,
    IRModule,
    IterVar,
    LetStmt,
    MatchBufferRegion,
    PrimExpr,
    PrimFunc,
    Stmt,
    Var,
    While,
    as_dtype,
    post_order_visit,
)
from .opaque_access import opaque_use
from .regions import infer_regions
from .root_block import DeclaredRegions, complete_root_block

__all__ = [
    "AllocateFrame",
    "AttrFrame",
    "BlockFrame",
    "BlockInitFrame",
    "DeclBufferFrame",
    "ElseFrame",
    "ForFrame",
    "IfFrame",
    "LetFrame",
    "LoopSpec",
    "ModuleFrame",
    "PrimFuncFrame",
    "ThenFrame",
    "WhileFrame",
]

_TRUE = IntImm(as_dtype("bool"), 1)


class ModuleFrame(Frame):
    """``I.ir_module()``: collects finished functions by name into an IRModule."""

    kind = "I.ir_module"
    holds_stmts = False
    needs_stmt_parent = False

    def __init__(self) -> None:
        super().__init__()
        self.functions: dict[str, PrimFunc] = {}
        self.attrs: dict[str, Any] = {}

    def check_parent(self, parent: Frame | None) -> None:
        if parent is not None:
            raise IRBuilderError(f"I.ir_module cannot be nested inside {parent.kind}")

    def add_function(self, name: str | None, func: PrimFunc) -> None:
        """Add a finished function; it must be named and the name unused."""
        if name is None:
            raise IRBuilderError(
                "a T.prim_func inside I.ir_module needs a name: call T.func_name(...)"
            )
        if name in self.functions:
            raise IRBuilderError(f"I.ir_module already has a function named {name!r}")
        self.functions[name] = func

    def finalize(self, builder: IRBuilder) -> None:
        builder.set_result(
            IRModule(dict(self.functions), dict(self.attrs), span=self.span), self.kind
        )


class PrimFuncFrame(Frame):
    """``T.prim_func()``: params, buffer_map, attrs and the function body.

    Buffers allocated with ``T.alloc_buffer`` outside any block go to
    ``root_alloc_buffers``. The body gets TVM's root block when it finishes
    (:func:`irbuilder.root_block.complete_root_block`): an implicit ``root`` block
    around a body holding blocks or root allocations, and no inferred regions on
    the root block.
    """

    kind = "T.prim_func"
    needs_stmt_parent = False

    def __init__(self, is_private: bool = False) -> None:
        super().__init__()
        self.name: str | None = None
        self.is_private = is_private
        self.params: list[Var] = []
        self.buffer_map: dict[Var, Buffer] = {}
        self.attrs: dict[str, Any] = {}
        self.ret_type: DataType | None = None
        self.root_alloc_buffers: list[Buffer] = []
        # Blocks whose regions were inferred, by id: the root block's are put back.
        self.inferred_blocks: dict[int, DeclaredRegions] = {}

    def check_parent(self, parent: Frame | None) -> None:
        if parent is not None and not isinstance(parent, ModuleFrame):
            raise IRBuilderError(f"T.prim_func cannot be nested inside {parent.kind}")

    def finalize(self, builder: IRBuilder) -> None:
        body = complete_root_block(
            self.body(), self.root_alloc_buffers, self.inferred_blocks, self.span
        )
        attrs = dict(self.attrs)
        if self.name is not None and not self.is_private:
            attrs["global_symbol"] = self.name
        func = PrimFunc(
            tuple(self.params), body, self.ret_type, dict(self.buffer_map), attrs, span=self.span
        )
        parent = builder.top()
        if isinstance(parent, ModuleFrame):
            parent.add_function(self.name, func)
        else:
            builder.set_result(func, self.kind)


@dataclass
class LoopSpec:
    """One loop of a :class:`ForFrame`."""

    var: Var
    min: PrimExpr
    extent: PrimExpr
    kind: ForKind
    thread_binding: IterVar | None = None
    annotations: Mapping[str, Any] = field(default_factory=dict)


class ForFrame(Frame):
    """``T.serial``/``T.parallel``/... and ``T.grid``: one or more nested For loops."""

    def __init__(self, kind: str, loops: Sequence[LoopSpec], as_list: bool) -> None:
        self.kind = kind
        super().__init__()
        self.loops = list(loops)
        self.as_list = as_list

    if TYPE_CHECKING:
        # ``for i, j in T.grid(n, m):`` in a @T.prim_func body is parsed, never run; type
        # checkers must accept it (tvmscript.mypy_plugin, docs/typing.md).
        def __iter__(self) -> Iterator[Any]: ...

    def value(self) -> Any:
        if self.as_list:
            return [loop.var for loop in self.loops]
        return self.loops[0].var

    def finalize(self, builder: IRBuilder) -> None:
        body = self.body()
        for loop in reversed(self.loops):
            body = For(
                loop.var,
                loop.min,
                loop.extent,
                loop.kind,
                body,
                loop.thread_binding,
                dict(loop.annotations),
                span=self.span,
            )
        builder.add_stmt(body, self.kind)


class IfFrame(Frame):
    """``T.If(cond)``: holds one ``T.Then()`` and an optional ``T.Else()``."""

    kind = "T.If"
    holds_stmts = False

    def __init__(self, condition: PrimExpr) -> None:
        super().__init__()
        self.condition = condition
        self.then_case: Stmt | None = None
        self.else_case: Stmt | None = None

    def finalize(self, builder: IRBuilder) -> None:
        if self.then_case is None:
            raise IRBuilderError("T.If frame closed without a T.Then() frame inside")
        node = IfThenElse(self.condition, self.then_case, self.else_case, span=self.span)
        builder.add_stmt(node, self.kind)


class ThenFrame(Frame):
    """``T.Then()``: the true branch, directly inside ``T.If``."""

    kind = "T.Then"
    needs_stmt_parent = False

    def check_parent(self, parent: Frame | None) -> None:
        if not isinstance(parent, IfFrame):
            where = "no frame" if parent is None else parent.kind
            raise IRBuilderError(f"T.Then must be directly inside T.If, not {where}")
        if parent.then_case is not None:
            raise IRBuilderError("T.If already has a T.Then branch")

    def finalize(self, builder: IRBuilder) -> None:
        parent = builder.top()
        assert isinstance(parent, IfFrame)
        parent.then_case = self.body()


class ElseFrame(Frame):
    """``T.Else()``: the false branch, directly inside ``T.If`` after ``T.Then``."""

    kind = "T.Else"
    needs_stmt_parent = False

    def check_parent(self, parent: Frame | None) -> None:
        if not isinstance(parent, IfFrame):
            where = "no frame" if parent is None else parent.kind
            raise IRBuilderError(f"T.Else must be directly inside T.If, not {where}")
        if parent.then_case is None:
            raise IRBuilderError("T.Else must follow a T.Then branch inside T.If")
        if parent.else_case is not None:
            raise IRBuilderError("T.If already has a T.Else branch")

    def finalize(self, builder: IRBuilder) -> None:
        parent = builder.top()
        assert isinstance(parent, IfFrame)
        parent.else_case = self.body()


class WhileFrame(Frame):
    """``T.While(cond)``."""

    kind = "T.While"

    def __init__(self, condition: PrimExpr) -> None:
        super().__init__()
        self.condition = condition

    def finalize(self, builder: IRBuilder) -> None:
        builder.add_stmt(While(self.condition, self.body(), span=self.span), self.kind)


class LetFrame(Frame):
    """``T.LetStmt(value)`` / ``T.bind(value)``: binds a var for the rest of the scope."""

    kind = "T.LetStmt"

    def __init__(self, var: Var, value: PrimExpr) -> None:
        super().__init__()
        self.var = var
        self.bound = value

    def value(self) -> Any:
        return self.var

    def finalize(self, builder: IRBuilder) -> None:
        builder.add_stmt(LetStmt(self.var, self.bound, self.body(), span=self.span), self.kind)


class AttrFrame(Frame):
    """``T.attr(node, key, value)``."""

    kind = "T.attr"

    def __init__(self, node: Any, key: str, value: PrimExpr) -> None:
        super().__init__()
        self.node = node
        self.key = key
        self.attr_value = value

    def finalize(self, builder: IRBuilder) -> None:
        stmt = AttrStmt(self.node, self.key, self.attr_value, self.body(), span=self.span)
        builder.add_stmt(stmt, self.kind)


class AllocateFrame(Frame):
    """``T.allocate(...)``: yields the data var; one 1-d extent in the node."""

    kind = "T.allocate"

    def __init__(
        self,
        data: Var,
        dtype: DataType,
        extent: PrimExpr,
        condition: PrimExpr,
        annotations: Mapping[str, Any],
    ) -> None:
        super().__init__()
        self.data = data
        self.dtype = dtype
        self.extent = extent
        self.condition = condition
        self.annotations = dict(annotations)

    def value(self) -> Any:
        return self.data

    def finalize(self, builder: IRBuilder) -> None:
        stmt = Allocate(
            self.data,
            self.dtype,
            self.extent,
            self.condition,
            self.body(),
            self.annotations,
            span=self.span,
        )
        builder.add_stmt(stmt, self.kind)


class DeclBufferFrame(Frame):
    """``T.decl_buffer(...)``: yields the buffer; allocates it too when ``allocate``."""

    kind = "T.decl_buffer"

    def __init__(self, buffer: Buffer, allocate: PrimExpr | None) -> None:
        super().__init__()
        self.buffer = buffer
        self.allocate_extent = allocate

    if TYPE_CHECKING:
        # ``B = T.decl_buffer(...)`` in a @T.prim_func body binds the buffer (the parser
        # enters the frame); type checkers must accept ``B[i]`` and ``B[i] = v`` there.
        def __getitem__(self, indices: Any) -> Any: ...
        def __setitem__(self, indices: Any, value: Any) -> None: ...
        @property
        def data(self) -> Var: ...

    def value(self) -> Any:
        return self.buffer

    def finalize(self, builder: IRBuilder) -> None:
        stmt: Stmt = DeclBuffer(self.buffer, self.body(), span=self.span)
        if self.allocate_extent is not None:
            stmt = Allocate(
                self.buffer.data,
                self.buffer.dtype,
                self.allocate_extent,
                _TRUE,
                stmt,
                span=self.span,
            )
        builder.add_stmt(stmt, self.kind)


class BlockFrame(Frame):
    """``T.block(name)``: iter vars from ``T.axis.*``, accesses, init and body.

    Reads/writes not declared with ``T.reads``/``T.writes`` are inferred from
    the body when the frame closes (see :func:`irbuilder.regions.infer_regions`).
    """

    kind = "T.block"

    def __init__(self, name: str, no_realize: bool) -> None:
        super().__init__()
        self.name = name
        self.no_realize = no_realize
        self.iter_vars: list[IterVar] = []
        self.iter_values: list[PrimExpr] = []
        self.reads: tuple[BufferRegion, ...] | None = None
        self.writes: tuple[BufferRegion, ...] | None = None
        self.predicate: PrimExpr | None = None
        self.init: Stmt | None = None
        self.alloc_buffers: list[Buffer] = []
        self.match_buffers: list[MatchBufferRegion] = []
        self.annotations: dict[str, Any] = {}

    def finalize(self, builder: IRBuilder) -> None:
        body = self.body()
        reads, writes = self.reads, self.writes
        if reads is None or writes is None:
            _refuse_opaque_use_of(self, body, builder)
            inferred_reads, inferred_writes = infer_regions(
                body, self.init, self.alloc_buffers, self.match_buffers, _visible(builder)
            )
            reads = inferred_reads if reads is None else reads
            writes = inferred_writes if writes is None else writes
        block = Block(
            tuple(self.iter_vars),
            reads,
            writes,
            self.name,
            body,
            self.init,
            tuple(self.alloc_buffers),
            tuple(self.match_buffers),
            dict(self.annotations),
            span=self.span,
        )
        if reads is not self.reads or writes is not self.writes:
            function = builder.find(PrimFuncFrame)
            if function is not None:
                declared = DeclaredRegions(block, self.reads, self.writes)
                function.inferred_blocks[id(block)] = declared
        if self.no_realize:
            if self.iter_vars or self.predicate is not None:
                raise IRBuilderError(
                    f"T.block({self.name!r}, no_realize=True) cannot have iter vars or T.where"
                )
            builder.add_stmt(block, self.kind)
            return
        predicate = _TRUE if self.predicate is None else self.predicate
        _check_predicate_vars(self.name, predicate, self.iter_vars)
        realize = BlockRealize(tuple(self.iter_values), predicate, block, span=self.span)
        builder.add_stmt(realize, self.kind)


def _refuse_opaque_use_of(frame: BlockFrame, body: Stmt, builder: IRBuilder) -> None:
    found = opaque_use(
        body, frame.init, frame.alloc_buffers, frame.match_buffers, _visible(builder)
    )
    if found is None:
        return
    buffer, user = found
    missing = " and ".join(
        name for name, v in (("T.reads", frame.reads), ("T.writes", frame.writes)) if v is None
    )
    raise IRBuilderError(
        f"block {frame.name!r} uses buffer {buffer.name!r} opaquely (its data pointer "
        f"{buffer.name}.data itself, or T.tvm_access_ptr with access mask 3), so its access "
        f"regions cannot be inferred, and it has no {missing}; annotate the regions it "
        "accesses, as TVM requires (TVM: 'Can not auto detect buffer access region from "
        "tir.Load, tir.Store or direct access by buffer data. Please annotation the access "
        "region manually')",
        span=user.span if user is not None else frame.span,
    )


def _check_predicate_vars(name: str, predicate: PrimExpr, iter_vars: Sequence[IterVar]) -> None:
    """A block predicate is over the variables outside the block (the loop variables), as TVM's
    well-formedness check requires: an iter var of the block itself is not defined there."""
    own = {id(iv.var): iv.var for iv in iter_vars}
    found: list[Var] = []

    def visit(node: Any) -> None:
        if isinstance(node, Var) and id(node) in own and not found:
            found.append(node)

    post_order_visit(predicate, visit)
    if found:
        raise IRBuilderError(
            f"T.where of block {name!r} uses the block's own iter var {found[0].name!r}; "
            "a block predicate is written over the loop variables (the iter var's binding)"
        )


def _visible(builder: IRBuilder) -> list[Buffer]:
    """Buffers the open frames define (params, enclosing allocations and views)."""
    out: list[Buffer] = []
    for frame in builder.frames:
        if isinstance(frame, PrimFuncFrame):
            out.extend(frame.buffer_map.values())
            out.extend(frame.root_alloc_buffers)
        elif isinstance(frame, BlockFrame):
            out.extend(frame.alloc_buffers)
            out.extend(m.buffer for m in frame.match_buffers)
        elif isinstance(frame, DeclBufferFrame):
            out.append(frame.buffer)
    return out


class BlockInitFrame(Frame):
    """``T.init()``: the reduction init statement of the enclosing block."""

    kind = "T.init"
    needs_stmt_parent = False

    def check_parent(self, parent: Frame | None) -> None:
        if not isinstance(parent, BlockFrame):
            where = "no frame" if parent is None else parent.kind
            raise IRBuilderError(f"T.init must be directly inside T.block, not {where}")
        if parent.init is not None:
            raise IRBuilderError(f"T.block {parent.name!r} already has a T.init")

    def finalize(self, builder: IRBuilder) -> None:
        parent = builder.top()
        assert isinstance(parent, BlockFrame)
        parent.init = self.body()
