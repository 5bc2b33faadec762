"""IR-agnostic parser core: the ``doc`` AST mirror, sources, dispatch, scoping and evaluation.

Dialects (TIR, ...) build on this package only through the names exported here::

    from tvmscript.parser.core import Parser, dispatch, doc

    @dispatch.register(token="tir", type_name="For")
    def visit_for(parser: Parser, node: doc.For) -> None: ...

See :mod:`.parser` for the contract handlers rely on, :mod:`.evaluator` for what
evaluated code can see, and :mod:`.capture` for the capture policy.
"""

from tvmscript.diagnostics import DiagnosticError

from . import attributes, dispatch, doc
from .capture import CapturedEnv, IsIRObject, capture_env, describe_kind, is_auto_captured
from .dispatch import DispatchTable
from .doc_ast import from_ast, to_ast
from .evaluator import (
    EVAL_BUILTINS,
    EvalContext,
    EvalHooks,
    diagnostic_for,
    eval_assign,
    eval_expr,
    eval_namespace,
)
from .parser import BindValue, Parser, SpanContext
from .source import Source
from .var_table import FrameKind, VarTable, VarTableError

__all__ = [
    "EVAL_BUILTINS",
    "BindValue",
    "CapturedEnv",
    "DiagnosticError",
    "DispatchTable",
    "EvalContext",
    "EvalHooks",
    "FrameKind",
    "IsIRObject",
    "Parser",
    "Source",
    "SpanContext",
    "VarTable",
    "VarTableError",
    "attributes",
    "capture_env",
    "describe_kind",
    "diagnostic_for",
    "dispatch",
    "doc",
    "eval_assign",
    "eval_expr",
    "eval_namespace",
    "from_ast",
    "is_auto_captured",
    "to_ast",
]
