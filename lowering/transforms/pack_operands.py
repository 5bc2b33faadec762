"""The ``pack_transposed_operands`` pass (opt_level 1): an operand read across its rows by
the loop nest around it is first copied, transposed, into a scratch buffer the nest reads
along its rows.

``C[i, j] = sum_k A[i, k] * B[j, k]`` (a dense layer ``X @ W^T``, attention scores ``Q @
K^T``, a matmul with its second operand stored transposed) reads ``B`` along ``k``, the
innermost loop, and across ``j``: consecutive outputs of a row read different rows of
``B``. Nothing vectorizes across ``j`` there, and along ``k`` only a declared reduction may
(partial sums in lanes, then a horizontal sum per output); a plain loop's accumulation stays
one scalar chain per output, in source order. With ``Bt[k, j] = B[j, k]`` packed once, the
nest reads ``Bt[k, j]``: contiguous across ``j``, the shape of an ordinary matmul, whose
outputs the later passes compute in vector lanes and register tiles, each output's sum still
in source order (bit-identical to the nest as written; for a declared reduction, that order
replaces the lanes' partial sums).

A load qualifies when, in the loop nest of a loop ``O``:

* its buffer is a parameter or an allocation of the function that the nest never stores
  to, and its (flat) index is ``base + s * j + k`` for two loops ``j`` and ``k`` of the nest
  with constant bounds (``s >= extent(k)``, ``extent(j) >=`` :data:`MIN_COLUMNS`), every
  other loop of the nest absent from it and ``base`` a pure expression of variables defined
  outside ``O``;
* the copy reads only elements the nest reads (every loop around the load inside ``O`` has
  a constant, positive trip count and no condition guards it), or it provably stays inside
  the operand's buffer (constant ``base`` and size): nothing is read out of bounds;
* the nest reuses each packed element at least :data:`MIN_REUSE` times (tested at run time
  when the other loops' trip counts are symbolic: a dense layer over ``n = T.int32()`` rows)
  and the copy holds at most :data:`MAX_PACK_BYTES`;
* the nest has no assertion (``bounds_check=True``), extern call or side-effecting builtin.

``O`` is the outermost loop that allows it (most reuse): for the dense layer the parallel
row loop (one copy before it, itself parallel when large), for attention scores ``h, i, j,
k`` the ``i`` loop inside the head loop (one copy per head). The copy is a loop nest that
``transpose_tiles`` later moves through vector registers. When the nest writes a parameter
array, the packed nest runs behind a run-time test that those arrays do not overlap the
packed operand (the loop as written otherwise): the copy is taken before the nest runs, so
a write into the operand during the nest would otherwise go unseen.

Records are packed field by field: a load at ``base + s * j + c`` (``2 <= s <=``
:data:`MAX_RECORD_STRIDE`, ``0 <= c < s`` a constant field, no ``k`` loop) in the innermost
loop ``j`` of the nest, which stores contiguously along ``j``, reads field ``c`` of record
``j`` (the corners of a box ``B[j, 0..3]``, a point's coordinates). LLVM vectorizes such a
loop with interleaved loads, shuffling the fields apart for every vector of every outer
iteration; the copy ``B_packed[f * n + jj] = B[base + (j0 + jj) * s + c_f]`` (one loop over
the records, one row per field read) is made once, and the nest reads ``B_packed[f * n + j -
j0]`` contiguously. On the Zen 2 host, an IoU matrix of 3001 x 1499 boxes (two threads):
2.5 -> 0.6 ms (numba, the columns copied out by hand: 0.73). The reuse, size, bounds and
overlap conditions are the transposed copy's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from irbuilder.ir import (
    GE,
    Add,
    Allocate,
    AssertStmt,
    Buffer,
    BufferLoad,
    BufferStore,
    Call,
    CallKind,
    Cast,
    DeclBuffer,
    For,
    ForKind,
    IfThenElse,
    IntImm,
    Mul,
    PrimExpr,
    PrimFunc,
    Select,
    SeqStmt,
    Stmt,
    StmtExprMutator,
    StmtExprVisitor,
    Sub,
    Var,
    While,
    as_dtype,
    make_data_var,
    post_order_visit,
    structural_equal,
)
from irbuilder.ir.linear_form import supports_linear, to_linear

from ..analysis.loads import LocalAllocations, reads_memory
from ..analysis.vars import free_vars
from ..arith import simplify_expr
from ..late.versioning import all_of, byte_range, no_overlap_checks
from ..pass_infra import FunctionPass, function_pass
from .auto_parallel import PURE_BUILTINS
from .pack_facts import NestFacts, trip_count
from .unroll import copy_with_fresh_vars

__all__ = ["pack_transposed_operands"]

MIN_COLUMNS = 16
"""Fewest ``j`` iterations (columns of the packed copy) worth a copy: a vector's lanes."""

