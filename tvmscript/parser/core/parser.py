"""The IR-agnostic parser: dispatch, scoping, evaluation and error location.

A :class:`Parser` walks a :class:`Source`'s :mod:`doc` tree.  It knows no IR: every
node is handed to the handler registered for ``(current dialect token, node class)``
(see :mod:`dispatch`), and handlers build IR by evaluating sub-expressions
(:meth:`Parser.eval_expr`, :meth:`Parser.eval_assign`) and entering IRBuilder frames.

The contract handlers rely on:

* ``parser.visit(node)`` runs the handler for ``node`` and returns its result;
  ``parser.visit_body(stmts)`` visits statements in order.
* Any exception escaping a handler becomes a :class:`DiagnosticError` located at the
  node being visited; one raised by a nested visit or evaluation is already located
  and passes through unchanged, so the innermost location wins.  The original
  exception is kept as ``__cause__`` and ``.original``.  With
  ``TVMSCRIPT_DEBUG_FRONTEND=1`` the original propagates instead.
* ``parser.report_error(node, message)`` raises a diagnostic at ``node``.
* Nodes without a handler go to the token's ``"*"`` handler if one is registered, and
  otherwise fail with ``unsupported syntax: <NodeClass>`` at the node.
* ``with parser.var_table.frame(kind): ...`` scopes names; ``with
  parser.with_dispatch_token("tir"): ...`` switches dialect (running the token's
  ``enter_token``/``exit_token`` hooks).
* If ``span_context`` is given, every handler runs inside ``span_context(span)``, so
  that an IRBuilder can stamp the node's span on what it builds.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from types import FrameType
from typing import Any, NoReturn

from irbuilder.ir.span import Span
from tvmscript.diagnostics import DiagnosticError, debug_frontend

from . import dispatch, doc, evaluator
from .capture import CapturedEnv, IsIRObject, capture_env
from .dispatch import DispatchTable
from .evaluator import EVAL_BUILTINS, EvalHooks
from .source import Source
from .var_table import VarTable, VarTableError

__all__ = ["BindValue", "Parser", "SpanContext"]

SpanContext = Callable[[Span], AbstractContextManager[Any]]
"""Context-manager factory run around every handler with the visited node's span."""
BindValue = Callable[["Parser", doc.expr, str, Any], Any]
"""``bind_value(parser, target, name, value) -> value to store`` (a dialect's naming hook)."""


