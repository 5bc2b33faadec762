"""A buffer parameter of a vector dtype (``T.Buffer((512,), "float32x2")``) takes a numpy
array of the element type with the lanes as one more, last, dimension.

TVM builds such functions and calls them with an NDArray of dtype ``float32x2``. numpy has
no vector dtypes: the natural array is ``float32`` of shape ``(512, 2)``, lane ``l`` of
element ``i`` at ``[i, l]``. Before lowering, each such parameter is re-declared as that
array (same data pointer, the element type, the shape with the lanes appended, strides and
offset counted in elements), and the function's vector buffer becomes a view declared over
it, so the body is unchanged. The argument checks then speak of the element array
(``A: expected ndim == 2``), which is what the caller passes.
"""

from __future__ import annotations

import dataclasses

from irbuilder.ir import Buffer, DeclBuffer, IntImm, PrimExpr, PrimFunc

__all__ = ["lanes_as_last_dimension"]


def _element_array(buffer: Buffer) -> Buffer:
    lanes = buffer.dtype.lanes
    index_dtype = buffer.shape[0].dtype if buffer.shape else buffer.elem_offset.dtype
    width = IntImm(index_dtype, lanes)
    strides: tuple[PrimExpr, ...] = ()
    if buffer.strides:
        strides = (*(s * IntImm(s.dtype, lanes) for s in buffer.strides), IntImm(index_dtype, 1))
    offset = buffer.elem_offset
    if not (isinstance(offset, IntImm) and offset.value == 0):
        offset = offset * IntImm(offset.dtype, lanes)
    return dataclasses.replace(
        buffer,
        shape=(*buffer.shape, width),
        dtype=buffer.dtype.element_of(),
        strides=strides,
        elem_offset=offset,
        axis_separators=(),
    )


def lanes_as_last_dimension(func: PrimFunc) -> PrimFunc:
    """``func`` with every vector-typed buffer parameter taken as an element array."""
    vectors = [(param, b) for param, b in func.buffer_map.items() if b.dtype.lanes > 1]
    if not vectors:
        return func
    buffer_map = dict(func.buffer_map)
    body = func.body
    for param, vector in reversed(vectors):
        buffer_map[param] = _element_array(vector)
        body = DeclBuffer(vector, body, span=vector.span)
    return dataclasses.replace(func, buffer_map=buffer_map, body=body)