MIN_REUSE = 16
"""Fewest times the nest reads each packed element (the copy reads and writes it once)."""

MAX_PACK_BYTES = 32 << 20
"""Largest packed copy (bytes)."""

MAX_RECORD_STRIDE = 16
"""Widest record (elements from one ``j`` to the next) whose fields are packed: the fields
of a box, a point, a complex number or a pixel. A wider stride reads a column of a matrix,
left as it is (the copy would touch a cache line per element just the same)."""

PARALLEL_PACK = 1 << 16
"""Elements from which a copy made outside any parallel loop runs in parallel itself."""

_TRUE = IntImm(as_dtype("bool"), 1)
_I32 = as_dtype("int32")


@dataclass
class _Operand:
    """The loads of one buffer at ``base + stride * j + k`` in a nest, or (``k`` None) at
    ``base + stride * j + c`` for a few constant fields ``c`` of a record (:data:`fields`)."""

    buffer: Buffer
    j: For
    k: For | None
    stride: int
    base: PrimExpr
    loads: list[BufferLoad] = field(default_factory=list)
    reuse_test: PrimExpr | None = None
    """Run-time test that the nest reuses the copy enough (symbolic trip counts), if any."""
    fields: list[int] = field(default_factory=list)
    """A record operand's fields read, ascending (one row of the copy each)."""
    field_of: dict[int, int] = field(default_factory=dict)
    """A record operand's field each load reads, by load id."""

    def add(self, load: BufferLoad, offset: int) -> None:
        """One more load of the operand (of field ``offset`` for a record operand)."""
        self.loads.append(load)
        if self.k is None:
            self.field_of[id(load)] = offset
            if offset not in self.fields:
                self.fields = sorted([*self.fields, offset])

    @property
    def columns(self) -> int:
        """Iterations of ``j``: the packed copy's row length."""
        trips = trip_count(self.j)
        assert trips is not None  # constant (_decompose)
        return trips

    @property
    def rows(self) -> int:
        """Iterations of ``k`` (or the fields read): the packed copy's rows."""
        if self.k is None:
            return len(self.fields)
        trips = trip_count(self.k)
        assert trips is not None  # constant (_decompose)
        return trips

    @property
    def loops(self) -> tuple[For, ...]:
        """The nest's loops the operand's loads step with (``j``, and ``k`` if any)."""
        return (self.j,) if self.k is None else (self.j, self.k)

    def row_of(self, load: BufferLoad) -> PrimExpr:
        """The copy's row ``load`` reads."""
        if self.k is None:
            return IntImm(self.base.dtype, self.fields.index(self.field_of[id(load)]))
        return Sub(self.k.loop_var, self.k.min)


def _copy_in_bounds(operand: _Operand) -> bool:
    """Whether every element the copy reads is provably inside the operand's buffer (a
    constant base and extent): then the copy may read elements the nest itself skips."""
    (extent,) = operand.buffer.shape
    if not (isinstance(operand.base, IntImm) and isinstance(extent, IntImm)):
        return False
    j0 = operand.j.min
    assert isinstance(j0, IntImm)  # constant loops (_decompose)
    if operand.k is None:
        low, high = operand.fields[0], operand.fields[-1]
    else:
        k0 = operand.k.min
        assert isinstance(k0, IntImm)
        low, high = k0.value, k0.value + operand.rows - 1
    first = operand.base.value + j0.value * operand.stride + low
    last = first - low + (operand.columns - 1) * operand.stride + high
    return 0 <= first and last < extent.value


