"""The well-formedness verifier: scoping of variables and buffers, store types, lanes.

Rules (each failure names the offending buffer or variable):

* no implicit buffer: every accessed buffer is a ``buffer_map`` buffer, declared by
  an enclosing ``DeclBuffer``, or a block's ``alloc_buffers``/``match_buffers``; before
  lowering, TVM's pre-DeclBuffer view ``T.Buffer(..., data=A.data)`` is accepted when its
  data var is in scope (``declare_buffers`` gives it a ``DeclBuffer``);
* no undefined buffer: the data var of a declared buffer is in scope (a parameter's
  buffer, an ``Allocate``, another buffer's data, a ``LetStmt`` value);
* variables are defined before use, defined once (binding the same Var object twice
  is an error), and used only inside the scope of their definition;
* loop and block iteration variables are never rebound;
* a store's value type equals the buffer's element type times the index lanes;
  vector indices of one access agree on their lanes;
* an assert message is a string or ``format_message(template, values...)`` whose
  placeholders match its (at most four scalar integer) values; ``format_message``
  appears nowhere else;
* with ``lowered=True``: no Block, BlockRealize or Reduce, and every access is 1-d.

Symbolic shape, stride and offset vars of ``buffer_map`` buffers are defined by the
signature, unless the function went through the entry checks (attr
:data:`ENTRY_CHECKED_ATTR`), after which the body binds them with ``LetStmt``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from irbuilder.ir import (
    FORMAT_MESSAGE,
    Allocate,
    AssertStmt,
    Block,
    BlockRealize,
    Buffer,
    BufferLoad,
    BufferRegion,
    BufferStore,
    Call,
    CallKind,
    DeclBuffer,
    For,
    IfThenElse,
    Let,
    LetStmt,
    MessageFormatError,
    PrimExpr,
    PrimFunc,
    Reduce,
    Span,
    Stmt,
    StmtExprVisitor,
    Var,
    message_parts,
)

__all__ = [
    "ENTRY_CHECKED_ATTR",
    "Problem",
    "WellFormedError",
    "verify_well_formed",
    "well_formed_problems",
]

ENTRY_CHECKED_ATTR = "entry_checked"
"""Function attribute set by the entry-check pass: the body binds the buffers' data vars."""


@dataclass(frozen=True)
class Problem:
    """One well-formedness violation: a message and the span of the node, if known."""

    message: str
    span: Span | None = None

    def __str__(self) -> str:
        return self.message if self.span is None else f"{self.span}: {self.message}"


class WellFormedError(ValueError):
    """The IR breaks a verifier rule; ``errors`` lists every problem, the first in the message."""

    def __init__(self, func_name: str, errors: list[Problem], pass_name: str | None = None) -> None:
        self.errors = errors
        self.span = errors[0].span if errors else None
        self.func_name = func_name
        self.pass_name = pass_name
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        first = errors[0].message if errors else "unknown problem"
        after = f" after pass {pass_name!r}" if pass_name else ""
        super().__init__(f"{func_name}{after}: {first}{more}")


_LOOP_KINDS = ("loop variable", "block iteration variable", "reduction axis")


