"""The ``tabulate_bindings`` pass: values an inner loop computes from its own variable only
are computed once per column into a table, and the nest reads the table.

A bilinear resize computes, for every output pixel ``(h, w)``, the source column
``x0 = int(floor((w + 0.5) * 0.5 - 0.5))``, its neighbour ``x1`` and the weight ``dx``:
functions of ``w`` alone, recomputed for each of the 512 rows (and each channel). LLVM
hoists what the inner loop does not change, not what the outer loop does not change. A
skilled user precomputes them (numba's twin does); this pass does it for every perfect
nest::

    for h in range(512):                    x0_table = T.alloc_buffer((512,), "int32")
        for w in range(512):                for w in range(512):        # once
            x0 = <f(w)>              ->         x0_table[w] = <f(w)>
            O[h, w] = A[.., x0] ...         for h in range(512):
                                                for w in range(512):
                                                    x0 = x0_table[w]
                                                    O[h, w] = A[.., x0] ...

Applied to a SERIAL loop without annotations, or a PARALLEL one (its threads then share
the tables, filled before it and only read in it), of at least :data:`MIN_OUTER`
iterations (a constant count), whose body is one SERIAL loop without annotations of at most
:data:`MAX_TABLE` iterations (constant bounds), to the bindings (``LetStmt``) at the top of
the inner body whose value depends on the inner variable, on variables defined outside
the nest and on other such bindings only, reads no memory and costs something (a call such
as ``floor``, a cast between integers and floats, a division), when code other than these
bindings uses it. Every such binding was evaluated in every inner iteration of every outer
one: the table's loop evaluates the same expressions, in the same types, for the same
values of the inner variable, so the rewrite is exact. Tables of 32-bit values are at most
4 KiB: they live on the stack.

Such values written inside an expression rather than bound (TOPI's nearest resize computes
its source column ``floor(0.7 * w)`` inside the load's index) are bound first
(:func:`_bind_column_values`): the largest expressions of the inner variable alone holding a
call or an integer/float conversion that can neither trap nor have an effect (set 11's
``resize_nearest``, 8 x 64 x 56^2 -> 80^2: 4-7 ms -> 0.95 ms, numba 0.6-0.9).
"""

from __future__ import annotations

from irbuilder.ir import (
    Allocate,
    Buffer,
    BufferLoad,
    BufferStore,
    Call,
    CallKind,
    Cast,
    DeclBuffer,
    Div,
    FloorDiv,
    FloorMod,
    For,
    ForKind,
    IntImm,
    LetStmt,
    Mod,
    PrimExpr,
    PrimFunc,
    Stmt,
    StmtExprMutator,
    StmtExprVisitor,
    Var,
    as_dtype,
    post_order_visit,
    rebuild,
    seq,
    structural_equal,
)
from irbuilder.ir.buffer import make_data_var

from ..analysis.loads import LoadCollector, reads_memory
from ..analysis.vars import depends_on, free_vars
from ..pass_infra import FunctionPass, function_pass
from ..transforms.auto_parallel import PARALLEL_IF
from ..transforms.unroll import copy_with_fresh_vars

__all__ = ["MAX_TABLE", "MIN_OUTER", "tabulate_bindings", "tabulate_nest"]

MAX_TABLE = 1024
"""Most iterations of the inner loop: a table of 32-bit values then fits the stack (4 KiB)."""

MIN_OUTER = 2
"""Fewest iterations of the outer loop (each reuses the table)."""

_TRUE = IntImm(as_dtype("bool"), 1)


def _costly(expr: PrimExpr) -> bool:
    found = False

    def visit(node: object) -> None:
        nonlocal found
        if isinstance(node, (Call, Div, FloorDiv, FloorMod, Mod)):
            found = True
        elif isinstance(node, Cast) and node.dtype.is_float != node.value.dtype.is_float:
            found = True

    post_order_visit(expr, visit)
    return found