def _decompose(load: BufferLoad, loops: Sequence[For],
               facts: NestFacts) -> tuple[For, For | None, int, PrimExpr, int] | None:
    """``(j, k, s, base, 0)`` with ``load``'s index ``base + s * j + k``, or ``(j, None, s,
    base, c)`` with it ``base + s * j + c`` (a record's field, ``0 <= c < s``; module doc),
    or None."""
    if len(load.indices) != 1:
        return None
    index = load.indices[0]
    if index.dtype.lanes != 1 or not index.dtype.is_int:
        return None
    j_loop = k_loop = None
    stride = 0
    for loop in loops:
        coef = facts.coefficient(load, loop.loop_var)
        if coef is None:
            return None
        if coef == 1 and k_loop is None:
            k_loop = loop
        elif coef >= 2 and j_loop is None:
            j_loop, stride = loop, coef
        elif coef != 0:
            return None
    if j_loop is not None and k_loop is None:
        return _record_field(index, j_loop, stride, loops, facts)
    if j_loop is None or k_loop is None or loops.index(k_loop) < loops.index(j_loop):
        return None
    j_trips, k_trips = trip_count(j_loop), trip_count(k_loop)
    if j_trips is None or k_trips is None or stride < k_trips or j_trips < MIN_COLUMNS:
        return None
    if not (facts.accumulates(k_loop) and facts.contiguous(j_loop)):
        return None
    dtype = index.dtype
    base = simplify_expr(Sub(index, Add(Mul(IntImm(dtype, stride), j_loop.loop_var),
                                        k_loop.loop_var)))
    if reads_memory(base):
        return None
    return j_loop, k_loop, stride, base, 0  # base's variables: checked by the caller


def _record_field(index: PrimExpr, j_loop: For, stride: int, loops: Sequence[For],
                  facts: NestFacts) -> tuple[For, None, int, PrimExpr, int] | None:
    """A load of field ``c`` of record ``j`` (``base + s * j + c``) in the innermost loop
    ``j``, which stores contiguously (it vectorizes, the records' fields are strided)."""
    trips = trip_count(j_loop)
    if loops[-1] is not j_loop or trips is None or trips < MIN_COLUMNS \
            or stride > MAX_RECORD_STRIDE or not facts.contiguous(j_loop):
        return None
    dtype = index.dtype
    rest = simplify_expr(Sub(index, Mul(IntImm(dtype, stride), j_loop.loop_var)))
    if reads_memory(rest):
        return None
    offset = to_linear(rest).const % stride if supports_linear(dtype) else 0
    base = simplify_expr(Sub(rest, IntImm(dtype, offset)))
    return j_loop, None, stride, base, offset


class _NestScan(StmtExprVisitor):
    """The qualifying loads of one candidate nest, grouped by operand."""

    def __init__(self, root: For, packable: set[int], facts: NestFacts) -> None:
        self.root, self.packable, self.facts = root, packable, facts
        self._outside: set[int] | None = None
        self.operands: list[_Operand] = []
        self.ok = True
        self._loops: list[For] = []
        self._guards = 0
        self.visit_for_(root)

    def visit_for_(self, stmt: For) -> None:
        # a loop that may run zero times guards its body like a condition
        trips = trip_count(stmt)
        sure = trips is not None and trips > 0
        self._loops.append(stmt)
        self._guards += not sure
        self.generic_visit(stmt)
        self._guards -= not sure
        self._loops.pop()

    def visit_assert_stmt_(self, stmt: AssertStmt) -> None:
        self.ok = False

    def visit_while_(self, stmt: While) -> None:
        self.ok = False

    def visit_if_then_else_(self, stmt: IfThenElse) -> None:
        self.visit_expr(stmt.condition)
        self._guarded(stmt.then_case, stmt.else_case)

    def visit_select_(self, node: Select) -> None:
        self.visit_expr(node.condition)
        self._guarded(node.true_value, node.false_value)

    def visit_call_(self, node: Call) -> None:
        if node.kind is CallKind.EXTERN or (
            node.kind is CallKind.BUILTIN and node.op not in PURE_BUILTINS
        ):
            self.ok = False
        elif node.op == "if_then_else" and len(node.args) == 3:
            self.visit_expr(node.args[0])
            self._guarded(node.args[1], node.args[2])
        else:
            self.generic_visit(node)

    def _guarded(self, *branches: object) -> None:
        self._guards += 1
        for branch in branches:
            if branch is not None:
                self.visit_value(branch)
        self._guards -= 1

    @property
    def outside(self) -> set[int]:
        """Ids of the variables the nest uses that are defined before it."""
        if self._outside is None:
            self._outside = {id(v) for v in free_vars(self.root)}
        return self._outside

    def visit_buffer_load_(self, node: BufferLoad) -> None:
        self.generic_visit(node)
        if id(node.buffer.data) not in self.packable:
            return
        parts = _decompose(node, self._loops, self.facts)
        if parts is None:
            return
        j_loop, k_loop, stride, base, offset = parts
        operand = _Operand(node.buffer, j_loop, k_loop, stride, base)
        operand.add(node, offset)
        if any(id(v) not in self.outside for v in free_vars(operand.base)):
            return  # the copy, made before the nest, could not compute it
        if self._guards and not _copy_in_bounds(operand):
            return  # the nest may not read all of the copy: it might read past the end
        reuse = self._reuse(operand)
        if reuse is None:
            return
        operand.reuse_test = reuse
        for known in self.operands:
            if known.buffer.data is node.buffer.data and known.j is operand.j \
                    and known.k is operand.k and known.stride == operand.stride \
                    and structural_equal(known.base, operand.base):
                known.add(node, offset)
                return
        self.operands.append(operand)

    def _reuse(self, operand: _Operand) -> PrimExpr | None:
        """None when the loops around the load (but ``j`` and ``k``) run fewer than
        :data:`MIN_REUSE` times; else the run-time test of that when a trip count is
        symbolic (an expression of variables defined before the nest), or an empty test."""
        constant = 1
        symbolic: list[PrimExpr] = []
        for loop in self._loops:
            if loop is operand.j or loop is operand.k:
                continue
            trips = trip_count(loop)
            if trips is not None:
                constant *= trips
            elif any(id(v) not in self.outside for v in free_vars(loop.extent)):
                return None
            else:
                symbolic.append(loop.extent)
        if constant >= MIN_REUSE:
            return _TRUE
        if not symbolic or constant == 0:
            return None
        product: PrimExpr = IntImm(symbolic[0].dtype, constant)
        for extent in symbolic:
            product = Mul(product, extent if extent.dtype == product.dtype
                          else Cast(product.dtype, extent))
        return simplify_expr(GE(product, IntImm(product.dtype, MIN_REUSE)))


