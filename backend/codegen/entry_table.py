"""The argument checks at a kernel's entry, emitted as one branch per buffer and a table.

``insert_entry_checks`` (``lowering/abi/entry_checks.py``) writes a buffer parameter's checks
as a run of asserts: ``array_ndim(h) == 2``, ``array_dtype_is(h, "float32")``, one
``array_shape(h, i) == c`` per constant extent, one ``array_shape(h, i) <= 1 or
array_stride(h, i) == c`` per axis, ``array_flags(h) & WRITEABLE != 0``, with the LetStmts
binding its data pointer and shape variables in between. Emitted one by one, each is a branch
and a cold block calling the raise helper: conv2d's entry was 31 of them, 7.8 ms of LLVM's
machine code (a basic block and a call cost far more to compile than the compare).

Here the run of one buffer becomes: the ndim compare and a branch (nothing else may read
the shape array before it holds: a 0-d array has none), then every other condition and the
bindings, combined with ``and``, and a second branch. Both branches fail to one block calling
``tvms_check_array(h, @table, n)`` (:mod:`backend.abi.shared_helpers`), which runs the
table's records in the asserts' order and raises the first failing one's message, the same
message and exception type as the assert. Only these forms are tabulated (by their
condition *and* their message's values); any other assert (a symbolic extent, a deferred
check, a hand-written one) splits the run and is emitted as before. The printed TIR does
not change.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from irbuilder.ir import (
    EQ,
    LE,
    NE,
    AssertStmt,
    Call,
    CallKind,
    Cast,
    FloorDiv,
    IntImm,
    LetStmt,
    Or,
    PrimExpr,
    SeqStmt,
    Stmt,
    StringImm,
    Var,
    seq,
    structural_equal,
)
from irbuilder.ir.message import MessageFormatError, message_parts

from .context import ErrorKind
from .intrinsics import numpy_type_nums

if TYPE_CHECKING:
    from .stmt import StmtEmitter

__all__ = ["CHECK_RECORD_TYPE", "emit_entry_checks"]

CHECK_RECORD_TYPE = "{ i64, i64, i64, i64, ptr }"
"""One table record: operation, ErrorKind code, two operands, format string."""

_NDIM, _DTYPE, _SHAPE, _STRIDE, _FLAGS = 1, 2, 3, 4, 5
_MIN_RUN = 3  # shorter runs compile about as fast as plain asserts


@dataclass(frozen=True)
class _Record:
    op: int
    handle: Var
    a: int
    b: int
    kind: int
    fmt: str  # printf format (the assert's message, `%` escaped, values as conversions)


def _builtin_on(expr: PrimExpr, op: str) -> Var | None:
    """The handle ``h`` of ``op(h, ...)``, a builtin call on a variable."""
    if (isinstance(expr, Call) and expr.kind is CallKind.BUILTIN and expr.op == op
            and expr.args and isinstance(expr.args[0], Var)):
        return expr.args[0]
    return None


def _axis_read(expr: PrimExpr, op: str) -> tuple[Var, int] | None:
    """``(h, i)`` of ``array_shape(h, i)`` / ``array_stride(h, i)`` with a constant axis."""
    handle = _builtin_on(expr, op)
    if handle is None or not isinstance(expr, Call) or len(expr.args) != 2:
        return None
    axis = expr.args[1]
    return (handle, axis.value) if isinstance(axis, IntImm) else None


def _int(expr: PrimExpr) -> int | None:
    return expr.value if isinstance(expr, IntImm) else None


def _condition(cond: PrimExpr) -> tuple[int, Var, int, int, PrimExpr | None] | None:
    """(operation, handle, a, b, the value its message shows) of a tabulated condition."""
    if isinstance(cond, EQ):
        handle = _builtin_on(cond.a, "array_ndim")
        expected = _int(cond.b)
        if handle is not None and expected is not None:
            return _NDIM, handle, expected, 0, cond.a
        read = _axis_read(cond.a, "array_shape")
        expected = _int(cond.b)
        if read is not None and expected is not None:
            return _SHAPE, read[0], read[1], expected, cond.a
        return None
    if isinstance(cond, Call) and cond.op == "array_dtype_is" and len(cond.args) == 2:
        handle = _builtin_on(cond, "array_dtype_is")
        name = cond.args[1]
        if handle is None or not isinstance(name, StringImm):
            return None
        nums = numpy_type_nums(name.value)
        if not 1 <= len(nums) <= 2:
            return None
        descr = Call(cond.args[0].dtype, "array_descr", (cond.args[0],), CallKind.BUILTIN)
        return _DTYPE, handle, nums[0], nums[-1], descr
    if isinstance(cond, Or) and isinstance(cond.a, LE) and isinstance(cond.b, EQ):
        extent = _axis_read(cond.a.a, "array_shape")
        stride = _axis_read(cond.b.a, "array_stride")
        expected = _int(cond.b.b)
        if (extent is not None and extent == stride and _int(cond.a.b) == 1
                and expected is not None):
            return _STRIDE, extent[0], extent[1], expected, cond.b.a
        return None
    if isinstance(cond, NE) and _int(cond.b) == 0:
        masked = cond.a
        if (isinstance(masked, Call) and masked.op == "bitwise_and" and len(masked.args) == 2
                and _int(masked.args[1]) is not None):
            handle = _builtin_on(masked.args[0], "array_flags")
            mask = _int(masked.args[1])
            if handle is not None and mask is not None:
                return _FLAGS, handle, mask, 0, None
    return None


def _record(node: AssertStmt) -> _Record | None:
    """The table record of an entry assert, or None when it is not one of the forms."""
    found = _condition(node.condition)
    if found is None:
        return None
    op, handle, a, b, shown = found
    try:
        pieces, values = message_parts(node.message)
    except MessageFormatError:
        return None
    if shown is None:
        if values:
            return None
    elif len(values) != 1 or not structural_equal(values[0], shown):
        return None
    kind = ErrorKind.ASSERTION
    for prefix, code in ErrorKind.PREFIXES.items():
        if pieces[0].startswith(prefix):
            kind, pieces[0] = code, pieces[0][len(prefix):]
            break
    conversion = "%S" if op == _DTYPE else "%lld"
    fmt = pieces[0].replace("%", "%%")
    for piece in pieces[1:]:
        fmt += conversion + piece.replace("%", "%%")
    return _Record(op, handle, a, b, kind, fmt)


def _prefix(body: Stmt) -> tuple[list[AssertStmt | LetStmt], Stmt | None]:
    """The entry's asserts and bindings in order, and the statement after them."""
    items: list[AssertStmt | LetStmt] = []
    node: Stmt | None = body
    while node is not None:
        if isinstance(node, LetStmt):
            items.append(node)
            node = node.body
        elif isinstance(node, AssertStmt):
            items.append(node)
            node = None
        elif isinstance(node, SeqStmt):
            stmts = list(node.seq)
            k = 0
            while k < len(stmts) and isinstance(stmts[k], AssertStmt):
                items.append(stmts[k])  # type: ignore[arg-type]
                k += 1
            if k == len(stmts) - 1 and isinstance(stmts[k], LetStmt):
                node = stmts[k]
            else:
                return items, (seq(stmts[k:]) if k < len(stmts) else None)
        else:
            return items, node
    return items, None


