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
at run time).

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
    Broadcast,
    Buffer,
    BufferLoad,
    BufferStore,
    Call,
    CallKind,
    Cast,
    DataType,
    DeclBuffer,
    Div,
    Evaluate,
    FloatImm,
    FloorDiv,
    FloorMod,
    For,
    ForKind,
    IntImm,
    LetStmt,
    Max,
    Min,
    Mul,
    PrimExpr,
    PrimFunc,
    Ramp,
    SeqStmt,
    Shuffle,
    Stmt,
    StmtExprMutator,
    Sub,
    Var,
    as_dtype,
    rebuild,
    seq,
    structural_equal,
)
from irbuilder.ir.buffer import make_data_var

from ..analysis.substitute import substitute_expr
from ..analysis.vars import depends_on
from ..arith.canonical import linear_coefficient
from ..arith.rewrite import simplify_expr
from ..pass_infra import FunctionPass, PassContext, function_pass
from ..target import Target, as_target
from ..transforms.auto_parallel import has_loop
from ..transforms.unroll import copy_with_fresh_vars
from .jam import merge_copies
from .row_chains import Chain, Update, loads, match_rows, stores_to
from .row_spans import RowSpans
from .transpose_tiles import transpose_bindings

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
"""Widest vectors the transposes use by default: on a Zen 5 (AVX-512) a row sum in 8-lane
(256-bit) vectors ran twice as fast from L2 as in 16-lane ones (52 vs 25 GB/s per core: the
512-bit shuffles of a 16 x 16 transpose cost twice as much), and as fast from DRAM.
``PassContext(config={"vectorize_row_reductions": {"vector_bits": 512}})`` overrides it."""


PREFETCH_NEXT_ROWS = True
"""Whether the tile loop of a row group also prefetches the next group's rows, a few cache
lines per tile in address order. The group reads its ``L`` rows side by side, ``L`` streams
a row apart, which DRAM serves slower than one sequential stream: on the Zen 5 host a
4096 x 4096 float32 row sum took 1.30-1.58 ms without the hints and 1.05-1.44 ms with them
on a busy host (docs/performance.md). ``PassContext(config={"vectorize_row_reductions":
{"prefetch": False}})`` turns them off."""

_CACHE_LINE = 64


