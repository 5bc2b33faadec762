"""The ``vectorize_row_reductions`` pass: a parallel loop whose body runs one scalar
reduction chain per row computes ``L`` rows at once, one vector lane per row.

``for i in T.parallel(n): acc = 0; for j in range(m): acc = acc + A[i, j]; B[i] = acc`` is
bound by the latency of one scalar add per element: without reassociation the chain of a
row cannot be split. But iterations of a parallel loop are independent (the promise
``T.parallel`` makes, checked by the race check), so ``L`` of them -- ``L`` the lanes of
the Target's vectors, at most 256 bits (:data:`MAX_VECTOR_BITS`): 8 float32 with AVX2 or
AVX-512, 4 with SSE only -- may run
together, row ``i0 + u`` in lane ``u``: each vector operation performs column ``j`` of the
``L`` rows, and every row still adds its elements in source order, so results are
bit-identical::

    for i_rows in T.parallel(n // L):
        acc_rows = T.decl_buffer((L,))                  # lane u: row i_rows * L + u
        <each row's statements before the loop, acc[0] -> acc_rows[u]>
        for j_tile in range(m // L):                    # an L x L tile per iteration
            r_u = A[T.Ramp(<row u, column j_tile * L>, 1, L)]   # contiguous row loads
            <transpose: log2(L) stages of two-vector shuffles> -> c_0 .. c_{L-1}
            T.prefetch(<the next group's rows: a few lines a tile>)  # PREFETCH_NEXT_ROWS
            acc_rows[0:L] = acc_rows[0:L] + c_0          # column j_tile * L + 0
            ...
            acc_rows[0:L] = acc_rows[0:L] + c_{L-1}
        for j_rest in range(m % L):                     # strided loads, in order
            acc_rows[0:L] = acc_rows[0:L] + A[T.Ramp(<row 0, column>, <row stride>, L)]
        <each row's statements after the loop>
    for i_rest in range(n % L):                         # the leftover rows, as written
        <the body>

A column ``c_k`` is built from contiguous row loads (a transpose in registers) instead of a
gather; a load that does not depend on the row is broadcast, one that does not depend on
the column is a strided vector load.

Applied to PARALLEL loops without annotations whose body (under allocations, buffer
declarations and bindings) is a sequence of stores, then serial loops whose statements
each update one element of a function-local float accumulator declared in the body (up to
:data:`~.row_chains.MAX_CHAINS` chains per loop: a layernorm's sum and sum of squares, in
one buffer ``s[0]``, ``s[1]`` or in several), ``acc[c] = acc[c] <op> x`` or ``acc[c] = x
<op> acc[c]`` (``op``: ``+ - * /``, ``T.max``, ``T.min``), with any statements between and
after them that do not store to the accumulators (loops too: after the last chain loop
they run once per lane in a loop over the lanes) or are one store to an accumulator
element (a mean's ``m[0] = m[0] / n``: one store per lane). Matching is in
``row_chains.py``. A later chain loop may read an earlier one's accumulators (a two-pass
variance's deviations from the mean: the mean's lanes are one vector; as AVX2 code on the
Zen 5 host 1.76 ms with both loops scalar, 0.93 with the first in lanes, 0.56 with both).
``x`` is built of loads, casts, constants, outer variables and those operations (a
multiply-add too: ``acc + A[i, k] * x[k]``, a matrix-vector product), reads no
function-local buffer but those earlier accumulators, and loads at indices that step 0 or
1 element per column (a row's columns are contiguous) and do not read memory; how they
depend on the row is free (a symbolic row stride is fine). Every access to an accumulator
names a constant element. A single chain loop's bounds may be affine in the row (a
triangle's ``range(i + 1)``): the columns all rows of a group share run in the lanes,
each row's others one row at a time before or after them (``row_spans.py``;
a 4096 x 4096 lower-triangular matrix-vector product on the Zen 5 host: 4.4 -> 0.65 ms).
Symbolic row and column counts are handled (``n // L``, ``n % L``, ``m // L``, ``m % L``
at run time). A chain loop may bind its elements first (``a = A[i, j]``: substituted).

Rows written the other ways TVM users write them run in lanes too, each behind a run-time
test that the parameter arrays the rows write overlap none of the others they use (the loop
as written otherwise): a loop ``parallelize_loops`` made parallel on that test (its
annotation); rows summed straight into the output, ``O[i] = O[i] + ...``
(``row_promote.py`` moves the element into a local accumulator); and the rows of a serial
loop of the perfect nest that is a parallel loop's body (``for b in T.parallel(B): for h in
range(H): for i in range(N)``), when the race check proves its iterations independent (its
scratch, hoisted out of it, allocated per row again: ``row_promote.nest_levels``); the row
groups then run in a serial loop.
On the Zen 5 host, 4096 x 1024 float32 sums of squares: into the output 1.9 -> 0.17 ms, as
a ``range`` loop 0.48 -> 0.13 ms, as 64 batches of 64 rows 0.52 -> 0.14 ms.

Bit-identical means with ``fp_contract=False``. With contraction allowed (the default) a
multiply feeding an add may become one FMA, and LLVM decides per instruction: the scalar
chains before this pass were fused in some rows and not in others (measured: a 37-row
matvec for Haswell, 20 of 37 rows fused), the lanes fuse every row alike.

``build(fastmath=True)`` turns the pass off (``PassContext(config={"vectorize_row_reductions":
{"enabled": False}})``): with reassociation allowed LLVM vectorizes each row's own loop
with partial sums, about twice as fast from cache as the transposes.
"""

