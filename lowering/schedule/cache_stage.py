"""Building a cache stage: its buffer (a fresh name, the buffer's shape or a compacted
region's) and the loop nest of one block copying a region from one buffer into another."""

from __future__ import annotations

from irbuilder.ir import (
    Block,
    BlockRealize,
    Buffer,
    BufferRegion,
    BufferStore,
    Cast,
    DataType,
    For,
    ForKind,
    IntImm,
    IterKind,
    IterVar,
    PrimExpr,
    Range,
    Stmt,
    Var,
    const,
    make_data_var,
)
from lowering.arith import simplify_expr

from .edit import refresh_regions
from .state import ScheduleState

__all__ = ["cache_name", "cast_to", "copy_stage", "is_zero", "make_cache_buffer", "unique_name"]


def cache_name(buffer: Buffer, scope: str) -> str:
    return f"{buffer.name}_{scope.replace('.', '_')}"


def unique_name(state: ScheduleState, base: str) -> str:
    """``base``, or ``base_1``, ``base_2``... when a block or buffer already uses it."""
    taken = (
        {n.name_hint for n in state.index.nodes.values() if isinstance(n, Block)}
        | {
            b.name
            for n in state.index.nodes.values()
            if isinstance(n, Block)
            for b in n.alloc_buffers
        }
        | {b.name for b in state.func.buffer_map.values()}
    )
    name, k = base, 0
    while name in taken:
        k += 1
        name = f"{base}_{k}"
    return name


def make_cache_buffer(
    state: ScheduleState, buffer: Buffer, scope: str, region: BufferRegion | None = None
) -> Buffer:
    """The cache: the buffer's shape, or ``region``'s extents (a compacted cache)."""
    name = unique_name(state, cache_name(buffer, scope))
    shape = buffer.shape if region is None else tuple(r.extent for r in region.region)
    return Buffer(name, make_data_var(name, buffer.dtype, scope), shape, buffer.dtype, scope=scope)


def copy_stage(
    region: BufferRegion, source: Buffer, target: Buffer, name: str, compact: str | None = None
) -> Stmt:
    """Loops ``ax*`` over ``region`` around a block copying ``source`` into ``target``.

    ``compact`` names the side ("source" or "target") that is a cache of the region's
    shape: the block's iter vars then run over the region's extents, that side is indexed
    by them and the other by the region's start plus them."""
    if compact is not None:
        return _compact_copy_stage(region, source, target, name, compact)
    loop_vars: list[Var] = []
    iter_vars: list[IterVar] = []
    values: list[PrimExpr] = []
    for k, (rng, dim) in enumerate(zip(region.region, region.buffer.shape)):
        dtype = dim.dtype
        rng = Range(cast_to(rng.min, dtype), cast_to(rng.extent, dtype))
        loop_var = Var(f"ax{k}", dtype)
        loop_vars.append(loop_var)
        iter_vars.append(
            IterVar(Var(f"v{k}", dtype), Range(const(0, dim.dtype), dim), IterKind.SPATIAL)
        )
        values.append(loop_var if is_zero(rng.min) else simplify_expr(rng.min + loop_var))
    indices = tuple(iv.var for iv in iter_vars)
    store = BufferStore(target, source[indices], indices)
    block = refresh_regions(Block(tuple(iter_vars), (), (), name, store))
    stmt: Stmt = BlockRealize(tuple(values), const(True), block)
    for loop_var, rng in reversed(list(zip(loop_vars, region.region))):
        extent = cast_to(rng.extent, loop_var.dtype)
        stmt = For(loop_var, const(0, loop_var.dtype), extent, ForKind.SERIAL, stmt)
    return stmt


def _compact_copy_stage(
    region: BufferRegion, source: Buffer, target: Buffer, name: str, compact: str
) -> Stmt:
    loop_vars: list[Var] = []
    iter_vars: list[IterVar] = []
    full: list[PrimExpr] = []
    for k, (rng, dim) in enumerate(zip(region.region, region.buffer.shape)):
        dtype = dim.dtype
        extent = cast_to(rng.extent, dtype)
        loop_vars.append(Var(f"ax{k}", dtype))
        iv = IterVar(Var(f"v{k}", dtype), Range(const(0, dtype), extent), IterKind.SPATIAL)
        iter_vars.append(iv)
        lo = cast_to(rng.min, dtype)
        full.append(iv.var if is_zero(lo) else simplify_expr(lo + iv.var))
    local = tuple(iv.var for iv in iter_vars)
    src_idx, dst_idx = (local, tuple(full)) if compact == "source" else (tuple(full), local)
    store = BufferStore(target, source[src_idx], dst_idx)
    block = refresh_regions(Block(tuple(iter_vars), (), (), name, store))
    stmt: Stmt = BlockRealize(tuple(loop_vars), const(True), block)
    for loop_var, iv in reversed(list(zip(loop_vars, iter_vars))):
        stmt = For(loop_var, const(0, loop_var.dtype), iv.dom.extent, ForKind.SERIAL, stmt)
    return stmt


def is_zero(expr: PrimExpr) -> bool:
    return isinstance(expr, IntImm) and expr.value == 0


def cast_to(value: PrimExpr, dtype: DataType) -> PrimExpr:
    if value.dtype == dtype:
        return value
    if isinstance(value, IntImm):
        return const(value.value, dtype)
    return Cast(dtype, value)
