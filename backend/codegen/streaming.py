"""Non-temporal ("streaming") stores for large arrays a kernel only writes.

An ordinary store to memory not in cache first reads the line from DRAM (read for
ownership), so ``C = A + B`` over arrays far larger than the caches moves four bytes for
every three it needs. A non-temporal store writes whole lines around the caches instead:
``vadd`` and the stencil run up to a third faster once DRAM bandwidth is the limit.

A parameter array qualifies when the function never reads it (no load from its data var,
and the data var is not handed to any call) and its constant size is at least
:data:`STREAMING_MIN_BYTES` -- far beyond L2, and data that size will not be found in cache
by whoever reads it next anyway. Only explicit contiguous vector stores of at least 16 bytes
stream (LLVM's own vectorizer refuses loops holding non-temporal scalar stores); each tests
its address at run time and stores 16-byte aligned pieces non-temporally, or falls back to
an ordinary store (numpy guarantees only element alignment). Values and the order of stores
are unchanged: same thread reads see them, and a function that streamed ends with a full
fence so the thread pool's hand-off (and any other thread) sees them too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from irbuilder.ir import BufferLoad, Call, DataType, IntImm, PrimFunc, Var, post_order_visit

from .context import llvm_type

if TYPE_CHECKING:
    from .expr import ExprEmitter

__all__ = [
    "STREAMING_FENCE",
    "STREAMING_MIN_BYTES",
    "emit_streaming_store",
    "streaming_data_vars",
]

STREAMING_MIN_BYTES = 16 << 20
"""Smallest array (bytes) whose vector stores stream."""

STREAMING_FENCE = "  fence seq_cst"
"""Ends a function that streamed: orders its non-temporal stores before what follows
(``mfence`` on x86; ``fence release`` would emit nothing there)."""


def streaming_data_vars(func: PrimFunc) -> frozenset[int]:
    """Ids of the data vars of ``func``'s large write-only parameter arrays."""
    candidates: dict[int, Var] = {}
    for buffer in func.buffer_map.values():
        if buffer.dtype.is_bool or buffer.dtype.lanes != 1:
            continue
        size = buffer.dtype.itemsize
        for extent in buffer.shape:
            if not isinstance(extent, IntImm):
                size = 0
                break
            size *= extent.value
        if size >= STREAMING_MIN_BYTES:
            candidates[id(buffer.data)] = buffer.data
    if not candidates:
        return frozenset()
    excluded: set[int] = set()

    def visit(node: object) -> None:
        if isinstance(node, BufferLoad):
            excluded.add(id(node.buffer.data))
        elif isinstance(node, Call):
            for arg in node.args:
                post_order_visit(arg, lambda item: _mark_var(item, excluded))

    post_order_visit(func.body, visit)
    return frozenset(key for key in candidates if key not in excluded)


def _mark_var(item: object, into: set[int]) -> None:
    if isinstance(item, Var):
        into.add(id(item))


def emit_streaming_store(
    em: ExprEmitter, ptr: str, value: str, dtype: DataType, md: str = ""
) -> bool:
    """Store vector ``value`` at ``ptr`` non-temporally when aligned (see the module doc).

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
    stream, plain, done = em.new_label("st.nt"), em.new_label("st.plain"), em.new_label("st.end")
    em.cond_br(aligned, stream, plain)
    em.label(stream)
    nontemporal = em.ctx.add_metadata("i32 1")
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
