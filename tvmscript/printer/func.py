"""Printing of functions and modules, and the ``script`` entry point."""

from __future__ import annotations

import sys
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from irbuilder.ir import (
    Buffer,
    Call,
    CallKind,
    IntImm,
    IRModule,
    PointerType,
    PrimExpr,
    PrimFunc,
    Stmt,
    Var,
    default_elem_offset,
    post_order_visit,
)
from irbuilder.root_block import implied_root_body
from irbuilder.tir.tensor import RETURNS_ATTR, RETURNS_SPAN_ATTR

from .doc import Doc, render
from .stmt import StmtPrinter, body_definitions

__all__ = ["print_func", "script"]

_TIR_HEADER = "# from tvmscript import tir as T"
_IR_HEADER = "# from tvmscript import ir as I"


def _vars_in(exprs: tuple[PrimExpr, ...]) -> list[Var]:
    found: list[Var] = []
    seen: set[int] = set()

    def visit(node: Any) -> None:
        if isinstance(node, Var) and id(node) not in seen:
            seen.add(id(node))
            found.append(node)

    for expr in exprs:
        post_order_visit(expr, visit)
    return found


def _vars_in_stmt(stmt: Stmt, subroutines: Mapping[str, str]) -> list[Var]:
    """Vars used in ``stmt``, except as a direct argument of a call of ``subroutines``
    (there a buffer parameter's handle prints as the buffer: ``Module.f(A)``)."""
    found: list[Var] = []
    passed: list[int] = []

    def visit(node: Any) -> None:
        if isinstance(node, Var):
            found.append(node)
        elif isinstance(node, Call) and node.kind is CallKind.EXTERN and node.op in subroutines:
            passed.extend(id(a) for a in node.args if isinstance(a, Var))

    post_order_visit(stmt, visit)
    for key in passed:  # one use each
        index = next(i for i, v in enumerate(found) if id(v) == key)
        del found[index]
    return found


def _default_layout(buffer: Buffer) -> bool:
    """Whether the buffer is what ``T.Buffer(shape, dtype)`` builds."""
    offset = buffer.elem_offset
    return (
        not buffer.strides
        and isinstance(offset, IntImm)
        and offset.value == 0
        and offset.dtype == default_elem_offset(buffer.shape).dtype
        and buffer.scope == "global"
        and buffer.data_alignment == 64
        and buffer.offset_factor == 1
        and not buffer.axis_separators
        and buffer.data.type_annotation == PointerType(buffer.dtype, "global")
    )


class _FuncPrinter(StmtPrinter):
    def function(self, func: PrimFunc, name: str) -> list[Doc]:
        self.body_defs = body_definitions(func.body)
        used = {id(v) for v in _vars_in_stmt(func.body, self.subroutines)}
        params: list[str] = []
        prologue: list[Doc] = []
        matched: list[tuple[Var, Buffer]] = []
        earlier: set[int] = set()  # scalar params already declared, left to right
        # A data var two parameters share must stay visible as `data=A.data`: a
        # `T.Buffer` parameter would get storage of its own when parsed back.
        data_uses = Counter(id(b.data) for b in func.buffer_map.values())
        for param in func.params:
            buffer = func.buffer_map.get(param)
            if buffer is None:
                params.append(f"{self.define_var(param)}: {self.type_annotation(param)}")
                earlier.add(id(param))
                continue
            layout_vars = _vars_in((*buffer.shape, *buffer.strides, buffer.elem_offset))
            if (
                _default_layout(buffer)
                and all(id(v) in earlier for v in layout_vars)
                and id(buffer.data) not in self.body_defs
                and data_uses[id(buffer.data)] == 1
                and id(param) not in used
            ):
                # The handle param takes the buffer's name: only the buffer is visible.
                self.defined.add(id(param))
                buf_name = self.buffer_ref(buffer)
                self.var_text[id(param)] = buf_name  # as a module call's argument
                params.append(f"{buf_name}: T.Buffer({self.buffer_args(buffer)})")
                self.own_data(buffer)
            else:
                params.append(f"{self.define_var(param)}: T.handle")
                matched.append((param, buffer))
        attrs = {k: v for k, v in func.attrs.items() if k != "global_symbol" or v != name}
        # Returned tensors print as a trailing `return D, E`, not as attributes.
        returns = attrs.pop(RETURNS_ATTR, ())
        attrs.pop(RETURNS_SPAN_ATTR, None)
        if attrs:
            prologue.append(Doc(f"T.func_attr({self.mapping(attrs)})"))
        # Vars first seen in a matched buffer's layout are declared before the match.
        param_ids = {id(p) for p in func.params}
        for _, buffer in matched:
            for var in _vars_in((*buffer.shape, *buffer.strides, buffer.elem_offset)):
                if id(var) not in self.defined and id(var) not in param_ids:
                    prologue.append(Doc(f"{self.define_var(var)} = {self.var_decl(var)}"))
        for param, buffer in matched:
            data = None
            unusual = buffer.data.type_annotation != PointerType(buffer.dtype, buffer.scope)
            if (unusual or id(buffer.data) in self.body_defs) and id(
                buffer.data
            ) not in self.defined:
                # The body binds the data var (the entry checks' `array_data(A)`), or it is
                # not what match_buffer makes: declare it first and pass it.
                # Named as the parser renames a buffer's data var, so reprinting is stable.
                data = self.names.name(buffer.data, f"{self.buffer_ref(buffer)}_data")
                self.defined.add(id(buffer.data))
                prologue.append(Doc(f"{data} = {self.var_decl(buffer.data)}"))
            elif id(buffer.data) in self.defined:
                data = self.var_ref(buffer.data)
            args = f"{self.var_ref(param)}, {self.buffer_args(buffer, data=data)}"
            prologue.append(Doc(f"{self.buffer_ref(buffer)} = T.match_buffer({args})"))
            self.own_data(buffer)
        declared = set(func.buffer_map.values())
        declared.update(func.attrs.get(RETURNS_ATTR, ()))
        # A bare root block the parser would make again is left out (its body unindented),
        # so a function prints the same whether its root block was written or implicit.
        root_body = implied_root_body(func.body)
        printed = func.body if root_body is None else root_body
        self.plan_implicit_buffers(printed, declared)
        implicit = self.implicit_decls(printed)
        body = self.stmts(printed)
        if returns:
            # Tensors live in the root block's alloc_buffers, so their names are only in
            # scope inside it: the return goes at the end of that block.
            target = body
            if len(body) == 1 and body[0].text.startswith('with T.block("root")'):
                target = body[0].body
            target.append(Doc("return " + ", ".join(self.buffer_ref(b) for b in returns)))
        body = [*implicit, *body]
        hoisted = [Doc(f"{self.names.name(v, v.name)} = {self.var_decl(v)}") for v in self.hoisted]
        ret = f" -> {self.dtype_ctor(func.ret_type)}" if func.ret_type is not None else ""
        head = f"def {name}({', '.join(params)}){ret}:"
        # As TVM prints it: a function without a global symbol is private.
        private = "global_symbol" not in func.attrs
        decorator = "@T.prim_func(private=True)" if private else "@T.prim_func"
        return [Doc(decorator), Doc(head, [*prologue, *hoisted, *body])]


