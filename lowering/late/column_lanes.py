"""The ``vectorize_parallel_columns`` pass: a parallel loop over the contiguous dimension,
around serial loops, runs ``L`` of its iterations at once, one per vector lane.

``for j in T.parallel(n): for i in range(1, m): O[i, j] = O[i - 1, j] + A[i, j]`` (a
cumulative sum down the columns) has a serial inner loop stepping a whole row per
iteration: each access touches one float of a cache line, and nothing vectorizes (on the
Zen 5 host 14.7 ms for 1024 x 4096 float32, against 0.94 ms for numba's twin that runs
blocks of columns side by side). Iterations of a parallel loop are independent (the
promise ``T.parallel`` makes, checked by the race check), so ``L`` neighbouring columns
may run in lock-step, column ``j0 + u`` in lane ``u``, each performing its own operations
in its own order (bit-exact)::

    for j_lanes in T.parallel(n // L):
        for i in range(1, m):
            O[T.Ramp(i * n + j_lanes * L, 1, L)] = O[T.Ramp(...)] + A[T.Ramp(...)]
    for j_rest in range(n % L):                  # leftover columns, as written
        <the body>

The body is vectorized as a ``T.vectorized`` loop would be (inner serial loops run once
for all lanes: :func:`lowering.transforms.vectorize.vectorize_body`). Applied to PARALLEL
loops without a thread binding whose body holds a serial loop and, wherever it indexes
memory with the loop variable, does so with a coefficient of 1 (contiguous lanes, never a
gather), when the body has a vector form (no allocation, no extern call, ...) and the loop
runs at least ``L`` times. ``L`` is the Target's vector width over the widest element the
body touches (16 float32 on AVX-512, 8 on AVX2), doubled while the group stays within
:data:`COLUMN_BLOCK_BYTES` and leaves at least :data:`MIN_COLUMN_GROUPS` groups. A loop
``parallelize_loops`` made parallel runs its iterations in order when its arrays overlap
(its run-time test): its lanes run behind that test, the loop as written otherwise.

The serial loop that is a parallel loop's body gets the same lanes when the race check
proves its iterations independent, behind a test that the arrays it writes overlap none of
the others it uses: ``for i in T.parallel(m): for j in range(n): acc = T.alloc_buffer((1,));
acc[0] = 0; for k: acc[0] += A[i, k] * B[k, j]; C[i, j] = acc[0]`` (a TVM user's matmul)
runs ``j`` in lanes, every lane with its own copy of the scratch (at most
:data:`MAX_SCRATCH` elements, indexed independently of ``j``), the groups in a serial loop
as wide as :data:`COLUMN_BLOCK_BYTES` (the parallel loop gives the threads their work) and
the per-lane scratch they carry across the inner loop within half the vector registers. On
the Zen 5 host a 512^3 float32 matmul written so went from 30 to 1.5 ms.

A parallel body that is a sequence of such nests has each nest looked at on its own: a
padded convolution whose padding ``inline_padding`` read behind ``T.if_then_else`` and whose
column loop ``partition_loops`` cut into the first column, the middle and the last (a
depthwise 3 x 3 in NHWC, 1 x 112 x 112 x 64 float32: 1.78 -> 0.68 ms on one thread of the
Zen 2 host, the channels in lanes with the padding tests one branch per tap).

``jam_parallel_reductions`` and ``branch_select_updates`` run earlier and would turn such a
loop's body into a form without lanes (interleaved scalar chains, branches); they leave a
loop alone when :func:`runs_in_column_lanes` says this pass takes it (a column argmax as
TVM prints it, 1024 x 4096 float32: 13 -> 0.8 ms on an Intel AVX-512 host).
"""

from __future__ import annotations

from irbuilder.ir import (
    Add,
    Allocate,
    Buffer,
    BufferLoad,
    BufferStore,
    Cast,
    DeclBuffer,
    FloorDiv,
    FloorMod,
    For,
    ForKind,
    IfThenElse,
    IntImm,
    Mul,
    PrimExpr,
    PrimFunc,
    SeqStmt,
    Stmt,
    StmtExprMutator,
    Sub,
    Var,
    as_dtype,
    make_data_var,
    post_order_visit,
    rebuild,
    seq,
    structural_equal,
)

