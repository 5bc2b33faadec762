"""TIR statement handlers: loops, ``if``/``while``, ``with`` frames, stores, bindings.

Each handler evaluates the statement's expressions against the variable table
(:meth:`Parser.eval_expr`) and calls the IRBuilder; the builder's frames build the IR.
The rules a user sees:

* ``for`` over a loop frame (``range``, ``T.serial``, ``T.grid``, ...) is a TIR loop; over
  a Python list or tuple it is unrolled at parse time.
* ``if``/``while``: a condition that is a Python value or a constant ``IntImm`` is decided
  while parsing (only the taken branch is parsed); otherwise ``IfThenElse``/``While``.
* ``A[i, j] = v`` and ``A[i] += v`` store into a buffer (Python numbers adapt to its type;
  any other type mismatch needs ``T.cast``).
* ``x = value``: a frame (``T.allocate``, ``T.decl_buffer``, ``T.LetStmt``) is entered
  for the rest of the enclosing body; a new Var or Buffer is named ``x``; any other
  expression becomes a ``LetStmt`` over the rest of the body (``T.bind``); a Python
  value (or ``T.meta_var(v)``) stays a Python value.  What may not be rebound (a TIR
  variable in its scope, an enclosing loop's variable, ``T``) is in :mod:`.binding`.
* ``assert cond, msg``: ``msg`` is a string or ``T.format_message(...)``.
"""

from __future__ import annotations

import dataclasses
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from irbuilder import IRBuilder, def_
from irbuilder.builder import Frame
from irbuilder.frames import AttrFrame, BlockFrame, ForFrame, LetFrame, PrimFuncFrame
from irbuilder.ir import (
    Add,
    Buffer,
    BufferRegion,
    BufferStore,
    Call,
    IntImm,
    PointerType,
    PrimExpr,
    Ramp,
    StringImm,
    Sub,
    Var,
    const,
    convert,
    structural_equal,
)
from irbuilder.ir.message import FORMAT_MESSAGE
from irbuilder.ir.span import Span
from irbuilder.tir import (
    Assert,
    Else,
    If,
    LetStmt,
    Then,
    While,
    buffer_store,
    evaluate,
    ret,
    return_tensors,
)
from irbuilder.tir._common import ScalarType, add_stmt, vector_load
from irbuilder.tir._common import span as current_span
from irbuilder.tir.control import AssertFrame
from irbuilder.tir.runtime import LaunchThreadFrame
from lowering.checks.verifier import ENTRY_CHECKED_ATTR
from tvmscript.diagnostics import DiagnosticError
from tvmscript.parser.core import FrameKind, Parser, dispatch, doc
from tvmscript.parser.core.evaluator import BINARY_OPERATORS

from .binding import bind_names, bind_target, check_rebinding, check_target_names
from .context import current_state
from .values import KernelRange, check_result, is_parse_time_condition

__all__ = ["TOKEN", "bind_target", "stamp_span"]  # bind_target: re-exported from .binding

TOKEN = "tir"
"""The dispatch token of the TIR dialect."""

_AUG_OPS = BINARY_OPERATORS

_UNSUPPORTED = {
    "Try": "'try' statements are not supported in TVMScript",
    "TryStar": "'try' statements are not supported in TVMScript",
    "ClassDef": "a class cannot be defined inside a TVMScript kernel",
    "Global": "'global' is not supported in TVMScript",
    "Nonlocal": "'nonlocal' is not supported in TVMScript",
    "Import": "'import' is not allowed inside a TVMScript kernel; import at module level "
    "and list the name in capture=[...]",
    "ImportFrom": "'import' is not allowed inside a TVMScript kernel; import at module level "
    "and list the name in capture=[...]",
    "Break": "'break' is not supported in TVMScript (TIR loops have no early exit)",
    "Continue": "'continue' is not supported in TVMScript (use an if around the loop body)",
    "Delete": "'del' is not supported in TVMScript",
    "Raise": "'raise' is not supported in TVMScript; use assert cond, \"message\"",
    "Match": "'match' statements are not supported in TVMScript; use if/elif",
    "AsyncFor": "'async for' is not supported in TVMScript",
    "AsyncWith": "'async with' is not supported in TVMScript",
    "AsyncFunctionDef": "'async def' is not supported in TVMScript",
    "TypeAlias": "'type' aliases are not supported in TVMScript",
}


