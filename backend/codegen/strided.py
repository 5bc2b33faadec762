"""Loads of a Ramp with a small constant stride (``A[T.Ramp(b, 2, 16)]``): a few contiguous
vector loads and one shuffle instead of one scalar load and insert per lane.

A downsample ``O[i, j] = A[2 * i, 2 * j]`` vectorized over ``j`` reads every other element
of a row. Emitted per lane, the lanes' int32 indices are sign-extended one by one and LLVM
cannot see that the addresses are consecutive: it keeps 16 scalar loads and inserts per
vector (measured on the Zen 5 host: 2048 x 2048 from 4096 x 4096, 6.8 ms; TVM 0.27 3.3 ms).

For stride ``s`` (``2 <= |s| <=`` :data:`MAX_SHUFFLED_STRIDE`) and ``L`` lanes the lanes
span ``s * (L - 1) + 1`` elements, from the lowest lane's address to the highest. ``s``
vectors of ``L`` elements cover that span: vector ``m < s - 1`` starts ``m * L`` elements
after the lowest address, and the last one ends exactly at the highest, so no element
outside ``[lowest, highest]`` is read -- the same memory the lanes touch, in one buffer.
One ``shufflevector`` (two for ``s > 2``: the vectors are first paired) picks lane ``k``'s
element. Values, and the order of the loads with respect to other memory operations of the
statement, are those of the per-lane loads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from backend.llvm_types import llvm_type
from irbuilder.ir import Add, BufferLoad, IntImm, Ramp

from .context import const_int

if TYPE_CHECKING:
    from .expr import ExprEmitter

__all__ = ["MAX_SHUFFLED_STRIDE", "shuffled_stride", "strided_load"]

MAX_SHUFFLED_STRIDE = 4
"""Largest stride loaded as contiguous vectors (``|s|`` loads and a shuffle of up to ``4L``
elements per vector); a larger one keeps per-lane loads."""


def shuffled_stride(node: BufferLoad, index: Ramp) -> int | None:
    """The stride of ``index`` when :func:`strided_load` handles the load, else None."""
    stride = const_int(index.stride)
    element = node.buffer.dtype
    if stride is None or not 2 <= abs(stride) <= MAX_SHUFFLED_STRIDE:
        return None
    if element.lanes != 1 or element.is_bool or index.dtype.lanes < abs(stride):
        return None
    return stride


def strided_load(em: ExprEmitter, node: BufferLoad, index: Ramp, stride: int, md: str) -> str:
    """Load the lanes of ``index`` (stride ``stride``, from :func:`shuffled_stride`)."""
    lanes = index.dtype.lanes
    step = abs(stride)
    span = step * (lanes - 1) + 1
    base = index.base
    lowest = base if stride > 0 else Add(base, IntImm(base.dtype, stride * (lanes - 1)))
    starts = [m * lanes for m in range(step - 1)] + [span - lanes]
    vectors = []
    for start in starts:
        at = lowest if start == 0 else Add(lowest, IntImm(base.dtype, start))
        ptr = em.index_pointer(node.buffer, at)
        vectors.append(em.load_scalar_at(ptr, node.dtype, md))

    def source(k: int) -> int:
        """Position of lane ``k``'s element in the concatenation of the vectors."""
        offset = step * k if stride > 0 else step * (lanes - 1 - k)
        m = min(offset // lanes, step - 1)
        return m * lanes + offset - starts[m]

    vty = llvm_type(node.dtype)
    if step == 2:
        left, right, wide = vectors[0], vectors[1], vty
    else:
        pair = f"<{2 * lanes} x i32> <" + ", ".join(f"i32 {i}" for i in range(2 * lanes)) + ">"
        wide = llvm_type(node.dtype.with_lanes(2 * lanes))
        left = em.assign("strided", f"shufflevector {vty} {vectors[0]}, {vty} {vectors[1]}, {pair}")
        last = vectors[3] if step == 4 else "poison"
        right = em.assign("strided", f"shufflevector {vty} {vectors[2]}, {vty} {last}, {pair}")
    mask = f"<{lanes} x i32> <" + ", ".join(f"i32 {source(k)}" for k in range(lanes)) + ">"
    return em.assign("strided", f"shufflevector {wide} {left}, {wide} {right}, {mask}")
