"""What compute_at must produce per iteration of its target loop, and which instances of
the moved block produce it.

*Needed region*: each consumer's access, its bindings substituted, relaxed over the loops
between the consumer and the target loop (and, for a ``shared`` or ``warp`` buffer, over the
thread loops above, whose threads share the buffer, as TVM does), hulled over accesses and
consumers; a dimension this cannot bound is the whole dimension.

*Solving*: where the block stores the buffer at ``v + c`` or ``c - v`` of an iter var ``v``
(a constant index needs nothing), the instances writing ``[lo, hi]`` of that dimension are
an interval of ``v``, and those writing anywhere in the buffer bound it (TVM's bound, which
becomes a predicate when it cuts the interval). A var met on several dimensions or buffers
gets the hull of its intervals (more instances, never fewer). Other store patterns are left
to :func:`region_inverse.digit_iter_ranges`.
"""

from __future__ import annotations

from collections.abc import Sequence

from irbuilder.ir import (
    Add,
    Block,
    Buffer,
    BufferLoad,
    BufferRegion,
    Call,
    FloorDiv,
    For,
    ForKind,
    IntImm,
    Mul,
    PrimExpr,
    Range,
    Sub,
    Var,
    const,
    post_order_visit,
)
from lowering.analysis.substitute import substitute_expr
from lowering.arith import Analyzer

from .analysis import access_regions, mentions_any
from .interval import Interval, eval_interval, pick_max, pick_min, simplify_index
from .region_inverse import digit_iter_ranges
from .state import TreeIndex

__all__ = [
    "digit_domains",
    "inner_loops",
    "needed_intervals",
    "solve_store",
    "thread_relaxed_loops",
]

# TVM's storage ranks and the thread ranks they are shared across (``CanRelaxStorageUnder
# Thread``): a shared buffer is one per block, so every thread and virtual thread of the
# block reads the same copy.
_SHARED_SCOPES = ("shared", "shared.dyn")


def thread_relaxed_loops(index: TreeIndex, loop: For, buffer: Buffer) -> dict[Var, Range]:
    """Thread loops at or above ``loop`` whose threads all see ``buffer``'s one copy."""
    out: dict[Var, Range] = {}
    scope = buffer.scope
    if scope not in _SHARED_SCOPES and scope != "warp":
        return out
    for node in [loop, *index.ancestors(loop)]:
        if not (isinstance(node, For) and node.kind == ForKind.THREAD_BINDING):
            continue
        binding = node.thread_binding
        tag = binding.thread_tag if binding is not None else ""
        if scope == "warp":
            relax = tag == "threadIdx.x"
        else:
            relax = tag.startswith(("threadIdx.", "vthread")) or tag == "cthread"
        if relax:
            out[node.loop_var] = Range(node.min, node.extent)
    return out


def inner_loops(index: TreeIndex, loop: For, block: Block) -> dict[Var, Range]:
    relaxed: dict[Var, Range] = {}
    for lp in index.loops_above(block):
        if lp is loop or index.is_ancestor(lp, loop):
            continue
        relaxed[lp.loop_var] = Range(lp.min, lp.extent)
    return relaxed


def _reads_memory(expr: PrimExpr) -> bool:
    hit = False

    def visit(node: object) -> None:
        nonlocal hit
        if isinstance(node, (BufferLoad, Call)):
            hit = True

    post_order_visit(expr, visit)
    return hit


def needed_intervals(
    index: TreeIndex,
    loop: For,
    consumers: Sequence[Block],
    buffer: Buffer,
    analyzer: Analyzer,
) -> list[Interval] | None:
    """Per dimension, the hull of what the consumers read of ``buffer`` in one iteration of
    ``loop``; None if they read nothing of it."""
    per_dim: list[list[Interval]] = [[] for _ in buffer.shape]
    extra = thread_relaxed_loops(index, loop, buffer)
    for consumer in consumers:
        realize = index.realize_of(consumer)
        binding = {iv.var: v for iv, v in zip(consumer.iter_vars, realize.iter_values)}
        relaxed = {**inner_loops(index, loop, consumer), **extra}
        for region in access_regions(consumer, buffer):
            for dim, rng in enumerate(region.region):
                per_dim[dim].append(_relax_range(rng, binding, relaxed, buffer, dim, analyzer))
    if not per_dim or not per_dim[0]:
        return None
    out: list[Interval] = []
    for dims in per_dim:
        lo, hi = dims[0]
        for other_lo, other_hi in dims[1:]:
            lo = pick_min(lo, other_lo, analyzer)
            hi = pick_max(hi, other_hi, analyzer)
        out.append((lo, hi))
    return out