@contextmanager
def stamp_span(span: Span) -> Iterator[None]:
    """The parser's span context: stamp ``span`` on built IR and remember the statement."""
    state = current_state()
    if state is not None:
        state.stmt_spans.append(span)
    try:
        if IRBuilder.is_in_scope():
            with IRBuilder.current().with_span(span):
                yield
        else:
            yield
    finally:
        if state is not None:
            state.stmt_spans.pop()


# ------------------------------------------------------------------------ statements


# Frames that TVM opens for the rest of the body when written as a bare statement
# (`T.LetStmt(v, var=x)` on its own line binds x for the statements after it).
_BARE_FRAMES = (LaunchThreadFrame, AttrFrame, AssertFrame, LetFrame)


@dispatch.register(TOKEN, "Expr")
def visit_expr(parser: Parser, node: doc.Expr) -> None:
    """A bare expression: calls for their effect; a PrimExpr becomes ``T.evaluate``."""
    if isinstance(node.value, doc.Lambda):
        parser.report_error(node.value, "a lambda as a statement does nothing in TVMScript")
    if isinstance(node.value, doc.Constant):
        return  # docstrings and `...`
    value = parser.eval_expr(node.value)
    if isinstance(value, Frame):
        if value.state == "new" and isinstance(value, _BARE_FRAMES):
            value.enter_implicit()  # TVM's `T.launch_thread(v, 8)` / `T.attr(...)` lines
            return
        if value.state == "new":
            parser.report_error(
                node.value,
                f"{value.kind}(...) opens a scope: use it in a `with` statement or assign "
                "its result to a name",
            )
        return
    if isinstance(value, PrimExpr):
        evaluate(value)
    elif isinstance(value, BufferStore):
        # TVM's `B.vstore([i], v)` line.
        add_stmt(dataclasses.replace(value, span=current_span()), "a buffer store")


@dispatch.register(TOKEN, "Pass")
def visit_pass(parser: Parser, node: doc.Pass) -> None:
    """``pass`` builds nothing."""


@dispatch.register(TOKEN, "Assign")
def visit_assign(parser: Parser, node: doc.Assign) -> None:
    """``A[i] = v`` stores; ``x = v`` binds (see the module docstring)."""
    if len(node.targets) != 1:
        parser.report_error(node, "chained assignment (a = b = value) is not supported")
    target = node.targets[0]
    if isinstance(target, doc.Subscript):
        buffer = parser.eval_expr(target.value)
        if isinstance(buffer, Buffer):
            _store(parser, buffer, target, node.value, None)
            return
    if isinstance(target, (doc.Tuple, doc.List)):
        _check_no_buffer_elements(parser, target, target)
    bind_target(parser, target, parser.eval_expr(node.value))


def _check_no_buffer_elements(parser: Parser, whole: doc.expr, target: doc.expr) -> None:
    """``(B[i], B[0]) = ...``: TIR stores one element per statement."""
    for elt in target.elts if isinstance(target, (doc.Tuple, doc.List)) else (target,):
        inner = elt.value if isinstance(elt, doc.Starred) else elt
        if isinstance(inner, (doc.Tuple, doc.List)):
            _check_no_buffer_elements(parser, whole, inner)
        elif isinstance(inner, doc.Subscript) and isinstance(parser.eval_expr(inner.value), Buffer):
            parser.report_error(
                whole,
                "tuple assignment to buffer elements is not supported; store each element "
                "in its own statement (B[i] = ...)",
            )


@dispatch.register(TOKEN, "AugAssign")
def visit_aug_assign(parser: Parser, node: doc.AugAssign) -> None:
    """``A[i] += v`` stores ``A[i] + v``; ``x += v`` rebinds a Python value."""
    op = _AUG_OPS[type(node.op).__name__]
    target = node.target
    if isinstance(target, doc.Subscript):
        buffer = parser.eval_expr(target.value)
        if isinstance(buffer, Buffer):
            _store(parser, buffer, target, node.value, op)
            return
    current = parser.eval_expr(target)
    value = op(current, parser.eval_expr(node.value))
    try:
        check_result(value)
    except (ZeroDivisionError, OverflowError) as err:
        parser.report_error(node, str(err))
    bind_target(parser, target, value)