from ..analysis.vars import depends_on
from ..arith.canonical import linear_coefficient
from ..pass_infra import FunctionPass, PassContext, function_pass
from ..target import Target, as_target
from ..transforms.auto_parallel import PARALLEL_IF
from ..transforms.unroll import copy_with_fresh_vars
from ..transforms.vectorize import CannotVectorize, vectorize_body
from .panel_order import panel_major
from .row_chains import peel
from .row_promote import Swap, interleave_nest_level
from .versioning import all_of, interleaved_behind_parallel_if

__all__ = ["vectorize_column_loop", "vectorize_parallel_columns"]


COLUMN_BLOCK_BYTES = 256
"""Widest group of columns, in bytes: four cache lines of every row. A wider group than one
vector (LLVM splits it into several) gives each thread more independent rows' worth of
lines in flight: the 1024 x 4096 float32 column cumsum took 1.9 ms with 8-lane groups
(AVX2), 1.1 ms with 16 and 0.54 ms with 64 on the Zen 5 host (AVX-512: 1.07 ms with 16,
0.49 ms with 64); a 3-d permutation was unchanged."""

_I32 = as_dtype("int32")
_TRUE = IntImm(as_dtype("bool"), 1)

MIN_COLUMN_GROUPS = 64
"""Fewest parallel groups a widened group may leave (work for many cores): the group stays
one vector wide when the loop is too short to widen it."""


class _NotColumns(Exception):
    """Stops the walk at the first access that is not a column lane."""


def _column_accesses(body: Stmt, var: Var) -> int | None:
    """The widest element size (bytes) of the accesses of ``body``, when every index that
    depends on ``var`` steps one element per ``var`` and a serial loop is inside; else
    None."""
    widest = 0
    has_loop = False

    def visit(node: object) -> None:
        nonlocal widest, has_loop
        if isinstance(node, For):
            has_loop = has_loop or node.kind is ForKind.SERIAL
        if isinstance(node, (BufferLoad, BufferStore)):
            widest = max(widest, node.buffer.dtype.itemsize)
            for index in node.indices:
                if depends_on(index, var) and (
                    index.dtype.lanes != 1 or linear_coefficient(index, var) != 1
                ):
                    raise _NotColumns

    try:
        post_order_visit(body, visit)
    except _NotColumns:
        return None
    return widest if has_loop and widest else None