def _relax_range(
    rng: Range,
    binding: dict[Var, PrimExpr],
    relaxed: dict[Var, Range],
    buffer: Buffer,
    dim: int,
    analyzer: Analyzer,
) -> Interval:
    lo_expr = substitute_expr(rng.min, binding)
    extent = substitute_expr(rng.extent, binding)
    relaxed_ids = {id(v) for v in relaxed}
    found = None if mentions_any(extent, relaxed_ids) else eval_interval(lo_expr, relaxed)
    if found is not None and any(_reads_memory(end) for end in found):
        # a data-dependent index is no bound of its own: its value may change before use
        found = None
    if found is None:
        # not boundable here: the whole dimension (always enough)
        shape = buffer.shape[dim]
        return const(0, shape.dtype), simplify_index(shape - 1, analyzer)
    lo = simplify_index(found[0], analyzer)
    hi = simplify_index(found[1] + extent - 1, analyzer)
    return lo, hi


def _signed_var(expr: PrimExpr, iter_ids: set[int]) -> tuple[Var, int, PrimExpr] | None:
    """``expr`` as ``sign * v + c`` of an iter var ``v`` and a constant ``c``."""
    if isinstance(expr, Var) and id(expr) in iter_ids:
        return expr, 1, const(0, expr.dtype)
    if isinstance(expr, (Add, Sub)):
        for a, b, flip in ((expr.a, expr.b, False), (expr.b, expr.a, True)):
            if isinstance(b, IntImm) and isinstance(a, Var) and id(a) in iter_ids:
                if isinstance(expr, Add):
                    return a, 1, b
                if not flip:
                    return a, 1, const(-b.value, b.dtype)
                return a, -1, b
    return None


def _tile(rng: Range, iter_ids: set[int]) -> tuple[Var, int] | None:
    """``rng`` as ``[v * e, v * e + n)`` with ``0 < n <= e``: disjoint tiles of an iter var
    (one point when ``n`` is 1)."""
    lo, ext = rng.min, rng.extent
    if not (isinstance(ext, IntImm) and isinstance(lo, Mul)):
        return None
    for v, e in ((lo.a, lo.b), (lo.b, lo.a)):
        if isinstance(v, Var) and id(v) in iter_ids and isinstance(e, IntImm):
            if 0 < ext.value <= e.value:
                return v, e.value
    return None


def solve_store(
    block: Block,
    written: Sequence[Range],
    needed: Sequence[Interval],
    buffer: Buffer,
    analyzer: Analyzer,
) -> dict[int, tuple[Interval, Interval]] | None:
    """Iter var (by id) -> (needed interval, bound) when every dimension of what one instance
    writes is a constant, ``±v + c`` of an iter var, or a tile ``[v * e, v * e + n)`` with
    ``n <= e`` (instances never overlap); None otherwise."""
    iter_ids = {id(iv.var) for iv in block.iter_vars}
    out: dict[int, tuple[Interval, Interval]] = {}
    for dim, (rng, (lo, hi)) in enumerate(zip(written, needed)):
        idx = rng.min
        top = simplify_index(buffer.shape[dim] - 1, analyzer)
        zero = const(0, top.dtype)
        point = isinstance(rng.extent, IntImm) and rng.extent.value == 1
        if point and isinstance(idx, IntImm):
            continue
        found = _signed_var(idx, iter_ids) if point else None
        tile = _tile(rng, iter_ids) if found is None else None
        if found is not None:
            var, sign, c = found
            if sign == 1:
                dom = (lo - c, hi - c)
                bound = (zero - c, top - c)
            else:
                dom = (c - hi, c - lo)
                bound = (c - top, c - zero)
        elif tile is not None:
            # the tiles meeting [lo, hi]: floordiv is exact for n == e, a superset for n < e
            var, e = tile
            step = const(e, top.dtype)
            dom = (FloorDiv(lo, step), FloorDiv(hi, step))
            bound = (zero, FloorDiv(top, step))
        else:
            return None
        dom = (simplify_index(dom[0], analyzer), simplify_index(dom[1], analyzer))
        bound = (simplify_index(bound[0], analyzer), simplify_index(bound[1], analyzer))
        key = id(var)
        if key in out:
            (d_lo, d_hi), (b_lo, b_hi) = out[key]
            dom = (pick_min(d_lo, dom[0], analyzer), pick_max(d_hi, dom[1], analyzer))
            bound = (pick_min(b_lo, bound[0], analyzer), pick_max(b_hi, bound[1], analyzer))
        out[key] = (dom, bound)
    return out


def digit_domains(
    block: Block,
    stores: Sequence[PrimExpr],
    buf: Buffer,
    needed: Sequence[Interval],
    analyzer: Analyzer,
) -> dict[int, tuple[Interval, Interval]] | None:
    """The exact instance ranges of digit stores (``temp[v // 16, v % 16]``); their bound is
    the iter domain."""
    region = BufferRegion(
        buf, tuple(Range(lo, simplify_index(hi - lo + 1, analyzer)) for lo, hi in needed)
    )
    found = digit_iter_ranges(block, stores, region)
    if found is None:
        return None
    out: dict[int, tuple[Interval, Interval]] = {}
    for iv in block.iter_vars:
        rng = found.get(id(iv.var))
        if rng is not None:
            whole = (iv.dom.min, iv.dom.min + iv.dom.extent - 1)
            out[id(iv.var)] = ((rng.min, rng.min + rng.extent - 1), whole)
    return out
