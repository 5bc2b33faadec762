"""The ``tile_reduction_panels`` pass: register tiles for a row-by-row reduction nest.

The naive matmul, as loops or as a block with ``T.init``, lowers to ::

    for i in range(M):                 # serial or T.parallel
        for j in range(N):
            C[i*N + j] = init(i, j)
            for k in range(K):
                C[i*N + j] = C[i*N + j] + f(i, j, k)

``interchange_reductions`` makes its inner loop contiguous, but each ``k`` step still loads
and stores a whole row of ``C`` and reads a row of ``B`` once per row of ``C``. This pass
computes an ``R x W`` tile of ``C`` at a time in local vectors that LLVM keeps in registers
(``R`` rows share every vector of ``f``'s ``j``-dependent operands, ``R*W`` independent
accumulators hide the latency of the adds), and walks ``RB`` rows per iteration of the
``i`` loop so that a ``K x W`` panel of ``B`` is reused from cache ::

    for io in range(M // RB):          # the i loop's kind and annotations
        for jo in range(N // W):
            for im in range(RB // R):
                acc[r, 0:W] = init(i_r, jo*W + 0:W)            for each row r < R
                for k in range(K):
                    acc[r, 0:W] = acc[r, 0:W] + f(i_r, jo*W + 0:W, k)   for each r
                C[i_r*N + jo*W + 0:W] = acc[r, 0:W]            for each r

with ``i_r = io*RB + im*R + r``. Every element of ``C`` still gets its init and then its
updates in ascending ``k``: results are bit-identical. Elements of different ``(i, j)`` are
distinct (the ``i`` stride is at least ``N``) and nothing else is written, so the order
across elements is free -- given that ``C`` overlaps no array the nest reads, which is
tested at run time: the tiled copy runs under a no-overlap test (and, for the block form,
a non-empty ``k`` loop), the original nest otherwise.

Applies when some vector operand of ``f`` is shared by the rows (depends on ``j`` but not
on ``i``: the reuse the tile exists for), ``M`` is a multiple of ``R`` and ``N`` of ``W``
(rows and columns past the last multiple are peeled: :func:`tile_reduction_nest`)
(symbolic extents: tested at run time, with ``RB = R``, and a failed test runs the nest the
way ``interchange_reductions`` rewrites it), loops start at 0, the value is pure and
vectorizes along ``j``, and it reads
``C`` only at the element being written. The tile follows the target's registers: 4 rows
of 4 vectors with 32 vector registers (AVX-512), 4 rows of 2 vectors with 16; a constant
row that is not a multiple of that width but of a narrower one gets as many more rows as
it has fewer vectors (32 columns on AVX-512: 8 rows of 2 vectors).

A nest whose columns a schedule already vectorized in panels -- TVM's x86 dense layer over
a weight packed as ``W_packed[j // 16, k, j % 16]``, which lowers to ::

    for i in T.parallel(M):
        for j_0 in range(N // 16):
            for k in range(K):
                C[i*N + j_0*16 : +16] = C[...] + A[i*K + k] * W_packed[j_0*16*K + k*16 : +16]

-- is tiled the same way with each panel as one column: ``R`` rows of ``P`` neighbouring
panels (four 16-lane panels with 32 registers, one with 16), the panel's vector shared by
the rows and the row's broadcast by the panels. One accumulator per panel was one chain of
``K`` dependent multiply-adds: 256 x 1024 x 1024 took 8.3 ms on the Zen 5 host, 2.3 tiled
(numba's dot products of rows 4.8).

The tile's rows share a panel of the operand ``f`` reads along ``j`` (``B[k, jo*W:+W]``).
When its rows lie far apart (``panel_copy.py``: :data:`.panel_copy.PACK_MIN_STRIDE_BYTES`)
and one panel's walk over all ``k`` spans more than :data:`PACK_MIN_WALK_BYTES` (``B`` of a
1024^3 matmul: rows 4 KiB apart, 4 MiB walked), every step is a new page and, at a
power-of-two stride, the same cache set: the panel is first copied into a contiguous local
buffer that the tiles of the rows then read (per row block for a parallel row loop, each
block its own copy; once for all the rows of a serial one, the panel loop then outside the
rows). The copy reads exactly the elements the tiles read, and the arithmetic is unchanged.
With a symbolic ``K`` or stride the conditions (stride, walk, the panel within
:data:`PACK_MAX_BYTES`) are tested at run time, and with symbolic rows the row blocks hold
:data:`SYMBOLIC_ROW_TILES` tiles (``M`` a multiple of that, also tested); the tiles without
a panel run when a test fails.
"""

