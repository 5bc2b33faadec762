"""Shared pieces of the codegen-time loop rewrites that version a loop on a run-time test.

``interchange``, ``promote``, ``version_gathers`` and ``align_streams`` each replace a loop by
``if <arrays do not overlap>: <faster copy> else: <the loop>``. They share the address
arithmetic of that test and the walk over a function's loops (:class:`LoopRewriter`).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence

from irbuilder.ir import (
    LE,
    Add,
    AttrStmt,
    Buffer,
    Cast,
    For,
    IfThenElse,
    IntImm,
    Mul,
    Or,
    PrimExpr,
    PrimFunc,
    Stmt,
    StmtExprMutator,
    as_dtype,
)
from irbuilder.ir import And as AndNode

from ..analysis.loads import LocalAllocations

__all__ = [
    "NOALIAS_ATTR",
    "ByteRange",
    "LoopRewriter",
    "VersionedLoopRewriter",
    "all_of",
    "byte_range",
    "disjoint",
    "element_range",
    "interleaved_behind_parallel_if",
    "is_noalias_version",
    "no_overlap_checks",
    "rewrite_loops",
    "rewrite_versioned_loops",
]

NOALIAS_ATTR = "tvms.noalias_region"
"""AttrStmt key of a fast path whose listed buffers are known not to overlap."""

ByteRange = tuple[PrimExpr, PrimExpr]
"""``[lo, hi)`` addresses, as ``uint64`` expressions."""

_U64 = as_dtype("uint64")


def byte_range(buffer: Buffer) -> ByteRange | None:
    """The memory of a flat buffer that starts at its data pointer, or None when unknown
    (more than one dimension, an element offset, a non-integer extent)."""
    if len(buffer.shape) != 1 or not (
        isinstance(buffer.elem_offset, IntImm) and buffer.elem_offset.value == 0
    ):
        return None
    size = buffer.shape[0]
    if not size.dtype.is_integer:
        return None
    lo = Cast(_U64, buffer.data)
    return lo, Add(lo, Mul(Cast(_U64, size), IntImm(_U64, buffer.dtype.itemsize)))


def element_range(buffer: Buffer, index: PrimExpr) -> ByteRange:
    """The bytes of ``buffer[index]`` (a flat, offset-free buffer)."""
    item = IntImm(_U64, buffer.dtype.itemsize)
    lo = Add(Cast(_U64, buffer.data), Mul(Cast(_U64, index), item))
    return lo, Add(lo, item)


def disjoint(a: ByteRange, b: ByteRange) -> PrimExpr:
    """The test that two address ranges do not overlap."""
    return Or(LE(a[1], b[0]), LE(b[1], a[0]))


def no_overlap_checks(
    written: ByteRange, buffers: Iterable[Buffer], local_data: Collection[int] = ()
) -> list[PrimExpr] | None:
    """One :func:`disjoint` test of ``written`` per distinct array among ``buffers`` (the
    function's own allocations, ``local_data``, need none), or None when some array's range
    is unknown."""
    checks: list[PrimExpr] = []
    seen: set[int] = set()
    for buffer in buffers:
        data = id(buffer.data)
        if data in seen or data in local_data:
            continue
        seen.add(data)
        span = byte_range(buffer)
        if span is None:
            return None
        checks.append(disjoint(written, span))
    return checks


def all_of(conditions: Sequence[PrimExpr]) -> PrimExpr:
    """The conjunction of one or more conditions, in order."""
    cond = conditions[0]
    for more in conditions[1:]:
        cond = AndNode(cond, more)
    return cond


class LoopRewriter(StmtExprMutator):
    """Visits every loop of a body, offering it to :meth:`rewrite`.

    ``inner_first`` rewrites inner loops before the loop around them is offered; otherwise a
    loop is offered first and its body is visited only when the offer is declined.
    :meth:`done` recognises the output of an earlier run (the rewrites run twice), which is
    left alone whole.
    """

    inner_first = True

    def __init__(self, local_data: set[int]) -> None:
        self.local_data = local_data

    def rewrite(self, loop: For) -> Stmt | None:
        """The replacement of ``loop``, or None to keep it."""
        raise NotImplementedError

    def done(self, stmt: Stmt) -> bool:
        """Whether ``stmt`` is this rewrite's own output."""
        return False

    def visit_expr(self, expr: PrimExpr) -> PrimExpr:
        return expr  # loops are statements: skip expression trees

    def visit_stmt(self, stmt: Stmt) -> Stmt:
        if self.done(stmt):
            return stmt
        return super().visit_stmt(stmt)

    def visit_for_(self, stmt: For) -> Stmt:
        if self.inner_first:
            new = self.generic_mutate(stmt)
            out = self.rewrite(new)
            return new if out is None else out
        out = self.rewrite(stmt)
        return self.generic_mutate(stmt) if out is None else out


def rewrite_loops(func: PrimFunc, rewriter: Callable[[set[int]], LoopRewriter]) -> PrimFunc:
    """``func`` with ``rewriter(local_data)`` applied to its body; ``local_data`` are the ids
    of the data vars of the function's own allocations (which never overlap a parameter)."""
    finder = LocalAllocations()
    finder.visit_stmt(func.body)
    body = rewriter(finder.vars).visit_stmt(func.body)
    return func if body is func.body else func.with_body(body)


def is_noalias_version(stmt: Stmt) -> bool:
    """Whether ``stmt`` is a no-overlap region, or a loop versioned into one and its original."""
    if isinstance(stmt, IfThenElse):
        stmt = stmt.then_case
    return isinstance(stmt, AttrStmt) and stmt.attr_key == NOALIAS_ATTR


class VersionedLoopRewriter(LoopRewriter):
    """Offers every loop, outermost first, to ``rewrite(loop, local_data)``; a no-overlap
    version made earlier (by this pass or another) is left alone whole."""

    inner_first = False

    def __init__(
        self, local_data: set[int], rewrite: Callable[[For, set[int]], Stmt | None]
    ) -> None:
        super().__init__(local_data)
        self._rewrite = rewrite

    def rewrite(self, loop: For) -> Stmt | None:
        return self._rewrite(loop, self.local_data)

    def done(self, stmt: Stmt) -> bool:
        return is_noalias_version(stmt)


def rewrite_versioned_loops(
    func: PrimFunc, rewrite: Callable[[For, set[int]], Stmt | None]
) -> PrimFunc:
    """``func`` with :class:`VersionedLoopRewriter` applied to its body."""
    return rewrite_loops(func, lambda local_data: VersionedLoopRewriter(local_data, rewrite))


def interleaved_behind_parallel_if(loop: For, rewritten: Stmt) -> Stmt:
    """``rewritten`` (``loop`` with its iterations interleaved: jammed, or in vector lanes)
    where that is the loop's meaning. A loop ``parallelize_loops`` made parallel runs its
    iterations one after another when its no-overlap test fails (its ``PARALLEL_IF``
    annotation): then so must the code, so the rewrite runs behind that test and the loop
    as written otherwise."""
    from ..transforms.auto_parallel import PARALLEL_IF  # that module builds on this one
    from ..transforms.unroll import copy_with_fresh_vars

    guard = loop.annotations.get(PARALLEL_IF)
    if guard is None:
        return rewritten
    # fresh variables: a rewrite may keep the loop's inner loops' (vector lanes do)
    return IfThenElse(guard, copy_with_fresh_vars(rewritten), loop, span=loop.span)