from __future__ import annotations

from collections.abc import Callable

from irbuilder.ir import (
    Add,
    Allocate,
    And,
    Buffer,
    BufferLoad,
    BufferStore,
    Cast,
    DataType,
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
    post_order_visit,
    rebuild,
    seq,
    structural_equal,
)
from irbuilder.ir.buffer import make_data_var

from ..analysis.substitute import substitute_expr
from ..analysis.vars import depends_on
from ..arith.rewrite import simplify_expr
from ..pass_infra import FunctionPass, PassContext, function_pass
from ..target import Target, as_target
from ..transforms.auto_parallel import PARALLEL_IF, has_loop, no_alias_condition
from ..transforms.unroll import copy_with_fresh_vars
from .first_iteration import hoist_inits
from .jam import merge_copies
from .row_chains import Chain, match_rows, stores_to
from .row_columns import ChainVectorizer, tiled_loads
from .row_promote import interleave_nest_level, promote_row_outputs
from .row_spans import RowSpans
from .transpose_tiles import HALF_LOADS_MAX_BYTES
from .versioning import all_of

__all__ = [
    "CACHED_ROWS_BYTES",
    "MAX_VECTOR_BITS",
    "row_blocks",
    "row_lanes",
    "vectorize_row_loop",
    "vectorize_row_reductions",
]

_I32 = as_dtype("int32")
_TRUE = IntImm(as_dtype("bool"), 1)


MAX_VECTOR_BITS = 256
"""Widest vectors the transposes use by default: on a Zen 4 (AVX-512) a row sum in 8-lane
(256-bit) vectors ran twice as fast from L2 as in 16-lane ones (52 vs 25 GB/s per core: its
512-bit shuffles of a 16 x 16 transpose cost twice as much), and as fast from DRAM. A CPU
with full-rate 512-bit shuffles (:attr:`Target.full_rate_wide_shuffles`: Zen 5) gets
:data:`WIDE_VECTOR_BITS` when the rows are cached (:func:`row_bits`).
``PassContext(config={"vectorize_row_reductions": {"vector_bits": 512}})`` sets it."""

WIDE_VECTOR_BITS = 512
"""Row tiles on a CPU with full-rate 512-bit shuffles, rows at most :data:`CACHED_ROWS_BYTES`:
a 16 x 16 transpose moves twice the elements of an 8 x 8 one per shuffle. Measured on the
Zen 5 host (whole kernels of benchmarks/tvm_style*.py, two cores, 256 -> 512 bits): cross-
entropy rows 1.38 -> 0.98 ms, log-sum-exp rows 1.43 -> 1.12, a batch of row maxima 0.127
-> 0.103, a `T.grid` mean over 1024 0.127 -> 0.104, cosine rows 0.121 -> 0.114, a two-pass
row variance 0.258 -> 0.243; from DRAM (a 64 MiB matvec) sixteen row streams instead of
eight ran slower (1.08 -> 1.54 ms), hence the cache bound (which a 4096^2 lower-triangular
matvec, 33.5 MB read, just misses: it measured 0.70 -> 0.50 ms with 512 bits forced); see
also :data:`ROW_WRITING_GROUP_BYTES`."""