class Parser:
    """Visits a :class:`Source` through the dispatch table, with its evaluation context.

    ``captured`` is the program's environment (:func:`capture_env`), ``extra_names`` the
    names always visible to evaluation (the ``T``/``I`` namespaces), ``hooks`` the
    dialect's logical-operator semantics, ``table`` the dispatch table (the global one
    by default) and ``builtins`` the builtins visible to ``eval`` (:data:`EVAL_BUILTINS`).
    """

    def __init__(
        self,
        source: Source,
        *,
        captured: CapturedEnv | None = None,
        extra_names: Mapping[str, Any] | None = None,
        hooks: EvalHooks | None = None,
        table: DispatchTable | None = None,
        builtins: Mapping[str, Any] | None = None,
        span_context: SpanContext | None = None,
    ) -> None:
        self.source = source
        self.var_table = VarTable()
        self.captured = captured if captured is not None else CapturedEnv()
        self.extra_names: Mapping[str, Any] = dict(extra_names or {})
        self.hooks = hooks if hooks is not None else EvalHooks()
        self.table = table if table is not None else dispatch.TABLE
        self.builtins = builtins if builtins is not None else EVAL_BUILTINS
        self.span_context = span_context
        self._tokens: list[str] = []

    @classmethod
    def for_object(
        cls,
        obj: Any,
        *,
        capture: Iterable[Any] | Mapping[str, Any] = (),
        caller_frame: FrameType | None = None,
        is_ir_object: IsIRObject | None = None,
        **options: Any,
    ) -> Parser:
        """A parser for a decorated function or class, with its captured environment.

        Only names the program mentions are captured.  ``options`` are passed to the
        constructor (``extra_names``, ``hooks``, ...).
        """
        source = Source.from_object(obj)
        captured = capture_env(
            obj,
            capture,
            caller_frame=caller_frame,
            is_ir_object=is_ir_object,
            names=source.names,
        )
        return cls(source, captured=captured, **options)

    # ------------------------------------------------------------------ dialects

    @property
    def dispatch_token(self) -> str:
        """The current dialect token (``"default"`` when none was pushed)."""
        return self._tokens[-1] if self._tokens else dispatch.DEFAULT_TOKEN

    @contextmanager
    def with_dispatch_token(self, token: str) -> Iterator[None]:
        """Dispatch to ``token``'s handlers inside the ``with`` body."""
        self._tokens.append(token)
        try:
            enter = self.table.get(token, dispatch.ENTER_TOKEN, fallback=False)
            if enter is not None:
                enter(self)
            try:
                yield
            finally:
                leave = self.table.get(token, dispatch.EXIT_TOKEN, fallback=False)
                if leave is not None:
                    leave(self)
        finally:
            self._tokens.pop()

    # ------------------------------------------------------------------ visiting

    def parse(self, token: str) -> Any:
        """Visit every top-level statement of the source under ``token``; return the last
        result (for a source built from a definition, that definition's result)."""
        result: Any = None
        with self.with_dispatch_token(token):
            for stmt in self.source.tree.body:
                result = self.visit(stmt)
        return result

    def visit(self, node: doc.AST) -> Any:
        """Run the handler for ``node`` under the current token (see the module contract)."""
        token = self.dispatch_token
        handler = self.table.get(token, type(node).__name__)
        if handler is None:
            handler = self.table.get_fallback(token) or _unsupported
        context = nullcontext() if self.span_context is None else self.span_context(self.span(node))
        try:
            with context:
                return handler(self, node)
        except DiagnosticError:
            raise
        except Exception as err:
            if debug_frontend():
                raise
            raise evaluator.diagnostic_for(self, err, node) from err

    def visit_body(self, stmts: Iterable[doc.stmt]) -> None:
        """Visit statements in order."""
        for stmt in stmts:
            self.visit(stmt)

    def report_error(self, node: doc.AST | Span, message: str) -> NoReturn:
        """Raise a :class:`DiagnosticError` with ``message`` at ``node`` (or a span)."""
        span = node if isinstance(node, Span) else self.span(node)
        raise DiagnosticError(message, span)

    def span(self, node: doc.AST) -> Span:
        """The file span of ``node``."""
        return self.source.span(node)

    # ---------------------------------------------------------------- evaluation

    def eval_expr(self, node: doc.expr, extra_vars: Mapping[str, Any] | None = None) -> Any:
        """Evaluate an expression (see :func:`evaluator.eval_expr`)."""
        return evaluator.eval_expr(self, node, extra_vars)

    def eval_assign(
        self,
        target: doc.expr,
        value: Any,
        *,
        bind_value: BindValue | None = None,
        allow_shadowing: bool = False,
    ) -> dict[str, Any]:
        """Assign ``value`` to ``target`` and define the bound names in the var table.

        Each bound value first goes through ``bind_value`` (a dialect names IR variables
        there, or turns a Python value into a ``LetStmt``); what it returns is stored and
        returned.  Redefining a name in the same frame without ``allow_shadowing`` is
        reported at that name in the target.
        """
        values = evaluator.eval_assign(self, target, value)
        names = {n.id: n for n in doc.target_names(target)}
        for name, bound in values.items():
            if bind_value is not None:
                bound = bind_value(self, target, name, bound)
                values[name] = bound
            try:
                self.var_table.add(name, bound, allow_shadowing=allow_shadowing)
            except VarTableError as err:
                where = names.get(name, target)
                raise DiagnosticError(str(err), self.span(where), original=err) from err
        return values


def _unsupported(parser: Parser, node: doc.AST) -> NoReturn:
    parser.report_error(node, f"unsupported syntax: {type(node).__name__}")
