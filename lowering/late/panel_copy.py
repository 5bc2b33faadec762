"""Panels for ``tile_reduction_panels``: the operand a register tile's rows share, copied
into a contiguous local buffer when its walk down the reduction strides far.

The tile's rows share a panel of the operand they read along the columns (``B[k, jo*W:+W]``
of a matmul). When its rows (one per ``k`` step) lie far apart and one panel's walk over all
``k`` spans more than the L2 cache, every step is a new page and, at a power-of-two stride,
the same cache set: the panel is copied first (:func:`shared_panel`) and the tiles read the
copy (:class:`ToPanel`). With a symbolic ``K`` or stride the conditions are tested at run
time (:func:`symbolic_panel_checks`). ``panel_tile.py`` has the tiles themselves.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from irbuilder.ir import (
    GE,
    GT,
    LE,
    Add,
    Allocate,
    Buffer,
    BufferLoad,
    BufferStore,
    Cast,
    DeclBuffer,
    For,
    ForKind,
    IntImm,
    Mul,
    PrimExpr,
    Stmt,
    StmtExprMutator,
    Var,
    as_dtype,
    make_data_var,
    structural_equal,
)

from ..analysis.loads import LoadCollector, reads_memory
from ..analysis.substitute import substitute_expr
from ..analysis.vars import depends_on
from ..arith import simplify_expr, to_linear
from ..arith.canonical import linear_coefficient
from ..transforms.unroll import copy_with_fresh_vars
from ..transforms.vectorize import CannotVectorize, vectorize_for

if TYPE_CHECKING:
    from .panel_match import TileNest

__all__ = [
    "PACK_MAX_BYTES",
    "PACK_MIN_STRIDE_BYTES",
    "PACK_MIN_WALK_BYTES",
    "Panel",
    "ToPanel",
    "shared_panel",
    "step_of",
    "symbolic_panel_checks",
    "vector_lanes",
]

_I32 = as_dtype("int32")
_I64 = as_dtype("int64")
_TRUE = IntImm(as_dtype("bool"), 1)

PACK_MIN_STRIDE_BYTES = 1024
"""A shared operand whose rows (one per ``k`` step) lie at least this far apart is copied
into a contiguous panel before its tiles read it: each step of such a walk is a new page
for the prefetchers and, at power-of-two strides, the same cache set."""

PACK_MIN_WALK_BYTES = 2 * 1024 * 1024
"""...and only when one panel's walk down the operand (``K`` rows of its stride) spans
more than this: well beyond the L2 cache, where the strided walk misses. On the Zen 5 host
a 1024^3 matmul went 24 -> 12 ms as AVX2 code with panels (4 MiB walked), 7.4 -> 5.5 as
AVX-512 code; a 512^3 one 1.22 -> 1.34 ms (1 MiB walked), a 256 x 1024 x 512 dense layer
(2 MiB) 0.78 -> 0.86 as AVX-512 code, 1.82 -> 1.68 as AVX2 code. The option
``pack_min_walk_bytes`` of the pass (``PassContext`` config) overrides it."""

PACK_MAX_BYTES = 256 * 1024
"""The largest panel copied (``K x W`` elements): it must stay in the L2 cache."""


def vector_lanes(lane: Var, width: int, body: Stmt) -> Stmt:
    """``for lane in T.vectorized(width): body`` as vector statements."""
    loop = copy_with_fresh_vars(
        For(lane, IntImm(lane.dtype, 0), IntImm(lane.dtype, width), ForKind.VECTORIZED, body)
    )
    assert isinstance(loop, For)
    return vectorize_for(loop, max_width=width, strict=True)


@dataclass
class Panel:
    """The shared operand ``load`` copied, per column panel, into ``buffer``."""

    load: BufferLoad
    buffer: Buffer
    copy: Stmt
    checks: tuple[PrimExpr, ...] = ()
    """Run-time conditions of the copy (symbolic ``K`` or stride), empty when proven."""

    def allocated(self, body: Stmt) -> Stmt:
        """``body`` with the panel allocated around it."""
        size = IntImm(_I32, int(self.buffer.shape[0]))
        return Allocate(self.buffer.data, self.buffer.dtype, size, _TRUE,
                        DeclBuffer(self.buffer, body))


class ToPanel(StmtExprMutator):
    def __init__(self, load: BufferLoad, panel: Buffer, index: PrimExpr) -> None:
        self.load, self.panel, self.index = load, panel, index

    def visit_buffer_load_(self, node: BufferLoad) -> PrimExpr:
        if node.buffer.data is self.load.buffer.data and structural_equal(
                node.indices[0], self.load.indices[0]):
            return BufferLoad(self.panel, (self.index,))
        return self.generic_mutate(node)


def shared_panel(nest: TileNest, width: int, reuse: int, jo: Var, min_walk: int) -> Panel | None:
    """The panel copy of the operand the tile's rows share, when its rows are far apart
    (:data:`PACK_MIN_STRIDE_BYTES`), the panel is reused by ``reuse >= 2`` tiles and fits
    :data:`PACK_MAX_BYTES`; None otherwise. The copy reads exactly the elements the tiles
    read (every ``k`` of the loop, the panel's ``width`` columns)."""
    steps = nest.steps
    if reuse < 2 or nest.lanes != 1:
        return None
    i, j, k = nest.rows.loop_var, nest.cols.loop_var, steps.loop_var
    found = LoadCollector()
    found.visit_expr(nest.store.value)
    for load in found.loads:
        if load.buffer.data is nest.store.buffer.data or len(load.indices) != 1:
            continue
        (index,) = load.indices
        if depends_on(index, i) or linear_coefficient(index, j) != 1 or reads_memory(index):
            continue
        stride = linear_coefficient(index, k)
        itemsize = load.buffer.dtype.itemsize
        checks: tuple[PrimExpr, ...] = ()
        if stride is not None and isinstance(steps.extent, IntImm):
            depth = steps.extent.value
            if (abs(stride) * itemsize < PACK_MIN_STRIDE_BYTES
                    or depth * abs(stride) * itemsize <= min_walk):
                continue
            if depth * width * itemsize > PACK_MAX_BYTES:
                return None
            capacity = depth * width
        else:
            checks = symbolic_panel_checks(index, k, steps.extent, width, itemsize, min_walk)
            if not checks:
                continue
            capacity = PACK_MAX_BYTES // itemsize
        name = f"{load.buffer.name}_panel"
        # a heap buffer (above the stack limit): its data var named as the printed
        # script's decl_buffer re-parses it, which the allocation failure message quotes
        data = make_data_var(f"{name}_data", load.buffer.dtype, "local")
        buffer = Buffer(name, data, (IntImm(_I32, capacity),), load.buffer.dtype,
                        scope="local")
        kk, lane = Var(k.name + "_p", k.dtype), Var(j.name + "_p", j.dtype)
        source = substitute_expr(load, {k: kk + steps.min,
                                        j: jo * IntImm(j.dtype, width) + lane})
        slot = kk * IntImm(k.dtype, width) + lane
        try:
            row = vector_lanes(lane, width, BufferStore(buffer, source, (slot,)))
        except CannotVectorize:
            return None
        copy = For(kk, IntImm(k.dtype, 0), steps.extent, ForKind.SERIAL, row)
        return Panel(load, buffer, copy, checks)
    return None


def step_of(index: PrimExpr, k: Var) -> PrimExpr | None:
    """What ``index`` grows by per step of ``k``: the sum of its terms ``c * k`` and
    ``c * k * s`` (``s`` free of ``k``) without ``k``; None when ``k`` appears otherwise."""
    if not index.dtype.is_int:
        return None
    parts: list[PrimExpr] = []
    for atom, coef in to_linear(index).live_terms():
        if not depends_on(atom, k):
            continue
        if atom is k:
            parts.append(IntImm(index.dtype, coef))
            continue
        if not isinstance(atom, Mul) or (atom.a is k) == (atom.b is k):
            return None
        other = atom.b if atom.a is k else atom.a
        if depends_on(other, k):
            return None
        parts.append(other if coef == 1 else Mul(other, IntImm(other.dtype, coef)))
    if not parts:
        return None
    step = parts[0]
    for part in parts[1:]:
        step = Add(step, part)
    return simplify_expr(step)


def symbolic_panel_checks(
    index: PrimExpr, k: Var, depth: PrimExpr, width: int, itemsize: int, min_walk: int
) -> tuple[PrimExpr, ...]:
    """The run-time form of the panel's conditions when the walk's stride (the step of
    ``index`` per ``k``) or its length ``depth`` is symbolic: a stride of at least
    :data:`PACK_MIN_STRIDE_BYTES`, a walk longer than ``min_walk`` and ``depth x width``
    elements within :data:`PACK_MAX_BYTES` (in 64 bits: no product overflows); empty when
    the stride is not a loop-invariant expression."""
    step = step_of(index, k)
    if step is None or reads_memory(step):
        return ()

    def wide(expr: PrimExpr) -> PrimExpr:
        return expr if expr.dtype == _I64 else Cast(_I64, expr)

    def imm(value: int) -> IntImm:
        return IntImm(_I64, value)

    stride_bytes = Mul(wide(step), imm(itemsize))
    return (
        GE(stride_bytes, imm(PACK_MIN_STRIDE_BYTES)),
        GT(Mul(wide(depth), stride_bytes), imm(min_walk)),
        LE(Mul(wide(depth), imm(width * itemsize)), imm(PACK_MAX_BYTES)),
    )