def vectorize_column_loop(loop: For, target: Target, kind: ForKind = ForKind.PARALLEL,
                          min_groups: int = MIN_COLUMN_GROUPS,
                          max_lanes: int | None = None) -> Stmt | None:
    """``loop`` run in column lanes (module doc), its groups a loop of ``kind``, or None
    when it does not apply. Scratch allocated at the top of the body (one accumulator per
    iteration, ``for j: acc = alloc; acc[0] = 0; for k: acc[0] += ...``) gets a copy per
    lane when no access to it depends on the loop variable. Groups running serially
    (``kind``) leave their leftover columns to narrower groups (a 56-wide row: 32 + 16 + 8
    lanes), at most ``max_lanes`` wide."""
    if loop.kind is not ForKind.PARALLEL or loop.thread_binding is not None:
        return None
    var = loop.loop_var
    if not var.dtype.is_int:
        return None
    scratch, inner = peel(loop.body, (Allocate, DeclBuffer))
    item = _column_accesses(inner, var)
    if item is None or not _per_lane(scratch, inner, var):
        return None
    lanes = target.vector_bits // 8 // item
    if max_lanes is not None:
        lanes = min(lanes, max_lanes)
    if lanes < 2:
        return None
    n = loop.extent
    if isinstance(n, IntImm) and n.value < lanes:
        return None
    carried = sum(a.extent.value * a.dtype.itemsize for a in scratch
                  if isinstance(a, Allocate) and isinstance(a.extent, IntImm))
    while (
        isinstance(n, IntImm)
        and 2 * lanes * item <= COLUMN_BLOCK_BYTES
        and 2 * lanes * carried <= _register_budget(target)
        and n.value // (2 * lanes) >= min_groups
    ):
        lanes *= 2
    dtype = var.dtype
    width = IntImm(dtype, lanes)
    group = Var(f"{var.name}_lanes", dtype)
    first = group * width
    if not (isinstance(loop.min, IntImm) and loop.min.value == 0):
        first = loop.min + first
    lane_of = {id(a.buffer_var): _lanes_buffer(a, lanes) for a in scratch
               if isinstance(a, Allocate)}
    try:
        body = vectorize_body(var, _PerLane(lane_of, var, first, lanes).visit_stmt(inner),
                              first, lanes)
    except CannotVectorize:
        return None
    for wide in lane_of.values():
        body = Allocate(wide.data, wide.dtype, wide.shape[0], _TRUE, DeclBuffer(wide, body))
    groups = IntImm(dtype, n.value // lanes) if isinstance(n, IntImm) else FloorDiv(n, width)
    vectorized = For(group, IntImm(dtype, 0), groups, kind, body,
                     annotations=loop.annotations, span=loop.span)
    if isinstance(n, IntImm) and n.value % lanes == 0:
        return vectorized
    left = IntImm(dtype, n.value % lanes) if isinstance(n, IntImm) else FloorMod(n, width)
    rest = Var(f"{var.name}_rest", dtype)
    done = loop.min + groups * width
    leftover = For(rest, IntImm(dtype, 0), left, ForKind.SERIAL,
                   copy_with_fresh_vars(loop.body, {var: done + rest}), span=loop.span)
    if kind is ForKind.SERIAL and isinstance(left, IntImm):
        narrower = vectorize_column_loop(rebuild(leftover, {"kind": ForKind.PARALLEL}),
                                         target, kind, min_groups, lanes // 2)
        if narrower is not None:
            return SeqStmt((vectorized, narrower), span=loop.span)
    return SeqStmt((vectorized, leftover), span=loop.span)


def _register_budget(target: Target) -> int:
    """Bytes of per-lane scratch a group may hold: half the vector registers (the scratch
    carries accumulators across an inner loop; LLVM keeps them in registers only when they
    fit). A TVM user's 512^3 matmul, jammed four rows deep, held 4 x 64 lanes: 16 AVX-512
    registers, but 32 of AVX2's 16 (spilled: 7.9 ms; 16 lanes, 8 registers: see the pass
    doc)."""
    registers = 32 if target.has_feature("avx512f") else 16
    return registers * target.vector_bits // 8 // 2


def _per_lane(scratch: list[Stmt], body: Stmt, var: Var) -> bool:
    """Whether the ``scratch`` allocations (and declarations of them only) have constant
    extents and ``body`` indexes them, in one dimension, independently of ``var``."""
    allocated = {id(a.buffer_var) for a in scratch if isinstance(a, Allocate)}
    if any(isinstance(a, Allocate) and not (isinstance(a.extent, IntImm)
                                            and a.extent.value <= MAX_SCRATCH)
           for a in scratch):
        return False
    if any(isinstance(d, DeclBuffer) and id(d.buffer.data) not in allocated for d in scratch):
        return False
    ok = True

    def visit(node: object) -> None:
        nonlocal ok
        if isinstance(node, (BufferLoad, BufferStore)) and id(node.buffer.data) in allocated:
            ok = ok and len(node.indices) == 1 and not depends_on(node.indices[0], var)
        elif isinstance(node, Var) and id(node) in allocated:
            ok = False  # the address itself is used

    post_order_visit(body, visit)
    return ok


MAX_SCRATCH = 16
"""Most elements of a per-iteration scratch buffer given a copy per lane."""


def _lanes_buffer(alloc: Allocate, lanes: int) -> Buffer:
    assert isinstance(alloc.extent, IntImm)
    name = f"{alloc.buffer_var.name.removesuffix('_data')}_lanes"
    return Buffer(name, make_data_var(name, alloc.dtype), (IntImm(_I32, alloc.extent.value
                                                                  * lanes),), alloc.dtype)


class _PerLane(StmtExprMutator):
    """Element ``k`` of a scratch buffer becomes element ``k * lanes + (var - first)`` of
    its per-lane copy: lane ``u`` owns ``k * lanes + u``."""

    def __init__(self, wide: dict[int, Buffer], var: Var, first: PrimExpr, lanes: int) -> None:
        self.wide, self.var, self.first, self.lanes = wide, var, first, lanes

    def _at(self, index: PrimExpr) -> PrimExpr:
        if index.dtype.is_vector:
            # the scratch is already read or written as a vector (an inner T.vectorized
            # loop): its copies per lane would be vectors of vectors
            raise CannotVectorize("a per-iteration scratch accessed by a vector")
        lanes = IntImm(index.dtype, self.lanes)
        lane: PrimExpr = Sub(self.var, self.first)
        if lane.dtype != index.dtype:
            lane = Cast(index.dtype, lane)
        return Add(Mul(index, lanes), lane)

    def visit_buffer_load_(self, node: BufferLoad) -> PrimExpr:
        wide = self.wide.get(id(node.buffer.data))
        if wide is not None:
            return BufferLoad(wide, (self._at(node.indices[0]),))
        return self.generic_mutate(node)

    def visit_buffer_store_(self, stmt: BufferStore) -> Stmt:
        wide = self.wide.get(id(stmt.buffer.data))
        if wide is not None:
            return BufferStore(wide, self.visit_expr(stmt.value), (self._at(stmt.indices[0]),),
                               span=stmt.span)
        return self.generic_mutate(stmt)


def runs_in_column_lanes(loop: For) -> bool:
    """Whether ``vectorize_parallel_columns`` will run ``loop`` (a parallel loop) in column
    lanes for the PassContext's target: the passes before it that would rewrite its body
    into a form without lanes (jammed copies, branches) leave it alone."""
    if loop.kind is not ForKind.PARALLEL:
        return False
    return vectorize_column_loop(loop, as_target(PassContext.current().target)) is not None


class _Columns(StmtExprMutator):
    def __init__(self, func: PrimFunc, target: Target) -> None:
        self.func, self.target = func, target

    def visit_expr(self, expr: PrimExpr) -> PrimExpr:
        return expr

    def visit_for_(self, stmt: For) -> Stmt:
        if stmt.kind is ForKind.PARALLEL:
            lanes = vectorize_column_loop(stmt, self.target)
            out = (interleaved_behind_parallel_if(stmt, lanes) if lanes is not None
                   else self._inner_columns(stmt))
            if out is not None:
                return out
        return self.generic_mutate(stmt)

    def _inner_columns(self, loop: For) -> Stmt | None:
        """Column lanes of a serial loop of the perfect nest that is the parallel ``loop``'s
        body (``for i in T.parallel(m): for j in range(n): acc = 0; for k: acc += A[i, k] *
        B[k, j]``; a convolution's ``for y: for x``), innermost first, when its iterations
        are independent: its groups run serially, as wide as :data:`COLUMN_BLOCK_BYTES`
        allows (the parallel loop gives the threads their work), behind a test that the
        arrays it writes overlap none of the others it uses."""
        if set(loop.annotations) - {PARALLEL_IF}:
            return None
        parts = loop.body.seq if isinstance(loop.body, SeqStmt) else (loop.body,)
        bodies: list[Stmt] = []
        tests: list[PrimExpr] = []
        for part in parts:
            level = self._nest_lanes(loop, part)
            if level is not None:
                tests.extend(t for t in level[1]
                             if not any(structural_equal(t, seen) for seen in tests))
            bodies.append(part if level is None else level[0])
        if all(b is p for b, p in zip(bodies, parts)):
            return None
        lanes: For = rebuild(loop, {"body": seq(bodies)})
        # the column groups are independent as the parallel iterations are: panel-major
        # order when the operand every iteration re-reads would not stay in a cache
        ordered: Stmt = lanes
        if PassContext.current().option("vectorize_parallel_columns", "panel_major", True):
            ordered = panel_major(lanes) or lanes
        # fresh variables: the loop as written stays beside it, in the else branch
        out = copy_with_fresh_vars(ordered)
        return IfThenElse(all_of(tests), out, loop, span=loop.span) if tests else out


    def _nest_lanes(self, loop: For, part: Stmt) -> tuple[Stmt, list[PrimExpr]] | None:
        """:func:`interleave_nest_level` of the nest ``part``, one statement of ``loop``'s
        body: ``partition_loops`` cuts a padded convolution's column loop into its first
        column, the middle and the last, one nest each, and each may run in lanes. The
        nest is looked at as if it were the loop's whole body (its iterations' conflicts
        are among themselves)."""
        if part is loop.body:
            return interleave_nest_level(self.func, loop, self._serial_lanes)
        alone = rebuild(loop, {"body": part})
        func = self.func.with_body(Swap(loop, alone).visit_stmt(self.func.body))
        return interleave_nest_level(func, alone, self._serial_lanes)

    def _serial_lanes(self, inner: For) -> Stmt | None:
        return vectorize_column_loop(inner, self.target, ForKind.SERIAL, min_groups=1)


@function_pass("vectorize_parallel_columns", opt_level=1)
def _vectorize_parallel_columns(func: PrimFunc) -> PrimFunc:
    """Run neighbouring iterations of a parallel loop over the contiguous dimension in
    vector lanes (module doc), as wide as the PassContext's target allows."""
    body = _Columns(func, as_target(PassContext.current().target)).visit_stmt(func.body)
    return func if body is func.body else func.with_body(body)


vectorize_parallel_columns: FunctionPass = _vectorize_parallel_columns
"""The ``vectorize_parallel_columns`` pass (a :class:`FunctionPass`)."""