from __future__ import annotations

from dataclasses import replace

from irbuilder.ir import (
    EQ,
    GT,
    Allocate,
    AttrStmt,
    Buffer,
    BufferLoad,
    BufferStore,
    DeclBuffer,
    FloorDiv,
    FloorMod,
    For,
    ForKind,
    IfThenElse,
    IntImm,
    PrimExpr,
    PrimFunc,
    Ramp,
    SeqStmt,
    Stmt,
    StmtExprMutator,
    Var,
    as_dtype,
    make_data_var,
    rebuild,
    seq,
    structural_equal,
)

from ..analysis.substitute import substitute, substitute_expr
from ..pass_infra import FunctionPass, PassContext, function_pass
from ..target import Target, as_target
from ..transforms.unroll import copy_with_fresh_vars
from ..transforms.vectorize import CannotVectorize
from .interchange import interchange_nests
from .pair_products import PairProduct, match_pair_product, native_lanes, paired_steps
from .panel_copy import PACK_MIN_WALK_BYTES, ToPanel, shared_panel, vector_lanes
from .panel_match import (
    TileNest,
    TileShape,
    match_tile_nest,
    tile_shape,
)
from .versioning import (
    NOALIAS_ATTR,
    all_of,
    byte_range,
    no_overlap_checks,
    rewrite_versioned_loops,
)

__all__ = ["TileShape", "tile_reduction_nest", "tile_reduction_panels", "tile_shape"]

SYMBOLIC_ROW_TILES = 8
"""Tiles per row block of a nest with a symbolic row count whose shared operand is copied
into panels (each panel then serves this many tiles, as a constant count of 1024 rows gets
from :func:`_rows_per_iteration`)."""

_TRUE = IntImm(as_dtype("bool"), 1)
_I64 = as_dtype("int64")
_I32 = as_dtype("int32")


class _ToAccumulator(StmtExprMutator):
    """Loads of the element being accumulated become loads of its lane of the tile."""

    def __init__(self, target: Buffer, index: PrimExpr, lane: PrimExpr, acc: Buffer) -> None:
        self.target, self.index, self.lane, self.acc = target, index, lane, acc

    def visit_buffer_load_(self, node: BufferLoad) -> PrimExpr:
        if node.buffer.data is self.target.data and structural_equal(node.indices[0], self.index):
            return BufferLoad(self.acc, (self.lane,))
        return self.generic_mutate(node)