def _slice_indices(buffer: Buffer, items: list[Any]) -> list[Any]:
    """Slices of a store target as TVM's buffer_store reads them: ``start`` when the
    slice has one element, else ``T.Ramp(start, step, lanes)`` (constant lanes)."""
    out: list[Any] = []
    for index, extent in zip(items, buffer.shape, strict=False):
        if not isinstance(index, slice):
            out.append(index)
            continue
        start = convert(0 if index.start is None else index.start)
        stop = extent if index.stop is None else convert(index.stop)
        step = 1 if index.step is None else index.step
        if not isinstance(step, int) or step <= 0:
            raise ValueError("a slice step must be a positive integer constant")
        count = stop if isinstance(start, IntImm) and start.value == 0 else stop - start
        if (
            isinstance(count, Sub)
            and isinstance(count.a, Add)
            and structural_equal(count.a.a, count.b)
        ):
            count = count.a.b  # (x + 4) - x
        if not isinstance(count, IntImm):
            raise ValueError("a sliced dimension needs a constant length")
        lanes = (count.value + step - 1) // step
        if lanes == 1:
            out.append(start)
        elif lanes < 1:
            raise ValueError("the slice is empty")
        else:
            out.append(Ramp(start, const(step, start.dtype), lanes))
    return out


def _indices(
    parser: Parser, buffer: Buffer, target: doc.Subscript, *, allow_slices: bool
) -> list[Any]:
    index = parser.eval_expr(target.slice)
    items = list(index) if isinstance(index, (tuple, list)) else [index]
    if any(isinstance(i, slice) for i in items):
        # TVM's buffer_store: `B[a : a + 4] = v` stores the vector v at T.Ramp(a, 1, 4),
        # `B[a : a + 8 : 2]` at T.Ramp(a, 2, 4); a slice of one element is its start.
        try:
            items = _slice_indices(buffer, items)
        except (TypeError, ValueError, IndexError) as err:
            parser.report_error(
                target.slice,
                f"cannot store into a region of buffer {buffer.name!r}: {err}; index each element",
            )
        lanes = [i.lanes for i in items if isinstance(i, Ramp)]
        if lanes and not allow_slices:
            parser.report_error(
                target.slice,
                f"cannot store into a region of buffer {buffer.name!r}; index each element",
            )
    if len(items) != buffer.ndim:
        parser.report_error(
            target,
            f"buffer {buffer.name!r} has {buffer.ndim} dimension"
            f"{'' if buffer.ndim == 1 else 's'}, indexed with {len(items)} "
            f"ind{'ex' if len(items) == 1 else 'ices'}",
        )
    return items


def _store(
    parser: Parser,
    buffer: Buffer,
    target: doc.Subscript,
    value_node: doc.expr,
    op: Callable[[Any, Any], Any] | None,
) -> None:
    value = parser.eval_expr(value_node)
    vector = isinstance(value, BufferRegion) or (
        isinstance(value, PrimExpr) and value.dtype.lanes > 1
    )
    indices = _indices(parser, buffer, target, allow_slices=vector and op is None)
    if isinstance(value, BufferRegion):  # `B[0:4] = A[4:8]`: a vector load
        try:
            value = vector_load(value, "the stored value")
        except TypeError as err:
            parser.report_error(value_node, str(err))
    if op is not None:
        try:
            value = op(buffer[tuple(indices)], value)
            check_result(value)
        except (TypeError, ValueError, ZeroDivisionError) as err:
            parser.report_error(value_node, str(err))
    try:
        buffer_store(buffer, value, indices)
    except TypeError as err:
        where: doc.AST = value_node if "store" in str(err) else target
        raise DiagnosticError(str(err), parser.span(where), original=err) from err


@dispatch.register(TOKEN, "AnnAssign")
def visit_ann_assign(parser: Parser, node: doc.AnnAssign) -> None:
    """``x: T.int32 = value`` binds a typed LetStmt var for the rest of the body."""
    annotation = parser.eval_expr(node.annotation)
    if node.value is None:
        parser.report_error(node, "a variable declaration needs a value: x: T.int32 = ...")
    if not isinstance(node.target, doc.Name):
        parser.report_error(node.target, "only a plain name can be annotated")
    value = parser.eval_expr(node.value)
    name = node.target.id
    check_target_names(parser, node.target)
    if isinstance(value, Frame) or not isinstance(value, (PrimExpr, bool, int, float)):
        bind_target(parser, node.target, value)
        return
    check_rebinding(parser, node.target, name, value)
    if isinstance(annotation, Var):  # T.handle("float32", "global"): the var itself
        data = _entry_data_var(value)
        frame = LetStmt(value, var=annotation if data is None else data)
    elif isinstance(annotation, (ScalarType, PointerType)):
        if not isinstance(value, PrimExpr) and isinstance(annotation, ScalarType):
            value = const(value, annotation.dtype)
        frame = LetStmt(value, annotation)
    else:
        parser.report_error(
            node.annotation,
            f"expected a type such as T.int32 or T.handle(...), got {type(annotation).__name__}",
        )
    var = def_(name, frame.enter_implicit())
    parser.var_table.add(name, var, allow_shadowing=True)


