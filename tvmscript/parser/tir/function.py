"""TIR handlers for definitions: ``@T.prim_func`` functions and ``@I.ir_module`` classes.

A top-level ``def`` builds one PrimFunc in an IRBuilder of its own and returns it; a
``class`` builds an IRModule holding each of its ``@T.prim_func`` methods under the
method's name.  Parameters are declared in order, so a later annotation may use an
earlier scalar (``n: T.int32, A: T.Buffer((n,), "float32")``):

* ``T.Buffer(shape, dtype)`` / ``T.Buffer[shape, dtype]``: a buffer parameter (a handle
  param mapped in ``buffer_map``);
* ``T.int32``, ``T.float32``, ``T.bool``, ...: a scalar parameter;
* ``T.handle`` / ``T.handle("float32", "global")`` / ``T.Ptr(...)``: a handle parameter
  (bind a buffer to it with ``A = T.match_buffer(a, shape, dtype)``).
"""

from __future__ import annotations

from typing import Any

from irbuilder import IRBuilder
from irbuilder.frames import ModuleFrame, PrimFuncFrame
from irbuilder.ir import (
    Buffer,
    DataType,
    IRModule,
    PointerType,
    PrimFunc,
    Var,
    as_dtype,
)
from irbuilder.ir_module import ir_module as _ir_module_frame
from irbuilder.tir import arg, func_name, func_ret, prim_func
from irbuilder.tir._common import ScalarType
from irbuilder.tir.memory import Buffer_
from tvmscript.parser.core import CapturedEnv, FrameKind, Parser, dispatch, doc

from .context import current_state
from .stmts import TOKEN
from .subroutine import ModuleFunctions, callee_order

__all__ = ["prim_func_options"]


def _decorator_name(node: doc.expr) -> str | None:
    func = node.func if isinstance(node, doc.Call) else node
    if isinstance(func, doc.Attribute):
        return func.attr
    if isinstance(func, doc.Name):
        return func.id
    return None


def prim_func_options(parser: Parser, node: doc.FunctionDef) -> dict[str, Any] | None:
    """The keyword options of the function's ``@T.prim_func(...)`` decorator.

    ``{}`` for a bare ``@T.prim_func`` (or no decorator at all), ``None`` when the
    function is decorated with something else that marks it as no kernel
    (``@T.macro``).  Only the decorator's keywords are evaluated.
    """
    for dec in node.decorator_list:
        name = _decorator_name(dec)
        if name == "prim_func":
            if not isinstance(dec, doc.Call):
                return {}
            if dec.args:
                parser.report_error(
                    dec.args[0], "@T.prim_func takes only keyword options (e.g. private=True)"
                )
            state = current_state()
            helpers = state.text_helpers if state is not None else None
            options = {kw.arg: parser.eval_expr(kw.value, helpers) for kw in dec.keywords if kw.arg}
            unknown = sorted(set(options) - {"private", "check_well_formed", "capture"})
            if unknown:
                parser.report_error(dec, f"@T.prim_func got unexpected options {unknown}")
            return options
        if name == "macro":
            return None
    return {}


def _param(parser: Parser, node: doc.arg) -> Any:
    if node.annotation is None:
        parser.report_error(
            node,
            f"parameter '{node.arg}' needs a type annotation: T.Buffer((...), dtype), "
            "T.int32, T.handle, ...",
        )
    annotation = parser.eval_expr(node.annotation)
    if isinstance(annotation, (Buffer, Var)):
        return annotation
    if isinstance(annotation, ScalarType):
        return annotation()
    if isinstance(annotation, PointerType):
        return Var(node.arg, as_dtype("handle"), annotation)
    if isinstance(annotation, (DataType, str)):
        return Var(node.arg, as_dtype(annotation))
    parser.report_error(
        node.annotation,
        f"parameter '{node.arg}': expected T.Buffer(...), a scalar type such as T.int32, or "
        f"T.handle; got {type(annotation).__name__}",
    )


def _check_signature(parser: Parser, node: doc.FunctionDef) -> None:
    args = node.args
    if args.vararg is not None or args.kwarg is not None:
        where = args.vararg or args.kwarg
        assert where is not None
        parser.report_error(where, "a kernel cannot take *args or **kwargs")
    if args.defaults or any(d is not None for d in args.kw_defaults):
        parser.report_error(args, "kernel parameters cannot have default values")
    if node.type_params:
        parser.report_error(node.type_params[0], "type parameters are not supported")