def _stored_data(stmt: Stmt) -> tuple[set[int], list[Buffer]]:
    """Ids of the data vars ``stmt`` stores to, and one buffer of each."""
    ids: set[int] = set()
    buffers: list[Buffer] = []

    def visit(node: object) -> None:
        if isinstance(node, BufferStore) and id(node.buffer.data) not in ids:
            ids.add(id(node.buffer.data))
            buffers.append(node.buffer)

    post_order_visit(stmt, visit)
    return ids, buffers


class _Repoint(StmtExprMutator):
    """The operand's loads read the packed copy."""

    def __init__(self, packed: dict[int, tuple[_Operand, Buffer]]) -> None:
        self.packed = packed
        self._loops: set[int] = set()

    def visit_for_(self, stmt: For) -> Stmt:
        self._loops.add(id(stmt))
        try:
            return self.generic_mutate(stmt)
        finally:
            self._loops.discard(id(stmt))

    def visit_buffer_load_(self, node: BufferLoad) -> PrimExpr:
        hit = self.packed.get(id(node))
        # a load node the tree shares with another place is repointed only inside its loops
        if hit is None or not {id(loop) for loop in hit[0].loops} <= self._loops:
            return self.generic_mutate(node)
        operand, copy = hit
        dtype = node.indices[0].dtype
        columns = IntImm(dtype, operand.columns)
        row = operand.row_of(node)
        col = Sub(operand.j.loop_var, operand.j.min)
        return BufferLoad(copy, (simplify_expr(Add(Mul(row, columns), col)),), span=node.span)


def _copy_nest(operand: _Operand, copy: Buffer, parallel: bool) -> Stmt:
    """``copy[kk * n + jj] = operand[base + (j0 + jj) * s + k0 + kk]``, rows of ``copy``
    innermost; for a record operand one loop over the records storing each field ``c``
    read, ``copy[f * n + jj] = operand[base + (j0 + jj) * s + c]``."""
    dtype = operand.base.dtype
    n = operand.columns
    kind = ForKind.PARALLEL if parallel else ForKind.SERIAL
    jj = Var("jj", dtype)

    def source(within: PrimExpr) -> BufferLoad:
        """The operand's element ``within`` record ``j0 + jj``."""
        record = Mul(Add(operand.j.min, jj), IntImm(dtype, operand.stride))
        return BufferLoad(operand.buffer, (simplify_expr(Add(Add(operand.base, record),
                                                             within)),))

    if operand.k is None:
        stores = [BufferStore(copy, source(IntImm(dtype, offset)),
                              (simplify_expr(Add(jj, IntImm(dtype, row * n))),))
                  for row, offset in enumerate(operand.fields)]
        return For(jj, IntImm(dtype, 0), IntImm(dtype, n), kind, SeqStmt(tuple(stores)))
    kk = Var("kk", dtype)
    store = BufferStore(copy, source(Add(operand.k.min, kk)),
                        (Add(Mul(kk, IntImm(dtype, n)), jj),))
    inner = For(jj, IntImm(dtype, 0), IntImm(dtype, n), ForKind.SERIAL, store)
    return For(kk, IntImm(dtype, 0), operand.k.extent, kind, inner)


