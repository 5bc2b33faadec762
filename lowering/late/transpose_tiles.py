"""The ``transpose_tiles`` pass: nests that transpose (a copy, or elementwise arithmetic
around the transposed load) move square tiles through vector registers.

``for i: for j: B[R + sB * j + i] = A[f(i) + j]`` reads rows of ``A`` and writes rows of
``B``, so whichever loop is inner, one side is strided: LLVM vectorizes such a nest with
gathers or scatters when the strides are constants, and not at all when they are symbolic
(``n = T.int32()``). Here the nest becomes ``L x L`` tiles (``L`` lanes of the Target's widest
vector for the element size): ``L`` contiguous vector loads from rows of ``A``, a transpose in
``log2(L)`` rounds of two-vector shuffles (each round swaps the off-diagonal blocks of one
size), and ``L`` contiguous vector stores into rows of ``B``.

The tiled copy stores the same values at the same addresses in another order. That gives the
same memory when (1) ``A`` and ``B`` do not overlap and (2) no element of ``B`` is written
twice by the nest (``|sB| >= Ei``, the ``i`` extent). What is not known when compiling is
tested at run time (with the trip counts being multiples of ``L``); the original nest runs
when a test fails. Loads and stores only move: results are bit-identical.

Applied to a loop (serial or parallel, also one ``parallelize_loops`` made parallel under a
run-time test, which the tiled loop keeps) whose body is a serial loop whose body is one store
of a load of another buffer, same 4- or 8-byte element type, indices reading no memory; the
``i`` and ``j`` extents are constants or symbolic. The stored value may also be elementwise
arithmetic (``+ - * /``, min, max, casts) around that load: ``B[j, i] = A[i, j] + C[j, i]``.
Loads that walk along B's rows (the same coefficients of ``i`` and ``j`` as the store: ``C``)
become contiguous vector loads of each tile row, expressions of neither loop variable
broadcasts; every buffer the value reads is in the no-overlap test (measured on the Zen 5
host: a 2048 x 2048 transpose-and-add, 24.6 -> 1.5 ms; numba 14 ms, TVM 0.27 26 ms).
Either loop may run along B's rows: the nest may also read ``B[sB * i + j] = A[.. + i]``
(the plain ``B[i, j] = A[j, i]`` of a user's transpose), whose tiles read rows of A along
``i`` and write rows of B along ``j``.

The tiles go in square blocks of :data:`BLOCK_ELEMS` elements (a block's lines of A are
read whole while cached, and it touches few pages), and tiles whose rows are narrower than a
cache line go in pairs along B's rows, so that each line of B is written whole by two
consecutive stores (non-temporal stores of a large B need that): docs/performance.md,
"Transposes in blocks and paired tiles".
"""

from __future__ import annotations

from collections.abc import Callable

from irbuilder.ir import (
    EQ,
    GE,
    Add,
    AttrStmt,
    Broadcast,
    Buffer,
    BufferLoad,
    BufferStore,
    Cast,
    Div,
    FloorDiv,
    FloorMod,
    For,
    ForKind,
    IfThenElse,
    IntImm,
    LetStmt,
    Max,
    Min,
    Mul,
    PrimExpr,
    PrimFunc,
    Ramp,
    SeqStmt,
    Stmt,
    Sub,
    Var,
    as_dtype,
    post_order_visit,
    structural_equal,
)

from ..analysis.loads import reads_memory
from ..analysis.substitute import substitute_expr
from ..analysis.vars import depends_on
from ..arith import simplify_expr
from ..pass_infra import FunctionPass, PassContext, function_pass
from ..target import Target, as_target
from ..transforms.auto_parallel import PARALLEL_IF
from .align_streams import TRANSPOSED_ATTR
from .register_transpose import (
    HALF_LOADS_MIN_BITS,
    transpose_bindings,
    transpose_from_halves,
    transpose_round,
    transpose_shuffles,
)
from .versioning import (
    NOALIAS_ATTR,
    all_of,
    byte_range,
    no_overlap_checks,
    rewrite_versioned_loops,
)

__all__ = [
    "HALF_LOADS_MAX_BYTES",
    "HALF_LOADS_MIN_BITS",
    "transpose_bindings",
    "half_loads_pay",
    "transpose_from_halves",
    "transpose_nest",
    "transpose_round",
    "transpose_shuffles",
    "transpose_tiles",
]