@dispatch.register(TOKEN, "FunctionDef")
def visit_function_def(parser: Parser, node: doc.FunctionDef) -> PrimFunc:
    """Build the PrimFunc of a ``@T.prim_func`` definition and return it."""
    if IRBuilder.is_in_scope() and IRBuilder.current().find(PrimFuncFrame) is not None:
        parser.report_error(
            node,
            "a function cannot be defined inside a TVMScript kernel; define it outside and "
            "list it in capture=[...], or make it a @T.macro",
        )
    options = prim_func_options(parser, node)
    if options is None:
        parser.report_error(node, "only @T.prim_func functions can be parsed here")
    state = current_state()
    private = bool(options.get("private", False)) or (state is not None and state.private)
    _check_signature(parser, node)
    outer_env = parser.captured
    if state is not None and state.text_helpers:
        parser.captured = _capture_text_helpers(outer_env, state.text_helpers, options)
    try:
        return _build_prim_func(parser, node, private)
    finally:
        parser.captured = outer_env


def _capture_text_helpers(
    env: CapturedEnv, helpers: dict[str, Any], options: dict[str, Any]
) -> CapturedEnv:
    """``env`` plus the text's host helpers that the kernel's ``capture=`` lists."""
    listed = options.get("capture") or ()
    if isinstance(listed, dict):
        wanted = {name for name, value in helpers.items() if listed.get(name) is value}
        extra = dict(listed)
    else:
        ids = {id(value) for value in listed}
        wanted = {name for name, value in helpers.items() if id(value) in ids}
        extra = {}
    if not wanted and not extra:
        return env
    values = {**env.values, **extra, **{name: helpers[name] for name in wanted}}
    refused = {k: v for k, v in env.refused.items() if k not in values}
    return CapturedEnv(values, refused)


def _build_prim_func(parser: Parser, node: doc.FunctionDef, private: bool) -> PrimFunc:
    with IRBuilder() as builder, builder.with_span(parser.span(node)):
        with prim_func(is_private=private):
            func_name(node.name)
            with parser.var_table.frame(FrameKind.FUNCTION):
                args = node.args
                for param_node in (*args.posonlyargs, *args.args, *args.kwonlyargs):
                    value = arg(param_node.arg, _param(parser, param_node))
                    parser.var_table.add(param_node.arg, value)
                if node.returns is not None:
                    ret = parser.eval_expr(node.returns)
                    # ``-> T.Buffer`` (or a tuple of them) annotates a kernel that returns
                    # T.compute tensors, for type checkers: no scalar return type.
                    if ret is not None and not _is_tensor_annotation(ret):
                        func_ret(ret)
                parser.visit_body(node.body)
    result = builder.get()
    assert isinstance(result, PrimFunc)
    return result


def _is_tensor_annotation(value: Any) -> bool:
    if value is Buffer_ or isinstance(value, Buffer):
        return True
    if getattr(value, "__origin__", None) is not tuple:  # tuple[T.Buffer, T.Buffer]
        return False
    args: tuple[Any, ...] = getattr(value, "__args__", ())
    return bool(args) and all(_is_tensor_annotation(a) for a in args)


@dispatch.register(TOKEN, "ClassDef")
def visit_class_def(parser: Parser, node: doc.ClassDef) -> IRModule:
    """Build the IRModule of an ``@I.ir_module`` class: its prim_funcs by method name."""
    if IRBuilder.is_in_scope() and IRBuilder.current().top() is not None:
        parser.report_error(node, "a class cannot be defined inside a TVMScript kernel")
    if any(_decorator_name(dec) == "prim_func" for dec in node.decorator_list):
        parser.report_error(
            node,
            f"@T.prim_func needs a function definition (def), but {node.name!r} is a class; "
            "decorate a class of kernels with @I.ir_module",
        )
    if node.bases or node.keywords:
        parser.report_error(node, "an @I.ir_module class cannot have base classes")
    with IRBuilder() as builder, builder.with_span(parser.span(node)):
        frame = _ir_module_frame()
        assert isinstance(frame, ModuleFrame)
        with frame, parser.var_table.frame(FrameKind.FUNCTION):
            defs: list[doc.FunctionDef] = []
            for stmt in node.body:
                if isinstance(stmt, doc.FunctionDef) and type(stmt) is doc.FunctionDef:
                    if any(d.name == stmt.name for d in defs):
                        parser.report_error(
                            stmt, f"the module already has a function {stmt.name!r}"
                        )
                    defs.append(stmt)
                elif isinstance(stmt, (doc.Expr, doc.Pass)):
                    parser.visit(stmt)
                else:
                    parser.report_error(
                        stmt,
                        "an @I.ir_module class may only hold @T.prim_func functions and "
                        "I.module_attrs(...)",
                    )
            # Inside the class its name is the module: `Module.f(...)` calls function f.
            functions = ModuleFunctions(node.name, [d.name for d in defs])
            parser.var_table.add(node.name, functions, allow_shadowing=True)
            for stmt in callee_order(node.name, defs):
                functions.parsed[stmt.name] = parser.visit(stmt)
            for stmt in defs:
                frame.functions[stmt.name] = functions.parsed[stmt.name]
    result = builder.get()
    assert isinstance(result, IRModule)
    return result