class _Packer(StmtExprMutator):
    def __init__(self, func: PrimFunc) -> None:
        finder = LocalAllocations()
        finder.visit_stmt(func.body)
        self.local = finder.vars
        self.params = {id(b.data) for b in func.buffer_map.values()}
        self.parallel_depth = 0
        self.facts = NestFacts()

    def visit_expr(self, expr: PrimExpr) -> PrimExpr:
        return expr

    def visit_for_(self, stmt: For) -> Stmt:
        out = self._pack(stmt)
        if out is not None:
            return out
        parallel = stmt.kind is ForKind.PARALLEL
        self.parallel_depth += parallel
        try:
            return self.generic_mutate(stmt)
        finally:
            self.parallel_depth -= parallel

    def _pack(self, loop: For) -> Stmt | None:
        scan = _NestScan(loop, self.params | self.local, self.facts)
        if not scan.ok or not scan.operands:
            return None
        stored, written = _stored_data(loop)
        inside = LocalAllocations()
        inside.visit_stmt(loop)
        # an operand the nest writes would go stale in its copy; one allocated inside the
        # nest does not exist yet where the copy is made
        operands = [o for o in scan.operands
                    if id(o.buffer.data) not in stored and id(o.buffer.data) not in inside.vars
                    and o.rows * o.columns * o.buffer.dtype.itemsize <= MAX_PACK_BYTES]
        if not operands:
            return None
        tests = self._no_overlap_tests(operands, written)
        if tests is None:
            return None
        tests += [o.reuse_test for o in operands
                  if o.reuse_test is not None and o.reuse_test is not _TRUE]
        copies = []
        packed: dict[int, tuple[_Operand, Buffer]] = {}
        for operand in operands:
            name = f"{operand.buffer.name.removesuffix('_flat')}_packed"
            copy = Buffer(name, make_data_var(name, operand.buffer.dtype),
                          (IntImm(_I32, operand.rows * operand.columns),),
                          operand.buffer.dtype)
            copies.append((operand, copy))
            packed.update((id(load), (operand, copy)) for load in operand.loads)
        fills = [_copy_nest(operand, copy, self.parallel_depth == 0
                            and operand.rows * operand.columns >= PARALLEL_PACK)
                 for operand, copy in copies]
        result: Stmt = SeqStmt((*fills, _Repoint(packed).visit_stmt(loop)), span=loop.span)
        for _, copy in reversed(copies):
            result = Allocate(copy.data, copy.dtype, copy.shape[0], _TRUE,
                              DeclBuffer(copy, result))
        if not tests:
            return result
        # fresh variables: the loop as written stays beside it, in the else branch
        return IfThenElse(all_of(tests), copy_with_fresh_vars(result), loop, span=loop.span)

    def _no_overlap_tests(self, operands: list[_Operand],
                          written: list[Buffer]) -> list[PrimExpr] | None:
        """Tests that no parameter array the nest writes overlaps a packed parameter array
        (None when an array's extent is unknown)."""
        tests: list[PrimExpr] = []
        packed = [operand.buffer for operand in operands]
        for buffer in written:
            if id(buffer.data) in self.local:
                continue
            span = byte_range(buffer)
            checks = None if span is None else no_overlap_checks(span, packed, self.local)
            if checks is None:
                return None
            tests += checks
        return tests


@function_pass("pack_transposed_operands", opt_level=1)
def _pack_transposed_operands(func: PrimFunc) -> PrimFunc:
    """Copy operands read across their rows, transposed, before the nests reading them
    (module doc)."""
    body = _Packer(func).visit_stmt(func.body)
    return func if body is func.body else func.with_body(body)


pack_transposed_operands: FunctionPass = _pack_transposed_operands
"""The ``pack_transposed_operands`` pass (a :class:`FunctionPass`)."""