_Tile = tuple[list[tuple[Var, PrimExpr]], list[tuple[PrimExpr, ...]], list[PrimExpr], Var]
"""A tile's row loads (bound to variables), its stores' indices, their values (the tile's
column standing as the variable) and that variable."""

PAIR_TILES = True
"""Whether tiles whose rows are narrower than a cache line go in pairs side by side along
B's rows (:func:`_tile_bodies`)."""

BLOCK_ELEMS = 128
"""Side (elements) of the square blocks the tiles go in (:func:`_tile_loops`). Measured on
an Intel AVX-512 host, one thread, float32 transposes of 1024, 2048 and 4096 squares, AVX2
and AVX-512 code: 128 was the best or within noise of it among 32, 64 and 128, and 1.5-2.7x
faster than unblocked rows of tiles (4096: 42 -> 15 ms as AVX2 code with paired tiles)."""

MIN_PARALLEL_BLOCKS = 16
"""Fewest blocks a parallel loop of tiles is cut into when it has the tiles for it."""


def _coefficient(expr: PrimExpr, var: Var) -> PrimExpr | None:
    """``c`` such that ``expr == c * var + (terms without var)``, ``c`` free of ``var``; None
    when ``var`` stands anywhere but in sums and products with ``var``-free factors."""
    if expr is var:
        return IntImm(expr.dtype, 1)
    if not depends_on(expr, var):
        return IntImm(expr.dtype, 0)
    if isinstance(expr, (Add, Sub)):
        a, b = _coefficient(expr.a, var), _coefficient(expr.b, var)
        if a is None or b is None:
            return None
        return Add(a, b) if isinstance(expr, Add) else Sub(a, b)
    if isinstance(expr, Mul):
        if not depends_on(expr.b, var):
            a = _coefficient(expr.a, var)
            return None if a is None else Mul(a, expr.b)
        if not depends_on(expr.a, var):
            b = _coefficient(expr.b, var)
            return None if b is None else Mul(expr.a, b)
    return None


def _is_const(expr: PrimExpr, value: int) -> bool:
    return isinstance(expr, IntImm) and expr.value == value


def _lanes(buffer: Buffer, target: Target) -> int:
    size = buffer.dtype.itemsize
    if buffer.dtype.lanes != 1 or buffer.dtype.is_bool or size not in (4, 8):
        return 0
    return target.vector_bits // (8 * size)