def print_func(
    func: PrimFunc, name: str | None = None, subroutines: Mapping[str, str] | None = None
) -> list[Doc]:
    """The document of one function, named ``name`` (default: its global symbol);
    ``subroutines`` maps the module's functions to the type the parser gives a call of
    each (a scalar function's return type, else int32): such calls print as
    ``Module.f(...)``."""
    printer = _FuncPrinter()
    printer.subroutines = dict(subroutines or {})
    return printer.function(func, func.name if name is None else name)


def _module(mod: IRModule) -> list[Doc]:
    body: list[Doc] = []
    if mod.attrs:
        body.append(Doc(f"I.module_attrs({_FuncPrinter().mapping(mod.attrs)})"))
    calls = {
        name: str(f.ret_type) if f.ret_type is not None and not f.ret_type.is_handle
        else "int32"
        for name, f in mod.functions.items()
    }
    for name, func in mod.functions.items():
        if not name.isidentifier():
            raise ValueError(f"cannot print module function {name!r}: not a Python identifier")
        docs = print_func(func, name, calls)
        docs[0].blank_before = bool(body)
        body.extend(docs)
    if not body:
        body.append(Doc("pass"))  # an empty module (a class needs a body to parse back)
    return [Doc("@I.ir_module"), Doc("class Module:", body)]


# The parser accepts operator chains about 10_000 deep (its own limit is 12_000); the
# printer recurses a few frames per level of such a chain, so it gets room for that.
_PRINT_RECURSION_LIMIT = 60_000


@contextmanager
def _deep_recursion() -> Iterator[None]:
    old = sys.getrecursionlimit()
    if old < _PRINT_RECURSION_LIMIT:
        sys.setrecursionlimit(_PRINT_RECURSION_LIMIT)
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


def script(node: Any) -> str:
    """TVMScript text of a PrimFunc, IRModule, statement or expression.

    Functions and modules print as parseable TVMScript headed by the import
    comments; a statement or expression prints alone (free vars by name).
    """
    if _CALLS_TAKE_C_STACK:
        return _on_deep_stack(_script, node)
    with _deep_recursion():
        return _script(node)


# Before Python 3.11 every Python call also takes C stack: a 10_000-term chain printed on
# the main thread's 8 MiB stack overflowed it (a crash, not a RecursionError).
_CALLS_TAKE_C_STACK: bool = sys.version_info < (3, 11)
_DEEP_STACK_BYTES = 512 << 20


def _on_deep_stack(fn: Callable[[Any], str], node: Any) -> str:
    """``fn(node)`` on a thread whose stack holds ``_PRINT_RECURSION_LIMIT`` frames."""
    result: list[str] = []
    failure: list[BaseException] = []

    def run() -> None:
        try:
            with _deep_recursion():
                result.append(fn(node))
        except BaseException as err:  # re-raised on the caller's thread
            failure.append(err)

    with _STACK_SIZE_LOCK:
        previous = threading.stack_size(_DEEP_STACK_BYTES)
        try:
            worker = threading.Thread(target=run, name="tvmscript-print")
            worker.start()
        finally:
            threading.stack_size(previous)
    worker.join()
    if failure:
        raise failure[0]
    return result[0]


_STACK_SIZE_LOCK = threading.Lock()


def _script(node: Any) -> str:
    if isinstance(node, PrimFunc):
        name = node.name
        if not name.isidentifier():
            raise ValueError(f"cannot print function {name!r}: not a Python identifier")
        lines = [_TIR_HEADER, "", *render(print_func(node))]
    elif isinstance(node, IRModule):
        lines = [_IR_HEADER, _TIR_HEADER, "", *render(_module(node))]
    elif isinstance(node, Stmt):
        lines = render(StmtPrinter(hoist_free=False).stmts(node))
    elif isinstance(node, PrimExpr):
        return StmtPrinter(hoist_free=False).expr(node)
    else:
        raise TypeError(f"cannot print {type(node).__name__} as TVMScript")
    return "\n".join(lines) + "\n"
