"""Automatic parallelization (pass ``parallelize_loops``, opt_level 1).

A ``T.compute`` nest, a block over spatial axes or a plain loop filling an array is
serial as written, and runs on one core while ``T.parallel`` would use all of them. This
pass makes an outermost serial loop parallel when doing so cannot change any result:

* the loop is not inside another loop (but for loops of fewer than :data:`MIN_EXTENT`
  iterations wrapping it alone, such as a batch loop of one), has no annotations, and
  nothing in it is parallel already;
* its body has no side effects beyond buffer stores (no assertions, no extern calls,
  no builtins other than pure ones), so iterations differ only in what they store;
* the race check (``lowering/checks/race_check.py``, the rule ``T.parallel`` loops are held
  to) proves that no iteration writes an element another iteration reads or writes,
  with every allocation placed as it would be for a parallel loop (buffers used only
  inside the loop become private to each iteration); a loop the check cannot prove is
  left serial, never reported;
* parameters may be views of one array (the race check assumes they are not): the loop
  carries the annotation ``{"tvmscript.parallel_if": cond}``, ``cond`` testing at run
  time that each array the loop writes overlaps no other array it uses; when the test
  fails, code generation runs the same outlined body over the whole range, in order, on
  the calling thread (the serial loop's exact semantics);
* the work is worth a fork/join: at least :data:`MIN_WORK` innermost iterations and
  :data:`MIN_EXTENT` iterations of the loop itself (symbolic extents, of the loop or of
  the loops inside it, are tested in ``cond``).

A serial loop whose body is a ``T.parallel`` loop storing only at indices free of the
serial variable (``for i: for j in T.parallel(n): B[j] = B[j] + A[i, j]``, a column sum
written row by row) is swapped with it (``_Candidates.hoist``): one fork instead of one per
``i``, and each element's updates in one serial loop, in the same order, which the late
passes keep in a register (a 4096 x 4096 column sum 6.5 -> 1.45 ms on an AVX-512 host; numba's
column-blocked twin 4.9). The race check must prove the swapped parallel loop independent
across every ``i``; parameters that may overlap get a run-time test, and the loops as
written run when it fails.

Each iteration runs the same operations on the same values as in the serial loop, so
results are bit-identical. ``bounds_check=True`` (whose asserts come later in the pipeline)
turns such a loop back to serial wherever an assert lands inside it: a failing access must
raise after exactly the serial writes, with its index in the message.
``PassContext(config={"parallelize_loops": {"enabled": False}})`` keeps every serial loop
serial.
"""

from __future__ import annotations

from typing import Any

from irbuilder.ir import (
    GE,
    Allocate,
    AssertStmt,
    Buffer,
    BufferLoad,
    BufferStore,
    Call,
    CallKind,
    Cast,
    For,
    ForKind,
    IfThenElse,
    IntImm,
    Let,
    LetStmt,
    Mul,
    PrimExpr,
    PrimFunc,
    Stmt,
    StmtExprMutator,
    Var,
    While,
    as_dtype,
    post_order_visit,
    rebuild,
)

from ..analysis import substitute
from ..analysis.loads import reads_memory
from ..analysis.vars import depends_on, free_vars
from ..checks.race_check import loop_race
from ..late.versioning import all_of, disjoint
from ..pass_infra import PassContext, function_pass
from .compact_buffer import compact_buffer_allocation
from .plan_alloc import STACK_BUFFER_BYTES, plan_allocation_location
from .unroll import copy_with_fresh_vars

__all__ = ["MIN_EXTENT", "MIN_WORK", "PARALLEL_IF", "child_stmts", "has_loop",
           "no_alias_condition", "param_bytes", "parallelize_loops"]

PARALLEL_IF = "tvmscript.parallel_if"
"""Loop annotation of a parallel loop: a bool expression; when false at run time the loop
runs serially, in order, on the calling thread."""

MIN_WORK = 1 << 16
"""Innermost iterations a loop nest needs before it is parallelized."""

MIN_EXTENT = 4
"""Iterations the parallelized loop itself needs."""

CHUNKS = (4096, 2048, 1024, 512, 256)
"""Chunk lengths an innermost loop is split into (the first dividing its extent)."""

PURE_BUILTINS = frozenset({"likely", "reinterpret", "if_then_else", "assume"})
"""Builtins without side effects: a loop calling only these differs between iterations only
in what it stores."""
_U64 = as_dtype("uint64")