def _extent_checks(extent: PrimExpr, lanes: int) -> tuple[list[PrimExpr], PrimExpr] | None:
    """(run-time tests, extent in tiles) of a loop extent, or None when it cannot tile."""
    if isinstance(extent, IntImm):
        if extent.value <= 0 or extent.value % lanes:
            return None
        return [], IntImm(extent.dtype, extent.value // lanes)
    if reads_memory(extent) or not extent.dtype.is_int:
        return None
    by = IntImm(extent.dtype, lanes)
    return [EQ(FloorMod(extent, by), IntImm(extent.dtype, 0))], FloorDiv(extent, by)


def transpose_nest(loop: For, local_data: set[int], target: Target,
                   tiled_outputs: set[int] | None = None) -> Stmt | None:
    """``loop`` as transposed tiles under its run-time tests (module doc), or None. The id
    of the data var the tiles write is added to ``tiled_outputs``."""
    inner = loop.body
    # A parallel loop made by parallelize_loops keeps its run-time test on the tiled loop (it
    # tests sizes and overlap only, which tiling does not change); other annotations stay.
    if loop.kind not in (ForKind.SERIAL, ForKind.PARALLEL) or set(loop.annotations) - {
        PARALLEL_IF
    }:
        return None
    if not (isinstance(inner, For) and inner.kind is ForKind.SERIAL and not inner.annotations):
        return None
    store = inner.body
    i, j = loop.loop_var, inner.loop_var
    if not isinstance(store, BufferStore) or len(store.indices) != 1:
        return None
    dst = store.buffer
    (at_dst,) = store.indices
    if at_dst.dtype.lanes != 1 or reads_memory(at_dst):
        return None
    parts = _value_parts(store, i, j)
    if parts is None:
        return None
    load, along_rows, read = parts
    src = load.buffer
    if dst.data is src.data or len(load.indices) != 1 or dst.dtype != src.dtype:
        return None
    lanes = _lanes(dst, target)
    if lanes < 2:
        return None
    (at_src,) = load.indices
    if reads_memory(at_src):
        return None
    if depends_on(inner.extent, i) or depends_on(inner.min, i):
        return None
    coefficients = [_coefficient(at, v) for at in (at_dst, at_src) for v in (i, j)]
    if any(c is None for c in coefficients):
        return None
    dst_i, dst_j, src_i, src_j = (simplify_expr(c) for c in coefficients if c is not None)
    # Rows of B run along i and rows of A along j (``B[sB * j + i] = A[.. + j]``), or, with
    # the loops' roles exchanged, B's rows along j and A's along i (``B[sB * i + j] =
    # A[.. + i]``): the tile reads A's rows and writes B's rows either way.
    if _is_const(dst_i, 1) and _is_const(src_j, 1):
        stride, along_dst, along_src = dst_j, i, j
    elif _is_const(dst_j, 1) and _is_const(src_i, 1):
        stride, along_dst, along_src = dst_i, j, i
    else:
        return None
    if depends_on(stride, i) or depends_on(stride, j) or reads_memory(stride):
        return None
    rows, cols = _extent_checks(loop.extent, lanes), _extent_checks(inner.extent, lanes)
    if rows is None or cols is None:
        return None
    checks = [*rows[0], *cols[0]]
    # each element of B written once: |stride| >= the extent of the loop B's rows run along
    run = loop.extent if along_dst is i else inner.extent
    if isinstance(stride, IntImm):
        if not isinstance(run, IntImm) or abs(stride.value) < run.value:
            return None
    else:
        checks.append(GE(stride, run))
    if id(dst.data) in local_data:
        overlap: list[PrimExpr] | None = []
    else:
        written = byte_range(dst)
        overlap = None if written is None else no_overlap_checks(written, [src, *read], local_data)
    if overlap is None:
        return None
    checks += overlap
    ib, jb = Var(f"{i.name}_tile", i.dtype), Var(f"{j.name}_tile", j.dtype)
    pair = PAIR_TILES and lanes * dst.dtype.itemsize < 64
    dst_tiles = rows[1] if along_dst is i else cols[1]
    if pair and not (isinstance(dst_tiles, IntImm) and dst_tiles.value % 2 == 0):
        pair = False

    def tile(row_tile: PrimExpr, col_tile: PrimExpr, name: str) -> _Tile:
        def position(var: Var, k: int) -> PrimExpr:
            if var is i:
                return loop.min + row_tile * lanes + k
            return inner.min + col_tile * lanes + k

        # row k of the tile: A's row at along_dst = k, contiguous along along_src
        loads: list[tuple[Var, PrimExpr]] = []
        for k in range(lanes):
            at = {along_dst: position(along_dst, k), along_src: position(along_src, 0)}
            base = simplify_expr(substitute_expr(at_src, at))
            value = BufferLoad(src, (Ramp(base, IntImm(base.dtype, 1), lanes),))
            loads.append((Var(f"{name}_row{k}", value.dtype), value))
        # column k of the tile goes to B's row at along_src = k, contiguous along along_dst
        targets: list[tuple[PrimExpr, ...]] = []
        values: list[PrimExpr] = []
        column = Var("column", src.dtype.with_lanes(lanes))  # stands for the tile's column k
        for k in range(lanes):
            at = {along_dst: position(along_dst, 0), along_src: position(along_src, k)}
            base = simplify_expr(substitute_expr(at_dst, at))
            targets.append((Ramp(base, IntImm(base.dtype, 1), lanes),))
            values.append(_row_value(store.value, load, along_rows, at, column))
        return loads, targets, values, column

    row_tiles, col_tiles = rows[1], cols[1]
    if pair and isinstance(dst_tiles, IntImm):  # pairs along B's rows: half as many tiles
        if along_dst is i:
            row_tiles = IntImm(dst_tiles.dtype, dst_tiles.value // 2)
        else:
            col_tiles = IntImm(dst_tiles.dtype, dst_tiles.value // 2)
    row_span = lanes * (2 if pair and along_dst is i else 1)
    col_span = lanes * (2 if pair and along_dst is j else 1)
    row_at, col_at, wrap = _tile_loops(
        loop, inner, ib, jb, row_tiles, col_tiles, row_span, col_span)
    two = IntImm(i.dtype, 2)
    tile_parts: list[_Tile] = []
    for half in range(2 if pair else 1):
        row_tile, col_tile = row_at, col_at
        if pair and along_dst is i:
            row_tile = row_at * two + IntImm(i.dtype, half)
        elif pair:
            col_tile = col_at * two + IntImm(j.dtype, half)
        tile_parts.append(tile(row_tile, col_tile, src.name + (f"_{half}" if pair else "")))
    tiled = wrap(_tile_bodies(dst, tile_parts, half_loads_pay(src)))
    fast = AttrStmt((dst.data, src.data), NOALIAS_ATTR, IntImm(as_dtype("int32"), 1), tiled)
    if tiled_outputs is not None:
        tiled_outputs.add(id(dst.data))
    if not checks:
        return fast
    return IfThenElse(all_of(checks), fast, loop, span=loop.span)


HALF_LOADS_MAX_BYTES = 32 << 20
"""Largest source (bytes) whose tiles are read as halves. From cache the shuffles are the
limit and the halves save a third of them (Intel AVX-512 host, 1024 x 1024 float32
transpose: 0.36 -> 0.31 ms); a source streamed from DRAM was as fast or slower with twice
the loads (4096 x 4096: 0.85-0.95 of the full-row loads' speed), and one of unknown size
keeps the full rows."""


def half_loads_pay(buffer: Buffer) -> bool:
    """Whether tiles of ``buffer`` are read as halves: its size is a constant of at most
    :data:`HALF_LOADS_MAX_BYTES`."""
    size = buffer.dtype.itemsize
    for extent in buffer.shape:
        if not isinstance(extent, IntImm):
            return False
        size *= extent.value
    return size <= HALF_LOADS_MAX_BYTES


def _tile_body(
    dst: Buffer,
    loads: list[tuple[Var, PrimExpr]],
    targets: list[tuple[PrimExpr, ...]],
    values: list[PrimExpr],
    column: Var,
    halves: bool,
    shuffle_name: str = "t",
) -> Stmt:
    """``let`` the loaded rows and the shuffle rounds, then store at ``targets[k]`` the
    value ``values[k]`` with the tile's column ``k`` in place of ``column``. With ``halves``,
    rows of at least :data:`HALF_LOADS_MIN_BITS` are loaded as halves
    (:func:`transpose_from_halves`)."""
    lanes = len(loads)
    first = loads[0][1]
    if halves and lanes >= 4 and first.dtype.bits * lanes >= HALF_LOADS_MIN_BITS:
        h = lanes // 2

        def half_row(k: int, p: int) -> PrimExpr:
            load = loads[k][1]
            assert isinstance(load, BufferLoad)
            (ramp,) = load.indices
            assert isinstance(ramp, Ramp)
            base = ramp.base if p == 0 else simplify_expr(
                ramp.base + IntImm(ramp.base.dtype, p * h))
            return BufferLoad(load.buffer, (Ramp(base, ramp.stride, h),))

        name = loads[0][0].name.removesuffix("_row0")
        rounds, columns = transpose_from_halves(half_row, lanes, name)
        bound = rounds  # the half loads sit in the rounds' first bindings
    else:
        rounds, columns = transpose_bindings([var for var, _ in loads], shuffle_name)
        bound = [*loads, *rounds]
    stores = []
    for tile_column, at, value in zip(columns, targets, values, strict=True):
        stores.append(BufferStore(dst, substitute_expr(value, {column: tile_column}), at))
    body: Stmt = SeqStmt(tuple(stores))
    for var, value in reversed(bound):
        body = LetStmt(var, value, body)
    return body




def _tile_bodies(dst: Buffer, parts: list[_Tile], halves: bool) -> Stmt:
    """:func:`_tile_body` of one or more tiles, their stores interleaved row by row (two
    tiles side by side along B's rows fill whole cache lines one after the other)."""
    if len(parts) == 1:
        return _tile_body(dst, *parts[0], halves)
    bodies = [_tile_body(dst, *part, halves, f"t{k}") for k, part in enumerate(parts)]
    lets: list[list[LetStmt]] = []
    stores: list[list[Stmt]] = []
    for body in bodies:
        chain: list[LetStmt] = []
        while isinstance(body, LetStmt):
            chain.append(body)
            body = body.body
        assert isinstance(body, SeqStmt)
        lets.append(chain)
        stores.append(list(body.seq))
    merged: list[Stmt] = []
    for row in zip(*stores, strict=True):
        merged.extend(row)
    result: Stmt = SeqStmt(tuple(merged))
    for chain in reversed(lets):
        for let in reversed(chain):
            result = LetStmt(let.var, let.value, result)
    return result


def _tile_loops(
    loop: For, inner: For, ib: Var, jb: Var, row_tiles: PrimExpr, col_tiles: PrimExpr,
    row_span: int, col_span: int,
) -> tuple[PrimExpr, PrimExpr, Callable[[Stmt], For]]:
    """The tile loops over ``row_tiles`` tiles (``loop``'s kind) and ``col_tiles`` tiles
    (``row_span`` and ``col_span`` elements a tile): the row and column tile index
    expressions and the function wrapping a tile's body in the loops.

    The tiles go in square blocks of :data:`BLOCK_ELEMS` elements a side (the last block
    of a row or column smaller), so that a block's lines of ``A`` are read whole while
    they are in cache and its rows touch few pages; a parallel loop keeps at least
    :data:`MIN_PARALLEL_BLOCKS` blocks when it has that many tiles."""
    bi = max(1, BLOCK_ELEMS // row_span)
    bj = max(1, BLOCK_ELEMS // col_span)
    if loop.kind is ForKind.PARALLEL and isinstance(row_tiles, IntImm):
        bi = max(1, min(bi, row_tiles.value // MIN_PARALLEL_BLOCKS))
    zero_i, zero_j = IntImm(ib.dtype, 0), IntImm(jb.dtype, 0)
    if isinstance(col_tiles, IntImm) and col_tiles.value <= bj:
        bj = 0  # one block along the columns: no blocking
    if bj == 0 or (bi <= 1 and bj <= 1):

        def plain(body: Stmt) -> For:
            return For(ib, zero_i, row_tiles, loop.kind,
                       For(jb, zero_j, col_tiles, ForKind.SERIAL, body, span=inner.span),
                       annotations=loop.annotations, span=loop.span)

        return ib, jb, plain
    io, jo = Var(f"{ib.name}_block", ib.dtype), Var(f"{jb.name}_block", jb.dtype)
    ii, ji = Var(f"{ib.name}_in", ib.dtype), Var(f"{jb.name}_in", jb.dtype)

    def split(tiles: PrimExpr, size: int, outer: Var) -> tuple[PrimExpr, PrimExpr]:
        """(block count, tiles in block ``outer``) of ``tiles`` tiles in blocks of ``size``."""
        by = IntImm(tiles.dtype, size)
        if isinstance(tiles, IntImm) and tiles.value % size == 0:
            return IntImm(tiles.dtype, tiles.value // size), by
        count = simplify_expr(FloorDiv(tiles + IntImm(tiles.dtype, size - 1), by))
        return count, Min(by, tiles - outer * by)

    rows_, rows_in = split(row_tiles, bi, io)
    cols_, cols_in = split(col_tiles, bj, jo)

    def blocked(body: Stmt) -> For:
        nest: Stmt = For(ji, zero_j, cols_in, ForKind.SERIAL, body, span=inner.span)
        nest = For(ii, zero_i, rows_in, ForKind.SERIAL, nest, span=inner.span)
        nest = For(jo, zero_j, cols_, ForKind.SERIAL, nest, span=inner.span)
        return For(io, zero_i, rows_, loop.kind, nest, annotations=loop.annotations,
                   span=loop.span)

    return io * IntImm(ib.dtype, bi) + ii, jo * IntImm(jb.dtype, bj) + ji, blocked


_ELEMENTWISE = (Add, Sub, Mul, Div, Min, Max)


def _value_parts(
    store: BufferStore, i: Var, j: Var
) -> tuple[BufferLoad, list[BufferLoad], list[Buffer]] | None:
    """The transposed load of ``store``'s value, the loads that walk along the store's rows
    (the same coefficients of ``i`` and ``j`` as the store's index: ``C[j, i]`` beside
    ``B[j, i]``), and the buffers the value reads; None unless the value is elementwise
    arithmetic (``+ - * /``, min, max, casts) of one transposed load (repeated or not),
    such row loads and expressions of neither loop variable."""
    (at_dst,) = store.indices
    dst_coefs = [_coefficient(at_dst, v) for v in (i, j)]
    if any(c is None for c in dst_coefs):
        return None
    dst_i, dst_j = (simplify_expr(c) for c in dst_coefs if c is not None)
    transposed: list[BufferLoad] = []
    rows: list[BufferLoad] = []
    read: list[Buffer] = []

    def along_rows(load: BufferLoad) -> bool:
        if len(load.indices) != 1 or load.indices[0].dtype.lanes != 1:
            return False
        (at,) = load.indices
        coefs = [_coefficient(at, v) for v in (i, j)]
        if any(c is None for c in coefs) or reads_memory(at):
            return False
        ci, cj = (simplify_expr(c) for c in coefs if c is not None)
        return structural_equal(ci, dst_i) and structural_equal(cj, dst_j)

    def visit(expr: PrimExpr) -> bool:
        if not (depends_on(expr, i) or depends_on(expr, j)):
            read.extend(_buffers_read(expr))
            return True
        if isinstance(expr, BufferLoad):
            if expr.buffer.data is store.buffer.data or expr.dtype.lanes != 1:
                return False
            read.append(expr.buffer)
            if transposed and structural_equal(expr, transposed[0]):
                return True
            if along_rows(expr):
                rows.append(expr)
                return True
            if transposed:
                return False
            transposed.append(expr)
            return True
        if isinstance(expr, _ELEMENTWISE):
            return visit(expr.a) and visit(expr.b)
        if isinstance(expr, Cast):
            return visit(expr.value)
        return False

    if not visit(store.value) or not transposed:
        return None
    if any(b.data is store.buffer.data for b in read):
        return None
    others: dict[int, Buffer] = {}
    for b in read:
        if b.data is not transposed[0].buffer.data:
            others.setdefault(id(b.data), b)
    return transposed[0], rows, list(others.values())


def _buffers_read(expr: PrimExpr) -> list[Buffer]:
    found: list[Buffer] = []
    post_order_visit(expr, lambda n: found.append(n.buffer) if isinstance(n, BufferLoad) else None)
    return found


def _row_value(
    value: PrimExpr, transposed: BufferLoad, rows: list[BufferLoad], at: dict[Var, PrimExpr],
    column: Var,
) -> PrimExpr:
    """``value`` for one row of the tile (``at`` places the loop variables at the row's
    first element): the transposed load becomes ``column``, a row load a contiguous vector
    load, anything else a broadcast."""
    lanes = column.dtype.lanes

    def build(expr: PrimExpr) -> PrimExpr:
        if expr is transposed or (isinstance(expr, BufferLoad)
                                  and structural_equal(expr, transposed)):
            return column
        if not any(depends_on(expr, v) for v in at):
            return Broadcast(expr, lanes)
        if isinstance(expr, BufferLoad) and any(expr is r for r in rows):
            base = simplify_expr(substitute_expr(expr.indices[0], at))
            return BufferLoad(expr.buffer, (Ramp(base, IntImm(base.dtype, 1), lanes),))
        if isinstance(expr, Cast):
            return Cast(expr.dtype.with_lanes(lanes), build(expr.value))
        assert isinstance(expr, _ELEMENTWISE)
        return type(expr)(build(expr.a), build(expr.b))

    return build(value)


@function_pass("transpose_tiles", opt_level=1)
def _transpose_tiles(func: PrimFunc) -> PrimFunc:
    """Run transposing copy nests as register-transposed vector tiles (module doc), sized
    for the PassContext's target (the host when none)."""
    target = as_target(PassContext.current().target)
    tiled_outputs: set[int] = set()
    out = rewrite_versioned_loops(
        func, lambda loop, local: transpose_nest(loop, local, target, tiled_outputs))
    positions = [i for i, param in enumerate(out.params)
                 if param in out.buffer_map and id(out.buffer_map[param].data) in tiled_outputs]
    # large outputs written in tiles stream even beside a large cache (align_streams)
    return out.with_attr(TRANSPOSED_ATTR, positions) if positions else out


transpose_tiles: FunctionPass = _transpose_tiles
"""The ``transpose_tiles`` pass (a :class:`FunctionPass`)."""