def _narrowed(shape: TileShape, cols: PrimExpr, itemsize: int) -> TileShape:
    """``shape`` with fewer vectors per row and as many more rows (the same accumulators)
    when a constant ``cols`` is not a multiple of its width but of a narrower one: a
    GEMM blocked by 32 columns gets 8 rows of 2 AVX-512 vectors, not no tile."""
    lanes = shape.vector_bytes // itemsize
    if not isinstance(cols, IntImm) or lanes < 1:
        return shape
    vectors = shape.vectors
    while vectors > 1 and cols.value % (vectors * lanes):
        vectors //= 2
    if vectors == shape.vectors:
        return shape
    return TileShape(shape.rows * shape.vectors // vectors, vectors, shape.vector_bytes)


def _panels(shape: TileShape, cols: PrimExpr, panel_bytes: int) -> int:
    """How many vector panels of ``panel_bytes`` a tile row holds (``shape``'s vectors of
    a row, at least one; fewer when ``cols`` panels are not a multiple of that)."""
    assert isinstance(cols, IntImm)
    panels = max(1, shape.vectors * shape.vector_bytes // panel_bytes)
    while panels > 1 and cols.value % panels:
        panels //= 2
    return panels


def _tile_steps(nest: TileNest, at: dict[Var, PrimExpr], slot: PrimExpr,
                acc: Buffer) -> tuple[Stmt, Stmt, Stmt]:
    """The init, update and write-back of one accumulator of the tile: the nest's element
    at ``at`` kept in ``acc[slot]``."""
    target, store = nest.store.buffer, nest.store
    (index,) = store.indices
    where = substitute_expr(index, at)
    start = (
        substitute_expr(nest.init.value, at)
        if nest.init is not None
        else BufferLoad(target, (where,))
    )
    value = _ToAccumulator(target, index, slot, acc).visit_expr(store.value)
    moved = substitute_expr(value, at)
    return (
        BufferStore(acc, start, (slot,)),
        BufferStore(acc, moved, (slot,)),
        BufferStore(target, BufferLoad(acc, (slot,)), (where,)),
    )


def _rows_per_iteration(rows: int, tile_rows: int) -> int:
    """Rows per iteration of the tiled i loop: up to 8 tiles, keeping 16+ iterations."""
    best = tile_rows
    for tiles in (2, 4, 8):
        block = tile_rows * tiles
        if rows % block == 0 and rows // block >= 16:
            best = block
    return best


def tile_reduction_nest(loop: For, local_data: set[int], shape: TileShape,
                        min_walk: int = PACK_MIN_WALK_BYTES, panels: bool = True,
                        pair_target: Target | None = None) -> Stmt | None:
    """The versioned, tiled nest (module doc), or None when it does not apply. Rows the
    tile does not divide are peeled (:func:`_tile_peeling_rows`), and so are columns its
    width does not divide: the tiles take the columns before them and the leftover columns
    of every row run after them, as written (``interchange_reductions`` may take them),
    the two behind one run-time test that the output overlaps no array the nest reads
    (elements then do not depend on each other's order), the nest as written otherwise. A
    1000 x 1000 matmul had no tiles as AVX-512 code (1000 is no multiple of 16 lanes):
    72 ms against 11 ms for 1024; a symbolic column count is always peeled (``n % W``
    columns left, none when ``W`` divides it)."""
    cols_loop = loop.body
    nest = match_tile_nest(loop, local_data)
    if nest is None or not isinstance(cols_loop, For):
        return None
    cols = cols_loop.extent
    width = shape.vectors * shape.vector_bytes // nest.store.buffer.dtype.itemsize
    if nest.lanes == 1 and not isinstance(cols, IntImm):
        return _tile_peeling_columns(loop, nest, width, local_data, shape, min_walk, panels,
                                     pair_target)
    tiled = _tile_peeling_rows(loop, local_data, shape, min_walk, panels, pair_target)
    if tiled is not None or nest.lanes != 1 or not isinstance(cols, IntImm):
        return tiled
    if cols.value <= width:
        return None
    return _tile_peeling_columns(loop, nest, width, local_data, shape, min_walk, panels,
                                 pair_target)


def _tile_peeling_columns(loop: For, nest: TileNest, width: int, local_data: set[int],
                          shape: TileShape, min_walk: int, panels: bool,
                          pair_target: Target | None) -> Stmt | None:
    """The tiles over the columns before the last ``cols % width``, which run after them
    (:func:`tile_reduction_nest`), behind a no-overlap test; None when that fails."""
    cols_loop = nest.cols
    cols = cols_loop.extent
    by = IntImm(cols.dtype, width)
    if isinstance(cols, IntImm):
        whole: PrimExpr = IntImm(cols.dtype, cols.value - cols.value % width)
        left: PrimExpr = IntImm(cols.dtype, cols.value % width)
    else:
        whole, left = cols - FloorMod(cols, by), FloorMod(cols, by)
    main = rebuild(loop, {"body": rebuild(cols_loop, {"extent": whole})})
    tiled = _tile_peeling_rows(main, local_data, shape, min_walk, panels, pair_target)
    if tiled is None:
        return None
    j = cols_loop.loop_var
    rest = Var(f"{j.name}_rest", j.dtype)
    leftover = rebuild(loop, {"body": For(
        rest, IntImm(j.dtype, 0), left, ForKind.SERIAL,
        substitute(cols_loop.body, {j: whole + rest}), span=cols_loop.span)})
    checks = _overlap_checks(nest, local_data)
    if checks is None:
        return None
    both = copy_with_fresh_vars(seq([tiled, leftover]))  # flat: the row peel's too
    if not checks:
        return both
    return IfThenElse(all_of(checks), both, loop, span=loop.span)


def _tile_peeling_rows(loop: For, local_data: set[int], shape: TileShape,
                       min_walk: int = PACK_MIN_WALK_BYTES, panels: bool = True,
                       pair_target: Target | None = None) -> Stmt | None:
    """The versioned, tiled nest (module doc), or None when it does not apply; a shared
    operand whose panel walk spans more than ``min_walk`` bytes is copied into panels
    (never with ``panels=False``: the version that runs when a panel's run-time test
    fails). With ``pair_target``, narrow integer products take two steps per multiply-add
    (``pair_products``). A row count that is not a multiple of the tile's rows has its
    last rows peeled: the tiles take the rows before them, and the leftover rows run after
    them as written (``interchange_reductions`` may still take those). The interior of a
    convolution whose padding was inlined and partitioned (4090 of 4096 rows) is such a
    count; a symbolic one is always peeled (``n % R`` rows left, none when ``R`` divides
    it), where its run-time test used to send the whole nest to the interchanged form
    (a 513-row symbolic matmul: 10.8 ms against 2.5 for 512 rows)."""
    rows = loop.extent
    symbolic = not isinstance(rows, IntImm)
    tiled = None if symbolic else _tile_reduction_rows(loop, local_data, shape, min_walk,
                                                       panels, pair_target)
    if tiled is not None or match_tile_nest(loop, local_data) is None:
        return tiled
    by = IntImm(rows.dtype, shape.rows)
    if isinstance(rows, IntImm):
        if rows.value <= shape.rows or not rows.value % shape.rows:
            return None
        whole: PrimExpr = IntImm(rows.dtype, rows.value - rows.value % shape.rows)
        left: PrimExpr = IntImm(rows.dtype, rows.value % shape.rows)
    else:
        whole, left = rows - FloorMod(rows, by), FloorMod(rows, by)
    tiled = _tile_reduction_rows(rebuild(loop, {"extent": whole}), local_data, shape,
                                 min_walk, panels, pair_target)
    if tiled is None:
        return None
    i = loop.loop_var
    rest = Var(f"{i.name}_rest", i.dtype)
    leftover = For(rest, IntImm(i.dtype, 0), left, ForKind.SERIAL,
                   copy_with_fresh_vars(loop.body, {i: whole + rest}), span=loop.span)
    return seq([tiled, leftover])


def _tile_reduction_rows(loop: For, local_data: set[int], shape: TileShape, min_walk: int,
                         panels: bool, pair_target: Target | None) -> Stmt | None:
    """:func:`tile_reduction_nest` of a loop whose rows the tiles divide."""
    nest = match_tile_nest(loop, local_data)
    if nest is None:
        return None
    target = nest.store.buffer
    rows, cols = nest.rows.extent, nest.cols.extent
    if nest.lanes == 1:
        shape = _narrowed(shape, cols, target.dtype.itemsize)
        width = shape.vectors * shape.vector_bytes // target.dtype.itemsize
        if width < 2:
            return None
    else:  # one panel a row is still a tile: its rows share the panel's loads
        width = _panels(shape, cols, target.dtype.itemsize * nest.lanes)
    # symbolic extents: the tiles must divide them, tested at run time
    shape_checks: list[PrimExpr] = []
    if isinstance(rows, IntImm):
        if rows.value % shape.rows:
            return None
        block = _rows_per_iteration(rows.value, shape.rows)
    else:
        block = shape.rows
    if isinstance(cols, IntImm):
        if cols.value % width:
            return None
    else:
        shape_checks.append(EQ(FloorMod(cols, IntImm(cols.dtype, width)), IntImm(cols.dtype, 0)))
    checks = _overlap_checks(nest, local_data)
    if checks is None:
        return None
    checks = [*shape_checks, *checks]
    if nest.init is not None and not isinstance(nest.steps.extent, IntImm):
        checks.append(GT(nest.steps.extent, IntImm(nest.steps.extent.dtype, 0)))
    elif isinstance(nest.steps.extent, IntImm) and nest.steps.extent.value <= 0:
        return None
    i, j = nest.rows.loop_var, nest.cols.loop_var
    idt, jdt = i.dtype, j.dtype
    io, im = Var(i.name + "_o", idt), Var(i.name + "_m", idt)
    jo, lane = Var(j.name + "_o", jdt), Var(j.name + "_l", jdt)
    # a serial row loop may run inside the panels: every tile of the rows reuses a panel
    panels_outside = nest.rows.kind is ForKind.SERIAL and isinstance(rows, IntImm)
    reuse = rows.value // shape.rows if isinstance(rows, IntImm) and panels_outside else \
        block // shape.rows
    panel = shared_panel(nest, width, reuse, jo, min_walk) if panels else None
    wide_blocks = False  # symbolic rows in blocks of several tiles, for the panel
    if panel is None and panels and not isinstance(rows, IntImm):
        panel = shared_panel(nest, width, SYMBOLIC_ROW_TILES, jo, min_walk)
        if panel is not None:
            block = shape.rows * SYMBOLIC_ROW_TILES
            wide_blocks = True
    if not isinstance(rows, IntImm):
        checks.insert(0, EQ(FloorMod(rows, IntImm(rows.dtype, block)), IntImm(rows.dtype, 0)))
    # the original nest still gets the interchange when the tiles do not apply, and the
    # tiles without a panel when the panel's run-time conditions fail
    fallback: Stmt | None = None
    if panel is not None and (panel.checks or wide_blocks):
        checks.extend(panel.checks)
        fallback = _tile_reduction_rows(loop, local_data, shape, min_walk, panels=False,
                                       pair_target=pair_target)
    if panel is not None:
        k = nest.steps.loop_var
        column = j - jo * IntImm(jdt, width)  # the lane, once j is the tile's column
        at_panel = (k - nest.steps.min) * IntImm(k.dtype, width) + column
        value = ToPanel(panel.load, panel.buffer, at_panel).visit_expr(nest.store.value)
        nest = replace(nest, store=BufferStore(nest.store.buffer, value, nest.store.indices))
    acc_data = make_data_var(f"{target.name}_tile", target.dtype, "local")
    acc = Buffer(
        f"{target.name}_tile",
        acc_data,
        (IntImm(_I32, shape.rows * width * nest.lanes),),
        target.dtype,
        scope="local",
    )
    fill: list[Stmt] = []
    update: list[Stmt] = []
    drain: list[Stmt] = []
    native = native_lanes(pair_target, width) if pair_target is not None and nest.lanes == 1 \
        else 0
    (index,) = nest.store.indices
    pair = None if not native else match_pair_product(
        nest.store.value, BufferLoad(target, (index,)), nest.rows.loop_var, nest.cols.loop_var)
    paired: list[tuple[PairProduct, BufferLoad, Var]] = []
    try:
        for r in range(shape.rows):
            row = io * IntImm(idt, block) + IntImm(idt, r)
            if block > shape.rows:
                row = row + im * IntImm(idt, shape.rows)
            if nest.lanes == 1:
                at = {i: row, j: jo * IntImm(jdt, width) + lane}
                slot: PrimExpr = IntImm(jdt, r * width) + lane
                parts = _tile_steps(nest, at, slot, acc)
                if pair is not None:
                    moved = PairProduct(substitute_expr(pair.row, at),
                                        substitute_expr(pair.col, at))
                    vector = BufferLoad(acc, (Ramp(IntImm(jdt, r * width), IntImm(jdt, 1),
                                                   width),))
                    paired.append((moved, vector, lane))
                fill.append(vector_lanes(lane, width, parts[0]))
                update.append(vector_lanes(lane, width, parts[1]))
                drain.append(vector_lanes(lane, width, parts[2]))
                continue
            for v in range(width):  # panels: already vectors
                at = {i: row, j: jo * IntImm(jdt, width) + IntImm(jdt, v)}
                slot = Ramp(IntImm(_I32, (r * width + v) * nest.lanes), IntImm(_I32, 1),
                            nest.lanes)
                fill_step, update_step, drain_step = _tile_steps(nest, at, slot, acc)
                fill.append(fill_step)
                update.append(update_step)
                drain.append(drain_step)
    except CannotVectorize:
        return None
    steps = nest.steps
    accumulate: Stmt = For(
        steps.loop_var,
        steps.min,
        steps.extent,
        steps.kind,
        SeqStmt(tuple(update)),
        steps.thread_binding,
        steps.annotations,
        span=steps.span,
    )
    if paired and not (isinstance(steps.extent, IntImm) and steps.extent.value < 2):
        try:
            accumulate = paired_steps(steps, SeqStmt(tuple(update)), paired, width, native)
        except CannotVectorize:
            pass
    tile = Allocate(
        acc_data,
        target.dtype,
        IntImm(_I32, shape.rows * width * nest.lanes),
        _TRUE,
        DeclBuffer(acc, SeqStmt((*fill, accumulate, *drain))),
    )
    tiles: Stmt = tile
    if block > shape.rows:
        tiles = For(im, IntImm(idt, 0), IntImm(idt, block // shape.rows), ForKind.SERIAL, tile)
    outer = nest.rows

    def row_blocks(body: Stmt) -> For:
        return For(io, IntImm(idt, 0), _divided(rows, block), outer.kind, body,
                   outer.thread_binding, outer.annotations, span=outer.span)

    tiled: Stmt
    if panel is None:
        tiled = row_blocks(For(jo, IntImm(jdt, 0), _divided(cols, width), ForKind.SERIAL,
                               tiles))
    elif panels_outside:  # each panel copied once, for all the rows' tiles
        tiled = panel.allocated(For(jo, IntImm(jdt, 0), _divided(cols, width),
                                    ForKind.SERIAL, SeqStmt((panel.copy, row_blocks(tiles)))))
    else:  # a parallel row loop: each row block its own panel, one allocation for all
        tiled = row_blocks(panel.allocated(For(jo, IntImm(jdt, 0), _divided(cols, width),
                                               ForKind.SERIAL, SeqStmt((panel.copy, tiles)))))
    readonly = [b.data for b in nest.others.values()]
    fast = AttrStmt(
        (target.data, *readonly),
        NOALIAS_ATTR,
        IntImm(_I32, 1),
        copy_with_fresh_vars(tiled),
    )
    if not checks:
        return fast
    if fallback is None:
        fallback = interchange_nests(loop, local_data)
    return IfThenElse(all_of(checks), fast, fallback, span=loop.span)


def _overlap_checks(nest: TileNest, local_data: set[int]) -> list[PrimExpr] | None:
    """The run-time tests that the written array overlaps none the nest reads, or None when
    one cannot be stated. A function's own allocation (an intermediate stage of a TE graph,
    a root ``T.alloc_buffer``) overlaps no parameter: none then."""
    target = nest.store.buffer
    if id(target.data) in local_data:
        return []
    written = byte_range(target)
    return None if written is None else no_overlap_checks(written, nest.others.values())


def _divided(extent: PrimExpr, by: int) -> PrimExpr:
    if isinstance(extent, IntImm):
        return IntImm(extent.dtype, extent.value // by)
    return FloorDiv(extent, IntImm(extent.dtype, by))


@function_pass("tile_reduction_panels", opt_level=1)
def _tile_reduction_panels(func: PrimFunc) -> PrimFunc:
    """Compute row-by-row reduction nests in register tiles (module doc), sized for the
    PassContext's target (the host when none)."""
    ctx = PassContext.current()
    min_walk = int(ctx.option("tile_reduction_panels", "pack_min_walk_bytes",
                              PACK_MIN_WALK_BYTES))
    target = as_target(ctx.target)
    shape = tile_shape(target)
    return rewrite_versioned_loops(
        func, lambda loop, local: tile_reduction_nest(loop, local, shape, min_walk,
                                                      pair_target=target)
    )


tile_reduction_panels: FunctionPass = _tile_reduction_panels
"""The ``tile_reduction_panels`` pass (a :class:`FunctionPass`)."""