class _Verifier(StmtExprVisitor):
    def __init__(self, lowered: bool) -> None:
        self.lowered = lowered
        self.scope: dict[Var, str] = {}  # var -> kind of its definition
        self.ever: dict[Var, str] = {}
        self.dead: dict[Var, str] = {}
        self.buffers: dict[Buffer, None] = {}
        self.dead_buffers: dict[Buffer, None] = {}
        self.errors: list[Problem] = []
        # (index in errors, var) of uses of vars not in scope and not dead: resolved at
        # the end, when we know whether the var is defined later or never.
        self.pending: list[tuple[int, Var]] = []
        self.spans: list[Span | None] = [None]

    # -- helpers -------------------------------------------------------------
    def error(self, message: str, span: Span | None = None) -> None:
        self.errors.append(Problem(message, span or self.current_span()))

    def current_span(self) -> Span | None:
        for span in reversed(self.spans):
            if span is not None:
                return span
        return None

    def define(self, var: Var, kind: str, span: Span | None = None) -> None:
        previous = self.ever.get(var)
        # A reduction axis is scoped to its Reduce expression; one axis object shared by
        # sibling reductions (k = T.reduce_axis(...) used twice) is not a redefinition.
        reused_axis = kind == previous == "reduction axis" and var not in self.scope
        if previous is not None and not reused_axis:
            if kind == "let variable" and previous in _LOOP_KINDS:
                self.error(f"LetStmt rebinds {previous} {var.name!r}", span)
            else:
                self.error(
                    f"variable {var.name!r} is defined twice (as {previous}, then as {kind})",
                    span,
                )
        self.ever[var] = kind
        self.scope[var] = kind
        self.dead.pop(var, None)

    def undefine(self, var: Var) -> None:
        kind = self.scope.pop(var, None)
        if kind is not None:
            self.dead[var] = kind

    def use(self, var: Var, span: Span | None = None) -> None:
        if var in self.scope:
            return
        kind = self.dead.get(var)
        if kind is not None:
            self.error(f"{kind} {var.name!r} is used outside its scope", span or var.span)
            return
        self.pending.append((len(self.errors), var))
        self.error(f"variable {var.name!r} is not defined", span or var.span)

    def scoped(self, defs: Iterable[tuple[Var, str]], body: Callable[[], None]) -> None:
        added = list(defs)
        for var, kind in added:
            self.define(var, kind)
        body()
        for var, _ in reversed(added):
            self.undefine(var)

    def declare(self, buffer: Buffer, how: str) -> None:
        if buffer in self.buffers:
            self.error(f"buffer {buffer.name!r} is declared twice ({how})", buffer.span)
        self.buffers[buffer] = None
        self.dead_buffers.pop(buffer, None)

    def release(self, buffer: Buffer) -> None:
        if self.buffers.pop(buffer, ()) is None:
            self.dead_buffers[buffer] = None

    def check_layout_vars(self, buffer: Buffer) -> None:
        for expr in (*buffer.shape, *buffer.strides, buffer.elem_offset):
            self.visit_expr(expr)

    def check_data(self, buffer: Buffer) -> None:
        data = buffer.data
        if data in self.scope:
            return
        where = "outside its scope" if data in self.dead else "undefined"
        self.error(
            f"buffer {buffer.name!r} is declared over data var {data.name!r}, which is {where} "
            "(the data var must come from a parameter's buffer, an Allocate, another "
            "buffer or a LetStmt)",
            buffer.span,
        )

    def check_buffer_use(self, buffer: Buffer) -> None:
        if buffer in self.buffers:
            return
        if buffer in self.dead_buffers:
            self.error(f"buffer {buffer.name!r} is used outside the scope of its declaration")
        elif not self.lowered and buffer.data in self.scope:
            self.check_layout_vars(buffer)  # an implicit view over memory in scope
        else:
            self.error(
                f"buffer {buffer.name!r} is accessed but never declared (implicit buffer "
                "declaration: declare it in buffer_map, with DeclBuffer or alloc_buffer)"
            )

    def check_access(self, buffer: Buffer, indices: tuple[PrimExpr, ...], what: str) -> int:
        self.check_buffer_use(buffer)
        if len(indices) != buffer.ndim and not (self.lowered and len(indices) == 1):
            self.error(
                f"{what} of buffer {buffer.name!r} has {len(indices)} indices "
                f"for {buffer.ndim} dimensions"
            )
        if self.lowered and len(indices) != 1:
            self.error(
                f"{what} of buffer {buffer.name!r} is {len(indices)}-d in lowered IR "
                "(flatten_buffer must make every access 1-d)"
            )
        lanes = 1
        for index in indices:
            if not (index.dtype.is_integer and index.dtype.element_of().bits >= 8):
                self.error(f"{what} of buffer {buffer.name!r} has a {index.dtype} index")
            n = index.dtype.lanes
            if n != 1 and lanes != 1 and n != lanes:
                self.error(
                    f"{what} of buffer {buffer.name!r} mixes vector indices of "
                    f"{lanes} and {n} lanes"
                )
            lanes = max(lanes, n)
        return lanes

    # -- traversal -------------------------------------------------------------
    def visit_stmt(self, stmt: Stmt) -> None:
        self.spans.append(stmt.span)
        try:
            super().visit_stmt(stmt)
        finally:
            self.spans.pop()

    def visit_var_(self, var: Var) -> None:
        self.use(var)

    def visit_for_(self, node: For) -> None:
        self.visit_expr(node.min)
        self.visit_expr(node.extent)
        for value in node.annotations.values():
            if isinstance(value, PrimExpr):  # evaluated before the loop (parallel_if)
                self.visit_expr(value)
        self.scoped([(node.loop_var, "loop variable")], lambda: self.visit_stmt(node.body))

    def visit_let_stmt_(self, node: LetStmt) -> None:
        self.visit_expr(node.value)
        if node.value.dtype != node.var.dtype:
            self.error(
                f"LetStmt binds {node.var.dtype} variable {node.var.name!r} "
                f"to a {node.value.dtype} value"
            )
        self.scoped([(node.var, "let variable")], lambda: self.visit_stmt(node.body))

    def visit_let_(self, node: Let) -> None:
        self.visit_expr(node.value)
        self.scoped([(node.var, "let variable")], lambda: self.visit_expr(node.body))

    def visit_allocate_(self, node: Allocate) -> None:
        self.visit_expr(node.extent)
        self.visit_expr(node.condition)
        self.scoped([(node.buffer_var, "allocated data var")], lambda: self.visit_stmt(node.body))

    def visit_decl_buffer_(self, node: DeclBuffer) -> None:
        buffer = node.buffer
        self.check_data(buffer)
        self.check_layout_vars(buffer)
        self.declare(buffer, "DeclBuffer")
        self.visit_stmt(node.body)
        self.release(buffer)

    def visit_if_then_else_(self, node: IfThenElse) -> None:
        self.visit_expr(node.condition)
        if not (node.condition.dtype.is_bool and node.condition.dtype.is_scalar):
            self.error(f"if condition has type {node.condition.dtype}, expected bool")
        self.visit_stmt(node.then_case)
        if node.else_case is not None:
            self.visit_stmt(node.else_case)

    def visit_block_realize_(self, node: BlockRealize) -> None:
        if self.lowered:
            self.error(f"block {node.block.name_hint!r} remains in lowered IR")
        if len(node.iter_values) != len(node.block.iter_vars):
            self.error(
                f"block {node.block.name_hint!r} has {len(node.block.iter_vars)} iteration "
                f"variables but {len(node.iter_values)} bound values"
            )
        for value in node.iter_values:
            self.visit_expr(value)
        self.visit_expr(node.predicate)
        self.visit_stmt(node.block)

    def visit_block_(self, node: Block) -> None:
        if self.lowered:
            self.error(f"block {node.name_hint!r} remains in lowered IR")
        for iv in node.iter_vars:
            self.visit_value(iv.dom)
        defs = [(iv.var, "block iteration variable") for iv in node.iter_vars]
        defs += [(buf.data, "allocated data var") for buf in node.alloc_buffers]
        self.scoped(defs, lambda: self._block_inner(node))

    def _block_inner(self, node: Block) -> None:
        declared: list[Buffer] = []
        for buf in node.alloc_buffers:
            self.check_layout_vars(buf)
            self.declare(buf, f"alloc_buffer of block {node.name_hint!r}")
            declared.append(buf)
        matched_vars: list[Var] = []
        for match in node.match_buffers:
            self.visit_buffer_region(match.source)
            buf = match.buffer
            # A match buffer's data var and symbolic layout vars are bound by the match.
            for expr in (buf.data, *buf.shape, *buf.strides, buf.elem_offset):
                if isinstance(expr, Var) and expr not in self.scope:
                    self.define(expr, "match_buffer variable")
                    matched_vars.append(expr)
                else:
                    self.visit_expr(expr)
            self.declare(buf, f"match_buffer of block {node.name_hint!r}")
            declared.append(buf)
        for region in (*node.reads, *node.writes):
            self.visit_buffer_region(region)
        if node.init is not None:
            self.visit_stmt(node.init)
        self.visit_stmt(node.body)
        for buf in reversed(declared):
            self.release(buf)
        for var in matched_vars:
            self.undefine(var)

    def visit_buffer_region(self, region: BufferRegion) -> None:
        self.check_buffer_use(region.buffer)
        for rng in region.region:
            self.visit_value(rng)

    def visit_reduce_(self, node: Reduce) -> None:
        if self.lowered:
            self.error(f"Reduce ({node.kind.value}) remains in lowered IR", node.span)
        for axis in node.axes:
            self.visit_value(axis.dom)

        def inner() -> None:
            self.visit_expr(node.source)
            if node.condition is not None:
                self.visit_expr(node.condition)

        self.scoped([(axis.var, "reduction axis") for axis in node.axes], inner)

    def visit_assert_stmt_(self, node: AssertStmt) -> None:
        self.visit_expr(node.condition)
        try:
            _, values = message_parts(node.message)
        except MessageFormatError as err:
            self.error(f"assert message: {err}")
            return
        for value in values:
            self.visit_expr(value)

    def visit_call_(self, node: Call) -> None:
        if node.op == FORMAT_MESSAGE and node.kind is CallKind.BUILTIN:
            self.error("format_message is only valid as the message of an assert")
        self.generic_visit(node)

    def visit_buffer_load_(self, node: BufferLoad) -> None:
        self.check_access(node.buffer, node.indices, "load")
        for index in node.indices:
            self.visit_expr(index)

    def visit_buffer_store_(self, node: BufferStore) -> None:
        buffer = node.buffer
        lanes = self.check_access(buffer, node.indices, "store")
        kind = self.scope.get(buffer.data) or self.ever.get(buffer.data)
        if kind in _LOOP_KINDS:
            self.error(f"store into {kind} {buffer.data.name!r} (through buffer {buffer.name!r})")
        expected = buffer.dtype.with_lanes(buffer.dtype.lanes * lanes)
        if node.value.dtype != expected:
            detail = "" if lanes == 1 else f" ({buffer.dtype} elements, {lanes}-lane index)"
            self.error(
                f"store into buffer {buffer.name!r}: value has type {node.value.dtype}, "
                f"expected {expected}{detail}"
            )
        self.visit_expr(node.value)
        for index in node.indices:
            self.visit_expr(index)

    def visit_buffer(self, buffer: Buffer) -> None:
        # Buffers reached outside the handled nodes (e.g. AttrStmt) must still be declared.
        self.check_buffer_use(buffer)

    # -- entry ---------------------------------------------------------------
    def run(self, func: PrimFunc) -> None:
        checked = bool(func.attrs.get(ENTRY_CHECKED_ATTR, False))
        for param in func.params:
            self.define(param, "parameter")
        for key, buffer in func.buffer_map.items():
            if not any(key is p for p in func.params):
                self.error(f"buffer_map key {key.name!r} is not a parameter", buffer.span)
            if buffer.axis_separators and self.lowered:
                self.error(f"buffer {buffer.name!r} has axis_separators in lowered IR")
            if not checked:
                for expr in (buffer.data, *buffer.shape, *buffer.strides, buffer.elem_offset):
                    if isinstance(expr, Var) and expr not in self.scope:
                        self.define(expr, "signature variable")
            self.declare(buffer, "buffer_map")
        if not checked:
            for buffer in func.buffer_map.values():
                self.check_layout_vars(buffer)
        self.visit_stmt(func.body)
        defined_later = self.ever
        for index, var in self.pending:
            if var in defined_later:
                old = self.errors[index]
                self.errors[index] = Problem(
                    f"variable {var.name!r} is used before its definition", old.span
                )


def verify_well_formed(
    func: PrimFunc, *, lowered: bool = False, pass_name: str | None = None
) -> None:
    """Raise :class:`WellFormedError` if ``func`` breaks a rule (see the module docstring).

    ``pass_name`` only labels the error (the pass whose output is checked).
    """
    verifier = _Verifier(lowered)
    verifier.run(func)
    if verifier.errors:
        raise WellFormedError(func.name, verifier.errors, pass_name)


def well_formed_problems(func: PrimFunc, *, lowered: bool = False) -> list[Problem]:
    """Every problem :func:`verify_well_formed` would report (empty when well formed)."""
    verifier = _Verifier(lowered)
    verifier.run(func)
    return verifier.errors
