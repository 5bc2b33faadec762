"""``@T.macro``: TVMScript fragments expanded hygienically where they are called.

A macro is a Python function whose body is TVMScript::

    @T.macro
    def add_one(buf, i):
        buf[i] = buf[i] + 1

    @T.prim_func
    def f(A: T.Buffer((4,), "float32")):
        for i in range(4):
            add_one(A, i)

Calling it inside a kernel parses its body *at the call site*, into the statement being
built.  Hygiene: the body sees its parameters (bound to the call's argument values, no
copy and no ``LetStmt``), its own captured environment (as ``@T.prim_func`` captures it,
looked up when the macro is expanded so a macro may call one defined after it) and the
``T``/``I`` namespaces, but **not** the caller's variables; the names it defines do not
leak into the caller.  ``@T.macro(hygienic=False)`` lets the body see the caller's
variables as well.  A final ``return value`` makes the call evaluate to ``value``.
Expansion nests at most :data:`MAX_MACRO_DEPTH` deep (recursion gets a diagnostic).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterable
from types import FrameType
from typing import Any

from tvmscript.diagnostics import DiagnosticError
from tvmscript.parser.core import FrameKind, Parser, Source, capture_env, doc

from .context import ParseState, active, caller_frame, current_state

__all__ = ["MAX_MACRO_DEPTH", "TIRMacro", "macro"]

MAX_MACRO_DEPTH = 16
"""How deeply macro expansions may nest before recursion is reported."""


class TIRMacro:
    """A ``@T.macro`` function; calling it inside a kernel expands its body there."""

    def __init__(
        self,
        func: Callable[..., Any],
        *,
        hygienic: bool = True,
        capture: Iterable[Any] = (),
        frame: FrameType | None = None,
    ) -> None:
        self.func = func
        self.hygienic = hygienic
        self.capture = list(capture)
        self._frame = frame
        self._source: Source | None = None
        self.__name__ = getattr(func, "__name__", "macro")
        self.__doc__ = func.__doc__
        self.__wrapped__ = func

    @property
    def source(self) -> Source:
        """The parsed source of the macro (read once)."""
        if self._source is None:
            self._source = Source.from_object(self.func)
        return self._source

    def __repr__(self) -> str:
        return f"<T.macro {self.__name__}>"

    def __get__(self, instance: object, owner: type | None = None) -> Any:
        """A macro defined in a class is a method: ``obj.load(A)`` expands with ``self``
        bound to ``obj`` (TVM's macros work this way too)."""
        if instance is None:
            return self
        return functools.partial(self, instance)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Expand the macro into the kernel being parsed; returns its ``return`` value."""
        state = current_state()
        if state is None:
            raise RuntimeError(
                f"T.macro {self.__name__!r} can only be called inside a TVMScript kernel "
                "(@T.prim_func) or another macro"
            )
        if state.macro_depth >= MAX_MACRO_DEPTH:
            raise DiagnosticError(
                f"macro expansion of {self.__name__!r} nested more than {MAX_MACRO_DEPTH} "
                "levels deep (unbounded recursion?)",
                state.stmt_spans[-1] if state.stmt_spans else None,
            )
        bound = inspect.signature(self.func).bind(*args, **kwargs)
        bound.apply_defaults()
        call_site = state.stmt_spans[-1] if state.stmt_spans else None
        try:
            return self._expand(state, dict(bound.arguments))
        except DiagnosticError as err:
            err.add_note(f"in expansion of macro {self.__name__!r} called here", call_site)
            raise

    def _expand(self, state: ParseState, arguments: dict[str, Any]) -> Any:
        caller = state.parser
        source = self.source
        definition = source.tree.body[0]
        if not isinstance(definition, doc.FunctionDef):
            raise TypeError(f"T.macro {self.__name__!r}: expected a function definition")
        captured = capture_env(
            self.func,
            self.capture,
            caller_frame=self._frame,
            is_ir_object=state.is_ir_object,
            names=source.names,
        )
        parser = Parser(
            source,
            captured=captured,
            extra_names=caller.extra_names,
            hooks=caller.hooks,
            table=caller.table,
            builtins=caller.builtins,
            span_context=caller.span_context,
        )
        inner = ParseState(
            parser,
            state.is_ir_object,
            macro_depth=state.macro_depth + 1,
            stmt_spans=list(state.stmt_spans),
            in_macro=True,
        )
        body = list(definition.body)
        result: doc.expr | None = None
        last = body[-1] if body else None
        if isinstance(last, doc.Return):
            body.pop()
            result = last.value
        with active(inner), parser.with_dispatch_token("tir"):
            with parser.var_table.frame(FrameKind.MACRO, allow_shadowing=True):
                if not self.hygienic:
                    for name, value in caller.var_table.get().items():
                        parser.var_table.add(name, value)
                with parser.var_table.frame(FrameKind.MACRO, allow_shadowing=True):
                    for name, value in arguments.items():
                        parser.var_table.add(name, value)
                    parser.visit_body(body)
                    return None if result is None else parser.eval_expr(result)


def macro(
    func: Callable[..., Any] | None = None,
    *,
    hygienic: bool = True,
    capture: Iterable[Any] = (),
) -> Any:
    """``@T.macro``: a TVMScript fragment expanded where it is called inside a kernel.

    The body is parsed at each call site with its parameters bound to the call's arguments
    (expressions, buffers or Python values; no copy, no ``LetStmt``). A final
    ``return value`` makes the call an expression. Expansions nest at most
    ``MAX_MACRO_DEPTH`` deep.

    Parameters
    ----------
    func : function, optional
        The decorated function (omitted in ``@T.macro(...)`` with keywords).
    hygienic : bool
        True: the body sees its parameters, its own defining scope and ``T``/``I``, not the
        caller's variables. False: it also sees the caller's variables.
    capture : iterable
        Extra values the body may use.

    Returns
    -------
    TIRMacro
        Callable only inside a kernel being parsed.

    Examples
    --------
    >>> @T.macro
    ... def square(x):
    ...     return x * x
    >>> @T.prim_func
    ... def f(A: T.Buffer((3,), "int32")):
    ...     for i in range(3):
    ...         A[i] = square(A[i] + 1)
    >>> a = np.arange(3, dtype="int32"); tvmscript.build(f)(a); print(a)
    [1 4 9]
    """
    if func is not None and not callable(func):
        # `@T.macro(True)`: a positional option would be taken for the function itself.
        raise ValueError(
            f"T.macro takes only keyword options: use @T.macro, @T.macro() or "
            f"@T.macro(hygienic=True|False, capture=[...]), got @T.macro({func!r})"
        )
    frame = caller_frame()
    if func is not None:
        return TIRMacro(func, hygienic=hygienic, capture=capture, frame=frame)

    def decorate(fn: Callable[..., Any]) -> TIRMacro:
        return TIRMacro(fn, hygienic=hygienic, capture=capture, frame=frame)

    return decorate
