"""The indices reverse_compute_at reads a consumer's accesses through, for a consumer that
reads a buffer without loads: through its data pointer (``B.access_ptr("r", ...)`` or
``B.data`` passed to a call, with the region declared by ``T.reads``) or through a
``match_buffer`` view of a larger region.

Such a block has no loads to map the producers' written region back to its iter vars; TVM
maps its read region instead (for a pointer, the declared one; :func:`analysis.block_access`
takes the same). A dimension read at one point (``B[vi, ...]``) is read like a load's index;
a dimension read as a range must not move with the block's iter vars and must lie inside
what one iteration of the target loop writes there (else a moved instance could read what
a later iteration writes).
"""

from __future__ import annotations

from irbuilder.ir import Block, Buffer, BufferRegion, IntImm, PrimExpr, Range, structural_equal

from .analysis import block_access, mentions_any

__all__ = ["declared_read_points"]


def declared_read_points(
    block: Block, buffer: Buffer, written: BufferRegion
) -> tuple[tuple[PrimExpr, ...], BufferRegion] | str:
    """(indices, the part of ``written`` they read) from ``block``'s read region of
    ``buffer``, or why it cannot be used."""
    declared = [r for r in block_access(block).reads if r.buffer is buffer]
    if len(declared) != 1:
        return f"it reads {len(declared)} regions of it, not one"
    own = {id(iv.var) for iv in block.iter_vars}
    points: list[PrimExpr] = []
    ranges: list[Range] = []
    for dim, (rng, done) in enumerate(zip(declared[0].region, written.region)):
        if isinstance(rng.extent, IntImm) and rng.extent.value == 1:
            points.append(rng.min)
            ranges.append(done)
            continue
        if mentions_any(rng.min, own) or mentions_any(rng.extent, own):
            return f"its read of dimension {dim} is a range that moves with its iter vars"
        if not _inside(rng, done):
            return (
                f"its read of dimension {dim} is not inside what one iteration of the loop "
                "writes there"
            )
    return tuple(points), BufferRegion(buffer, tuple(ranges))


def _inside(inner: Range, outer: Range) -> bool:
    if structural_equal(inner.min, outer.min) and structural_equal(inner.extent, outer.extent):
        return True
    values = (inner.min, inner.extent, outer.min, outer.extent)
    if not all(isinstance(v, IntImm) for v in values):
        return False
    i_lo, i_ext, o_lo, o_ext = (v.value for v in values if isinstance(v, IntImm))
    return o_lo <= i_lo and i_lo + i_ext <= o_lo + o_ext
