"""Layout primitives: IndexMap, transform_layout, storage_align.

``IndexMap`` follows TVM's: ``IndexMap.from_func(lambda i, j: (j // 4, i, j % 4))`` maps a
buffer's indices to new ones. transform_layout rewrites an allocated buffer to the mapped
shape and every access to the mapped indices; it is refused unless the map is a bijection
of the buffer's index box onto the new shape (affine pieces of the indices, no two sharing
a digit, as many elements before and after), so no two elements collide and none is lost.
Unlike TVM it also refuses parameters: their layout is the caller's.

storage_align records TVM's ``buffer_dim_align`` block annotation
(``[[buffer_index, axis, factor, offset]]``); this project's lowering does not pad strides
from it yet, so it changes no result (and no performance).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

from irbuilder.ir import (
    Add,
    Block,
    Buffer,
    BufferLoad,
    BufferRegion,
    BufferStore,
    FloorDiv,
    FloorMod,
    For,
    IntImm,
    MatchBufferRegion,
    Mul,
    PrimExpr,
    Range,
    Stmt,
    StmtExprMutator,
    Sub,
    Var,
    as_dtype,
    const,
    convert,
    make_data_var,
    rebuild,
)
from lowering.analysis.substitute import substitute_expr
from lowering.arith.analyzer import Analyzer
from lowering.arith.rewrite import simplify_expr

from .affine import IterSum, bindings_affine
from .edit import is_allocated, refresh_regions
from .error import BufferArgumentError, fail, render_error
from .state import ScheduleState

__all__ = ["IndexMap", "storage_align", "transform_layout"]


class IndexMap:
    """A map from indices ``initial_indices`` to ``final_indices`` (expressions of them)."""

    def __init__(
        self,
        initial_indices: Sequence[Var],
        final_indices: Sequence[PrimExpr],
        inverse_index_map: Callable[..., Any] | IndexMap | None = None,
    ) -> None:
        self.initial_indices = list(initial_indices)
        self.final_indices = [convert(e) for e in final_indices]
        # TVM's field: an inverse the caller states (MetaSchedule's traces pass one to
        # transform_layout). Kept for the caller; the primitives derive the inverse
        # themselves from the bijection (``inverse``), so a stated one is never trusted.
        if inverse_index_map is not None and not isinstance(inverse_index_map, IndexMap):
            inverse_index_map = IndexMap.from_func(
                inverse_index_map, ndim=len(self.final_indices)
            )
        self.inverse_index_map: IndexMap | None = inverse_index_map

    AXIS_SEPARATOR: Any = None  # set below: TVM's marker between groups of output axes

    @staticmethod
    def from_func(
        func: Callable[..., Any],
        ndim: int | None = None,
        inverse_index_map: Callable[..., Any] | IndexMap | None = None,
        *,
        index_dtype: str = "int32",
    ) -> IndexMap:
        """Build from a Python function of the indices returning a tuple of expressions
        (TVM's signature: ``inverse_index_map`` is kept as the map's field of that name)."""
        index_map, separators = IndexMap.from_func_with_separators(func, ndim, index_dtype)
        if separators:
            raise ValueError("IndexMap.from_func: use from_func_with_separators for separators")
        if inverse_index_map is None:
            return index_map
        return IndexMap(index_map.initial_indices, index_map.final_indices, inverse_index_map)

    @staticmethod
    def from_func_with_separators(
        func: Callable[..., Any], ndim: int | None = None, index_dtype: str = "int32"
    ) -> tuple[IndexMap, list[int]]:
        """The map and the positions of ``IndexMap.AXIS_SEPARATOR`` among its outputs."""
        params = list(inspect.signature(func).parameters.values())
        star = [p for p in params if p.kind is inspect.Parameter.VAR_POSITIONAL]
        dtype = as_dtype(index_dtype)
        if star and ndim is not None:
            # TVM's sugar: ``lambda *indices, k: ...`` takes the leading indices in
            # ``indices`` and the trailing ones by the keyword-only names
            before = [p.name for p in params if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD]
            after = [p.name for p in params if p.kind is inspect.Parameter.KEYWORD_ONLY]
            count = ndim - len(before) - len(after)
            if count < 0:
                raise ValueError(f"the index map takes at least {ndim - count} indices")
            names = before + [f"i{k}" for k in range(count)] + after
            variables = [Var(name, dtype) for name in names]
            cut = len(before) + count
            kw = {name: var for name, var in zip(after, variables[cut:])}
            result = func(*variables[:cut], **kw)
        else:
            if ndim is None:
                names = [p.name for p in params]
            else:
                names = [f"i{k}" for k in range(ndim)]
            variables = [Var(name, dtype) for name in names]
            result = func(*variables)
        outputs = list(result) if isinstance(result, (tuple, list)) else [result]
        finals: list[Any] = []
        separators: list[int] = []
        for value in outputs:
            if value is IndexMap.AXIS_SEPARATOR:
                separators.append(len(finals))
            else:
                finals.append(value)
        return IndexMap(variables, finals), separators

    def legalized(self, index_dtype: str) -> IndexMap:
        """The same map over indices of ``index_dtype`` (TVM's LegalizeIndexMapDType): a
        map replayed from a trace has int32 indices, an int64 buffer needs int64 ones."""
        dtype = as_dtype(index_dtype)
        if all(v.dtype == dtype for v in self.initial_indices):
            return self
        try:
            text = repr(self)
        except ValueError:
            return self  # not printable as a lambda: used as it is (and checked as usual)
        func = eval(compile(text, "<index map>", "eval"), {"__builtins__": {}})
        return IndexMap.from_func(func, None, index_dtype=index_dtype)

    def map_indices(self, indices: Sequence[PrimExpr]) -> list[PrimExpr]:
        vmap = dict(zip(self.initial_indices, indices))
        return [substitute_expr(e, vmap) for e in self.final_indices]

    def _bijection(self, shape: Sequence[Any]) -> list[IterSum]:
        dims = [int(getattr(d, "value", d)) for d in shape]
        if len(dims) != len(self.initial_indices):
            raise ValueError(
                f"the index map takes {len(self.initial_indices)} indices, got a "
                f"{len(dims)}-d shape"
            )
        sums = bijection_sums(self, dims)
        if sums is None:
            raise ValueError(f"the index map is not a bijection of the shape {tuple(dims)}")
        return sums

    def map_shape(self, shape: Sequence[Any]) -> list[int]:
        """The shape the map sends the index box of ``shape`` onto (it must be a bijection)."""
        return [s.extent for s in self._bijection(shape)]

    def inverse(self, shape: Sequence[Any]) -> IndexMap:
        """The inverse map, for the index box of ``shape`` (the map must be a bijection)."""
        sums = self._bijection(shape)
        outputs = [Var(f"o{k}", as_dtype("int32")) for k in range(len(sums))]
        return IndexMap(outputs, digits_inverse(self, sums, outputs))

    def __repr__(self) -> str:
        names = ", ".join(v.name for v in self.initial_indices)
        body = ", ".join(_py_expr(e) for e in self.final_indices)
        return (
            f"lambda {names}: ({body},)"
            if len(self.final_indices) == 1
            else f"lambda {names}: ({body})"
        )


class _AxisSeparator:
    """TVM's ``IndexMap.AXIS_SEPARATOR``: where a buffer's flattened axes split."""

    def __repr__(self) -> str:
        return "IndexMap.AXIS_SEPARATOR"


IndexMap.AXIS_SEPARATOR = _AxisSeparator()


def _py_expr(expr: PrimExpr) -> str:
    """Python text of an index expression (the forms an index map uses)."""
    if isinstance(expr, Var):
        return expr.name
    if isinstance(expr, IntImm):
        return str(expr.value)
    ops = {Add: "+", Sub: "-", Mul: "*", FloorDiv: "//", FloorMod: "%"}
    for cls, op in ops.items():
        if isinstance(expr, cls):
            operands = (expr.a, expr.b)
            a, b = (
                _py_expr(x) if isinstance(x, (Var, IntImm)) else f"({_py_expr(x)})"
                for x in operands
            )
            return f"{a} {op} {b}"
    raise ValueError(f"cannot print {type(expr).__name__} in an index map")


def bijection_sums(index_map: IndexMap, dims: Sequence[int]) -> list[IterSum] | None:
    """The outputs as affine digit sums when the map is a bijection of the box ``dims``."""
    extents = dict(zip(index_map.initial_indices, dims))
    sums = bindings_affine(index_map.final_indices, extents)
    total = 1
    for dim in dims:
        total *= dim
    produced = 1
    for found in sums or []:
        produced *= found.extent
    if sums is None or any(s.base != 0 for s in sums) or produced != total:
        return None
    return sums


def digits_inverse(
    index_map: IndexMap, sums: Sequence[IterSum], outputs: Sequence[Var]
) -> list[PrimExpr]:
    """Each input index as the sum of its digits read back from the output variables."""
    result: list[PrimExpr] = []
    for var in index_map.initial_indices:
        recovered: PrimExpr | None = None
        unit: PrimExpr | None = None
        for out_var, found in zip(outputs, sums):
            for split in found.splits:
                if split.source is var and found.extent == 1 and len(found.splits) == 1:
                    unit = out_var  # an output that is this extent-1 index itself (always 0)
                if split.source is not var or split.extent == 1:
                    continue
                # TVM's digit form: (x % (scale * extent)) // scale
                term: PrimExpr = out_var
                if split.scale * split.extent < found.extent:
                    term = term % (split.scale * split.extent)
                if split.scale != 1:
                    term = term // split.scale
                if split.lower_factor != 1:
                    term = term * split.lower_factor
                recovered = term if recovered is None else recovered + term
        if recovered is None:
            recovered = unit if unit is not None else const(0, var.dtype)
        result.append(recovered)
    return result


def takes_varargs(value: Any) -> bool:
    """Whether ``value`` is a function with ``*indices`` (its rank comes from the buffer)."""
    if isinstance(value, IndexMap) or not callable(value):
        return False
    try:
        params = inspect.signature(value).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in params)


def as_index_map(
    value: IndexMap | Callable[..., Any], ndim: int, index_dtype: str = "int32"
) -> IndexMap:
    if isinstance(value, IndexMap):
        return value
    if callable(value):
        return IndexMap.from_func(value, ndim or None, index_dtype=index_dtype)
    raise TypeError(f"index_map must be an IndexMap or a function, got {type(value).__name__}")



def resolve_buffer(state: ScheduleState, block: Block, buffer: Any, name: str) -> Buffer:
    """TVM's buffer argument: ``("read"|"write", index)``, a write index, a name or a Buffer
    the block accesses (anything else is a BufferArgumentError, TVM's assert)."""

    def refuse(reason: str) -> BufferArgumentError:
        return BufferArgumentError(name, reason, render_error(state.output(), [block]))

    accessed = [r.buffer for r in block.reads + block.writes]
    if isinstance(buffer, Buffer):
        if not any(b is buffer for b in accessed):
            raise refuse(f"block {block.name_hint!r} does not access buffer {buffer.name!r}")
        return buffer
    if isinstance(buffer, str):
        named = {id(b): b for b in accessed if b.name == buffer}
        if len(named) != 1:
            raise refuse(
                f"block {block.name_hint!r} does not access {buffer!r}"
                if not named
                else f"block {block.name_hint!r} accesses several buffers named {buffer!r}"
            )
        return next(iter(named.values()))
    if isinstance(buffer, tuple) and len(buffer) == 2 and isinstance(buffer[1], int):
        if buffer[0] not in ("read", "write"):
            raise refuse(f"buffer index type {buffer[0]!r} is neither 'read' nor 'write'")
        regions = block.reads if buffer[0] == "read" else block.writes
        index = int(buffer[1])
    elif isinstance(buffer, int):
        regions, index = block.writes, buffer
    else:
        raise TypeError(f"{name}: buffer must be ('read'|'write', index), an index or a name")
    if not 0 <= index < len(regions):
        side = "write" if isinstance(buffer, int) else buffer[0]
        raise refuse(
            f"block {block.name_hint!r} has no buffer at {buffer!r}: it has {len(regions)} "
            f"{side} buffers"
        )
    return regions[index].buffer


class ViewRegionError(ValueError):
    """A match_buffer view of the transformed buffer that the new layout cannot express."""


class _Remap(StmtExprMutator):
    """Every access of ``old`` through ``index_map``, simplified as TVM does under the
    ranges of the enclosing loops and iter vars (``(vo * 16 + vi) // 16`` is ``vo``)."""

    def __init__(self, old: Buffer, new: Buffer, index_map: IndexMap) -> None:
        self.old, self.new, self.index_map = old, new, index_map
        self.reuse: dict[Stmt, Stmt] = {}
        self.analyzer = Analyzer()
        self.units: dict[Var, PrimExpr] = {}

    def _bind(self, var: Var, begin: PrimExpr, extent: PrimExpr) -> None:
        self.analyzer.bind_range(var, begin, extent)
        if isinstance(extent, IntImm) and extent.value == 1:
            self.units[var] = begin

    def _mapped(self, indices: Sequence[PrimExpr]) -> tuple[PrimExpr, ...]:
        mapped = self.index_map.map_indices([self.visit_expr(i) for i in indices])
        # as TVM's iter-map simplification: an extent-1 variable's term drops out of a sum,
        # while a bare extent-1 variable stays an index
        return tuple(
            simplify_expr(
                m if isinstance(m, Var) else substitute_expr(m, self.units), self.analyzer
            )
            for m in mapped
        )

    def visit_buffer_load_(self, load: BufferLoad) -> PrimExpr:
        if load.buffer is not self.old:
            return self.generic_mutate(load)
        return BufferLoad(self.new, self._mapped(load.indices))

    def visit_buffer_store_(self, store: BufferStore) -> Stmt:
        if store.buffer is not self.old:
            return self.generic_mutate(store)
        mapped = self._mapped(store.indices)
        value = self.visit_expr(store.value)
        return BufferStore(self.new, value, mapped, span=store.span)

    def visit_buffer(self, buffer: Buffer) -> Buffer:
        return self.new if buffer is self.old else buffer

    def _identity(self) -> bool:
        """Whether the map keeps every index where it is (only separators or nothing)."""
        finals = self.index_map.final_indices
        return len(finals) == len(self.index_map.initial_indices) and all(
            f is v for f, v in zip(finals, self.index_map.initial_indices)
        )

    def _view_source(self, block: Block, match: MatchBufferRegion) -> BufferRegion:
        """A view's source region of ``old`` in the new layout: a single element is mapped
        like an access; a larger region only under a map moving no index (the view's
        strides and offset are then read from the new buffer as before)."""
        region = match.source.region
        if self._identity():
            return BufferRegion(self.new, region)
        if not all(isinstance(r.extent, IntImm) and r.extent.value == 1 for r in region):
            raise ViewRegionError(
                f"block {block.name_hint!r} views {self.old.name!r} through match_buffer "
                f"{match.buffer.name!r} over a region of more than one element; its image "
                "under the index map is not a region such a view can describe"
            )
        mins = self._mapped([r.min for r in region])
        return BufferRegion(self.new, tuple(Range(m, const(1, m.dtype)) for m in mins))

    def visit_block_(self, block: Block) -> Stmt:
        for iv in block.iter_vars:  # variables are distinct objects: bindings never clash
            self._bind(iv.var, iv.dom.min, iv.dom.extent)
        sources = {
            id(m): self._view_source(block, m)
            for m in block.match_buffers
            if m.source.buffer is self.old
        }
        new = self.generic_mutate(block)
        if sources:
            # generic_mutate keeps regions as they were (visit_buffer_region): the views'
            # sources, unlike the inferred T.reads/T.writes, are set here
            views = tuple(
                MatchBufferRegion(m.buffer, sources[id(old)], span=m.span)
                if id(old) in sources
                else m
                for old, m in zip(block.match_buffers, new.match_buffers)
            )
            new = rebuild(new, {"match_buffers": views})
        if new is not block:
            if block.reads or block.writes or block.iter_vars:
                new = refresh_regions(new)
            self.reuse[block] = new
        return new

    def visit_for_(self, loop: For) -> Stmt:
        self._bind(loop.loop_var, loop.min, loop.extent)
        new = self.generic_mutate(loop)
        if new is not loop:
            self.reuse[loop] = new
        return new

    def visit_buffer_region(self, region: BufferRegion) -> BufferRegion:
        return region  # re-inferred by visit_block_


def transform_layout(
    state: ScheduleState, block: Block, buffer_arg: Any, index_map: IndexMap
) -> None:
    name = "transform_layout"
    buffer = resolve_buffer(state, block, buffer_arg, name)
    if not is_allocated(state.func, state.index, buffer):
        raise fail(
            state,
            name,
            f"{buffer.name!r} is a parameter of the function; changing its layout would "
            "change what the caller passes",
            block,
        )
    if len(index_map.initial_indices) != len(buffer.shape):
        raise fail(
            state,
            name,
            f"the index map takes {len(index_map.initial_indices)} indices, {buffer.name!r} "
            f"has {len(buffer.shape)} dimensions",
            block,
        )
    if not all(isinstance(d, IntImm) for d in buffer.shape):
        raise fail(state, name, f"{buffer.name!r} has a symbolic shape", block)
    dims = [d.value for d in buffer.shape]  # type: ignore[attr-defined]
    sums = bijection_sums(index_map, dims)
    if sums is None:
        raise fail(
            state,
            name,
            f"the index map is not a bijection of {buffer.name!r}'s indices onto a new shape "
            "(each output must be an affine piece of the indices, none overlapping; "
            "padding with pad_value is not supported)",
            block,
        )
    shape = tuple(const(s.extent, "int32") for s in sums)
    new_buffer = Buffer(
        buffer.name,
        make_data_var(buffer.name, buffer.dtype, buffer.scope),
        shape,
        buffer.dtype,
        scope=buffer.scope,
    )
    remap = _Remap(buffer, new_buffer, index_map)
    root = state.func.body
    new_root = remap.visit_stmt(root)
    state.replace(root, new_root, remap.reuse)


def storage_align(
    state: ScheduleState, block: Block, buffer_index: int, axis: int, factor: int, offset: int
) -> None:
    name = "storage_align"
    if not 0 <= buffer_index < len(block.writes):
        raise fail(
            state, name, f"block {block.name_hint!r} has no write buffer {buffer_index}", block
        )
    buffer = block.writes[buffer_index].buffer
    if not is_allocated(state.func, state.index, buffer):
        raise fail(state, name, f"{buffer.name!r} is a parameter of the function", block)
    if not -len(buffer.shape) <= axis < len(buffer.shape):
        raise fail(state, name, f"axis {axis} is out of range for {buffer.name!r}", block)
    if factor <= 0 or not 0 <= offset < factor:
        raise fail(
            state, name, f"need factor > 0 and 0 <= offset < factor, got {factor}, {offset}", block
        )
    axis %= len(buffer.shape)
    # A later alignment of the same buffer and axis replaces the earlier one (TVM)
    existing = [
        list(entry)
        for entry in block.annotations.get("buffer_dim_align", [])
        if not (entry[0] == buffer_index and entry[1] == axis)
    ]
    existing.append([buffer_index, axis, factor, offset])
    annotations = dict(block.annotations)
    annotations["buffer_dim_align"] = existing
    new = rebuild(block, {"annotations": annotations})
    realize = state.index.realize_of(block)
    state.replace(realize, rebuild(realize, {"block": new}), {block: new})
