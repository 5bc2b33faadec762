"""Entry points of the TVMScript parser: ``@T.prim_func``, ``@I.ir_module``, ``from_source``.

``tvmscript`` installs :func:`parse_prim_func` and :func:`parse_ir_module` as the
IRBuilder's decorator hooks, so ``@T.prim_func`` / ``@T.prim_func(capture=[...])`` /
``@I.ir_module`` end up here.  Every user error leaves as a :class:`DiagnosticError`
whose traceback and exception chain are dropped (``err.detach()``): the user sees the
located message, not the parser's frames.  ``TVMSCRIPT_DEBUG_FRONTEND=1`` keeps them.

The names a kernel always sees are ``T`` (:mod:`tvmscript.tir`), ``I``
(:mod:`tvmscript.ir`) and ``range`` (a serial loop, see
:class:`~tvmscript.parser.tir.KernelRange`); everything else comes from the capture
policy (:mod:`tvmscript.parser.core.capture`), where IR objects, ``@T.macro`` functions
and the ``T``/``I`` modules themselves are captured automatically.
"""

from __future__ import annotations

import ast
import itertools
import sys
from collections.abc import Iterable, Mapping
from types import FrameType, ModuleType
from typing import Any

from irbuilder.ir import IRModule, PrimFunc, Span
from tvmscript import ir as _ir_namespace
from tvmscript import tir as _tir_namespace
from tvmscript.diagnostics import DiagnosticError, debug_frontend
from tvmscript.parser.core import EVAL_BUILTINS, CapturedEnv, Parser, Source, attributes, doc

from . import tir as _dialect

__all__ = ["from_source", "parse_ir_module", "parse_prim_func"]

_counter = itertools.count()
_NAMESPACES: tuple[ModuleType, ...] = (_tir_namespace, _ir_namespace)


def _is_ir_object(value: Any) -> bool:
    return _dialect.is_ir_object(value) or any(value is ns for ns in _NAMESPACES)


def _extra_names() -> dict[str, Any]:
    return {"T": _tir_namespace, "I": _ir_namespace, "range": _dialect.KernelRange}


def _options() -> dict[str, Any]:
    return {
        "extra_names": _extra_names(),
        "hooks": _dialect.TIR_HOOKS,
        "span_context": _dialect.stamp_span,
    }


def _defined_in_class_body(frame: FrameType | None) -> bool:
    # A class body runs with __module__ and __qualname__ among its locals; a decorator
    # applied there is inside an @I.ir_module class, which parses the whole class later.
    if frame is None:
        return False
    names = frame.f_locals
    return "__module__" in names and "__qualname__" in names and frame.f_code.co_name != "<module>"


def _run(parser: Parser, *, private: bool = False, text: bool = False) -> list[PrimFunc | IRModule]:
    state = _dialect.ParseState(parser, _is_ir_object, private=private)
    results: list[PrimFunc | IRModule] = []
    with _dialect.active(state), parser.with_dispatch_token(_dialect.TOKEN):
        for stmt in parser.source.tree.body:
            if _harmless_import(stmt):
                continue
            if _define_text_macro(parser, stmt):
                continue
            if text and _define_text_helper(parser, state, stmt):
                continue
            result = parser.visit(stmt)
            if isinstance(result, (PrimFunc, IRModule)):
                results.append(result)
    return results


# Real-world TVMScript texts start with ``from tvm.script import tir as T`` / ``import
# tvm``; the names they bind are the ones every kernel sees anyway, so the lines are moot.
_HARMLESS_MODULES = ("tvm", "tvmscript", "numpy", "__future__")


def _harmless_module(name: str | None) -> bool:
    return name is not None and any(
        name == root or name.startswith(root + ".") for root in _HARMLESS_MODULES
    )


def _harmless_import(stmt: Any) -> bool:
    """Whether ``stmt`` is a top-level import of tvm/tvmscript/numpy (skipped)."""
    if isinstance(stmt, doc.ImportFrom):
        return stmt.level == 0 and _harmless_module(stmt.module)
    if isinstance(stmt, doc.Import):
        return all(_harmless_module(alias.name) for alias in stmt.names)
    return False


def _is_macro_decorator(node: Any) -> bool:
    target = node.func if isinstance(node, doc.Call) else node
    return (
        isinstance(target, doc.Attribute)
        and target.attr == "macro"
        and isinstance(target.value, doc.Name)
        and target.value.id == "T"
    )


# A helper or macro of a text may raise these (classes only: nothing new is reachable).
_EXCEPTIONS: dict[str, type[BaseException]] = {
    cls.__name__: cls
    for cls in (
        Exception, ArithmeticError, AssertionError, IndexError, KeyError, LookupError,
        NotImplementedError, OverflowError, RuntimeError, TypeError, ValueError,
        ZeroDivisionError,
    )
}  # fmt: skip