def _converts_or_calls(expr: PrimExpr) -> bool:
    """Whether ``expr`` holds a call or a cast between integers and floats: the costs worth a
    table for an expression inside an index (a division by a constant stays: LLVM turns it
    into shifts, and later passes read ``w // 2`` in an index)."""
    found = False

    def visit(node: object) -> None:
        nonlocal found
        if isinstance(node, Call):
            found = True
        elif isinstance(node, Cast) and node.dtype.is_float != node.value.dtype.is_float:
            found = True

    post_order_visit(expr, visit)
    return found


def _only_pure_calls(expr: PrimExpr) -> bool:
    """Whether every call in ``expr`` is a pure intrinsic or a pure external function (a
    builtin such as a prefetch stays where it is)."""
    ok = True

    def visit(node: object) -> None:
        nonlocal ok
        if isinstance(node, Call) and node.kind not in (CallKind.INTRINSIC,
                                                         CallKind.PURE_EXTERN):
            ok = False

    post_order_visit(expr, visit)
    return ok


def tabulate_nest(outer: For) -> Stmt | None:
    """The nest with its inner variable's costly bindings tabulated (module doc), or None."""
    serial = outer.kind is ForKind.SERIAL and not outer.annotations
    # a parallel loop's run-time no-overlap test is about the arrays, not the tables
    parallel = outer.kind is ForKind.PARALLEL and set(outer.annotations) <= {PARALLEL_IF}
    if (not (serial or parallel) or outer.thread_binding is not None
            or not isinstance(outer.extent, IntImm) or outer.extent.value < MIN_OUTER):
        return None
    inner = outer.body
    if (not isinstance(inner, For) or inner.kind is not ForKind.SERIAL or inner.annotations
            or inner.thread_binding is not None or not isinstance(inner.min, IntImm)
            or not isinstance(inner.extent, IntImm)
            or not 0 < inner.extent.value <= MAX_TABLE):
        return None
    w = inner.loop_var
    outside = set(free_vars(outer))
    lets: list[LetStmt] = []
    body: Stmt = _bind_column_values(inner.body, w, outside)
    while isinstance(body, LetStmt):
        lets.append(body)
        body = body.body
    if not lets:
        return None
    column: dict[Var, LetStmt] = {}  # bindings of the inner variable only
    costly: dict[Var, bool] = {}
    for let in lets:
        value = let.value
        names = free_vars(value)
        if reads_memory(value) or not all(v is w or v in column or v in outside
                                          for v in names):
            continue
        if not any(v is w or v in column for v in names):
            continue  # invariant in the inner loop: LLVM hoists it
        dtype = let.var.dtype
        if dtype.lanes != 1 or dtype.is_bool or dtype.is_handle:
            continue
        column[let.var] = let
        costly[let.var] = _costly(value) or any(costly.get(v, False) for v in names)
    if not column:
        return None
    used = set(free_vars(body))
    for let in lets:
        if let.var not in column:
            used.update(free_vars(let.value))
    chosen = [let for let in lets if let.var in column and let.var in used
              and costly[let.var]]
    if not chosen:
        return None
    extent = inner.extent.value
    tables: dict[Var, Buffer] = {}
    for let in chosen:
        name = f"{let.var.name}_table"
        data = make_data_var(name, let.var.dtype, "local")
        tables[let.var] = Buffer(name, data, (IntImm(w.dtype, extent),), let.var.dtype,
                                 scope="local")
    # the table loop: every column binding in order, then one store per table
    step = Var(w.name, w.dtype)
    at: PrimExpr = step if inner.min.value == 0 else step + inner.min
    fill: Stmt = seq([BufferStore(tables[let.var], let.var, (step,)) for let in chosen])
    for let in reversed([let for let in lets if let.var in column]):
        fill = LetStmt(let.var, let.value, fill, span=let.span)
    fill = copy_with_fresh_vars(fill, {w: at})
    fill_loop = For(step, IntImm(w.dtype, 0), IntImm(w.dtype, extent), ForKind.SERIAL, fill,
                    span=inner.span)
    # the nest: the chosen bindings read their table
    offset: PrimExpr = w if inner.min.value == 0 else w - inner.min
    new_body = body
    for let in reversed(lets):
        table = tables.get(let.var)
        value = let.value if table is None else BufferLoad(table, (offset,))
        new_body = LetStmt(let.var, value, new_body, span=let.span)
    new_outer = rebuild(outer, {"body": rebuild(inner, {"body": new_body})})
    out: Stmt = seq([fill_loop, new_outer])
    for table in reversed(list(tables.values())):
        out = Allocate(table.data, table.dtype, table.shape[0], _TRUE, DeclBuffer(table, out))
    return out


