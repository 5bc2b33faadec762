"""The ``transpose_tiles`` pass: copy nests that transpose move square tiles through vector
registers.

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
``i`` and ``j`` extents are constants or symbolic. Either loop may run along B's rows: the
nest may also read ``B[sB * i + j] = A[.. + i]`` (the plain ``B[i, j] = A[j, i]`` of a
user's transpose), whose tiles read rows of A along ``i`` and write rows of B along ``j``.
"""

from __future__ import annotations

from irbuilder.ir import (
    EQ,
    GE,
    Add,
    AttrStmt,
    Buffer,
    BufferLoad,
    BufferStore,
    FloorDiv,
    FloorMod,
    For,
    ForKind,
    IfThenElse,
    IntImm,
    LetStmt,
    Mul,
    PrimExpr,
    PrimFunc,
    Ramp,
    SeqStmt,
    Shuffle,
    Stmt,
    Sub,
    Var,
    as_dtype,
)

from ..analysis.loads import reads_memory
from ..analysis.substitute import substitute_expr
from ..analysis.vars import depends_on
from ..arith import simplify_expr
from ..pass_infra import FunctionPass, PassContext, function_pass
from ..target import Target, as_target
from ..transforms.auto_parallel import PARALLEL_IF
from .versioning import (
    NOALIAS_ATTR,
    all_of,
    byte_range,
    no_overlap_checks,
    rewrite_versioned_loops,
)

__all__ = [
    "transpose_bindings",
    "transpose_nest",
    "transpose_round",
    "transpose_shuffles",
    "transpose_tiles",
]


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


def transpose_shuffles(rows: list[PrimExpr]) -> list[PrimExpr]:
    """The columns of the square matrix whose rows are ``rows`` (``L`` vectors of ``L``
    lanes, ``L`` a power of two): ``log2(L)`` rounds of :func:`transpose_round`."""
    d = 1
    while d < len(rows):
        rows = transpose_round(rows, d)
        d *= 2
    return rows


def transpose_round(rows: list[PrimExpr], d: int) -> list[PrimExpr]:
    """Swap the ``d x d`` off-diagonal blocks of every ``2d x 2d`` block of the matrix whose
    rows are ``rows``: element ``(k, c)`` moves to ``(k ^ d, c ^ d)`` where bit ``d`` of
    ``k`` and ``c`` differ. Rows ``k`` and ``k + d`` (bit ``d`` of ``k`` clear) become two
    shuffles of the pair."""
    lanes = len(rows)
    out = list(rows)
    for k in range(lanes):
        if k & d:
            continue
        low = [c if not c & d else lanes + c - d for c in range(lanes)]
        high = [c + d if not c & d else lanes + c for c in range(lanes)]
        out[k] = Shuffle((rows[k], rows[k + d]), tuple(low))
        out[k + d] = Shuffle((rows[k], rows[k + d]), tuple(high))
    return out


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


def transpose_nest(loop: For, local_data: set[int], target: Target) -> Stmt | None:
    """``loop`` as transposed tiles under its run-time tests (module doc), or None."""
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
    if not (isinstance(store, BufferStore) and isinstance(store.value, BufferLoad)):
        return None
    load = store.value
    dst, src = store.buffer, load.buffer
    if dst.data is src.data or len(store.indices) != 1 or len(load.indices) != 1:
        return None
    if dst.dtype != src.dtype:
        return None
    lanes = _lanes(dst, target)
    if lanes < 2:
        return None
    (at_dst,), (at_src,) = store.indices, load.indices
    if at_dst.dtype.lanes != 1 or reads_memory(at_dst) or reads_memory(at_src):
        return None
    i, j = loop.loop_var, inner.loop_var
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
        overlap = None if written is None else no_overlap_checks(written, [src], local_data)
    if overlap is None:
        return None
    checks += overlap
    ib, jb = Var(f"{i.name}_tile", i.dtype), Var(f"{j.name}_tile", j.dtype)

    def row_start(k: int) -> PrimExpr:
        return loop.min + ib * lanes + k

    def col_start(k: int) -> PrimExpr:
        return inner.min + jb * lanes + k

    def position(var: Var, k: int) -> PrimExpr:
        return row_start(k) if var is i else col_start(k)

    # row k of the tile: A's row at along_dst = k, contiguous along along_src
    loads: list[tuple[Var, PrimExpr]] = []
    for k in range(lanes):
        at = {along_dst: position(along_dst, k), along_src: position(along_src, 0)}
        base = simplify_expr(substitute_expr(at_src, at))
        value = BufferLoad(src, (Ramp(base, IntImm(base.dtype, 1), lanes),))
        loads.append((Var(f"{src.name}_row{k}", value.dtype), value))
    # column k of the tile goes to B's row at along_src = k, contiguous along along_dst
    targets: list[tuple[PrimExpr, ...]] = []
    for k in range(lanes):
        at = {along_dst: position(along_dst, 0), along_src: position(along_src, k)}
        base = simplify_expr(substitute_expr(at_dst, at))
        targets.append((Ramp(base, IntImm(base.dtype, 1), lanes),))
    body = _tile_body(dst, loads, targets)
    tiled = For(
        ib,
        IntImm(loop.extent.dtype, 0),
        rows[1],
        loop.kind,
        For(jb, IntImm(inner.extent.dtype, 0), cols[1], ForKind.SERIAL, body, span=inner.span),
        annotations=loop.annotations,
        span=loop.span,
    )
    fast = AttrStmt((dst.data, src.data), NOALIAS_ATTR, IntImm(as_dtype("int32"), 1), tiled)
    if not checks:
        return fast
    return IfThenElse(all_of(checks), fast, loop, span=loop.span)


def transpose_bindings(
    rows: list[PrimExpr], name: str
) -> tuple[list[tuple[Var, PrimExpr]], list[PrimExpr]]:
    """:func:`transpose_shuffles` with every round's vectors bound to variables (a round
    reads each vector of the one before twice): the ``(var, value)`` bindings in order, and
    the columns (the last round's variables)."""
    bindings: list[tuple[Var, PrimExpr]] = []
    current = list(rows)
    d, round_no = 1, 0
    while d < len(current):
        named: list[PrimExpr] = []
        for k, expr in enumerate(transpose_round(current, d)):
            var = Var(f"{name}_t{round_no}_{k}", expr.dtype)
            bindings.append((var, expr))
            named.append(var)
        current, d, round_no = named, d * 2, round_no + 1
    return bindings, current


def _tile_body(
    dst: Buffer, loads: list[tuple[Var, PrimExpr]], targets: list[tuple[PrimExpr, ...]]
) -> Stmt:
    """``let`` the loaded rows and the shuffle rounds, then store the columns at
    ``targets``."""
    rounds, columns = transpose_bindings([var for var, _ in loads], "t")
    body: Stmt = SeqStmt(
        tuple(BufferStore(dst, column, at) for column, at in zip(columns, targets, strict=True))
    )
    for var, value in reversed([*loads, *rounds]):
        body = LetStmt(var, value, body)
    return body


@function_pass("transpose_tiles", opt_level=1)
def _transpose_tiles(func: PrimFunc) -> PrimFunc:
    """Run transposing copy nests as register-transposed vector tiles (module doc), sized
    for the PassContext's target (the host when none)."""
    target = as_target(PassContext.current().target)
    return rewrite_versioned_loops(func, lambda loop, local: transpose_nest(loop, local, target))


transpose_tiles: FunctionPass = _transpose_tiles
"""The ``transpose_tiles`` pass (a :class:`FunctionPass`)."""