def _is_prim_func_decorator(node: Any) -> bool:
    target = node.func if isinstance(node, doc.Call) else node
    name = target.attr if isinstance(target, doc.Attribute) else getattr(target, "id", None)
    return name == "prim_func"


def _define_text_helper(parser: Parser, state: _dialect.ParseState, stmt: Any) -> bool:
    """A top-level ``def`` of a source text that is no ``@T.prim_func``: a host Python
    helper, run when a kernel calls it. As a helper of a Python file, a kernel uses it
    only when its ``capture=[...]`` lists it (the metaprogramming RFC's policy)."""
    if type(stmt) is not doc.FunctionDef or any(
        _is_prim_func_decorator(d) for d in stmt.decorator_list
    ):
        return False
    helper = _exec_definition(parser, stmt, state.text_helpers, "host function")
    state.text_helpers[stmt.name] = helper
    refused = {**parser.captured.refused, stmt.name: "a host Python function"}
    values = {k: v for k, v in parser.captured.values.items() if k != stmt.name}
    parser.captured = CapturedEnv(values, refused)
    return True


def _define_text_macro(parser: Parser, stmt: Any) -> bool:
    """A top-level ``@T.macro def`` of a source text: define it for the kernels after it.

    The definition is compiled under the text's file name (registered in linecache by
    :meth:`Source.from_text`), so the macro reads its own source as a file-defined
    macro does; its globals are ``T``, ``I`` and the macros defined before it, its
    builtins :data:`EVAL_BUILTINS`, and its attribute reads obey the evaluator's rules.
    """
    if not isinstance(stmt, doc.FunctionDef) or not any(
        _is_macro_decorator(d) for d in stmt.decorator_list
    ):
        return False
    # The text's values (from_source's `capture` and the macros before it) are the
    # macro's globals, as a file's globals are a file-defined macro's.
    macro = _exec_definition(parser, stmt, dict(parser.captured.values), "macro")
    values = dict(parser.captured.values)
    values[stmt.name] = macro
    parser.captured = CapturedEnv(values, parser.captured.refused)
    return True


def _exec_definition(parser: Parser, stmt: Any, known: Mapping[str, Any], what: str) -> Any:
    """Run the ``def`` statement ``stmt`` of a source text; returns the function made.

    Its globals are ``T``, ``I`` and ``known``, its builtins :data:`EVAL_BUILTINS`, and its
    attribute reads obey the evaluator's rules (docs/eval-scope.md)."""
    source = parser.source
    first = min([stmt.line, *(d.line for d in stmt.decorator_list)])
    offset = first - source.first_line
    lines = source.lines[offset : stmt.end_line - source.first_line + 1]
    text = "\n" * (first - 1) + "\n".join(lines) + "\n"
    # Python runs the decorator line, defaults and annotations here: with the evaluator's
    # builtins and attribute rules (docs/eval-scope.md), never with the real builtins.
    tree = ast.parse(text, source.filename)
    refused = attributes.first_refused(tree)
    if refused is not None:
        node, why = refused
        line, end_line = node.lineno, node.end_lineno or node.lineno
        col = source.char_col(line, node.col_offset)
        end_col = source.char_col(end_line, node.end_col_offset or node.col_offset)
        raise DiagnosticError(why, Span(source.filename, line, col, end_line, end_col))
    namespaces = (_tir_namespace, _ir_namespace)
    namespace: dict[str, Any] = {
        "__builtins__": {
            **EVAL_BUILTINS,
            **_EXCEPTIONS,
            "getattr": attributes.bound_getattr(namespaces),
            "hasattr": attributes.bound_hasattr(namespaces),
        },
        "T": _tir_namespace,
        "I": _ir_namespace,
        attributes.GETATTR_NAME: attributes.bound_getattr(namespaces),
    }
    namespace.update(known)
    try:
        code = compile(attributes.route_attribute_loads(tree), source.filename, "exec")
        exec(code, namespace)
    except Exception as err:  # a broken decorator call: report it at the definition
        raise DiagnosticError(
            f"cannot define {what} {stmt.name!r}: {err}", source.span(stmt)
        ) from err
    return namespace[stmt.name]


def _check_well_formed(result: PrimFunc | IRModule) -> None:
    # Imported here: the verifier pulls in the lowering package, which `import tvmscript`
    # leaves for the first parse or build.
    from lowering import WellFormedError, verify_well_formed

    funcs = [result] if isinstance(result, PrimFunc) else list(result.functions.values())
    for func in funcs:
        try:
            verify_well_formed(func)
        except WellFormedError as err:
            first = err.errors[0] if err.errors else None
            message = first.message if first is not None else str(err)
            diagnostic = DiagnosticError(
                f"ill-formed TIR in {func.name!r}: {message}", err.span, original=err
            )
            for other in err.errors[1:]:
                diagnostic.add_note(other.message, other.span)
            raise diagnostic from err