def row_lanes(target: Target, dtype: DataType, max_bits: int = MAX_VECTOR_BITS) -> int:
    """Rows computed together for an accumulator of ``dtype``: the lanes of one of
    ``target``'s vector registers, at most ``max_bits`` wide (8 float32 with AVX2 or
    AVX-512, 4 with SSE only)."""
    return max(1, min(target.vector_bits, max_bits) // 8 // dtype.itemsize)


CACHED_ROWS_BYTES = 32 << 20
"""Largest matrix (bytes the row loop reads) given two interleaved vectors of rows
(:func:`row_blocks`); a larger one streams from DRAM, where one vector of rows is faster."""


def row_blocks(target: Target, lanes: int, dtype: DataType, bytes_read: int | None,
               multiplies: bool = True) -> int:
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
    otherwise."""
    if not multiplies or bytes_read is None or bytes_read > CACHED_ROWS_BYTES:
        return 1
    return 2 if target.has_feature("avx512f") and lanes * dtype.bits <= 256 else 1


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


def _transpose(rows: list[Var], name: str) -> tuple[list[LetStmt], list[PrimExpr]]:
    """Bindings transposing ``rows`` (vectors of as many lanes as there are rows) by
    two-vector shuffles (:func:`.transpose_tiles.transpose_bindings`), and the columns: lane
    ``u`` of column ``k`` is lane ``k`` of row ``u``."""
    bindings, columns = transpose_bindings(list(rows), name)
    return [LetStmt(var, value, _NOP) for var, value in bindings], columns


_NOP = SeqStmt(())


def _nest(lets: list[LetStmt], body: Stmt) -> Stmt:
    for let in reversed(lets):
        body = LetStmt(let.var, let.value, body, span=let.span)
    return body


class _Vectorizer:
    """Builds the vector form of one chain for the rows ``first + u``, ``u < lanes *
    blocks``: ``blocks`` independent vectors of ``lanes`` rows each, interleaved."""

    def __init__(self, chain: Chain, rows: dict[int, Buffer], lanes: int, first: PrimExpr,
                 row: Var, last_row: PrimExpr | None = None, blocks: int = 1) -> None:
        self.chain, self.rows, self.lanes, self.first, self.row = chain, rows, lanes, first, row
        self.blocks = blocks
        self.dtype = chain.dtype.with_lanes(lanes)
        self.last_row = last_row
        """The loop's last row, when the next group's rows are to be prefetched."""

    def index_at(self, load: BufferLoad, col: PrimExpr, u: int = 0) -> PrimExpr:
        (index,) = load.indices
        row_at: PrimExpr = self.first if u == 0 else self.first + IntImm(self.first.dtype, u)
        return substitute_expr(index, {self.row: row_at, self.chain.loop.loop_var: col})

    def lanes_of(self, load: BufferLoad, col: PrimExpr, block: int) -> PrimExpr:
        """The load for every row of vector ``block`` at column ``col``: broadcast, strided,
        or one load per row (a row stride that is not a constant)."""
        (index,) = load.indices
        base = block * self.lanes
        if not depends_on(index, self.row):
            return Broadcast(BufferLoad(load.buffer, (self.index_at(load, col),)), self.lanes)
        stride = linear_coefficient(index, self.row)
        at = self.index_at(load, col, base)
        if stride is not None:
            return BufferLoad(load.buffer, (Ramp(at, IntImm(at.dtype, stride), self.lanes),))
        per_row = tuple(BufferLoad(load.buffer, (self.index_at(load, col, base + u),))
                        for u in range(self.lanes))
        return Shuffle(per_row, tuple(range(self.lanes)))

    def vector(self, expr: PrimExpr, col: PrimExpr, columns: dict[int, PrimExpr],
               block: int) -> PrimExpr:
        """``expr`` for every row of vector ``block`` at column ``col`` (``columns``: loads
        already transposed)."""
        if isinstance(expr, (FloatImm, IntImm, Var)):
            return Broadcast(expr, self.lanes)
        if isinstance(expr, Cast):
            return Cast(expr.dtype.with_lanes(self.lanes),
                        self.vector(expr.value, col, columns, block))
        if isinstance(expr, BufferLoad):
            if id(expr) in columns:
                return columns[id(expr)]
            rows = self.rows.get(id(expr.buffer.data))
            if rows is not None:  # an earlier chain's result: its lanes, one vector
                (k,) = expr.indices
                assert isinstance(k, IntImm)
                at = (k.value * self.blocks + block) * self.lanes
                return BufferLoad(rows, (Ramp(IntImm(_I32, at), IntImm(_I32, 1), self.lanes),))
            return self.lanes_of(expr, col, block)
        assert isinstance(expr, (Add, Sub, Mul, Div, Max, Min))
        return type(expr)(self.vector(expr.a, col, columns, block),
                          self.vector(expr.b, col, columns, block))

    def update(self, update: Update, value: PrimExpr, block: int) -> Stmt:
        """``rows[v*L : v*L + L] = rows[...] <op> value`` with ``v = at * blocks + block``
        (operands in the source's order)."""
        rows = self.rows[id(update.acc.data)]
        at = (update.at * self.blocks + block) * self.lanes
        ramp = Ramp(IntImm(_I32, at), IntImm(_I32, 1), self.lanes)
        acc = BufferLoad(rows, (ramp,))
        a, b = (acc, value) if update.acc_first else (value, acc)
        return BufferStore(rows, update.op(a, b), (ramp,))

    def prefetches(self, jo: Var, tiles: PrimExpr) -> list[Stmt]:
        """Hints fetching the next group's rows of each tiled load, in address order, spread
        evenly over the ``tiles`` iterations of the tile loop (see ``PREFETCH_NEXT_ROWS``).

        Only for a constant column count (the line's row and column are then divisions by
        constants); the row is clamped to the loop's last row, so the hint never names an
        address outside the buffer."""
        red = self.chain.loop
        if (self.last_row is None or not isinstance(red.extent, IntImm)
                or not isinstance(tiles, IntImm) or tiles.value <= 0):
            return []
        m = red.extent.value
        out: list[Stmt] = []
        for load in self.tiled_loads():
            per_line = max(1, _CACHE_LINE // load.buffer.dtype.itemsize)
            lines = -(-self.lanes * self.blocks * m // per_line)
            per_tile = -(-lines // tiles.value)
            idt = jo.dtype
            for q in range(per_tile):
                element: PrimExpr = jo * IntImm(idt, per_tile * per_line)
                if q:
                    element = element + IntImm(idt, q * per_line)
                row_at = Min(self.first + IntImm(self.first.dtype, self.lanes * self.blocks)
                             + FloorDiv(element, IntImm(idt, m)), self.last_row)
                col: PrimExpr = FloorMod(element, IntImm(idt, m))
                if not (isinstance(red.min, IntImm) and red.min.value == 0):
                    col = red.min + col
                (index,) = load.indices
                at = substitute_expr(index, {self.row: row_at, red.loop_var: col})
                hint = Call(_I32, "prefetch", (BufferLoad(load.buffer, (at,)), IntImm(_I32, 1)),
                            CallKind.BUILTIN)
                out.append(Evaluate(hint))
        return out

    def tiled_loads(self) -> list[BufferLoad]:
        """The loads transposed from row tiles (:func:`_tiled_loads`)."""
        return _tiled_loads(self.chain, self.row)

    def loops(self) -> Stmt:
        """The tile loop and the remainder loop replacing the chain's loop."""
        red = self.chain.loop
        j = red.loop_var
        jdt = j.dtype
        width = IntImm(jdt, self.lanes)
        tiles = FloorDiv(red.extent, width) if not isinstance(red.extent, IntImm) \
            else IntImm(jdt, red.extent.value // self.lanes)
        rest = FloorMod(red.extent, width) if not isinstance(red.extent, IntImm) \
            else IntImm(jdt, red.extent.value % self.lanes)
        jo = Var(f"{j.name}_tile", jdt)
        start = red.min + jo * width
        lets: list[LetStmt] = []
        by_load: dict[tuple[int, int], list[PrimExpr]] = {}
        for block in range(self.blocks):
            for n, load in enumerate(self.tiled_loads()):
                name = f"{load.buffer.name}_{n}" if n else load.buffer.name
                if self.blocks > 1:
                    name = f"{name}_b{block}"
                row_vars: list[Var] = []
                for u in range(self.lanes):
                    at = self.index_at(load, start, block * self.lanes + u)
                    var = Var(f"{name}_row{u}", load.dtype.with_lanes(self.lanes))
                    ramp = Ramp(at, IntImm(at.dtype, 1), self.lanes)
                    lets.append(LetStmt(var, BufferLoad(load.buffer, (ramp,)), _NOP))
                    row_vars.append(var)
                stage_lets, transposed = _transpose(row_vars, name)
                lets.extend(stage_lets)
                by_load[(id(load), block)] = transposed
        updates: list[Stmt] = []
        for k in range(self.lanes):
            col = start + IntImm(jdt, k)
            for update in self.chain.updates:
                for block in range(self.blocks):  # independent chains side by side
                    columns: dict[int, PrimExpr] = {}
                    for load in loads(update.x):
                        for tiled in self.tiled_loads():
                            if structural_equal(load, tiled):
                                columns[id(load)] = by_load[(id(tiled), block)][k]
                    value = self.vector(update.x, col, columns, block)
                    updates.append(self.update(update, value, block))
        tile_loop = For(jo, IntImm(jdt, 0), tiles, ForKind.SERIAL,
                        _nest(lets, SeqStmt((*self.prefetches(jo, tiles), *updates))),
                        span=red.span)
        jr = Var(f"{j.name}_rest", jdt)
        col = red.min + tiles * width + jr
        rest_updates = [self.update(u, self.vector(u.x, col, {}, b), b)
                        for u in self.chain.updates for b in range(self.blocks)]
        rest_loop = For(jr, IntImm(jdt, 0), rest, ForKind.SERIAL, seq(rest_updates),
                        span=red.span)
        parts: list[Stmt] = []
        if not (isinstance(tiles, IntImm) and tiles.value == 0):
            parts.append(tile_loop)
        if not (isinstance(rest, IntImm) and rest.value == 0):
            parts.append(rest_loop)
        return seq(parts)


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


def _tiled_loads(chain: Chain, row: Var) -> list[BufferLoad]:
    """The chain's loads stepping with the column and the row (read as row tiles and
    transposed), each once."""
    out: list[BufferLoad] = []
    for load in [ld for x in chain.operands() for ld in loads(x)]:
        (index,) = load.indices
        if linear_coefficient(index, chain.loop.loop_var) != 1:
            continue
        if not depends_on(index, row):
            continue
        if not any(structural_equal(load, seen) for seen in out):
            out.append(load)
    return out


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
    tiled = _tiled_loads(chain, row)
    return int(sum(n.value * columns * load.buffer.dtype.itemsize for load in tiled))


def vectorize_row_loop(loop: For, target: Target, max_bits: int = MAX_VECTOR_BITS,
                       prefetch: bool = PREFETCH_NEXT_ROWS,
                       blocks: int | None = None) -> Stmt | None:
    """The row-vectorized form of a qualifying parallel loop (module doc), or None."""
    if loop.kind is not ForKind.PARALLEL or loop.annotations or loop.thread_binding is not None:
        return None
    found = match_rows(loop)
    if found is None:
        return None
    chains = found.chains
    chain = chains[0]
    lanes = row_lanes(target, chain.dtype, max_bits)
    if lanes < 2 or lanes & (lanes - 1):
        return None
    n = loop.extent
    if isinstance(n, IntImm) and n.value < lanes:
        return None
    if any(isinstance(c.loop.extent, IntImm) and c.loop.extent.value < lanes for c in chains):
        return None
    if blocks is None:
        multiplies = any(isinstance(u.x, Mul) and u.op in (Add, Sub)
                         for c in chains for u in c.updates)
        blocks = row_blocks(target, lanes, chain.dtype, _bytes_read(loop, chain),
                            multiplies)
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
    vectors: list[Stmt] = []
    for k, c in enumerate(chains):
        # only the first chain prefetches: the later ones read the rows it brought in
        vector = _Vectorizer(c, rows, lanes, first, row, last_row if k == 0 else None,
                             blocks).loops()
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
    vectorized = For(group, IntImm(idt, 0), groups, ForKind.PARALLEL, group_body,
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
    def __init__(self, target: Target, max_bits: int, prefetch: bool,
                 blocks: int | None) -> None:
        self.target, self.max_bits, self.prefetch = target, max_bits, prefetch
        self.blocks = blocks

    def visit_expr(self, expr: PrimExpr) -> PrimExpr:
        return expr

    def visit_for_(self, stmt: For) -> Stmt:
        if stmt.kind is ForKind.PARALLEL:
            out = vectorize_row_loop(stmt, self.target, self.max_bits, self.prefetch,
                                     self.blocks)
            if out is not None:
                return out
        return self.generic_mutate(stmt)

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
    rows = _Rows(as_target(ctx.target), int(max_bits or MAX_VECTOR_BITS),
                 PREFETCH_NEXT_ROWS if prefetch is None else bool(prefetch),
                 None if blocks is None else max(1, int(blocks)))
    body = rows.visit_stmt(func.body)
    return func if body is func.body else func.with_body(body)


vectorize_row_reductions: FunctionPass = _vectorize_row_reductions
"""The ``vectorize_row_reductions`` pass (a :class:`FunctionPass`)."""

