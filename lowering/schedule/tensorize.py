"""tensorize(block_or_loop, intrin): replace a computation by a tensor intrinsic's
implementation (TVM v0.16's ``Tensorize`` in ``blockize_tensorize.cc``).

A loop is first blockized (its subtree becomes the body of a block ``<name>_o``); the
block's body is then matched against the description's root block
(``tensorize_match.py``) and replaced by the implementation's body. The implementation's
parameter buffers become the block's ``T.match_buffer`` views of the regions the matched
buffers occupy: ``base`` (the start of the block's region, from the match) on every axis,
one element on the leading axes the intrinsic's buffer does not have and the buffer's
extents on the others. Each view gets fresh variables, and an ``elem_offset`` variable
where the implementation's buffer has a constant one, so it is bound to where the region
starts (TVM's parser gives such a parameter buffer, declared with an ``offset_factor``, a
variable offset; this one gives a whole-array parameter the offset 0). The block keeps its
iter vars, bindings, regions and init (TVM keeps them too); the implementation's root
block annotations are added to the block's, an annotation the block has already winning.
"""

from __future__ import annotations

from irbuilder.ir import (
    Block,
    BlockRealize,
    Buffer,
    BufferRegion,
    Cast,
    For,
    IntImm,
    MatchBufferRegion,
    PrimExpr,
    PrimFunc,
    Range,
    Stmt,
    Var,
    as_dtype,
    const,
    make_data_var,
    rebuild,
)
from irbuilder.ir.functor import StmtExprVisitor
from lowering.analysis.substitute import substitute
from lowering.transforms.unroll import copy_with_fresh_vars, fresh_var

from .blockize import blockize
from .edit import refresh_regions
from .error import ScheduleError, fail
from .state import ScheduleState, with_root_block
from .tensor_intrin import TensorIntrin
from .tensorize_match import Mismatch, match_description

__all__ = ["root_realize", "tensorize"]


def root_realize(func: PrimFunc) -> BlockRealize:
    """The function's root block realize (made, with inferred regions, when the body has
    no root block: TVM requires one; a description without it is accepted here)."""
    normalized, had_root = with_root_block(func)
    realize = normalized.body
    assert isinstance(realize, BlockRealize)
    if had_root:
        return realize
    return rebuild(realize, {"block": refresh_regions(realize.block)})  # type: ignore[no-any-return]


def _param_buffers(func: PrimFunc) -> list[Buffer]:
    return [func.buffer_map[p] for p in func.params]


def _fresh_view_buffer(
    buffer: Buffer, index_dtype: str, vmap: dict[Var, PrimExpr]
) -> Buffer:
    """A copy of the implementation's parameter ``buffer`` with new variables (recorded in
    ``vmap``) for its data, offset and symbolic strides/extents."""

    def renew(expr: PrimExpr) -> PrimExpr:
        if isinstance(expr, Var):
            new = vmap.get(expr)
            if new is None:
                new = fresh_var(expr)
                vmap[expr] = new
            return new
        return substitute(expr, vmap)

    data = make_data_var(buffer.data.name, buffer.dtype, buffer.scope)
    vmap[buffer.data] = data
    if isinstance(buffer.elem_offset, Var):
        offset = renew(buffer.elem_offset)
    else:
        offset = Var(f"{buffer.name}_elem_offset", as_dtype(index_dtype))
    return rebuild(  # type: ignore[no-any-return]
        buffer,
        {
            "data": data,
            "shape": tuple(renew(d) for d in buffer.shape),
            "strides": tuple(renew(s) for s in buffer.strides),
            "elem_offset": offset,
        },
    )


class _RawPointers(StmtExprVisitor):
    """Handle variables used as values (``A.data``, ``A.access_ptr(...)``'s operand), not
    through a load or a store."""

    def __init__(self) -> None:
        self.found: set[Var] = set()

    def visit_var_(self, var: Var) -> None:
        if var.dtype.is_handle:
            self.found.add(var)


def _raw_pointer_uses(body: Stmt) -> set[Var]:
    visitor = _RawPointers()
    visitor.visit_stmt(body)
    return visitor.found


