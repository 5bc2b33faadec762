"""mypy plugin for tvmscript kernels: ``[tool.mypy] plugins = ["tvmscript.mypy_plugin"]``.

A ``@T.prim_func`` body is parsed by tvmscript, never run by Python, yet it is Python that
mypy can check: ``T.*`` calls with their argument types, buffer indexing, loops. What mypy
cannot read on its own, the plugin supplies:

* ``A: T.Buffer((128, 128), "float32")``: a call is not a type to mypy (its parser turns it
  into an invalid type before any plugin runs), so the plugin rewrites such annotations,
  found again in the source text, to the ``T.Buffer`` name before semantic analysis, checks
  the call's arguments (keywords, shape, dtype string) and types the parameter as
  :class:`irbuilder.ir.Buffer` (indexing gives expressions, stores are accepted). A bare
  ``T.Buffer`` (``-> T.Buffer`` on a kernel returning a tensor) is the same type; the old
  subscript spelling ``T.Buffer[(n,), "float32"]`` is not supported (mypy reads its string
  as a type name).
* ``n: T.int32`` (any ``T.<dtype>`` or ``T.handle``): typed as a :class:`irbuilder.ir.Var`.
* ``@T.prim_func`` and ``@T.prim_func(...)``: the decorated name is a
  :class:`irbuilder.ir.PrimFunc` (mypy ``--strict`` otherwise calls the decorator untyped).

Wrong ``T.*`` arguments are then ordinary mypy errors on their line. See ``docs/typing.md``.
"""

from __future__ import annotations

import ast
import re
import uuid
from collections.abc import Callable, Iterator
from typing import Any

from mypy.errorcodes import ErrorCode
from mypy.nodes import (
    ARG_POS,
    ARG_STAR,
    ARG_STAR2,
    Block,
    CallExpr,
    ClassDef,
    Context,
    Decorator,
    FuncDef,
    Import,
    ImportAll,
    ImportFrom,
    MypyFile,
    OverloadedFuncDef,
    Statement,
)
from mypy.options import Options
from mypy.plugin import AnalyzeTypeContext, FunctionContext, Plugin, ReportConfigContext
from mypy.types import AnyType, CallableType, RawExpressionType, Type, TypeOfAny, UnboundType

__all__ = ["plugin"]

_BUFFER_FACTORY = "irbuilder.tir.memory.Buffer_"
_TYPE_OBJECTS = "irbuilder.tir.types."
_PRIM_FUNC_DECORATOR = "irbuilder.tir.func.prim_func"
_BUFFER = "irbuilder.ir.Buffer"
_VAR = "irbuilder.ir.Var"
_PRIM_FUNC = "irbuilder.ir.PrimFunc"

# T.Buffer(shape, dtype, data, strides, elem_offset, scope, align, offset_factor,
# buffer_type, axis_separators): irbuilder.tir.memory._BufferFactory.__call__.
_BUFFER_PARAMS = (
    "shape",
    "dtype",
    "data",
    "strides",
    "elem_offset",
    "scope",
    "align",
    "offset_factor",
    "buffer_type",
    "axis_separators",
)
_DTYPE = re.compile(r"(bool|handle|(u?int|float|bfloat)(8|16|32|64)(x\d+)?)")


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return None if base is None else f"{base}.{node.attr}"
    return None


def _imported_modules(file: MypyFile) -> Iterator[str]:
    for imp in file.imports:
        if isinstance(imp, Import):
            yield from (name for name, _ in imp.ids)
        elif isinstance(imp, (ImportFrom, ImportAll)):
            yield imp.id


def _mentions_buffer_calls(path: str) -> bool:
    try:
        with open(path, encoding="utf-8") as source:
            return "Buffer(" in source.read()
    except (OSError, ValueError):
        return False


