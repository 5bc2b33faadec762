"""The ``simplify`` pass: arithmetic simplification plus dead-code cleanup of statements.

Expressions go through :class:`lowering.arith.ExprSimplifier` (constant folding with
exact TIR semantics, identities, canonical affine index forms, floordiv/floormod by
constants, min/max and conditions decided from known ranges). Facts come from loop
ranges, let values, ``T.assume`` and earlier ``AssertStmt``s of the same sequence,
and the condition of an enclosing ``if``. A fact that reads memory dies at the first
statement that may store to that memory (see :class:`_Stores` for the aliasing rule);
a store anywhere in a loop body kills it for the whole loop. Statements: dead branches
and empty loops are removed, loops of extent one become a substitution of their start,
sequences are flattened and ``T.evaluate(0)`` no-ops dropped.

Integer overflow stance: add/sub/mul are regrouped freely, which is exact modulo
``2**bits`` (wrap-around), so no result changes; rewrites that need mathematical
equality (division, comparisons, min/max) are done only when the analyzer proves
that no intermediate value leaves the dtype's range. This is stricter than TVM,
which assumes index arithmetic never overflows.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator, Mapping
from typing import Any

from irbuilder.ir import (
    Allocate,
    AssertStmt,
    AttrStmt,
    Buffer,
    BufferStore,
    Call,
    CallKind,
    DeclBuffer,
    Evaluate,
    FloatImm,
    For,
    ForKind,
    IfThenElse,
    IntImm,
    LetStmt,
    Not,
    PrimExpr,
    PrimFunc,
    SeqStmt,
    Stmt,
    StmtExprVisitor,
    Var,
    While,
    as_dtype,
    seq,
    structural_equal,
)

from ..analysis import free_vars
from ..arith import Analyzer, ExprSimplifier
from ..arith.analyzer import MayChange
from ..pass_infra import FunctionPass, PassContext, function_pass

__all__ = ["Simplifier", "is_no_op", "simplify", "simplify_stmt"]

_NO_OP_KINDS = (ForKind.SERIAL, ForKind.PARALLEL, ForKind.VECTORIZED, ForKind.UNROLLED)


def is_no_op(stmt: Stmt) -> bool:
    """Whether ``stmt`` does nothing: ``T.evaluate`` of a constant, or an empty sequence."""
    if isinstance(stmt, Evaluate):
        return isinstance(stmt.value, (IntImm, FloatImm))
    if isinstance(stmt, SeqStmt):
        return all(is_no_op(s) for s in stmt.seq)
    return False


def _no_op() -> Stmt:
    return Evaluate(IntImm(as_dtype("int32"), 0))


def _assumed(stmt: Stmt) -> PrimExpr | None:
    """The condition that holds after ``stmt`` (an assert or ``T.assume``), if any."""
    if isinstance(stmt, AssertStmt):
        return stmt.condition
    if isinstance(stmt, Evaluate):
        value = stmt.value
        if (
            isinstance(value, Call)
            and value.kind is CallKind.BUILTIN
            and value.op == "assume"
            and len(value.args) == 1
        ):
            return value.args[0]
    return None


_StoreSummary = tuple[Stmt, frozenset[Var], frozenset[Var], bool]
"""A statement (kept alive: the memo is keyed by its id), the data vars it stores to and
allocates, and whether it may write unknown memory."""


class _Stores(StmtExprVisitor):
    """The memory a statement may write.

    Stores are compared by data var, so every buffer over the same memory (a
    ``DeclBuffer`` alias, a flat alias after ``flatten_buffer``) counts. The function's
    own allocations never overlap anything else; any other data var (a parameter's)
    may overlap any other such one, since two arguments may be views of one array. An
    extern call may write anything it is given a pointer to (or keeps one to).
    """

    def __init__(self, memo: dict[int, _StoreSummary] | None = None) -> None:
        self.data_vars: set[Var] = set()
        self.allocated: set[Var] = set()
        self.unknown = False
        self._memo = memo

    def visit_stmt(self, stmt: Stmt) -> None:
        # Each loop forgets what its body stores: nested loops would walk the inner bodies
        # once per enclosing loop (and again every round) without the per-statement memo.
        memo = self._memo
        if memo is None:
            super().visit_stmt(stmt)
            return
        hit = memo.get(id(stmt))
        if hit is None or hit[0] is not stmt:
            inner = _Stores(memo)
            StmtExprVisitor.visit_stmt(inner, stmt)
            hit = (stmt, frozenset(inner.data_vars), frozenset(inner.allocated), inner.unknown)
            memo[id(stmt)] = hit
        self.data_vars |= hit[1]
        self.allocated |= hit[2]
        self.unknown = self.unknown or hit[3]

    def visit_buffer_store_(self, node: BufferStore) -> None:
        self.data_vars.add(node.buffer.data)
        self.generic_visit(node)

    def visit_allocate_(self, node: Allocate) -> None:
        self.allocated.add(node.buffer_var)
        self.generic_visit(node)

    def visit_call_(self, node: Call) -> None:
        if node.kind is CallKind.EXTERN or (
            node.kind is CallKind.BUILTIN and node.op in _WRITING_BUILTINS
        ):
            self.unknown = True
        self.generic_visit(node)


_WRITING_BUILTINS = frozenset(
    ("tvm_call_packed", "tvm_call_cpacked", "tvm_thread_allreduce", "tvm_storage_sync")
)
"""TVM runtime builtins (parsed for round trips) that may write memory they are given."""


class Simplifier(ExprSimplifier):
    """Statement-level simplifier; see the module docstring for the rules."""

    def __init__(self, analyzer: Analyzer | None = None) -> None:
        super().__init__(analyzer)
        self._local: set[Var] = set()  # data vars of the function's own allocations
        self.buffer_subst: dict[Buffer, Buffer] = {}
        self.undeclared: dict[Buffer, tuple[tuple[tuple[Var, PrimExpr], ...], Buffer]] = {}
        self.layout_vars: dict[Buffer, tuple[Var, ...]] = {}
        self._stores_memo: dict[int, _StoreSummary] = {}
        # Set when this round may have missed something a next round would see: a loop
        # body forgot the facts its stores kill before the round simplified those stores.
        self.revisit = False

    def share_memos(self, other: ExprSimplifier) -> None:
        super().share_memos(other)
        if isinstance(other, Simplifier):
            self._stores_memo = other._stores_memo

    def _forget_stored(self, stmt: Stmt) -> None:
        """Drop the facts reading memory ``stmt`` may write."""
        if not self.analyzer.has_memory_facts:
            return
        stores = _Stores(self._stores_memo)
        stores.visit_stmt(stmt)
        if stores.unknown:
            self.analyzer.forget_memory(None)
            return
        if not stores.data_vars:
            return
        written = frozenset(stores.data_vars)
        local = frozenset(self._local | stores.allocated)
        shared = any(v not in local for v in written)

        def may_change(data: Var) -> bool:
            return data in written or (shared and data not in local)

        changed: MayChange = may_change
        self.analyzer.forget_memory(changed)

    def visit_buffer_store_(self, stmt: BufferStore) -> Stmt:
        new = self.generic_mutate(stmt)
        self._forget_stored(new)
        return new

    def visit_seq_stmt_(self, stmt: SeqStmt) -> Stmt:
        out: list[Stmt] = []
        changed = False
        with self.analyzer.scope():
            for child in stmt.seq:
                new = self.visit_stmt(child)
                changed = changed or new is not child
                fact = _assumed(new)
                if fact is not None and fact.dtype.is_bool and fact.dtype.is_scalar:
                    self.analyzer.add_constraint(fact)
                if is_no_op(new):
                    changed = True
                    continue
                if isinstance(new, SeqStmt):
                    changed = True
                    out.extend(new.seq)
                    self._replay_facts(new)
                else:
                    out.append(new)
        if not changed:
            return stmt
        return seq(out)

    def _replay_facts(self, flat: SeqStmt) -> None:
        """The facts of an inner sequence that this one absorbs hold for the statements
        after it too; they died with the inner sequence's scope, so they are added again in
        order, each forgotten again at the inner statements that may store to its memory."""
        for inner in flat.seq:
            self._forget_stored(inner)
            fact = _assumed(inner)
            if fact is not None and fact.dtype.is_bool and fact.dtype.is_scalar:
                self.analyzer.add_constraint(fact)

    def _forget_called(self, expr: PrimExpr) -> None:
        """An extern call in ``expr`` may write any memory."""
        if not self.analyzer.has_memory_facts:
            return
        stores = _Stores()
        stores.visit_expr(expr)
        if stores.unknown:
            self.analyzer.forget_memory(None)

    def visit_evaluate_(self, stmt: Evaluate) -> Stmt:
        value = self.visit_expr(stmt.value)
        self._forget_called(value)
        if isinstance(value, Call) and value.op == "assume" and value.kind is CallKind.BUILTIN:
            if value.args and isinstance(value.args[0], IntImm) and value.args[0].value:
                return _no_op()  # assuming `true` tells nothing
        if value is stmt.value:
            return stmt
        return Evaluate(value, span=stmt.span)

    def visit_assert_stmt_(self, stmt: AssertStmt) -> Stmt:
        cond = self.visit_expr(stmt.condition)
        self._forget_called(cond)
        if isinstance(cond, IntImm) and cond.value:
            return _no_op()
        if cond is stmt.condition:
            return stmt
        return AssertStmt(cond, stmt.message, span=stmt.span)

    def visit_if_then_else_(self, stmt: IfThenElse) -> Stmt:
        cond = self.visit_expr(stmt.condition)
        self._forget_called(cond)
        if isinstance(cond, IntImm):
            if cond.value:
                return self.visit_stmt(stmt.then_case)
            return _no_op() if stmt.else_case is None else self.visit_stmt(stmt.else_case)
        with self.analyzer.scope():
            self.analyzer.add_constraint(cond)
            then_case = self.visit_stmt(stmt.then_case)
        else_case = stmt.else_case
        if else_case is not None:
            with self.analyzer.scope():
                self.analyzer.add_constraint(self.visit_expr(Not(cond)))
                else_case = self.visit_stmt(else_case)
            if is_no_op(else_case):
                else_case = None
        if is_no_op(then_case) and else_case is None:
            return _no_op()
        if is_no_op(then_case) and else_case is not None:
            return IfThenElse(self.visit_expr(Not(cond)), else_case, None, span=stmt.span)
        if cond is stmt.condition and then_case is stmt.then_case and else_case is stmt.else_case:
            return stmt
        return IfThenElse(cond, then_case, else_case, span=stmt.span)

    def visit_for_(self, stmt: For) -> Stmt:
        begin = self.visit_expr(stmt.min)
        extent = self.visit_expr(stmt.extent)
        removable = stmt.kind in _NO_OP_KINDS
        if removable and extent.dtype.is_integer and extent.dtype.is_scalar:
            ext_bound = self.analyzer.const_int_bound(extent)
            if ext_bound.hi <= 0:
                return _no_op()
            if ext_bound.is_point and ext_bound.lo == 1:
                return self._single_iteration(stmt.loop_var, begin, stmt.body)
        # Later iterations see the body's stores: facts they kill are dead in all of it.
        memory_facts = self.analyzer.has_memory_facts
        self._forget_stored(stmt.body)
        with self.analyzer.scope():
            self.analyzer.bind_range(stmt.loop_var, begin, extent)
            body = self.visit_stmt(stmt.body)
        self.revisit = self.revisit or (memory_facts and body is not stmt.body)
        if removable and is_no_op(body):
            return _no_op()
        annotations = self._annotations(stmt.annotations)
        if (begin is stmt.min and extent is stmt.extent and body is stmt.body
                and annotations is stmt.annotations):
            return stmt
        return For(
            stmt.loop_var,
            begin,
            extent,
            stmt.kind,
            body,
            stmt.thread_binding,
            annotations,
            span=stmt.span,
        )

    def _annotations(self, annotations: Mapping[str, Any]) -> Mapping[str, Any]:
        """A loop's annotations with the expressions among their values simplified: they may
        use a let variable this pass substitutes and drops (the run-time work test of an
        automatic parallel loop, ``length >= 65536``)."""
        if not self.subst or not any(isinstance(v, PrimExpr) for v in annotations.values()):
            return annotations
        new = {k: self.visit_expr(v) if isinstance(v, PrimExpr) else v
               for k, v in annotations.items()}
        if all(new[k] is v for k, v in annotations.items()):
            return annotations
        return new

    def _single_iteration(self, var: Var, begin: PrimExpr, body: Stmt) -> Stmt:
        if isinstance(begin, (IntImm, Var)):
            with self._substituting(var, begin):
                return self.visit_stmt(body)
        return self.visit_stmt(LetStmt(var, begin, body))

    @contextlib.contextmanager
    def _substituting(self, var: Var, value: PrimExpr) -> Iterator[None]:
        """``var`` replaced by ``value`` inside the ``with`` block (an outer binding of the
        same variable, in a function that binds it twice, comes back after it)."""
        outer = self.subst.get(var)
        self.subst[var] = value
        try:
            yield
        finally:
            if outer is None:
                del self.subst[var]
            else:
                self.subst[var] = outer

    def visit_let_stmt_(self, stmt: LetStmt) -> Stmt:
        value = self.visit_expr(stmt.value)
        self._forget_called(value)
        if isinstance(value, (IntImm, FloatImm)):
            with self._substituting(stmt.var, value):
                return self.visit_stmt(stmt.body)
        with self.analyzer.scope():
            if value.dtype.is_integer and value.dtype.is_scalar:
                self.analyzer.bind(stmt.var, self.analyzer.const_int_bound(value))
            body = self.visit_stmt(stmt.body)
        if value is stmt.value and body is stmt.body:
            return stmt
        return LetStmt(stmt.var, value, body, span=stmt.span)

    def visit_while_(self, stmt: While) -> Stmt:
        memory_facts = self.analyzer.has_memory_facts
        self._forget_stored(stmt.body)
        cond = self.visit_expr(stmt.condition)
        if isinstance(cond, IntImm) and not cond.value:
            return _no_op()
        body = self.visit_stmt(stmt.body)
        self.revisit = self.revisit or (memory_facts and body is not stmt.body)
        if cond is stmt.condition and body is stmt.body:
            return stmt
        return While(cond, body, span=stmt.span)

    def visit_allocate_(self, stmt: Allocate) -> Stmt:
        self._local.add(stmt.buffer_var)
        new = self.generic_mutate(stmt)
        return _no_op() if is_no_op(new.body) else new

    def visit_decl_buffer_(self, stmt: DeclBuffer) -> Stmt:
        buffer = self._declared(stmt.buffer)
        if buffer is stmt.buffer:
            new = self.generic_mutate(stmt)
        else:
            # A loop of extent one (or a constant let) substituted away may be named in the
            # buffer's shape, strides or offset: the declaration and every use take the
            # substituted buffer, or the loop var would be used outside its definition.
            self.buffer_subst[stmt.buffer] = buffer
            try:
                body = self.visit_stmt(stmt.body)
            finally:
                del self.buffer_subst[stmt.buffer]
            new = DeclBuffer(buffer, body, span=stmt.span)
        return _no_op() if is_no_op(new.body) else new

    def _layout_vars(self, buffer: Buffer) -> tuple[Var, ...]:
        """The variables of ``buffer``'s shape, strides and offset (computed once a buffer:
        :meth:`visit_buffer` asks at every buffer reference)."""
        found = self.layout_vars.get(buffer)
        if found is None:
            found = tuple(v for e in (*buffer.shape, *buffer.strides, buffer.elem_offset)
                          for v in free_vars(e))
            self.layout_vars[buffer] = found
        return found

    def _declared(self, buffer: Buffer) -> Buffer:
        """``buffer`` with the substituted vars in its shape, strides and offset replaced."""
        if not self.subst or not any(v in self.subst for v in self._layout_vars(buffer)):
            return buffer
        return dataclasses.replace(
            buffer,
            shape=tuple(self.visit_expr(e) for e in buffer.shape),
            strides=tuple(self.visit_expr(e) for e in buffer.strides),
            elem_offset=self.visit_expr(buffer.elem_offset),
        )

    def visit_buffer(self, buffer: Buffer) -> Buffer:
        declared = self.buffer_subst.get(buffer)
        if declared is not None or not self.subst:
            return buffer if declared is None else declared
        # A buffer used without a declaration (``T.Buffer((n, n), data=A.data)`` in the body)
        # may name a constant let this pass substitutes and drops: it follows, the same new
        # buffer for every use under the same substitution.
        key = tuple((v, self.subst[v]) for v in self._layout_vars(buffer) if v in self.subst)
        if not key:
            return buffer
        known = self.undeclared.get(buffer)
        if known is not None and len(known[0]) == len(key) and all(
                a is c and b is d for (a, b), (c, d) in zip(known[0], key)):
            return known[1]
        renamed = self._declared(buffer)
        self.undeclared[buffer] = (key, renamed)
        return renamed

    def visit_attr_stmt_(self, stmt: AttrStmt) -> Stmt:
        new = self.generic_mutate(stmt)
        return _no_op() if is_no_op(new.body) else new


def simplify_stmt(stmt: Stmt, analyzer: Analyzer | None = None, max_rounds: int = 4) -> Stmt:
    """Simplify ``stmt`` until it stops changing (at most ``max_rounds`` rounds).

    A round sees everything its own rewrites enable (facts flow forward and inward, a
    sequence it flattens gives the facts of its statements to the ones after it), so a
    next round runs only when the round says it may have missed something
    (:attr:`Simplifier.revisit`). Measured on the 53 benchmark kernels for two targets, a
    second round never changed a result; skipping it saves 15-20% of the lowering time.
    """
    previous: Simplifier | None = None
    for _ in range(max(1, max_rounds)):
        simplifier = Simplifier(analyzer)
        if previous is not None:
            simplifier.share_memos(previous)
        previous = simplifier
        new = simplifier.visit_stmt(stmt)
        if new is stmt or structural_equal(new, stmt):
            return stmt
        stmt = new
        if not simplifier.revisit:
            break
    return stmt


@function_pass("simplify")
def _simplify(func: PrimFunc) -> PrimFunc:
    """Arithmetic simplification and dead-code cleanup (see :mod:`lowering.transforms.simplify`)."""
    rounds = int(PassContext.current().option("simplify", "max_rounds", 4))
    body = simplify_stmt(func.body, Analyzer(), rounds)
    return func if body is func.body else func.with_body(body)


simplify: FunctionPass = _simplify
"""The ``simplify`` pass (a :class:`FunctionPass`)."""