_entry_bound: weakref.WeakKeyDictionary[PrimFuncFrame, set[int]] = weakref.WeakKeyDictionary()


def _entry_data_var(value: object) -> Var | None:
    """In an entry-checked function (attr ``entry_checked``), ``A_data: T.handle(...) =
    T.array_data(A)`` binds the data var of ``A``'s buffer, as the entry checks did when they
    wrote it: a printed lowered function (``get_source("tir")``) re-parses to itself."""
    if not (
        isinstance(value, Call)
        and value.op == "array_data"
        and len(value.args) == 1
        and isinstance(value.args[0], Var)
    ):
        return None
    func = IRBuilder.current().find(PrimFuncFrame)
    if func is None or not func.attrs.get(ENTRY_CHECKED_ATTR):
        return None
    buffer = func.buffer_map.get(value.args[0])
    bound = _entry_bound.setdefault(func, set())
    if buffer is None or id(buffer.data) in bound:
        return None
    bound.add(id(buffer.data))
    return buffer.data


@dispatch.register(TOKEN, "For")
def visit_for(parser: Parser, node: doc.For) -> None:
    """A TIR loop over a loop frame, or a parse-time loop over a Python sequence."""
    if node.orelse:
        parser.report_error(node.orelse[0], "'for ... else' is not supported in TVMScript")
    iterable = parser.eval_expr(node.iter)
    if isinstance(iterable, KernelRange):
        iterable = iterable.loop()
    if isinstance(iterable, ForFrame):
        check_target_names(parser, node.target, loop_vars=False)
        with parser.var_table.frame(FrameKind.LOOP), iterable as loop_vars:
            if isinstance(node.target, (doc.Tuple, doc.List)) and isinstance(loop_vars, Var):
                loop_vars = [loop_vars]  # `for (i,) in T.grid(n)`: the one-var grid unpacks
            parser.eval_assign(node.target, loop_vars, bind_value=bind_names)
            parser.visit_body(node.body)
        return
    if isinstance(iterable, Frame):
        parser.report_error(node.iter, f"{iterable.kind}(...) is not a loop; use it with `with`")
    if isinstance(iterable, (list, tuple, range)):
        for item in iterable:  # unrolled while parsing
            with parser.var_table.frame(FrameKind.LOOP, allow_shadowing=True):
                parser.eval_assign(node.target, item, allow_shadowing=True)
                parser.visit_body(node.body)
        return
    parser.report_error(
        node.iter,
        f"cannot loop over a value of type {type(iterable).__name__}; use range(...), "
        "T.serial, T.parallel, T.vectorized, T.unroll, T.grid or T.thread_binding",
    )


@dispatch.register(TOKEN, "While")
def visit_while(parser: Parser, node: doc.While) -> None:
    """``while cond:`` over a TIR condition."""
    if node.orelse:
        parser.report_error(node.orelse[0], "'while ... else' is not supported in TVMScript")
    cond = parser.eval_expr(node.test)
    if is_parse_time_condition(cond):
        if not cond:
            return
        parser.report_error(
            node.test, f"this while loop never ends: its condition is the constant {cond!r}"
        )
    try:
        frame = While(cond)
    except TypeError as err:
        raise DiagnosticError(str(err), parser.span(node.test), original=err) from err
    with parser.var_table.frame(FrameKind.LOOP), frame:
        parser.visit_body(node.body)


@dispatch.register(TOKEN, "If")
def visit_if(parser: Parser, node: doc.If) -> None:
    """``if``: decided while parsing for a constant condition, else ``IfThenElse``."""
    cond = parser.eval_expr(node.test)
    if is_parse_time_condition(cond):
        parser.visit_body(node.body if cond else node.orelse)
        return
    try:
        frame = If(cond)
    except TypeError as err:
        raise DiagnosticError(str(err), parser.span(node.test), original=err) from err
    with frame:
        with Then(), parser.var_table.frame(FrameKind.WITH):
            parser.visit_body(node.body)
        if node.orelse:
            with Else(), parser.var_table.frame(FrameKind.WITH):
                parser.visit_body(node.orelse)


