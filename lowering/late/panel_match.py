"""Which nests ``tile_reduction_panels`` (``panel_tile.py``) takes: a row loop over a
column loop whose body is one element's init and its reduction steps (``C[i*N + j] =
init; for k: C[i*N + j] = C[i*N + j] + f(i, j, k)``), distinct elements for distinct ``(i,
j)``, a pure value reading ``C`` only at the element written, and an operand shared by the
rows (the reuse a register tile exists for); and the register tile of a target."""

from __future__ import annotations

from dataclasses import dataclass

from irbuilder.ir import (
    Buffer,
    BufferStore,
    FloorMod,
    For,
    ForKind,
    IntImm,
    Mul,
    PrimExpr,
    Ramp,
    Sub,
    Var,
    structural_equal,
)

from ..analysis.loads import LoadCollector, reads_memory
from ..analysis.vars import depends_on
from ..arith import to_linear
from ..arith.canonical import linear_coefficient
from ..target import Target
from .interchange import split_reduction_nest

__all__ = ["TileNest", "TileShape", "is_zero", "match_tile_nest", "peeled_from",
           "rows_apart", "tile_shape"]


@dataclass(frozen=True)
class TileShape:
    """``rows`` x ``vectors`` registers of ``vector_bytes`` each accumulate one tile."""

    rows: int
    vectors: int
    vector_bytes: int


def tile_shape(target: Target) -> TileShape:
    """The register tile for ``target``: 16 accumulators of 32 registers, 8 of 16."""
    vector_bytes = target.vector_bits // 8
    return TileShape(4, 4 if target.has_feature("avx512f") else 2, vector_bytes)


@dataclass
class TileNest:
    rows: For
    cols: For
    init: BufferStore | None
    steps: For
    store: BufferStore
    others: dict[int, Buffer]
    lanes: int = 1
    """1 for scalar columns; else each ``j`` updates a contiguous vector of ``lanes``
    elements (a panel the schedule vectorized: ``C[i, j*16:j*16 + 16]``)."""


def match_tile_nest(loop: For, local_data: set[int]) -> TileNest | None:
    cols = loop.body
    if not (isinstance(cols, For) and cols.kind is ForKind.SERIAL):
        return None
    parts = split_reduction_nest(cols)
    if parts is None:
        return None
    init, steps, store = parts
    i, j, k = loop.loop_var, cols.loop_var, steps.loop_var
    if steps.kind is not ForKind.SERIAL or loop.kind not in (ForKind.SERIAL, ForKind.PARALLEL):
        return None
    for lp in (loop, cols):
        if not is_zero(lp.min) or reads_memory(lp.extent) or not lp.extent.dtype.is_int:
            return None
    if depends_on(cols.extent, i):
        return None
    for bound in (steps.min, steps.extent):
        if reads_memory(bound) or depends_on(bound, i) or depends_on(bound, j):
            return None
    target = store.buffer
    if len(store.indices) != 1:
        return None
    if target.dtype.lanes != 1 or target.dtype.is_bool:
        return None
    (index,) = store.indices
    lanes = store.value.dtype.lanes
    first = index
    if lanes != 1:
        # a vector panel per j: contiguous, the panels of one row side by side
        if not (isinstance(index, Ramp) and isinstance(index.stride, IntImm)
                and index.stride.value == 1 and index.lanes == lanes
                and isinstance(cols.extent, IntImm)):
            return None
        first = index.base
    if reads_memory(index) or depends_on(index, k) or linear_coefficient(first, j) != lanes:
        return None
    span = cols.extent
    if lanes != 1:
        assert isinstance(span, IntImm)
        span = IntImm(span.dtype, span.value * lanes)
    if not rows_apart(first, i, span):
        return None  # two (i, j) could meet at one element
    if init is not None and not (
        init.buffer.data is target.data
        and len(init.indices) == 1
        and structural_equal(init.indices[0], index)
    ):
        return None
    found = LoadCollector(traps_are_effects=True)
    found.visit_expr(store.value)
    init_loads = LoadCollector(traps_are_effects=True)
    if init is not None:
        init_loads.visit_expr(init.value)
    if found.impure or init_loads.impure:
        return None
    reads_self = False
    others: dict[int, Buffer] = {}
    for load in found.loads:
        if load.buffer.data is target.data:
            if len(load.indices) != 1 or not structural_equal(load.indices[0], index):
                return None
            reads_self = True
        elif id(load.buffer.data) not in local_data:
            others.setdefault(id(load.buffer.data), load.buffer)
    for load in init_loads.loads:
        if load.buffer.data is target.data:
            return None
        if id(load.buffer.data) not in local_data:
            others.setdefault(id(load.buffer.data), load.buffer)
    if not reads_self:
        return None
    if not any(load.buffer.data is not target.data and not depends_on(load, i)
               and depends_on(load, j) for load in found.loads):
        # No vector operand shared by the tile's rows: nothing worth a register tile is
        # reused, and the tile's walk (R rows, W columns, all of k, then the next W) is
        # worse than the interchanged nest's contiguous rows. On the Zen 5 host, a sum
        # over the outer axis of 64 x 256 x 512 float32: 0.41 ms tiled, 0.26 interchanged
        # (0.72 and 0.47 as AVX2 code); a 7-tap convolution of 64 rows of 65536, whose
        # only shared operand is a tap broadcast to every lane: 0.56 and 0.40 ms as AVX2
        # code (0.51 and 0.56 for AVX-512).
        return None
    return TileNest(loop, cols, init, steps, store, others, lanes)


def rows_apart(index: PrimExpr, i: Var, cols: PrimExpr) -> bool:
    """Whether the rows ``index`` writes are at least ``cols`` elements apart: a constant
    stride of ``i`` not below a constant ``cols``, or the term ``i * cols`` itself."""
    stride = linear_coefficient(index, i)
    if stride is not None:
        return isinstance(cols, IntImm) and abs(stride) >= cols.value
    terms = [(atom, coef) for atom, coef in to_linear(index).live_terms() if depends_on(atom, i)]
    if len(terms) != 1 or terms[0][1] != 1 or not isinstance(terms[0][0], Mul):
        return False
    atom = terms[0][0]
    for var, factor in ((atom.a, atom.b), (atom.b, atom.a)):
        if var is i and (structural_equal(factor, cols) or peeled_from(cols, factor)):
            return True
    return False


def peeled_from(cols: PrimExpr, extent: PrimExpr) -> bool:
    """Whether ``cols`` is ``extent - extent % c`` (``c > 0``): at most ``extent``, the
    columns ``panel_tile._tile_peeling_columns`` leaves to the tiles."""
    return (isinstance(cols, Sub) and structural_equal(cols.a, extent)
            and isinstance(cols.b, FloorMod) and structural_equal(cols.b.a, extent)
            and isinstance(cols.b.b, IntImm) and cols.b.b.value > 0)


def is_zero(expr: PrimExpr) -> bool:
    return isinstance(expr, IntImm) and expr.value == 0