PREFETCH_NEXT_ROWS = True
"""Whether the tile loop of a row group also prefetches the next group's rows, a few cache
lines per tile in address order. The group reads its ``L`` rows side by side, ``L`` streams
a row apart, which DRAM serves slower than one sequential stream: on the Zen 5 host a
4096 x 4096 float32 row sum took 1.30-1.58 ms without the hints and 1.05-1.44 ms with them
on a busy host (docs/performance.md). ``PassContext(config={"vectorize_row_reductions":
{"prefetch": False}})`` turns them off."""

ROW_WRITING_GROUP_BYTES = 32 << 10
"""Largest group of rows (bytes its chains read) given wide tiles when loops after the chains
write rows out (a softmax's exponentials and division, a norm's output): sixteen 4 KiB
input rows and the output rows no longer fit in a Zen 5's 48 KiB L1, and the suite's 4096
x 1024 softmax ran 1.6 -> 2.2-2.5 ms with them (an RMS norm and a layernorm no faster); a
loop that only reads them again (log-sum-exp's sum of exponentials) still gains: 1.43 ->
1.12 ms."""


def row_bits(target: Target, bytes_read: int | None, rows: PrimExpr,
             writes_rows: bool = False) -> int:
    """The default tile width in bits (:data:`MAX_VECTOR_BITS`, or :data:`WIDE_VECTOR_BITS`
    where it pays: full-rate wide shuffles, at most :data:`CACHED_ROWS_BYTES` read, at least
    one whole wide group of ``rows``, and a group within :data:`ROW_WRITING_GROUP_BYTES` when
    loops after the chains write rows out, ``writes_rows``)."""
    if not target.full_rate_wide_shuffles or bytes_read is None \
            or bytes_read > CACHED_ROWS_BYTES:
        return MAX_VECTOR_BITS
    if not isinstance(rows, IntImm) or rows.value < WIDE_VECTOR_BITS // 32:
        return MAX_VECTOR_BITS
    wide_rows = WIDE_VECTOR_BITS // 32
    if writes_rows and bytes_read // rows.value * wide_rows > ROW_WRITING_GROUP_BYTES:
        return MAX_VECTOR_BITS
    return WIDE_VECTOR_BITS


def _writes_a_row(stmt: Stmt) -> bool:
    """Whether a loop in ``stmt`` stores at indices that step with its variable."""
    loops: list[Var] = []
    stores: list[BufferStore] = []

    def visit(node: object) -> None:
        if isinstance(node, For):
            loops.append(node.loop_var)
        elif isinstance(node, BufferStore):
            stores.append(node)

    post_order_visit(stmt, visit)
    return any(depends_on(index, var) for var in loops for store in stores
               for index in store.indices)


