"""Outlining of ``T.parallel`` loops into bodies run by the runtime's ``tvms_parallel_for``.

A parallel loop ``for i in [min, min + extent)`` becomes::

    %ctx = alloca { i32 err_kind, ptr err_msg, i64 min, <captured values...> }
    call void @tvms_parallel_for(ptr @f__par_N, ptr %ctx, i64 extent)
    ; then raise the first error a chunk recorded, if any

    define internal void @f__par_N(ptr %ctx, i64 %begin, i64 %end)  ; runs i = min + [begin, end)

Chunks never touch Python state: an error inside a chunk is recorded in the
context (first one wins, atomically) and raised by the caller on its own thread.
A parallel loop nested inside an outlined body runs serially. A loop annotated
``{"tvmscript.parallel_if": cond}`` (``lowering/transforms/auto_parallel.py``) calls the
outlined body directly over the whole range, in order, when ``cond`` is false at run time.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from irbuilder.ir import (
    Allocate,
    BufferLoad,
    BufferStore,
    DeclBuffer,
    For,
    Let,
    LetStmt,
    PrimExpr,
    Var,
    post_order_visit,
)
from lowering.transforms.auto_parallel import PARALLEL_IF

from .builder import ensure_helpers
from .context import llvm_type
from .streaming import STREAMING_FENCE

if TYPE_CHECKING:
    from .stmt import StmtEmitter

__all__ = ["captured_vars", "emit_parallel"]

_HEADER_FIELDS = 3  # err kind, err message, loop min


def captured_vars(
    node: For, bound: dict[int, Any], streams: Mapping[int, PrimExpr | None] | None = None
) -> list[Var]:
    """Variables the loop reads from the enclosing scope, in first-use order (by identity);
    with ``streams``, also those of the size tests of streamed arrays the loop stores to."""
    used: dict[int, Var] = {}
    defined: set[int] = {id(node.loop_var)}

    def use_expr(expr: PrimExpr) -> None:
        post_order_visit(expr, visit)

    def visit(item: object) -> None:
        if isinstance(item, Var):
            used.setdefault(id(item), item)
        elif isinstance(item, (For, LetStmt, Let)):
            defined.add(id(item.loop_var if isinstance(item, For) else item.var))
        elif isinstance(item, Allocate):
            defined.add(id(item.buffer_var))
        if isinstance(item, (BufferLoad, BufferStore, DeclBuffer)):
            used.setdefault(id(item.buffer.data), item.buffer.data)
            use_expr(item.buffer.elem_offset)
        if isinstance(item, BufferStore) and streams:
            size_test = streams.get(id(item.buffer.data))
            if size_test is not None:
                use_expr(size_test)

    post_order_visit(node.body, visit)
    return [v for key, v in used.items() if key not in defined and key in bound]


def emit_parallel(em: StmtEmitter, node: For) -> None:
    """Outline ``node``'s body and run it through ``tvms_parallel_for``."""
    ctx = em.ctx
    var = node.loop_var
    captures = captured_vars(node, em.vars, em.streaming)
    start = em.cast(em.expr(node.min), node.min.dtype, var.dtype)
    extent = em.cast(em.expr(node.extent), node.extent.dtype, var.dtype)
    start64 = em.to_i64(start, var.dtype)
    extent64 = em.to_i64(extent, var.dtype)

    fields = ["i32", "ptr", "i64"] + [llvm_type(v.dtype) for v in captures]
    struct = "{ " + ", ".join(fields) + " }"

    def field(builder: StmtEmitter, base: str, index: int) -> str:
        return builder.assign(
            "fld", f"getelementptr inbounds {struct}, ptr {base}, i32 0, i32 {index}"
        )

    frame = em.entry_alloca(struct, "par.ctx", align=8)
    em.emit(f"store i32 0, ptr {frame}, align 8")
    em.emit(f"store i64 {start64}, ptr {field(em, frame, 2)}, align 8")
    for slot, captured in enumerate(captures, _HEADER_FIELDS):
        em.emit(f"store {fields[slot]} {em.lookup(captured)}, ptr {field(em, frame, slot)}")

    name = ctx.outlined_name(em.func_name)
    child = em.new_child("%ctx")
    for slot, captured in enumerate(captures, _HEADER_FIELDS):
        ptr = field(child, "%ctx", slot)
        child.bind(captured, child.assign(captured.name, f"load {fields[slot]}, ptr {ptr}"))
    base = child.assign("min", f"load i64, ptr {field(child, '%ctx', 2)}, align 8")
    head, body, done = (
        child.new_label("par.loop"),
        child.new_label("par.body"),
        child.new_label("par.end"),
    )
    k, k_next = child.tmp("k"), child.tmp("k.next")
    entry_block = child.block
    child.br(head)
    child.label(head)
    child.emit(f"{k} = phi i64 [ %begin, %{entry_block} ], [ {k_next}, %{body}.latch ]")
    more = child.assign("more", f"icmp slt i64 {k}, %end")
    child.cond_br(more, body, done)
    child.label(body)
    wide = child.assign(var.name, f"add nsw i64 {base}, {k}")
    index = (
        wide
        if llvm_type(var.dtype) == "i64"
        else child.assign(var.name, f"trunc i64 {wide} to {llvm_type(var.dtype)}")
    )
    child.scoped_bind(var, index, lambda: child.stmt(node.body))
    child.br(f"{body}.latch")
    child.label(f"{body}.latch")
    child.emit(f"{k_next} = add nsw i64 {k}, 1")
    child.br(head)
    child.label(done)
    fence = [STREAMING_FENCE] if child.streamed else []
    ctx.definitions.append(
        child.finish(
            f'define internal void @"{name}"(ptr %ctx, i64 %begin, i64 %end) nounwind noinline'
            f"{child.function_attributes}",
            [*fence, "  ret void"],
            [*fence, "  ret void"],
        )
    )

    ctx.declare("tvms_parallel_for", "void", ["ptr", "ptr", "i64"])
    pool_call = f'call void @tvms_parallel_for(ptr @"{name}", ptr {frame}, i64 {extent64})'
    condition = node.annotations.get(PARALLEL_IF)
    if isinstance(condition, PrimExpr):
        # When the run-time test fails, the body runs over the whole range in order on
        # this thread: the serial loop's semantics.
        flag = em.expr(condition)
        pool, alone, joined = (
            em.new_label("par.pool"), em.new_label("par.serial"), em.new_label("par.join")
        )
        em.cond_br(flag, pool, alone)
        em.label(pool)
        em.emit(pool_call)
        em.br(joined)
        em.label(alone)
        em.emit(f'call void @"{name}"(ptr {frame}, i64 0, i64 {extent64})')
        em.br(joined)
        em.label(joined)
    else:
        em.emit(pool_call)
    kind = em.assign("par.err", f"load i32, ptr {frame}, align 8")
    failed = em.assign("par.failed", f"icmp ne i32 {kind}, 0")
    bad, good = em.new_label("par.fail"), em.new_label("par.ok")
    em.cond_br(failed, bad, good)
    em.label(bad)
    ensure_helpers(ctx)
    message = em.assign("par.msg", f"load ptr, ptr {field(em, frame, 1)}, align 8")
    em.emit(f"call void @__tvms_raise(i32 {kind}, ptr {message})")
    em.br(em.fail_label)
    em.label(good)