def _start_span(source: Source) -> Span:
    """The first line of the source: where a missing definition is reported."""
    first = source.lines[0] if source.lines else ""
    return Span(source.filename, source.first_line, 1, source.first_line, len(first) + 1)


def _finish(
    results: list[PrimFunc | IRModule], what: str, check: bool, source: Source
) -> PrimFunc | IRModule:
    if not results:
        raise DiagnosticError(
            f"{what}: the source defines no @T.prim_func or @I.ir_module"
            + (" (it is empty)" if not any(ln.strip() for ln in source.lines) else ""),
            _start_span(source),
        )
    if len(results) == 1:
        result = results[0]
    else:
        functions: dict[str, PrimFunc] = {}
        for item in results:
            if not isinstance(item, PrimFunc):
                raise DiagnosticError(f"{what}: several definitions, not all of them functions")
            functions[item.name] = item
        result = IRModule(functions)
    if check:
        _check_well_formed(result)
    return result


def _too_deep(file: str, line: int) -> DiagnosticError:
    return DiagnosticError(
        "the program is nested too deeply to parse (Python's recursion limit was reached); "
        "split long expressions or deep nesting into smaller pieces",
        Span(file, line, 1, line, 2),
    )


def parse_prim_func(
    fn: Any,
    *,
    capture: Iterable[Any] | Mapping[str, Any] = (),
    check_well_formed: bool = False,
    private: bool = False,
    **unknown: Any,
) -> Any:
    """Parse the Python function ``fn`` as a TVMScript kernel and return its PrimFunc.

    ``capture`` lists (or maps names to) the non-primitive values the kernel may use;
    ``check_well_formed`` runs the verifier; ``private`` omits the ``global_symbol``.
    Applied inside a class body, the function is returned unchanged for
    ``@I.ir_module`` to parse with its class.
    """
    if unknown:
        raise TypeError(f"@T.prim_func got unexpected keyword arguments {sorted(unknown)}")
    frame = _dialect.user_frame(sys._getframe(1))
    if _defined_in_class_body(frame):
        return fn
    try:
        parser = Parser.for_object(
            fn, capture=capture, caller_frame=frame, is_ir_object=_is_ir_object, **_options()
        )
        result = _finish(
            _run(parser, private=private), "@T.prim_func", check_well_formed, parser.source
        )
    except RecursionError:
        code = getattr(fn, "__code__", None)
        where = (code.co_filename, code.co_firstlineno) if code is not None else ("<unknown>", 1)
        raise _too_deep(*where) from None
    except DiagnosticError as err:
        if debug_frontend():
            raise
        raise err.detach() from None
    if not isinstance(result, PrimFunc):
        raise TypeError(f"@T.prim_func: {fn!r} did not produce a PrimFunc")
    return result


def parse_ir_module(
    cls: Any,
    *,
    capture: Iterable[Any] | Mapping[str, Any] = (),
    check_well_formed: bool = False,
    **unknown: Any,
) -> IRModule:
    """Parse the class ``cls`` (its ``@T.prim_func`` methods) into an IRModule."""
    if unknown:
        raise TypeError(f"@I.ir_module got unexpected keyword arguments {sorted(unknown)}")
    frame = _dialect.user_frame(sys._getframe(1))
    try:
        parser = Parser.for_object(
            cls, capture=capture, caller_frame=frame, is_ir_object=_is_ir_object, **_options()
        )
        result = _finish(_run(parser), "@I.ir_module", check_well_formed, parser.source)
    except RecursionError:
        raise _too_deep(
            getattr(sys.modules.get(cls.__module__), "__file__", "<unknown>") or "<unknown>", 1
        ) from None
    except DiagnosticError as err:
        if debug_frontend():
            raise
        raise err.detach() from None
    if not isinstance(result, IRModule):
        raise TypeError(f"@I.ir_module: {cls!r} did not produce an IRModule")
    return result


def from_source(
    text: str,
    *,
    filename: str | None = None,
    capture: Mapping[str, Any] | None = None,
    check_well_formed: bool = False,
) -> PrimFunc | IRModule:
    """Parse TVMScript source text: one ``@T.prim_func`` gives a PrimFunc, an
    ``@I.ir_module`` class an IRModule, several functions an IRModule of them.

    ``capture`` maps names to the values the text may use besides ``T``/``I``;
    ``filename`` names the text in diagnostics (a fresh ``<tvmscript-N>`` by default).
    """
    name = filename if filename is not None else f"<tvmscript-{next(_counter)}>"
    try:
        source = Source.from_text(text, name)
        parser = Parser(source, captured=CapturedEnv(dict(capture or {})), **_options())
        return _finish(_run(parser, text=True), "from_source", check_well_formed, source)
    except RecursionError:
        raise _too_deep(name, 1) from None
    except DiagnosticError as err:
        if debug_frontend():
            raise
        raise err.detach() from None