def row_lanes(target: Target, dtype: DataType, max_bits: int = MAX_VECTOR_BITS) -> int:
    """Rows computed together for an accumulator of ``dtype``: the lanes of one of
    ``target``'s vector registers, at most ``max_bits`` wide (8 float32 with AVX2 or
    AVX-512, 4 with SSE only)."""
    return max(1, min(target.vector_bits, max_bits) // 8 // dtype.itemsize)


CACHED_ROWS_BYTES = 32 << 20
"""Largest matrix (bytes the row loop reads) given two interleaved vectors of rows
(:func:`row_blocks`); a larger one streams from DRAM, where one vector of rows is faster."""


def row_blocks(target: Target, lanes: int, dtype: DataType, bytes_read: int | None,
               multiplies: bool = True, rereads: bool = False) -> int:
    """Vectors of rows interleaved in one group. Each chain of a row group is a sequence of
    dependent operations, one per column, so one vector of rows runs at the latency of that
    operation. For a multiply-add (an FMA: four cycles on a Zen 5) two independent vectors
    keep the pipeline busier from cache (on the Zen 5 host, a layernorm over 16 MiB: 0.52
    -> 0.40 ms; a matvec from L2: 8.5 -> 11.8 elements/ns per core); for a plain add, max
    or min the transposes are the limit and a second vector only costs (a row sum from L2:
    16.1 -> 12.1 elements/ns). From DRAM the rows are streams, twice as many with two
    vectors, and fewer streams are faster (a 64 MiB matvec on two cores: 1.06 ms with one
    vector, 1.44 ms with two). So two vectors where a chain ``multiplies``, the matrix is
    known to be at most :data:`CACHED_ROWS_BYTES`, the target has 32 vector registers
    (AVX-512) and the vectors are at most 256 bits (the rows of both tiles, their
    transposes and the accumulators then stay in registers: 512-bit tiles spill); one
    otherwise. With 16 registers (AVX2) two vectors pay only where the multiplying chain
    ``rereads`` rows an earlier chain loop of the group brought into cache (a two-pass
    variance's squared deviations): latency is then all that bounds it. One thread, AVX2
    code on the Xeon host: a 4096 x 1024 two-pass variance 1.20 -> 0.91 ms; first-pass
    multiply chains (an RMS norm, a layernorm, an L2 norm, cosines, a triangular matvec)
    gained nothing, and chains of exponentials (a cross-entropy: 2.8 -> 8.4 ms) spill."""
    if not multiplies or bytes_read is None or bytes_read > CACHED_ROWS_BYTES:
        return 1
    if lanes * dtype.bits > 256:
        return 1
    return 2 if target.has_feature("avx512f") or rereads else 1


class _ToLane(StmtExprMutator):
    """Accesses of an accumulator ``acc[k]`` become ``rows[k * lanes + lane]`` of its rows
    buffer: element ``k`` of the ``lanes`` rows is one vector."""

    def __init__(self, rows: dict[int, Buffer], lanes: int, lane: int | Var) -> None:
        self.rows, self.lanes, self.lane = rows, lanes, lane

    def _at(self, k: PrimExpr) -> PrimExpr:
        assert isinstance(k, IntImm)
        if isinstance(self.lane, int):
            return IntImm(k.dtype, k.value * self.lanes + self.lane)
        lane = self.lane if self.lane.dtype == k.dtype else Cast(k.dtype, self.lane)
        return IntImm(k.dtype, k.value * self.lanes) + lane

    def visit_buffer_load_(self, node: BufferLoad) -> PrimExpr:
        rows = self.rows.get(id(node.buffer.data))
        if rows is not None:
            return BufferLoad(rows, (self._at(node.indices[0]),))
        return self.generic_mutate(node)

    def visit_buffer_store_(self, stmt: BufferStore) -> Stmt:
        rows = self.rows.get(id(stmt.buffer.data))
        if rows is not None:
            value = self.visit_expr(stmt.value)
            return BufferStore(rows, value, (self._at(stmt.indices[0]),), span=stmt.span)
        return self.generic_mutate(stmt)


class _ReplaceChains(StmtExprMutator):
    """The merged chain loops (the loops of the merged body updating the rows buffers)
    become ``replacements``, in order; the other loops stay."""

    def __init__(self, rows: dict[int, Buffer], replacements: list[Stmt]) -> None:
        self.rows, self.replacements, self.count = rows, replacements, 0

    def visit_expr(self, expr: PrimExpr) -> PrimExpr:
        return expr

    def visit_for_(self, stmt: For) -> Stmt:
        if not stores_to(stmt, list(self.rows.values())):
            return stmt
        self.count += 1
        if self.count > len(self.replacements):
            return stmt
        return self.replacements[self.count - 1]

    def visit_seq_stmt_(self, stmt: SeqStmt) -> Stmt:
        return seq([self.visit_stmt(s) for s in stmt.seq])


def _bytes_read(loop: For, chain: Chain) -> int | None:
    """Bytes the rows' tiled loads read over the whole loop, when the sizes are constants
    (a column count affine in the row: the mean of the first and last rows' counts)."""
    n, m = loop.extent, chain.loop.extent
    if not isinstance(n, IntImm):
        return None
    row = loop.loop_var
    ends = [simplify_expr(substitute_expr(m, {row: loop.min + IntImm(row.dtype, k)}))
            for k in (0, n.value - 1)]
    if not all(isinstance(e, IntImm) for e in ends):
        return None
    columns = sum(max(0, e.value) for e in ends if isinstance(e, IntImm)) / 2
    tiled = tiled_loads(chain, row)
    return int(sum(n.value * columns * load.buffer.dtype.itemsize for load in tiled))


def _rereads(chain: Chain, earlier: list[Chain], row: Var) -> bool:
    """Whether ``chain`` reads a row tile an ``earlier`` chain loop of the group read over
    the same columns (so from cache)."""
    row_tiles = [(c, load) for c in earlier for load in tiled_loads(c, row)]
    for load in tiled_loads(chain, row):
        for c, seen in row_tiles:
            if not (structural_equal(c.loop.min, chain.loop.min)
                    and structural_equal(c.loop.extent, chain.loop.extent)):
                continue
            renamed = substitute_expr(seen, {c.loop.loop_var: chain.loop.loop_var})
            if structural_equal(renamed, load):
                return True
    return False


def vectorize_row_loop(loop: For, target: Target, max_bits: int | None = None,
                       prefetch: bool = PREFETCH_NEXT_ROWS, blocks: int | None = None,
                       kind: ForKind = ForKind.PARALLEL) -> Stmt | None:
    """The row-vectorized form of a qualifying parallel loop (module doc), its row groups
    a loop of ``kind``, or None. ``max_bits`` None: :func:`row_bits` decides."""
    if loop.kind is not ForKind.PARALLEL or loop.annotations or loop.thread_binding is not None:
        return None
    found = match_rows(loop)
    if found is None:
        return None
    chains = found.chains
    chain = chains[0]
    if max_bits is None:
        writes_rows = any(_writes_a_row(stmt) for stmt in found.stmts[found.at[-1] + 1:])
        max_bits = row_bits(target, _bytes_read(loop, chain), loop.extent, writes_rows)
    lanes = row_lanes(target, chain.dtype, max_bits)
    if lanes < 2 or lanes & (lanes - 1):
        return None
    n = loop.extent
    if isinstance(n, IntImm) and n.value < lanes:
        return None
    if any(isinstance(c.loop.extent, IntImm) and c.loop.extent.value < lanes for c in chains):
        return None
    if blocks is None:
        def multiply(c: Chain) -> bool:
            return any(isinstance(u.x, Mul) and u.op in (Add, Sub) for u in c.updates)

        blocks = row_blocks(target, lanes, chain.dtype, _bytes_read(loop, chain),
                            any(multiply(c) for c in chains),
                            any(multiply(c) and _rereads(c, chains[:k], loop.loop_var)
                                for k, c in enumerate(chains)))
    if isinstance(n, IntImm) and n.value < lanes * blocks:
        blocks = 1
    per_group = lanes * blocks
    row = loop.loop_var
    idt = row.dtype
    accs = found.accs
    rows: dict[int, Buffer] = {}
    for acc in accs:
        (extent,) = acc.shape
        count = per_group * (extent.value if isinstance(extent, IntImm) else 1)
        data = make_data_var(f"{acc.name}_rows", acc.dtype, "local")
        rows[id(acc.data)] = Buffer(f"{acc.name}_rows", data, (IntImm(_I32, count),), acc.dtype,
                                    scope="local")
    # the body without the accumulators' allocations and declarations
    acc_data = {id(a.data) for a in accs}
    kept = [w for w in found.wrappers
            if not (isinstance(w, Allocate) and id(w.buffer_var) in acc_data)
            and not (isinstance(w, DeclBuffer) and id(w.buffer.data) in acc_data)]
    stmts = found.stmts
    split = found.at[-1] + 1
    group = Var(f"{row.name}_rows", idt)
    width = IntImm(idt, per_group)
    first = loop.min + group * width
    spans: RowSpans | None = None
    if len(chains) == 1 and (depends_on(chain.loop.min, row)
                             or depends_on(chain.loop.extent, row)):
        spans = RowSpans(chain.loop, row, first, per_group)
        common = spans.common_loop()
        stmts = [*stmts[: split - 1], common, *stmts[split:]]
        chains = [Chain(common, chain.accs, chain.updates)]
    after = stmts[split:]
    # loops after the chains run once per lane in a loop over the lanes rather than as one
    # copy per lane (a layernorm's normalising row: eight copies of a vectorized row loop
    # cost compile time for nothing); only without other locals, which each lane owns
    lane_loop = not kept and any(has_loop(st) for st in after)
    if lane_loop:
        stmts = stmts[:split]
    body: Stmt = SeqStmt(tuple(stmts)) if len(stmts) != 1 else stmts[0]
    for w in reversed(kept):
        body = rebuild(w, {"body": body})
    copies = [
        _ToLane(rows, per_group, u).visit_stmt(
            copy_with_fresh_vars(body, {row: first if u == 0 else first + IntImm(idt, u)})
        )
        for u in range(per_group)
    ]
    merged = merge_copies(copies)
    if lane_loop:
        lane = Var(f"{row.name}_lane", idt)
        per_lane = copy_with_fresh_vars(seq(after), {row: first + lane})
        merged = seq([merged, For(lane, IntImm(idt, 0), width, ForKind.SERIAL,
                                  _ToLane(rows, per_group, lane).visit_stmt(per_lane))])
    last_row = loop.min + n - IntImm(idt, 1) if prefetch else None
    read = _bytes_read(loop, chain)
    halves = read is not None and read <= HALF_LOADS_MAX_BYTES
    vectors: list[Stmt] = []
    for k, c in enumerate(chains):
        # only the first chain prefetches: the later ones read the rows it brought in
        vector = ChainVectorizer(c, rows, lanes, first, row, last_row if k == 0 else None,
                                 blocks, halves).loops()
        if spans is not None:
            vector = seq([*_each_lane(spans.heads, rows, per_group, idt), vector,
                          *_each_lane(spans.tails, rows, per_group, idt)])
        vectors.append(vector)
    replacer = _ReplaceChains(rows, vectors)
    merged = replacer.visit_stmt(merged)
    if replacer.count != len(chains):
        return None  # the copies' loops did not merge into one per chain
    groups = (FloorDiv(n, width) if not isinstance(n, IntImm)
              else IntImm(idt, n.value // per_group))
    group_body: Stmt = merged if spans is None else spans.bind(merged)
    for buf in reversed(list(rows.values())):
        group_body = Allocate(buf.data, buf.dtype, buf.shape[0], _TRUE,
                              DeclBuffer(buf, group_body))
    vectorized = For(group, IntImm(idt, 0), groups, kind, group_body,
                     span=loop.span)
    if isinstance(n, IntImm) and n.value % per_group == 0:
        return vectorized
    rest = Var(f"{row.name}_rest", idt)
    done = loop.min + groups * width
    left = FloorMod(n, width) if not isinstance(n, IntImm) else IntImm(idt, n.value % per_group)
    leftover = For(rest, IntImm(idt, 0), left, ForKind.SERIAL,
                   copy_with_fresh_vars(loop.body, {row: done + rest}), span=loop.span)
    return SeqStmt((vectorized, leftover), span=loop.span)


def _each_lane(per_row: Callable[[Var], Stmt | None], rows: dict[int, Buffer], count: int,
               idt: DataType) -> list[Stmt]:
    """``per_row``'s loop for every lane of the group (none when it gives None), with the
    accumulators in the rows buffers."""
    lane = Var("lane", idt)
    body = per_row(lane)
    if body is None:
        return []
    return [For(lane, IntImm(idt, 0), IntImm(idt, count), ForKind.SERIAL,
                _ToLane(rows, count, lane).visit_stmt(body))]


class _Rows(StmtExprMutator):
    def __init__(self, func: PrimFunc, target: Target, max_bits: int | None, prefetch: bool,
                 blocks: int | None) -> None:
        self.func, self.target, self.max_bits, self.prefetch = func, target, max_bits, prefetch
        self.blocks = blocks

    def visit_expr(self, expr: PrimExpr) -> PrimExpr:
        return expr

    def visit_for_(self, stmt: For) -> Stmt:
        if stmt.kind is ForKind.PARALLEL:
            out = self._rows(stmt)
            if out is not None:
                return out
        return self.generic_mutate(stmt)

    def _lanes(self, loop: For, kind: ForKind) -> tuple[Stmt, list[PrimExpr]] | None:
        """The row lanes of ``loop`` (groups of rows in a loop of ``kind``) and the tests
        that the arrays do not overlap they need: none, or those of rows accumulating into
        array elements (``row_promote.py``)."""
        found = self._lanes_as_is(loop, kind)
        if found is not None:
            return found
        # a short block reduction's init still at its first step (first_iteration.py)
        hoisted = hoist_inits(loop.body, plain=True)
        if hoisted is loop.body:
            return None
        return self._lanes_as_is(rebuild(loop, {"body": hoisted}), kind)

    def _lanes_as_is(self, loop: For, kind: ForKind) -> tuple[Stmt, list[PrimExpr]] | None:
        out = vectorize_row_loop(loop, self.target, self.max_bits, self.prefetch, self.blocks,
                                 kind)
        if out is not None:
            return out, []
        promoted = promote_row_outputs(loop)
        checks = no_alias_condition(self.func, loop) if promoted is not None else None
        if promoted is None or checks is None:
            return None
        out = vectorize_row_loop(promoted, self.target, self.max_bits, self.prefetch,
                                 self.blocks, kind)
        return None if out is None else (out, checks)

    def _serial_lanes(self, loop: For) -> Stmt | None:
        found = self._lanes(loop, ForKind.SERIAL)
        return None if found is None else found[0]  # its tests: the whole level's, after

    def _rows(self, loop: For) -> Stmt | None:
        """The row lanes of a parallel loop, or of the serial loop that is its body (a batch
        of rows: ``for b in T.parallel(B): for i in range(N): <row b, i>``) when that loop's
        iterations are independent. Versioned where they need arrays not to overlap: a loop
        ``parallelize_loops`` made parallel on that condition (its annotation), rows
        accumulating into array elements, rows of a serial loop writing arrays."""
        guard = loop.annotations.get(PARALLEL_IF)
        if set(loop.annotations) - {PARALLEL_IF} or (loop.annotations and guard is None):
            return None
        plain = rebuild(loop, {"annotations": {}}) if loop.annotations else loop
        found = self._lanes(plain, ForKind.PARALLEL)
        if found is not None:
            out, checks = found
        else:
            # the rows of a serial level of the perfect nest that is the loop's body (a batch
            # of rows), its row groups in a serial loop
            level = interleave_nest_level(self.func, loop, self._serial_lanes)
            if level is None:
                return None
            # fresh variables: the loop as written stays beside it, in the else branch
            out, checks = copy_with_fresh_vars(rebuild(plain, {"body": level[0]})), level[1]
        if checks:
            test = all_of(checks)
            guard = test if guard is None or structural_equal(guard, test) else And(guard, test)
        if guard is None:
            return out
        return IfThenElse(guard, out, loop, span=loop.span)

    def visit_seq_stmt_(self, stmt: SeqStmt) -> Stmt:
        parts = [self.visit_stmt(s) for s in stmt.seq]
        if all(p is s for p, s in zip(parts, stmt.seq)):
            return stmt
        return seq(parts)  # a loop with leftover rows became two statements: one flat sequence


@function_pass("vectorize_row_reductions", opt_level=1)
def _vectorize_row_reductions(func: PrimFunc) -> PrimFunc:
    """Run parallel rows' scalar reduction chains in vector lanes, one row per lane (module
    doc), as wide as the PassContext's target (the host when none) allows."""
    ctx = PassContext.current()
    if ctx.option("vectorize_row_reductions", "enabled") is False:
        return func
    max_bits = ctx.option("vectorize_row_reductions", "vector_bits")
    prefetch = ctx.option("vectorize_row_reductions", "prefetch")
    blocks = ctx.option("vectorize_row_reductions", "blocks")
    rows = _Rows(func, as_target(ctx.target), None if max_bits is None else int(max_bits),
                 PREFETCH_NEXT_ROWS if prefetch is None else bool(prefetch),
                 None if blocks is None else max(1, int(blocks)))
    body = rows.visit_stmt(func.body)
    return func if body is func.body else func.with_body(body)


vectorize_row_reductions: FunctionPass = _vectorize_row_reductions
"""The ``vectorize_row_reductions`` pass (a :class:`FunctionPass`)."""