def _bind_column_values(body: Stmt, w: Var, outside: set[Var]) -> Stmt:
    """``body`` with its costly expressions of ``w`` alone (and of variables defined outside
    the nest) bound at its top: a nearest resize's source column ``floor(0.7 * w)`` written
    inside a load's index, as TOPI prints it (costly: a call or a conversion between
    integers and floats). Only the largest such expressions, only those
    that can neither trap nor have an effect (the table evaluates them for every column,
    also where the body would not: under a condition) and read no memory; equal ones share
    one binding."""
    found: list[PrimExpr] = []
    memo: dict[int, bool] = {}

    def column_only(expr: PrimExpr) -> bool:
        """Whether ``expr`` uses only ``w`` and outside variables (memoized)."""
        hit = memo.get(id(expr))
        if hit is None:
            hit = all(v is w or v in outside for v in free_vars(expr))
            memo[id(expr)] = hit
        return hit

    class _Find(StmtExprVisitor):
        def visit_expr(self, expr: PrimExpr) -> None:
            if (expr.dtype.lanes == 1 and not expr.dtype.is_bool and not expr.dtype.is_handle
                    and _converts_or_calls(expr) and column_only(expr)
                    and depends_on(expr, w) and _only_pure_calls(expr)):
                collector = LoadCollector(traps_are_effects=True)
                collector.visit_expr(expr)
                if not collector.loads and not collector.impure:
                    found.append(expr)
                    return  # the largest: not its parts
            super().visit_expr(expr)

    _Find().visit_stmt(body)
    if not found:
        return body
    chosen: list[tuple[PrimExpr, Var]] = []
    replace: dict[int, Var] = {}
    for expr in found:
        var = next((v for e, v in chosen if structural_equal(e, expr)), None)
        if var is None:
            var = Var(f"{w.name}_col{len(chosen)}", expr.dtype)
            chosen.append((expr, var))
        replace[id(expr)] = var

    class _Replace(StmtExprMutator):
        def visit_expr(self, expr: PrimExpr) -> PrimExpr:
            var = replace.get(id(expr))
            return var if var is not None else super().visit_expr(expr)

    out = _Replace().visit_stmt(body)
    for expr, var in reversed(chosen):
        out = LetStmt(var, expr, out)
    return out


class _Tabulate(StmtExprMutator):
    def visit_expr(self, expr: PrimExpr) -> PrimExpr:
        return expr

    def visit_for_(self, stmt: For) -> Stmt:
        new = self.generic_mutate(stmt)
        if isinstance(new, For):
            out = tabulate_nest(new)
            if out is not None:
                return out
        return new


@function_pass("tabulate_bindings", opt_level=1)
def _tabulate_bindings(func: PrimFunc) -> PrimFunc:
    """Tabulate an inner loop's costly bindings of its own variable (module doc)."""
    body = _Tabulate().visit_stmt(func.body)
    return func if body is func.body else func.with_body(body)


tabulate_bindings: FunctionPass = _tabulate_bindings
"""The ``tabulate_bindings`` pass (a :class:`FunctionPass`)."""
