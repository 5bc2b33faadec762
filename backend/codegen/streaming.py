"""Non-temporal ("streaming") stores for large arrays a kernel only writes.

An ordinary store to memory not in cache first reads the line from DRAM (read for
ownership), so ``C = A + B`` over arrays far larger than the caches moves four bytes for
every three it needs. A non-temporal store writes whole lines around the caches instead:
``vadd`` and the stencil run up to a third faster once DRAM bandwidth is the limit.

A parameter array qualifies when the function never reads it, its size is at least
:data:`~lowering.late.align_streams.STREAMING_MIN_BYTES` and the parameter arrays together
reach :data:`~lowering.late.align_streams.STREAMING_MIN_FOOTPRINT` (smaller working sets stay
in cache from call to call): the late pass ``mark_streams``
lists those in the function attribute :data:`~lowering.late.align_streams.STREAMS_ATTR`, which
is all this module reads (:func:`stream_conditions`). An array of symbolic size (or beside
one) is listed too; its stores stream only when the sizes, computed from the shapes at run
time, reach the thresholds (comparisons LLVM hoists out of the loops). Only explicit
contiguous vector stores of at least 16 bytes stream (LLVM's own vectorizer refuses loops
holding non-temporal scalar stores, so the ``vectorize_streams`` pass makes serial loops
filling such arrays explicit vector loops first: :mod:`lowering.late.stream_vectorize`); each
tests its address at run time and stores 16-byte aligned pieces non-temporally, or falls
back to an ordinary store (numpy guarantees only element alignment; the ``align_streams``
pass shifts loops like a stencil's onto aligned addresses). Values and the order of stores
are unchanged: same thread reads see them, and a function that streamed ends with a full
fence so the thread pool's hand-off (and any other thread) sees them too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from irbuilder.ir import DataType, PrimExpr, PrimFunc
from lowering.late.align_streams import (
    STREAMING_MIN_BYTES,
    stream_size_tests,
    streamed_data_vars,
)

from .context import llvm_type

if TYPE_CHECKING:
    from .expr import ExprEmitter

__all__ = [
    "STREAMING_FENCE",
    "STREAMING_MIN_BYTES",
    "emit_streaming_store",
    "stream_conditions",
    "streamed_data_vars",
]

STREAMING_FENCE = "  fence seq_cst"
"""Ends a function that streamed: orders its non-temporal stores before what follows
(``mfence`` on x86; ``fence release`` would emit nothing there)."""




def stream_conditions(func: PrimFunc) -> dict[int, PrimExpr | None]:
    """The data vars (by id) of the arrays listed in ``func``'s streams attribute, each with
    the run-time test that it streams (``None``: constant sizes, large enough; see
    :func:`~lowering.late.align_streams.stream_size_tests`)."""
    streamed = streamed_data_vars(func)
    tests = stream_size_tests(func)
    return {data: tests.get(data) for data in streamed}


def emit_streaming_store(
    em: ExprEmitter,
    ptr: str,
    value: str,
    dtype: DataType,
    md: str = "",
    size_test: PrimExpr | None = None,
) -> bool:
    """Store vector ``value`` at ``ptr`` non-temporally when aligned and ``size_test`` (the
    array's run-time size test, if any) holds (see the module doc).

    Returns False (emitting nothing) when ``dtype`` is not a whole number of 16-byte pieces.
    """
    item = dtype.element_of().itemsize
    width = dtype.lanes * item
    piece_lanes = 16 // item if 16 % item == 0 else 0
    if dtype.is_bool or width < 16 or width % 16 or piece_lanes == 0:
        return False
    vty = llvm_type(dtype)
    addr = em.assign("st.addr", f"ptrtoint ptr {ptr} to i64")
    low = em.assign("st.low", f"and i64 {addr}, 15")
    aligned = em.assign("st.aligned", f"icmp eq i64 {low}, 0")
    if size_test is not None:
        aligned = em.assign("st.big", f"and i1 {aligned}, {em.expr(size_test)}")
    stream, plain, done = em.new_label("st.nt"), em.new_label("st.plain"), em.new_label("st.end")
    em.cond_br(aligned, stream, plain)
    em.label(stream)
    nontemporal = em.ctx.shared_metadata("i32 1")
    piece = dtype.with_lanes(piece_lanes)
    pty = llvm_type(piece)
    for first in range(0, dtype.lanes, piece_lanes):
        mask = ", ".join(f"i32 {first + i}" for i in range(piece_lanes))
        part = em.assign(
            "st.part", f"shufflevector {vty} {value}, {vty} poison, <{piece_lanes} x i32> <{mask}>"
        )
        at = em.assign(
            "st.ptr", f"getelementptr inbounds {llvm_type(dtype.element_of())}, ptr {ptr}, "
            f"i64 {first}"
        )
        em.emit(f"store {pty} {part}, ptr {at}, align 16, !nontemporal {nontemporal}{md}")
    em.br(done)
    em.label(plain)
    em.store_at(ptr, value, dtype, md)
    em.br(done)
    em.label(done)
    em.streamed = True
    return True