def _annotation_calls(path: str) -> dict[tuple[int, int], ast.Call]:
    """``T.Buffer(...)`` calls used as annotations in the file, by (line, column)."""
    try:
        with open(path, encoding="utf-8") as source:
            text = source.read()
        if "Buffer(" not in text:
            return {}
        tree = ast.parse(text, path)
    except (OSError, SyntaxError, ValueError):
        return {}
    calls: dict[tuple[int, int], ast.Call] = {}
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        args = node.args
        annotations = [a.annotation for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
        for star in (args.vararg, args.kwarg):
            annotations.append(star.annotation if star is not None else None)
        annotations.append(node.returns)
        for annotation in annotations:
            if isinstance(annotation, ast.Call):
                name = _dotted(annotation.func)
                if name is not None and name.rsplit(".", 1)[-1] == "Buffer":
                    calls[(annotation.lineno, annotation.col_offset)] = annotation
    return calls


def _function_defs(nodes: list[Statement]) -> Iterator[FuncDef]:
    """Every function definition in the statements, nested ones included."""
    stack: list[object] = list(nodes)
    while stack:
        node = stack.pop()
        if isinstance(node, FuncDef):
            yield node
            stack.append(node.body)
        elif isinstance(node, Decorator):
            stack.append(node.func)
        elif isinstance(node, OverloadedFuncDef):
            stack.extend(node.items)
        elif isinstance(node, ClassDef):
            stack.append(node.defs)
        elif isinstance(node, Block):
            stack.extend(node.body)
        else:  # if / for / while / with / try: their blocks
            for attr in ("body", "else_body", "finally_body", "handlers"):
                value = getattr(node, attr, None)
                if isinstance(value, Block):
                    stack.append(value)
                elif isinstance(value, list):
                    stack.extend(v for v in value if isinstance(v, Block))


def _decorator_calls(file: MypyFile) -> set[int]:
    """ids of the call expressions used as decorators (``@T.prim_func(capture=...)``)."""
    ids: set[int] = set()
    stack: list[object] = list(file.defs)
    while stack:
        node = stack.pop()
        if isinstance(node, Decorator):
            ids.update(id(d) for d in node.decorators if isinstance(d, CallExpr))
            stack.append(node.func)
        elif isinstance(node, FuncDef):
            stack.append(node.body)
        elif isinstance(node, OverloadedFuncDef):
            stack.extend(node.items)
        elif isinstance(node, ClassDef):
            stack.append(node.defs)
        elif isinstance(node, Block):
            stack.extend(node.body)
        else:
            for attr in ("body", "else_body", "finally_body", "handlers"):
                value = getattr(node, attr, None)
                if isinstance(value, Block):
                    stack.append(value)
                elif isinstance(value, list):
                    stack.extend(v for v in value if isinstance(v, Block))
    return ids


def _rewrite_annotations(
    file: MypyFile, calls: dict[tuple[int, int], ast.Call], found: dict[int, ast.Call]
) -> None:
    """Replace the invalid types mypy made of ``T.Buffer(...)`` annotations by the name."""

    def rewrite(typ: Type | None) -> Type | None:
        if not isinstance(typ, RawExpressionType):
            return None
        call = calls.get((typ.line, typ.column))
        name = None if call is None else _dotted(call.func)
        if call is None or name is None:
            return None
        unbound = UnboundType(name, [], line=typ.line, column=typ.column)
        found[id(unbound)] = call
        return unbound

    for func in _function_defs(file.defs):
        typ = func.type
        if not isinstance(typ, CallableType):
            continue
        for i, arg_type in enumerate(typ.arg_types):
            new = rewrite(arg_type)
            if new is not None:
                typ.arg_types[i] = new
                if i < len(func.arguments):
                    func.arguments[i].type_annotation = new
        new_ret = rewrite(typ.ret_type)
        if new_ret is not None:
            typ.ret_type = new_ret


BUFFER_ARGUMENTS = ErrorCode("tvmscript-buffer", "Check T.Buffer(...) annotations", "tvmscript")


def _check_buffer_call(call: ast.Call, ctx: AnalyzeTypeContext) -> None:
    """The argument mistakes of ``T.Buffer(...)`` a type checker can see in the source."""

    def fail(message: str, context: Context) -> None:
        ctx.api.fail(message, context, code=BUFFER_ARGUMENTS)

    if any(isinstance(a, ast.Starred) for a in call.args) or any(
        k.arg is None for k in call.keywords
    ):
        return  # *args / **kwargs: nothing to say statically
    if len(call.args) > len(_BUFFER_PARAMS):
        fail(
            f"T.Buffer() takes at most {len(_BUFFER_PARAMS)} arguments ({len(call.args)} given)",
            ctx.context,
        )
        return
    given: dict[str, ast.expr] = dict(zip(_BUFFER_PARAMS, call.args))
    for keyword in call.keywords:
        assert keyword.arg is not None
        if keyword.arg not in _BUFFER_PARAMS:
            fail(f'T.Buffer() got an unexpected keyword argument "{keyword.arg}"', ctx.context)
        elif keyword.arg in given:
            fail(f'T.Buffer() got multiple values for argument "{keyword.arg}"', ctx.context)
        given[keyword.arg] = keyword.value
    shape = given.get("shape")
    if shape is None:
        fail('T.Buffer() missing its "shape" argument', ctx.context)
    elif isinstance(shape, ast.Constant) and not isinstance(shape.value, int):
        fail(
            f"T.Buffer() shape must be a tuple of dimensions, not {type(shape.value).__name__}",
            ctx.context,
        )
    elif isinstance(shape, (ast.Tuple, ast.List)):
        for dim in shape.elts:
            if isinstance(dim, ast.Constant) and (
                not isinstance(dim.value, int) or isinstance(dim.value, bool) or dim.value < 0
            ):
                fail(
                    f"T.Buffer() dimension must be a non-negative integer or an expression, "
                    f"not {dim.value!r}",
                    ctx.context,
                )
    dtype = given.get("dtype")
    if isinstance(dtype, ast.Constant):
        if not isinstance(dtype.value, str):
            fail(
                f'T.Buffer() dtype must be a string such as "float32", not {dtype.value!r}',
                ctx.context,
            )
        elif not _DTYPE.fullmatch(dtype.value):
            fail(f'T.Buffer() unknown dtype "{dtype.value}"', ctx.context)


class TvmscriptPlugin(Plugin):
    """See the module docstring."""

    def __init__(self, options: Options) -> None:
        super().__init__(options)
        # By id of the UnboundType put in the tree (alive as long as the tree is).
        self._calls: dict[int, ast.Call] = {}
        self._decorators: set[int] = set()  # ids of decorator CallExprs
        self._run_id = uuid.uuid4().hex

    def report_config_data(self, ctx: ReportConfigContext) -> Any:
        # The rewrite happens when a file is parsed as new (get_additional_deps); mypy skips
        # that step for a file it re-checks from its cache because a dependency changed. A
        # value that differs in every run keeps files with T.Buffer(...) annotations out of
        # the cache (kernel files are small), so they are always parsed as new.
        if ctx.path.endswith(".py") and _mentions_buffer_calls(ctx.path):
            return self._run_id
        return None

    def get_additional_deps(self, file: MypyFile) -> list[tuple[int, str, int]]:
        # Called once per parsed file, before semantic analysis: the moment to rewrite.
        calls = _annotation_calls(file.path) if file.path.endswith(".py") else {}
        if calls:
            _rewrite_annotations(file, calls, self._calls)
        if "tvmscript" in file.path or any(
            dep.startswith(("tvmscript", "irbuilder")) for dep in _imported_modules(file)
        ):
            self._decorators.update(_decorator_calls(file))
        return []

    def get_type_analyze_hook(self, fullname: str) -> Callable[[AnalyzeTypeContext], Type] | None:
        if fullname == _BUFFER_FACTORY:
            return self._buffer_type
        if fullname.startswith(_TYPE_OBJECTS):
            return _var_type
        return None

    def _buffer_type(self, ctx: AnalyzeTypeContext) -> Type:
        call = self._calls.get(id(ctx.type))
        if call is not None:
            _check_buffer_call(call, ctx)
        return ctx.api.named_type(_BUFFER, [])

    def get_function_hook(self, fullname: str) -> Callable[[FunctionContext], Type] | None:
        if fullname == _PRIM_FUNC_DECORATOR:
            return self._prim_func_result
        return None

    def _prim_func_result(self, ctx: FunctionContext) -> Type:
        prim_func = ctx.api.named_generic_type(_PRIM_FUNC, [])
        if ctx.args and ctx.args[0]:
            return prim_func  # @T.prim_func on a function
        if id(ctx.context) in self._decorators:  # @T.prim_func(capture=..., ...)
            any_type = AnyType(TypeOfAny.explicit)
            function = ctx.api.named_generic_type("builtins.function", [])
            decorated = CallableType(
                [any_type, any_type],
                [ARG_STAR, ARG_STAR2],
                [None, None],
                any_type,
                function,
                is_ellipsis_args=True,
            )
            return CallableType([decorated], [ARG_POS], [None], prim_func, function)
        return ctx.default_return_type  # T.prim_func(...) inside an IRBuilder: a frame


def _var_type(ctx: AnalyzeTypeContext) -> Type:
    return ctx.api.named_type(_VAR, [])


def plugin(version: str) -> type[Plugin]:
    """mypy's entry point."""
    return TvmscriptPlugin