def emit_entry_checks(em: StmtEmitter, body: Stmt) -> Stmt | None:
    """Emit the entry-check prefix of ``body`` (see the module docstring) into the kernel
    function's emitter and return the rest of the body."""
    items, rest = _prefix(body)
    run: list[tuple[AssertStmt | LetStmt, _Record | None]] = []
    for item in items:
        record = _record(item) if isinstance(item, AssertStmt) else None
        if isinstance(item, AssertStmt) and record is None:
            _flush(em, run)
            run = []
            em.stmt(item)
            continue
        if isinstance(item, LetStmt) and _array_read(item.value) is not _handle(run):
            # Anything but a read of the run's own array (a user's binding after the
            # checks) is evaluated only once the checks before it have passed.
            _flush(em, run)
            run = []
            _bind(em, item)
            continue
        current = _handle(run)
        if record is not None and current is not None and current is not record.handle:
            _flush(em, run)
            run = []
        run.append((item, record))
    _flush(em, run)
    return rest


def _array_read(value: PrimExpr) -> Var | None:
    """The handle ``h`` when ``value`` is what the entry checks bind: ``array_data(h)``, or
    ``array_shape(h, i)``/``array_stride(h, i)`` possibly cast or divided by a constant."""
    while True:
        if isinstance(value, Cast):
            value = value.value
        elif isinstance(value, FloorDiv) and isinstance(value.b, IntImm) and value.b.value > 0:
            value = value.a
        else:
            break
    for op in ("array_data", "array_shape", "array_stride"):
        handle = _builtin_on(value, op)
        if handle is not None:
            return handle
    return None


def _handle(run: list[tuple[AssertStmt | LetStmt, _Record | None]]) -> Var | None:
    for _, record in run:
        if record is not None:
            return record.handle
    return None


def _flush(em: StmtEmitter, run: list[tuple[AssertStmt | LetStmt, _Record | None]]) -> None:
    records = [r for _, r in run if r is not None]
    first = records[0] if records else None
    tabulate = (len(records) >= _MIN_RUN and first is not None and first.op == _NDIM
                and run[0][1] is first)
    if not tabulate:
        for item, _ in run:
            if isinstance(item, LetStmt):
                _bind(em, item)
            else:
                em.stmt(item)
        return
    assert first is not None
    ndim_check = run[0][0]
    assert isinstance(ndim_check, AssertStmt)
    cold = em.new_label("args.bad")
    shape_ok = em.new_label("args.ndim.ok")
    em.cond_br(em.expr(ndim_check.condition), shape_ok, cold)
    em.label(shape_ok)
    combined = ""
    for item, _ in run[1:]:
        if isinstance(item, LetStmt):
            _bind(em, item)
            continue
        cond = em.expr(item.condition)
        combined = cond if not combined else em.assign("args.ok", f"and i1 {combined}, {cond}")
    good = em.new_label("args.ok")
    if combined:
        em.cond_br(combined, good, cold)
    else:
        em.br(good)
    em.label(cold)
    table = em.ctx.constant(
        f"[{len(records)} x {CHECK_RECORD_TYPE}]",
        "[" + ", ".join(
            f"{CHECK_RECORD_TYPE} {{ i64 {r.op}, i64 {r.kind}, i64 {r.a}, i64 {r.b}, "
            f"ptr {em.ctx.string(r.fmt)} }}"
            for r in records
        ) + "]",
    )
    em.ctx.declare("tvms_check_array", "i32", ["ptr", "ptr", "i64"], "cold nounwind")
    handle = em.lookup(first.handle)
    em.emit(f"call i32 @tvms_check_array(ptr {handle}, ptr {table}, i64 {len(records)})")
    em.br(em.fail_label)
    em.label(good)


def _bind(em: StmtEmitter, node: LetStmt) -> None:
    """Bind an entry LetStmt's variable for the rest of the function (the entry's bindings
    are the function's outermost: nothing shadows them)."""
    value = em.expr(node.value)
    if node.value.dtype != node.var.dtype:
        value = em.cast(value, node.value.dtype, node.var.dtype)
    em.bind(node.var, value)