def _flat_start(source: Buffer, base: list[PrimExpr]) -> int | None:
    """The element offset of ``source[base]`` from its data pointer, when it is a constant."""
    offset = source.elem_offset
    if not isinstance(offset, IntImm) or not all(isinstance(b, IntImm) for b in base):
        return None
    strides = list(source.strides)
    if not strides:
        if not all(isinstance(d, IntImm) for d in source.shape):
            return None
        step = 1
        for dim in reversed(source.shape):
            strides.insert(0, const(step, "int64"))
            step *= dim.value  # type: ignore[attr-defined]
    if not all(isinstance(s, IntImm) for s in strides) or len(strides) != len(base):
        return None
    return int(offset.value) + sum(
        b.value * s.value for b, s in zip(base, strides)  # type: ignore[attr-defined]
    )


def _view_region(source: Buffer, base: list[PrimExpr], view: Buffer) -> BufferRegion:
    offset = len(base) - len(view.shape)
    ranges = [Range(b, const(1, b.dtype)) for b in base[:offset]]
    for b, extent in zip(base[offset:], view.shape):
        if extent.dtype != b.dtype:  # the block's indices may be wider than the intrinsic's
            extent = const(extent.value, b.dtype) if isinstance(extent, IntImm) else Cast(
                b.dtype, extent
            )
        ranges.append(Range(b, extent))
    return BufferRegion(source, tuple(ranges))


def _merged_annotations(block: Block, impl_block: Block) -> dict[str, object]:
    merged = dict(block.annotations)
    for key, value in impl_block.annotations.items():
        merged.setdefault(key, value)  # TVM keeps the schedule's value (and warns)
    return merged


def tensorize(
    state: ScheduleState,
    target: Block | For,
    intrin: TensorIntrin,
    name: str,
    preserve_unit_iters: bool,
) -> None:
    if isinstance(target, For):
        try:
            block = blockize(state, target, preserve_unit_iters)
        except ScheduleError as err:
            raise ScheduleError(
                "tensorize", f"the loop's subtree cannot be blockized: {err.reason}", err.rendered
            ) from None
        what = f"subtree of loop {target.loop_var.name}"
    else:
        block = target
        what = f"block {block.name_hint!r}"
    realize = state.index.realize_of(block)
    desc_root = root_realize(intrin.desc)
    desc_buffers = _param_buffers(intrin.desc)
    try:
        found = match_description(realize, desc_root, desc_buffers)
    except Mismatch as err:
        raise fail(
            state,
            "tensorize",
            f"the {what} does not match the description of tensor intrinsic '{name}': {err}",
            block,
        ) from None
    impl_root = root_realize(intrin.impl).block
    vmap: dict[Var, PrimExpr] = {}
    bmap: dict[Buffer, Buffer] = {}
    views: list[MatchBufferRegion] = []
    pointers = _raw_pointer_uses(impl_root.body)
    for desc, impl in zip(desc_buffers, _param_buffers(intrin.impl)):
        source = found.buffers[desc]
        base = found.bases[source]
        if impl.data in pointers and isinstance(impl.elem_offset, IntImm):
            start = _flat_start(source, base)
            if start is None or start != impl.elem_offset.value:
                raise fail(
                    state,
                    "tensorize",
                    f"the implementation of tensor intrinsic '{name}' passes the pointer of "
                    f"its buffer '{impl.name}' on, computed with the constant elem_offset "
                    f"{impl.elem_offset.value}, but the region of '{source.name}' it stands for "
                    f"starts at {'a position known only at run time' if start is None else start}:"
                    f" declare the offset as a variable ({impl.name.lower()}_off = T.int32(), "
                    f"T.match_buffer(..., elem_offset={impl.name.lower()}_off))",
                    block,
                )
        index_dtype = str(base[0].dtype) if base else "int32"
        view = _fresh_view_buffer(impl, index_dtype, vmap)
        bmap[impl] = view
        views.append(MatchBufferRegion(view, _view_region(source, base, view)))
    body: Stmt = copy_with_fresh_vars(substitute(impl_root.body, vmap, bmap))
    new_block = rebuild(
        block,
        {
            "body": body,
            "match_buffers": tuple(views),
            "annotations": _merged_annotations(block, impl_root),
        },
    )
    state.replace(block, new_block, {block: new_block})
