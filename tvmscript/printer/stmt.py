"""Printing of statements, blocks and buffer declarations."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from irbuilder.ir import (
    Allocate,
    AssertStmt,
    AttrStmt,
    Block,
    BlockRealize,
    Buffer,
    BufferRegion,
    BufferStore,
    CommReducer,
    DeclBuffer,
    Evaluate,
    For,
    ForKind,
    IfThenElse,
    IntImm,
    IterKind,
    IterVar,
    LetStmt,
    PrimExpr,
    Range,
    SeqStmt,
    Stmt,
    StringImm,
    Sub,
    Target,
    Var,
    While,
    default_elem_offset,
    post_order_visit,
    structural_equal,
)
from irbuilder.opaque_access import opaque_use
from irbuilder.regions import infer_regions
from irbuilder.tir.control import REALIZE_ATTR
from irbuilder.tir.memory import ALLOCATE_CONST_DATA
from lowering.analysis.vars import defined_var_ids as body_definitions
from lowering.transforms.declare_buffers import (
    buffers_used,
    implicit_buffers,
    layout_vars,
    statement_definitions,
)

from .doc import Doc, py_str
from .expr import ExprPrinter, float_literal

__all__ = ["StmtPrinter", "body_definitions"]

_AXIS_NAMES: dict[IterKind, str] = {
    IterKind.SPATIAL: "spatial",
    IterKind.REDUCE: "reduce",
    IterKind.SCAN: "scan",
    IterKind.OPAQUE: "opaque",
    IterKind.THREAD: "thread",
}
_LOOP_FUNCS: dict[ForKind, str] = {
    ForKind.SERIAL: "T.serial",
    ForKind.PARALLEL: "T.parallel",
    ForKind.VECTORIZED: "T.vectorized",
    ForKind.UNROLLED: "T.unroll",
}


def _is_true(expr: PrimExpr) -> bool:
    return isinstance(expr, IntImm) and expr.dtype.is_bool and expr.value == 1


def _is_const(expr: PrimExpr, value: int) -> bool:
    return isinstance(expr, IntImm) and not expr.dtype.is_bool and expr.value == value


def _uses_any(expr: PrimExpr, var_ids: set[int]) -> bool:
    hit: list[bool] = []

    def visit(node: Any) -> None:
        if isinstance(node, Var) and id(node) in var_ids:
            hit.append(True)

    post_order_visit(expr, visit)
    return bool(hit)


class StmtPrinter(ExprPrinter):
    """Prints statements into :class:`Doc` lists.

    ``tail`` says whether a statement is the last of its enclosing list: only
    there may a scoping statement (LetStmt, Allocate, DeclBuffer) use the
    concise ``x = ...`` form, whose body is the rest of the list; elsewhere it
    prints the ``with ... as x:`` form.
    """

    def __init__(self, hoist_free: bool = True) -> None:
        super().__init__(hoist_free)
        self.loop_ranges: dict[int, tuple[PrimExpr, PrimExpr]] = {}
        self.body_defs: set[int] = set()
        # Implicitly declared buffers not printed yet, and the vars that statements
        # still to be printed define (a buffer waits for its layout vars).
        self.pending_buffers: list[Buffer] = []
        self.later_defs: set[int] = set()

    def plan_implicit_buffers(self, body: Stmt, declared: set[Buffer]) -> None:
        """Find the buffers of ``body`` that need a ``T.Buffer(..., data=...)`` line."""
        self.pending_buffers = implicit_buffers(body, declared)
        if self.pending_buffers:
            self.later_defs = {id(v) for v in statement_definitions(body)}

    def _available(self, var: Var) -> bool:
        return id(var) in self.defined or id(var) in self.var_text or id(var) not in self.later_defs

    def implicit_decls(self, *scopes: Stmt | None) -> list[Doc]:
        """``B = T.Buffer(...)`` lines for pending buffers used in ``scopes`` whose layout
        vars are all defined here (TVM prints such a buffer where its last var is defined)."""
        if not self.pending_buffers:
            return []
        ready = [b for b in self.pending_buffers if all(map(self._available, layout_vars(b)))]
        if not ready:
            return []
        used = buffers_used(*scopes)
        docs: list[Doc] = []
        for buffer in ready:
            if buffer not in used:
                continue
            self.pending_buffers.remove(buffer)
            data = self.var_ref(buffer.data)
            name = self.buffer_ref(buffer)
            docs.append(Doc(f"{name} = T.Buffer({self.buffer_args(buffer, data=data)})"))
        return docs

    def scope_body(self, *scopes: Stmt | None) -> list[Doc]:
        """The lines of a scoping statement's body, led by the implicit buffers it enables."""
        docs = self.implicit_decls(*scopes)
        for scope in scopes:
            if scope is not None:
                docs.extend(self.stmts(scope))
        return docs

    # -- generic values (attributes, annotations) ----------------------------
    def value(self, value: Any) -> str:
        """An attribute or annotation value: Python data, expressions, buffers."""
        if isinstance(value, bool) or value is None:
            return repr(value)
        if isinstance(value, int):
            return repr(value)
        if isinstance(value, float):
            text = float_literal(value)
            return f"float({text})" if text.startswith('"') else repr(value)
        if isinstance(value, str):
            return py_str(value)
        if isinstance(value, IntImm):
            # Keep constants typed so they do not come back as Python ints.
            return self.typed_const(value)
        if isinstance(value, PrimExpr):
            return self.expr(value)
        if isinstance(value, Buffer):
            return self.buffer_ref(value)
        if isinstance(value, IterVar):
            return self.iter_var_expr(value)
        if isinstance(value, tuple):
            items = ", ".join(self.value(v) for v in value)
            return f"({items},)" if len(value) == 1 else f"({items})"
        if isinstance(value, list):
            return "[" + ", ".join(self.value(v) for v in value) + "]"
        if isinstance(value, Mapping):
            return self.mapping(value)
        if isinstance(value, CommReducer):
            return self.comm_reducer(value)
        if isinstance(value, Target):
            host = "" if value.host is None else f", host={self.value(value.host)}"
            return f"T.target({self.value(value.config_value())}{host})"
        raise TypeError(f"cannot print attribute value of type {type(value).__name__}")

    def mapping(self, attrs: Mapping[Any, Any]) -> str:
        """``{"key": value, ...}`` in insertion order."""
        items = ", ".join(f"{self.value(k)}: {self.value(v)}" for k, v in attrs.items())
        return "{" + items + "}"

    # -- buffers ---------------------------------------------------------------
    def shape(self, exprs: tuple[PrimExpr, ...]) -> str:
        """A tuple literal: ``(16,)``, ``(n, 16)``, ``()``."""
        items = ", ".join(self.expr(e) for e in exprs)
        return f"({items},)" if len(exprs) == 1 else f"({items})"

    def buffer_kwargs(self, buffer: Buffer, with_scope: bool = True) -> list[str]:
        """The non-default buffer fields as ``key=value`` texts."""
        out: list[str] = []
        if buffer.strides:
            out.append(f"strides={self.shape(buffer.strides)}")
        offset = buffer.elem_offset
        if not (_is_const(offset, 0) and offset.dtype == default_elem_offset(buffer.shape).dtype):
            out.append(f"elem_offset={self.expr(offset)}")
        if with_scope and buffer.scope != "global":
            out.append(f"scope={py_str(buffer.scope)}")
        if buffer.data_alignment != 64:
            out.append(f"align={buffer.data_alignment}")
        if buffer.offset_factor != 1:
            out.append(f"offset_factor={buffer.offset_factor}")
        if buffer.axis_separators:
            out.append(f"axis_separators={list(buffer.axis_separators)}")
        return out

    def buffer_args(self, buffer: Buffer, data: str | None = None) -> str:
        """``(16, 16), "float32"`` plus ``data=`` and the non-default fields."""
        parts = [self.shape(buffer.shape), py_str(str(buffer.dtype))]
        if data is not None:
            parts.append(f"data={data}")
        parts.extend(self.buffer_kwargs(buffer))
        return ", ".join(parts)

    def own_data(self, buffer: Buffer, force: bool = False) -> None:
        """Print later uses of the buffer's implicit data var as ``A.data``.

        Without ``force`` a data var that some statement defines by name keeps its name.
        """
        data = buffer.data
        if not force and (id(data) in self.body_defs or id(data) in self.defined):
            return
        if id(data) not in self.var_text:
            self.var_text[id(data)] = f"{self.buffer_ref(buffer)}.data"
        self.defined.add(id(data))

    def region(self, region: BufferRegion) -> str:
        """``A[0:16, vj]``: extent-1 ranges print as a single index."""
        name = self.buffer_ref(region.buffer)
        if not region.region:
            return f"{name}[()]"
        return f"{name}[{', '.join(self._range_index(r) for r in region.region)}]"

    def _range_index(self, rng: Range) -> str:
        if _is_const(rng.extent, 1):
            return self.expr(rng.min)
        return f"{self.expr(rng.min)}:{self.range_stop(rng.min, rng.extent)}"

    # -- statements --------------------------------------------------------------
    def stmts(self, stmt: Stmt, tail: bool = True) -> list[Doc]:
        """The lines of ``stmt``; see the class docstring for ``tail``."""
        if isinstance(stmt, SeqStmt):
            out: list[Doc] = []
            last = len(stmt.seq) - 1
            for i, item in enumerate(stmt.seq):
                out.extend(self.stmts(item, tail and i == last))
            return out
        if isinstance(stmt, BufferStore):
            target = f"{self.buffer_ref(stmt.buffer)}[{self.indices(stmt.indices)}]"
            return [Doc(f"{target} = {self.expr(stmt.value)}")]
        if isinstance(stmt, Evaluate):
            text = self.expr(stmt.value)
            if text.startswith("Module."):  # a call of a module function, as TVM prints it
                return [Doc(text)]
            return [Doc(f"T.evaluate({text})")]
        if isinstance(stmt, LetStmt):
            return self._let(stmt, tail)
        if (
            isinstance(stmt, AttrStmt)
            and stmt.attr_key == REALIZE_ATTR
            and isinstance(stmt.node, tuple)
            and len(stmt.node) == 2
            and isinstance(stmt.node[0], BufferRegion)
            and isinstance(stmt.value, StringImm)
        ):
            region, condition = stmt.node
            cond = "" if _is_true(condition) else f", {self.expr(condition)}"
            head = f"with T.realize({self.region(region)}, {py_str(stmt.value.value)}{cond}):"
            return [Doc(head, self.stmts(stmt.body))]
        if isinstance(stmt, AttrStmt):
            head = (
                f"with T.attr({self.value(stmt.node)}, {py_str(stmt.attr_key)}, "
                f"{self.expr(stmt.value)}):"
            )
            return [Doc(head, self.stmts(stmt.body))]
        if isinstance(stmt, AssertStmt):
            message = stmt.message
            msg = py_str(message.value) if isinstance(message, StringImm) else self.expr(message)
            condition = stmt.condition
            if isinstance(condition, IntImm):
                # A bare `assert False` is a parse-time check; the constant form stays IR.
                cond = f"T.{condition.dtype}({condition.value})"
                if str(condition.dtype) == "bool":
                    cond = f"T.bool({bool(condition.value)})"
            else:
                cond = self.expr(condition)
            return [Doc(f"assert {cond}, {msg}")]
        if isinstance(stmt, For):
            with self.names.scope():
                return self._for(stmt)
        if isinstance(stmt, While):
            return [Doc(f"while {self.expr(stmt.condition)}:", self.scoped_stmts(stmt.body))]
        if isinstance(stmt, IfThenElse):
            return self._if(stmt)
        if isinstance(stmt, Allocate):
            return self._allocate(stmt, tail)
        if isinstance(stmt, DeclBuffer):
            return self._decl_buffer(stmt, tail)
        if isinstance(stmt, BlockRealize):
            with self.names.scope():
                return self._block(stmt.block, stmt.iter_values, stmt.predicate)
        if isinstance(stmt, Block):
            with self.names.scope():
                return self._block(stmt, None, None)
        raise TypeError(f"cannot print {type(stmt).__name__} {stmt!r} as a TVMScript statement")

    def scoped_stmts(self, stmt: Stmt) -> list[Doc]:
        """The lines of an indented body whose variables sibling bodies may name again."""
        with self.names.scope():
            return self.stmts(stmt)

    def _scoped(self, tail: bool, target: str, rhs: str, body: Stmt) -> list[Doc]:
        if tail:
            return [Doc(f"{target} = {rhs}"), *self.scope_body(body)]
        return [Doc(f"with {rhs} as {target}:", self.scope_body(body))]

    def _let(self, stmt: LetStmt, tail: bool) -> list[Doc]:
        value = self.expr(stmt.value)
        if id(stmt.var) in self.defined:
            # Declared before (a match_buffer's data or shape var): bind that very var.
            name = self.var_ref(stmt.var)
            return [Doc(f"with T.LetStmt({value}, var={name}):", self.scope_body(stmt.body))]
        name = self.define_var(stmt.var)
        if tail:
            return [
                Doc(f"{name}: {self.type_annotation(stmt.var)} = {value}"),
                *self.scope_body(stmt.body),
            ]
        return [Doc(f"with T.LetStmt({value}) as {name}:", self.scope_body(stmt.body))]

    def _if(self, stmt: IfThenElse) -> list[Doc]:
        if isinstance(stmt.condition, IntImm):
            # `if False:` would be decided (and dropped) by the parser; the frame form
            # always builds the IfThenElse node.
            cond = f"T.bool({bool(stmt.condition.value)})"
            frames = [Doc("with T.Then():", self.scoped_stmts(stmt.then_case))]
            if stmt.else_case is not None:
                frames.append(Doc("with T.Else():", self.scoped_stmts(stmt.else_case)))
            return [Doc(f"with T.If({cond}):", frames)]
        docs = [Doc(f"if {self.expr(stmt.condition)}:", self.scoped_stmts(stmt.then_case))]
        other = stmt.else_case
        while isinstance(other, IfThenElse):
            branch = self.scoped_stmts(other.then_case)
            docs.append(Doc(f"elif {self.expr(other.condition)}:", branch))
            other = other.else_case
        if other is not None:
            docs.append(Doc("else:", self.scoped_stmts(other)))
        return docs

    # -- loops -------------------------------------------------------------------
    @staticmethod
    def _plain_serial(loop: For) -> bool:
        return (
            loop.kind is ForKind.SERIAL
            and _is_const(loop.min, 0)
            and loop.min.dtype == loop.extent.dtype
            and not loop.annotations
            and loop.thread_binding is None
        )

    def _for(self, loop: For) -> list[Doc]:
        if self._plain_serial(loop):
            chain = [loop]
            chain_vars = {id(loop.loop_var)}
            while (
                isinstance(chain[-1].body, For)
                and self._plain_serial(chain[-1].body)
                and not _uses_any(chain[-1].body.extent, chain_vars)
            ):
                chain.append(chain[-1].body)
                chain_vars.add(id(chain[-1].loop_var))
            extents = [self.expr(item.extent) for item in chain]
            names = []
            for item in chain:
                self.loop_ranges[id(item.loop_var)] = (item.min, item.extent)
                names.append(self.define_var(item.loop_var))
            if len(chain) == 1:
                head = f"for {names[0]} in range({extents[0]}):"
            else:
                head = f"for {', '.join(names)} in T.grid({', '.join(extents)}):"
            return [Doc(head, self.scope_body(chain[-1].body))]
        args: list[str] = []
        if loop.kind is ForKind.THREAD_BINDING:
            func = "T.thread_binding"
            args = [self.expr(loop.min), self.range_stop(loop.min, loop.extent)]
            tag = loop.thread_binding.thread_tag if loop.thread_binding is not None else ""
            args.append(f"thread={py_str(tag)}")
        else:
            func = _LOOP_FUNCS[loop.kind]
            if not (_is_const(loop.min, 0) and loop.min.dtype == loop.extent.dtype):
                args.append(self.expr(loop.min))
            args.append(self.range_stop(loop.min, loop.extent))
        if loop.annotations:
            args.append(f"annotations={self.mapping(loop.annotations)}")
        self.loop_ranges[id(loop.loop_var)] = (loop.min, loop.extent)
        name = self.define_var(loop.loop_var)
        return [Doc(f"for {name} in {func}({', '.join(args)}):", self.scope_body(loop.body))]

    # -- memory ------------------------------------------------------------------
    def _implicit_allocation(self, stmt: Allocate) -> bool:
        """Whether ``stmt`` is exactly what ``T.decl_buffer(shape, dtype)`` builds."""
        decl = stmt.body
        if not isinstance(decl, DeclBuffer) or decl.buffer.data is not stmt.buffer_var:
            return False
        buffer = decl.buffer
        pointer = stmt.buffer_var.type_annotation
        if (
            buffer.dtype != stmt.dtype
            or not _is_true(stmt.condition)
            or stmt.annotations
            or pointer is None
            or pointer.scope != buffer.scope
            or pointer.element != buffer.dtype
            or not isinstance(stmt.extent, IntImm)
            or str(stmt.extent.dtype) != "int32"
        ):
            return False
        size = 1
        for dim in buffer.shape:
            if not isinstance(dim, IntImm) or str(dim.dtype) != "int32":
                return False
            size *= dim.value
        return size == stmt.extent.value

    def _allocate(self, stmt: Allocate, tail: bool) -> list[Doc]:
        pointer = stmt.buffer_var.type_annotation
        scope = pointer.scope if pointer is not None else "global"
        if self._implicit_allocation(stmt):
            decl = stmt.body
            assert isinstance(decl, DeclBuffer)
            rhs = f"T.decl_buffer({self.buffer_args(decl.buffer)})"
            name = self.buffer_ref(decl.buffer)
            self.own_data(decl.buffer, force=True)
            return self._scoped(tail, name, rhs, decl.body)
        constants = stmt.annotations.get(ALLOCATE_CONST_DATA)
        if constants is not None and scope == "global" and _is_true(stmt.condition):
            rest = {k: v for k, v in stmt.annotations.items() if k != ALLOCATE_CONST_DATA}
            values = ", ".join(self.value(v) for v in constants)
            args = [f"[{values}]", py_str(str(stmt.dtype)), f"[{self.expr(stmt.extent)}]"]
            if rest:
                args.append(f"annotations={self.mapping(rest)}")
            rhs = f"T.allocate_const({', '.join(args)})"
            return self._scoped(tail, self.define_var(stmt.buffer_var), rhs, stmt.body)
        args = [f"[{self.expr(stmt.extent)}]", py_str(str(stmt.dtype)), py_str(scope)]
        if not _is_true(stmt.condition):
            args.append(f"condition={self.expr(stmt.condition)}")
        if stmt.annotations:
            args.append(f"annotations={self.mapping(stmt.annotations)}")
        rhs = f"T.allocate({', '.join(args)})"
        return self._scoped(tail, self.define_var(stmt.buffer_var), rhs, stmt.body)

    def _decl_buffer(self, stmt: DeclBuffer, tail: bool) -> list[Doc]:
        data = self.var_ref(stmt.buffer.data)
        rhs = f"T.decl_buffer({self.buffer_args(stmt.buffer, data=data)})"
        return self._scoped(tail, self.buffer_ref(stmt.buffer), rhs, stmt.body)

    # -- blocks ------------------------------------------------------------------
    def _remappable(self, iter_var: IterVar, value: PrimExpr) -> bool:
        if not isinstance(value, Var) or iter_var.kind is IterKind.THREAD:
            return False
        loop = self.loop_ranges.get(id(value))
        if loop is None or value.dtype != iter_var.var.dtype:
            return False
        dom = iter_var.dom
        return (
            _is_const(loop[0], 0)
            and structural_equal(loop[0], dom.min)
            and structural_equal(loop[1], dom.extent)
        )

    def _axis_line(self, iter_var: IterVar, value: PrimExpr | None) -> str:
        dom = iter_var.dom
        if _is_const(dom.min, 0) and dom.min.dtype == dom.extent.dtype:
            dom_text = self.expr(dom.extent)
        else:
            dom_text = f"({self.expr(dom.min)}, {self.range_stop(dom.min, dom.extent)})"
        args = dom_text if value is None else f"{dom_text}, {self.expr(value)}"
        name = self.define_var(iter_var.var)
        return f"{name} = T.axis.{_AXIS_NAMES[iter_var.kind]}({args})"

    def _iter_lines(self, block: Block, values: tuple[PrimExpr, ...] | None) -> list[Doc]:
        lines: list[Doc] = []
        if values is None:
            return [Doc(self._axis_line(iv, None)) for iv in block.iter_vars]
        pairs = list(zip(block.iter_vars, values))
        i = 0
        while i < len(pairs):
            j = i
            while j < len(pairs) and self._remappable(*pairs[j]):
                j += 1
            if j - i >= 2:
                kinds = "".join(iv.kind.value for iv, _ in pairs[i:j])
                bound = ", ".join(self.expr(v) for _, v in pairs[i:j])
                names = ", ".join(self.define_var(iv.var) for iv, _ in pairs[i:j])
                lines.append(Doc(f"{names} = T.axis.remap({py_str(kinds)}, [{bound}])"))
                i = j
            else:
                lines.append(Doc(self._axis_line(*pairs[i])))
                i += 1
        return lines

    @staticmethod
    def _range_round_trips(rng: Range) -> bool:
        """Whether ``min:stop`` parses back to this range (the parser builds
        ``stop - min``, folding constants only)."""
        if _is_const(rng.extent, 1) or _is_const(rng.min, 0):
            return True
        if isinstance(rng.min, IntImm) and isinstance(rng.extent, IntImm):
            return True
        return isinstance(rng.extent, Sub) and structural_equal(rng.extent.b, rng.min)

    def _access_lines(self, block: Block) -> tuple[bool, bool]:
        """Whether to print ``T.reads`` / ``T.writes``.

        A region such as ``A[x : x + 16]`` with a constant extent (what inference builds)
        has no slice spelling; when it is what the parser infers anyway, its line is
        left out so that the block parses back to the same regions.
        """
        regions = (*block.reads, *block.writes)
        if all(self._range_round_trips(r) for region in regions for r in region.region):
            return True, True
        if opaque_use(block.body, block.init, block.alloc_buffers, block.match_buffers):
            return True, True  # the parser refuses such a block without both lines
        reads, writes = infer_regions(
            block.body, block.init, block.alloc_buffers, block.match_buffers
        )
        return (
            not structural_equal(tuple(reads), tuple(block.reads)),
            not structural_equal(tuple(writes), tuple(block.writes)),
        )

    def _block(
        self, block: Block, values: tuple[PrimExpr, ...] | None, predicate: PrimExpr | None
    ) -> list[Doc]:
        body = self._iter_lines(block, values)
        if predicate is not None and not _is_true(predicate):
            body.append(Doc(f"T.where({self.expr(predicate)})"))
        reads_line, writes_line = self._access_lines(block)
        if reads_line:
            body.append(Doc(f"T.reads({', '.join(self.region(r) for r in block.reads)})"))
        if writes_line:
            body.append(Doc(f"T.writes({', '.join(self.region(r) for r in block.writes)})"))
        if block.annotations:
            body.append(Doc(f"T.block_attr({self.mapping(block.annotations)})"))
        for buffer in block.alloc_buffers:
            args = [self.shape(buffer.shape), py_str(str(buffer.dtype))]
            args.extend(self.buffer_kwargs(buffer))
            name = self.buffer_ref(buffer)
            self.own_data(buffer)
            body.append(Doc(f"{name} = T.alloc_buffer({', '.join(args)})"))
        for match in block.match_buffers:
            source = self.region(match.source)
            buf = match.buffer
            text = f"T.match_buffer({source}, {self.buffer_args(buf)})"
            name = self.buffer_ref(buf)
            self.own_data(buf)
            body.append(Doc(f"{name} = {text}"))
        body.extend(self.implicit_decls(block.init, block.body))
        if block.init is not None:
            body.append(Doc("with T.init():", self.stmts(block.init)))
        body.extend(self.stmts(block.body))
        head = f"with T.block({py_str(block.name_hint)}"
        head += "):" if values is not None else ", no_realize=True):"
        return [Doc(head, body)]