def _blocks_parallel(node: Any) -> bool:
    """Whether ``node`` rules its enclosing loop out (see the module docstring)."""
    if isinstance(node, AssertStmt):
        return True
    if isinstance(node, For):
        return node.kind is not ForKind.SERIAL and node.kind is not ForKind.VECTORIZED \
            and node.kind is not ForKind.UNROLLED
    if isinstance(node, Call):
        if node.kind in (CallKind.EXTERN,):
            return True
        return node.kind is CallKind.BUILTIN and node.op not in PURE_BUILTINS
    return False


def _inner_work(loop: For) -> int | None:
    """Innermost iterations of one iteration of ``loop``: the largest product of constant
    loop extents along a path (None when an inner extent is not constant)."""
    unknown = False

    def work(stmt: Any) -> int:
        nonlocal unknown
        best = 1
        for child in child_stmts(stmt):
            best = max(best, work(child))
        if isinstance(stmt, For):
            if isinstance(stmt.extent, IntImm):
                return best * max(stmt.extent.value, 0)
            unknown = True
        if isinstance(stmt, While):
            unknown = True
        return best

    total = work(loop.body)
    return None if unknown else total


_I64 = as_dtype("int64")


def _symbolic_work(loop: For) -> PrimExpr | None:
    """Innermost iterations of one iteration of ``loop`` as an int64 expression of its
    symbolic extents (sums over statement lists, products down loops), or None when a
    ``while`` loop or an extent reading memory makes it unknown."""

    def work(stmt: Any) -> PrimExpr | None:
        total: PrimExpr | None = None
        for child in child_stmts(stmt):
            part = work(child)
            if part is None:
                return None
            total = part if total is None else total + part
        if total is None:
            total = IntImm(_I64, 1)
        if isinstance(stmt, While):
            return None
        if isinstance(stmt, For):
            if reads_memory(stmt.extent) or not stmt.extent.dtype.is_int:
                return None
            extent = stmt.extent if stmt.extent.dtype == _I64 else Cast(_I64, stmt.extent)
            return Mul(extent, total)
        return total

    total = work(loop.body)
    if total is None:
        return None
    # only values fixed before the loop: not its own variable (a triangular nest's
    # ``range(i + 1)``) nor anything bound inside it
    inside: set[int] = {id(loop.loop_var)}

    def bound(node: Any) -> None:
        if isinstance(node, For):
            inside.add(id(node.loop_var))
        elif isinstance(node, (LetStmt, Let)):
            inside.add(id(node.var))

    post_order_visit(loop.body, bound)
    return None if any(id(v) in inside for v in free_vars(total)) else total


def child_stmts(stmt: Any) -> list[Stmt]:
    """The statements directly inside ``stmt`` (body, branches, sequence)."""
    out: list[Stmt] = []
    for name in ("body", "then_case", "else_case"):
        child = getattr(stmt, name, None)
        if isinstance(child, Stmt):
            out.append(child)
    out.extend(getattr(stmt, "seq", ()))
    return out


def _accessed(loop: For) -> tuple[list[Buffer], list[Buffer]]:
    """Buffers the loop stores to and buffers it loads from (by identity, in order)."""
    stored: dict[int, Buffer] = {}
    loaded: dict[int, Buffer] = {}

    def visit(node: Any) -> None:
        if isinstance(node, BufferStore):
            stored.setdefault(id(node.buffer), node.buffer)
        elif isinstance(node, BufferLoad):
            loaded.setdefault(id(node.buffer), node.buffer)

    post_order_visit(loop.body, visit)
    return list(stored.values()), list(loaded.values())


def param_bytes(buffer: Buffer) -> tuple[PrimExpr, PrimExpr] | None:
    """``[lo, hi)`` of a parameter buffer's array (C-contiguous, checked on entry)."""
    if not (isinstance(buffer.elem_offset, IntImm) and buffer.elem_offset.value == 0):
        return None
    size: PrimExpr = IntImm(_U64, buffer.dtype.itemsize)
    for dim in buffer.shape:
        if not dim.dtype.is_integer:
            return None
        size = size * Cast(_U64, dim)
    lo = Cast(_U64, buffer.data)
    return lo, lo + size