@dispatch.register(TOKEN, "With")
def visit_with(parser: Parser, node: doc.With) -> None:
    """``with T.block(...)``, ``with T.init()``, ``with T.LetStmt(v) as x`` and other frames."""
    _with_items(parser, node, 0)


def _with_items(parser: Parser, node: doc.With, index: int) -> None:
    if index == len(node.items):
        parser.visit_body(node.body)
        return
    item = node.items[index]
    frame = parser.eval_expr(item.context_expr)
    if not isinstance(frame, Frame):
        parser.report_error(
            item.context_expr,
            f"`with` needs a T.* frame (T.block, T.init, T.LetStmt, ...), got "
            f"{type(frame).__name__}",
        )
    kind = FrameKind.BLOCK if isinstance(frame, BlockFrame) else FrameKind.WITH
    with parser.var_table.frame(kind):
        try:
            value = frame.__enter__()
        except Exception as err:
            raise DiagnosticError(str(err), parser.span(item.context_expr), original=err) from err
        ok = False
        try:
            if item.optional_vars is not None:
                if value is None:
                    # TVM refuses it too; silently binding nothing would hide the mistake.
                    parser.report_error(
                        item.optional_vars,
                        f"`with {frame.kind}(...)` binds no value: remove "
                        f"`as {parser.source.segment(item.optional_vars)}`",
                    )
                parser.eval_assign(item.optional_vars, value, bind_value=bind_names)
            _with_items(parser, node, index + 1)
            ok = True
        finally:
            if ok:
                frame.__exit__(None, None, None)
            else:
                frame.__exit__(RuntimeError, RuntimeError("parse failed"), None)


@dispatch.register(TOKEN, "Assert")
def visit_assert(parser: Parser, node: doc.Assert) -> None:
    """``assert cond, "msg"``: an AssertStmt, or a parse-time check on a Python value.

    The message is a string (a Python ``str`` or a ``StringImm``) or
    ``T.format_message("... {} ...", values...)``; anything else is rejected.
    """
    cond = parser.eval_expr(node.test)
    message: str | PrimExpr
    if node.msg is not None:
        message = _assert_message(parser, node.msg)
    else:
        message = f"assertion failed: {parser.source.segment(node.test)}"
    if not isinstance(cond, PrimExpr):
        if not cond:
            text = message.value if isinstance(message, StringImm) else message
            parser.report_error(node.test, f"assertion failed while parsing: {text}")
        return
    Assert(cond, message)


def _assert_message(parser: Parser, msg: doc.expr) -> str | PrimExpr:
    value = parser.eval_expr(msg)
    if isinstance(value, (str, StringImm)):
        return value
    if isinstance(value, Call) and value.op == FORMAT_MESSAGE:
        return value
    parser.report_error(
        msg,
        f"an assert message must be a string constant or T.format_message(...), got "
        f"{_describe(value)}",
    )


def _describe(value: Any) -> str:
    if isinstance(value, PrimExpr):
        return f"a {value.dtype} expression ({type(value).__name__})"
    return f"a {type(value).__name__}"


@dispatch.register(TOKEN, "Return")
def visit_return(parser: Parser, node: doc.Return) -> None:
    """``return D`` / ``return D, E``: the kernel returns ``T.compute`` tensors."""
    state = current_state()
    if state is not None and state.in_macro:
        parser.report_error(node, "'return' is only allowed as the last statement of a T.macro")
    if node.value is None:
        return
    value = parser.eval_expr(node.value)
    if isinstance(value, (PrimExpr, bool, int, float)):
        evaluate(ret(value))  # TVM maps `return <scalar>` to T.ret
        return
    results = value if isinstance(value, tuple) else (value,)
    if not all(isinstance(r, Buffer) for r in results):
        kinds = ", ".join(type(r).__name__ for r in results)
        parser.report_error(
            node.value, f"a kernel can only return tensors computed with T.compute, got {kinds}"
        )
    return_tensors(*results)


def _unsupported(parser: Parser, node: doc.AST) -> None:
    kind = type(node).__name__
    parser.report_error(node, _UNSUPPORTED.get(kind, f"unsupported syntax in TVMScript: {kind}"))


dispatch.register(TOKEN, dispatch.ANY_NODE)(_unsupported)
