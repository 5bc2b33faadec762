"""Buffer flattening: every N-d access becomes a 1-d access through a flat alias.

The alias is a ``DeclBuffer`` sharing the original's data var
(``A_flat = T.decl_buffer((256,), "float32", data=A.data)``), declared right after
the original: at the top of the body for ``buffer_map`` buffers (in parameter
order; every accessed parameter buffer gets one, so lowered code only touches
declared aliases), directly inside the original ``DeclBuffer`` for declared ones
(a declared buffer that is already flat -- 1-d, unit stride, zero offset -- is
used as is). ``buffer_map`` keeps the logical shapes.

Flat index: row-major ``((i0 * s1 + i1) * s2 + i2)`` without strides, or
``sum(i_k * stride_k)`` with explicit strides, plus ``elem_offset`` when it is not
zero. The alias has no strides and a zero offset. A Ramp in the last index
stays a Ramp on the flat index. ``axis_separators`` are rejected.
"""

from __future__ import annotations

from collections.abc import Sequence

from irbuilder.ir import (
    Block,
    BlockRealize,
    Buffer,
    BufferLoad,
    BufferStore,
    Cast,
    DeclBuffer,
    PrimExpr,
    PrimFunc,
    Ramp,
    Stmt,
    StmtExprMutator,
    const,
)

from ..analysis import add, buffer_accesses, is_const, mul
from ..pass_infra import function_pass
from .lower_blocks import allocation_extent

__all__ = ["flat_alias", "flat_index", "flatten_buffer", "is_flat"]


def _check_separators(buffer: Buffer) -> None:
    if buffer.axis_separators:
        raise ValueError(
            f"buffer {buffer.name!r}: axis_separators are not supported by the CPU backend "
            f"(got {list(buffer.axis_separators)})"
        )


def is_flat(buffer: Buffer) -> bool:
    """Whether ``buffer`` is already 1-d with unit stride and zero offset."""
    unit = not buffer.strides or is_const(buffer.strides[0], 1)
    return buffer.ndim == 1 and unit and is_const(buffer.elem_offset, 0)


def flat_alias(buffer: Buffer) -> Buffer:
    """The 1-d alias of ``buffer`` over the same data var, covering offset and strides."""
    _check_separators(buffer)
    extent = add(buffer.elem_offset, allocation_extent(buffer))
    return Buffer(
        f"{buffer.name}_flat",
        buffer.data,
        (extent,),
        buffer.dtype,
        scope=buffer.scope,
        data_alignment=buffer.data_alignment,
        offset_factor=buffer.offset_factor,
        span=buffer.span,
    )


def _scalar_index(buffer: Buffer, indices: Sequence[PrimExpr]) -> PrimExpr:
    if not indices:
        index: PrimExpr = const(0)
    elif buffer.strides:
        index = mul(indices[0], buffer.strides[0])
        for idx, stride in zip(indices[1:], buffer.strides[1:]):
            index = add(index, mul(idx, stride))
    else:
        index = indices[0]
        for idx, extent in zip(indices[1:], buffer.shape[1:]):
            index = add(mul(index, extent), idx)
    return add(index, buffer.elem_offset)


def flat_index(buffer: Buffer, indices: Sequence[PrimExpr]) -> PrimExpr:
    """The 1-d element index of ``buffer[indices]`` (see the module docstring)."""
    if len(indices) != buffer.ndim:
        raise IndexError(
            f"buffer {buffer.name!r} has {buffer.ndim} dimensions, "
            f"accessed with {len(indices)} indices"
        )
    last = indices[-1] if indices else None
    if isinstance(last, Ramp) and all(i.dtype.is_scalar for i in indices[:-1]):
        base = _scalar_index(buffer, [*indices[:-1], last.base])
        stride = mul(last.stride, buffer.strides[-1]) if buffer.strides else last.stride
        if stride.dtype != base.dtype:
            stride = Cast(base.dtype, stride)
        return Ramp(base, stride, last.lanes, span=last.span)
    return _scalar_index(buffer, indices)


class _Flattener(StmtExprMutator):
    def __init__(self, aliases: dict[Buffer, Buffer]) -> None:
        self.aliases = aliases
        self.flat: dict[Buffer, None] = {}

    def _target(self, buffer: Buffer) -> Buffer | None:
        alias = self.aliases.get(buffer)
        if alias is not None:
            return alias
        if buffer in self.flat:
            return None
        raise ValueError(
            f"flatten_buffer: buffer {buffer.name!r} is accessed but not declared "
            "(declare it in buffer_map or with DeclBuffer)"
        )

    def visit_decl_buffer_(self, node: DeclBuffer) -> Stmt:
        buffer = node.buffer
        _check_separators(buffer)
        if is_flat(buffer) or buffer not in buffer_accesses(node.body).accessed():
            self.flat[buffer] = None
            return self.generic_mutate(node)
        alias = flat_alias(buffer)
        self.aliases[buffer] = alias
        body = self.visit_stmt(node.body)
        return DeclBuffer(buffer, DeclBuffer(alias, body, span=node.span), span=node.span)

    def visit_buffer_load_(self, node: BufferLoad) -> PrimExpr:
        indices = tuple(self.visit_expr(i) for i in node.indices)
        target = self._target(node.buffer)
        if target is None:
            changed = any(a is not b for a, b in zip(indices, node.indices))
            return BufferLoad(node.buffer, indices, span=node.span) if changed else node
        return BufferLoad(target, (flat_index(node.buffer, indices),), span=node.span)

    def visit_buffer_store_(self, node: BufferStore) -> Stmt:
        value = self.visit_expr(node.value)
        indices = tuple(self.visit_expr(i) for i in node.indices)
        target = self._target(node.buffer)
        if target is None:
            return BufferStore(node.buffer, value, indices, span=node.span)
        return BufferStore(target, value, (flat_index(node.buffer, indices),), span=node.span)

    def visit_block_realize_(self, node: BlockRealize) -> Stmt:
        raise ValueError(
            f"flatten_buffer: block {node.block.name_hint!r} remains; run lower_blocks first"
        )

    def visit_block_(self, node: Block) -> Stmt:
        raise ValueError(
            f"flatten_buffer: block {node.name_hint!r} remains; run lower_blocks first"
        )


@function_pass("flatten_buffer")
def flatten_buffer(func: PrimFunc) -> PrimFunc:
    """Make every access 1-d through flat DeclBuffer aliases; buffer_map keeps logical shapes."""
    accessed = buffer_accesses(func.body).accessed()
    aliases: dict[Buffer, Buffer] = {}
    declared: list[Buffer] = []
    for param in func.params:
        buffer = func.buffer_map.get(param)
        if buffer is None:
            continue
        _check_separators(buffer)
        if buffer in accessed and buffer not in aliases:
            aliases[buffer] = flat_alias(buffer)
            declared.append(aliases[buffer])
    body = _Flattener(aliases).visit_stmt(func.body)
    for alias in reversed(declared):
        body = DeclBuffer(alias, body, span=alias.span)
    return func if body is func.body else func.with_body(body)