def no_alias_condition(func: PrimFunc, loop: For) -> list[PrimExpr] | None:
    """Tests that every parameter array the loop writes overlaps no other one it uses."""
    params = {b.data: b for b in func.buffer_map.values()}
    stored, loaded = _accessed(loop)
    # In parameter order (not set order): the same kernel must give the same IR text in
    # every process, or the object cache, keyed by that text, would miss.
    stored_data = {b.data for b in stored}
    loaded_data = {b.data for b in loaded}
    written = [data for data in params if data in stored_data]
    used = [data for data in params if data in stored_data or data in loaded_data]
    checks: list[PrimExpr] = []
    done: set[tuple[int, int]] = set()
    for w in written:
        for other in used:
            if other is w or (id(other), id(w)) in done:
                continue
            done.add((id(w), id(other)))
            a, b = param_bytes(params[w]), param_bytes(params[other])
            if a is None or b is None:
                return None
            checks.append(disjoint(a, b))
    return checks


class _Candidates(StmtExprMutator):
    """Outermost serial loops (not below any loop), offered to ``decide``."""

    def __init__(self, func: PrimFunc) -> None:
        super().__init__()
        self.func = func

    def visit_expr(self, expr: PrimExpr) -> PrimExpr:
        return expr

    def visit_while_(self, node: While) -> Stmt:
        return node

    def visit_for_(self, node: For) -> Stmt:
        if node.kind is not ForKind.SERIAL or node.annotations:
            return node
        hoisted = self.hoist(node)
        if hoisted is not None:
            return hoisted
        new = self.decide(node)
        if new is not None:
            return new
        if (
            isinstance(node.extent, IntImm)
            and node.extent.value < MIN_EXTENT
            and isinstance(node.body, For)
        ):
            # a batch loop of one (or a few) iterations around the real nest: the loop
            # inside it may be parallel, forked once per outer iteration
            inner = self.visit_for_(node.body)
            if inner is not node.body:
                wrapped: For = rebuild(node, {"body": inner})
                return wrapped
        return node

    def decide(self, loop: For) -> For | None:
        found: list[bool] = []
        post_order_visit(loop.body, lambda n: found.append(True) if _blocks_parallel(n) else None)
        if found:
            return None
        inner = _inner_work(loop)
        symbolic = _symbolic_work(loop) if inner is None else None
        if inner == 0 or (inner is None and symbolic is None):
            return None
        checks = no_alias_condition(self.func, loop)
        if checks is None:
            return None
        extent = loop.extent
        if symbolic is not None:
            # inner extents known only at run time: test the nest's whole work there
            wide = extent if extent.dtype == _I64 else Cast(_I64, extent)
            checks.append(GE(extent, IntImm(extent.dtype, MIN_EXTENT)))
            checks.append(GE(Mul(wide, symbolic), IntImm(_I64, MIN_WORK)))
        elif isinstance(extent, IntImm):
            assert inner is not None
            if extent.value < MIN_EXTENT or extent.value * inner < MIN_WORK:
                return None
        else:
            assert inner is not None
            needed = max(MIN_EXTENT, -(-MIN_WORK // inner))
            checks.append(GE(extent, IntImm(extent.dtype, needed)))
        if self._races(loop):
            return None
        annotations = {PARALLEL_IF: all_of(checks)} if checks else {}
        return _chunked(loop, 0 if inner is None else inner, annotations)

    def hoist(self, loop: For) -> Stmt | None:
        """``for i: for j in T.parallel: body`` as ``for j in T.parallel: for i: body``
        when every store of ``body`` is at an index free of ``i`` (the serial loop only
        repeats updates of the same elements: a column sum written row by row) and the
        race check proves the swapped parallel loop independent across all of ``i``.
        Each element then sees the same operations in the same order, in one fork
        instead of one per ``i``, with the updates of an element in one serial loop (an
        accumulator the late passes keep in registers). Parameters that may overlap get
        a run-time test; the loops as written run when it fails."""
        inner = loop.body
        if not (isinstance(inner, For) and inner.kind is ForKind.PARALLEL
                and not inner.annotations):
            return None
        outer_var = loop.loop_var
        if depends_on(inner.min, outer_var) or depends_on(inner.extent, outer_var):
            return None
        stores: list[BufferStore] = []
        blocked: list[bool] = []
        params = {id(b.data) for b in self.func.buffer_map.values()}

        def visit(node: Any) -> None:
            if isinstance(node, BufferStore):
                stores.append(node)
            if isinstance(node, (BufferStore, BufferLoad)) and id(node.buffer.data) not in params:
                # a buffer the function allocates: with two copies of the loop its uses
                # would meet above both, and it would no longer be private to an iteration
                blocked.append(True)
            elif _blocks_parallel(node) or isinstance(node, (Allocate, While)):
                blocked.append(True)

        post_order_visit(inner.body, visit)
        if blocked or not stores or any(
                depends_on(index, outer_var) for store in stores for index in store.indices):
            return None
        serial = For(outer_var, loop.min, loop.extent, ForKind.SERIAL, inner.body,
                     span=loop.span)
        swapped = For(inner.loop_var, inner.min, inner.extent, ForKind.PARALLEL, serial,
                      span=inner.span)
        if self._races(swapped, replacing=loop):
            return None
        checks = no_alias_condition(self.func, swapped)
        if checks is None:
            return None
        if not checks:
            return swapped
        # the loops as written keep their variables; the swapped copy gets fresh ones
        fresh = copy_with_fresh_vars(swapped)
        return IfThenElse(all_of(checks), fresh, loop, span=loop.span)

    def _races(self, loop: For, replacing: For | None = None) -> bool:
        """Whether running ``loop`` in parallel could race, allocations placed as they
        would be for a parallel loop."""
        trial_loop = rebuild(loop, {"kind": ForKind.PARALLEL})
        old = loop if replacing is None else replacing
        trial = self.func.with_body(_Replace(old, trial_loop).visit_stmt(self.func.body))
        with PassContext():
            placed = compact_buffer_allocation(plan_allocation_location(trial))
        target = _find_loop(placed.body, loop)
        if target is None or _heap_inside(target):
            return True
        return loop_race(placed, target) is not None


def _chunked(loop: For, inner: int, annotations: dict[str, Any]) -> For:
    """``loop`` made parallel; an innermost loop becomes parallel chunks of a serial loop,
    so the late stage's rewrites (streaming, gather fast paths) see a serial loop."""
    extent = loop.extent
    if inner == 1 and not has_loop(loop.body) and isinstance(extent, IntImm):
        for chunk in CHUNKS:
            if extent.value % chunk == 0 and extent.value // chunk >= MIN_EXTENT:
                dtype = loop.loop_var.dtype
                outer = Var(f"{loop.loop_var.name}_outer", dtype)
                lane = Var(f"{loop.loop_var.name}_inner", dtype)
                index = loop.min + outer * IntImm(dtype, chunk) + lane
                body = substitute(loop.body, {loop.loop_var: index})
                serial = For(lane, IntImm(dtype, 0), IntImm(dtype, chunk), ForKind.SERIAL, body,
                             span=loop.span)
                return For(outer, IntImm(dtype, 0), IntImm(dtype, extent.value // chunk),
                           ForKind.PARALLEL, serial, annotations=annotations, span=loop.span)
    result: For = rebuild(loop, {"kind": ForKind.PARALLEL, "annotations": annotations})
    return result


def has_loop(stmt: Stmt) -> bool:
    """Whether a ``for`` or ``while`` loop is anywhere in ``stmt``."""
    found: list[bool] = []
    post_order_visit(stmt, lambda n: found.append(True) if isinstance(n, (For, While)) else None)
    return bool(found)


class _Replace(StmtExprMutator):
    def __init__(self, old: For, new: For) -> None:
        super().__init__()
        self.old = old
        self.new = new

    def visit_expr(self, expr: PrimExpr) -> PrimExpr:
        return expr

    def visit_for_(self, node: For) -> Stmt:
        return self.new if node is self.old else node


def _find_loop(body: Stmt, loop: For) -> For | None:
    found: list[For] = []

    def visit(node: Any) -> None:
        if isinstance(node, For) and node.loop_var is loop.loop_var:
            found.append(node)

    post_order_visit(body, visit)
    return found[0] if found else None


def _heap_inside(loop: For) -> bool:
    """Whether an allocation inside the loop would be a heap allocation per iteration."""
    heap: list[bool] = []

    def visit(node: Any) -> None:
        if isinstance(node, Allocate):
            size = node.extent
            bytes_ = size.value * node.dtype.itemsize if isinstance(size, IntImm) else None
            if bytes_ is None or bytes_ > STACK_BUFFER_BYTES:
                heap.append(True)

    post_order_visit(loop.body, visit)
    return bool(heap)


@function_pass("parallelize_loops", opt_level=1)
def parallelize_loops(func: PrimFunc) -> PrimFunc:
    """Make outermost serial loops parallel when provably race-free (see module)."""
    enabled = PassContext.current().option("parallelize_loops", "enabled")
    if enabled is not None and not enabled:
        return func
    body = _Candidates(func).visit_stmt(func.body)
    return func if body is func.body else func.with_body(body)
