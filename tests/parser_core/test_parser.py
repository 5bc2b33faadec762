"""Parser skeleton: dispatch by token, error wrapping, unknown nodes, binding."""

from __future__ import annotations

import textwrap
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from irbuilder.ir.span import Span
from tvmscript.diagnostics import DEBUG_ENV_VAR, DiagnosticError
from tvmscript.parser.core import DispatchTable, FrameKind, Parser, Source, dispatch, doc

from .helpers import unique_filename

PROGRAM = textwrap.dedent(
    """\
    def kernel(n):
        total = n + 1
        for i in range(total):
            check(i)
        match n:
            case _:
                pass
    """
)


def make_parser(table: DispatchTable, text: str = PROGRAM, **kwargs: Any) -> Parser:
    return Parser(Source.from_text(text, unique_filename("program")), table=table, **kwargs)


def mini_dialect(log: list[str]) -> DispatchTable:
    """A toy dialect: functions open a frame, assignments bind, loops unroll ``range``."""
    table = DispatchTable()

    @table.register("toy", "FunctionDef")
    def visit_function(parser: Parser, node: doc.FunctionDef) -> str:
        with parser.var_table.frame(FrameKind.FUNCTION):
            parser.var_table.add("n", 3)
            parser.visit_body(node.body)
        return node.name

    @table.register("toy", "Assign")
    def visit_assign(parser: Parser, node: doc.Assign) -> None:
        value = parser.eval_expr(node.value)
        parser.eval_assign(node.targets[0], value, allow_shadowing=True)

    @table.register("toy", "For")
    def visit_for(parser: Parser, node: doc.For) -> None:
        for value in parser.eval_expr(node.iter):
            with parser.var_table.frame(FrameKind.LOOP):
                parser.eval_assign(node.target, value)
                parser.visit_body(node.body)

    @table.register(dispatch.DEFAULT_TOKEN, "Expr")
    def visit_expr(parser: Parser, node: doc.Expr) -> None:
        log.append(repr(parser.eval_expr(node.value)))

    return table


def test_visit_dispatches_by_token_and_falls_back_to_default() -> None:
    log: list[str] = []
    table = mini_dialect(log)
    parser = make_parser(table, PROGRAM.split("    match")[0], extra_names={"check": str})
    assert parser.parse("toy") == "kernel"
    assert log == ["'0'", "'1'", "'2'", "'3'"]


def test_unknown_node_reports_unsupported_syntax_at_the_node() -> None:
    parser = make_parser(mini_dialect([]), extra_names={"check": str})
    with pytest.raises(DiagnosticError) as info:
        parser.parse("toy")
    err = info.value
    assert err.message == "unsupported syntax: Match"
    assert err.span is not None and (err.span.line, err.span.col) == (5, 5)
    assert (err.span.end_line, err.span.end_col) == (7, 17)


def test_catch_all_handler_for_unknown_nodes() -> None:
    table = mini_dialect([])
    seen: list[str] = []

    @table.register("toy", dispatch.ANY_NODE)
    def unknown(parser: Parser, node: doc.AST) -> None:
        seen.append(type(node).__name__)

    make_parser(table, extra_names={"check": str}).parse("toy")
    assert seen == ["Match"]


def test_exception_in_a_handler_becomes_a_diagnostic_at_that_node() -> None:
    parser = make_parser(mini_dialect([]), extra_names={"check": bad_check})
    with pytest.raises(DiagnosticError) as info:
        parser.parse("toy")
    err = info.value
    # The innermost node wins: the call inside the loop, not the loop or the function.
    assert err.message == "check failed at 0"
    assert err.span is not None and (err.span.line, err.span.col, err.span.end_col) == (4, 9, 17)
    assert isinstance(err.__cause__, RuntimeError) and err.original is err.__cause__


def bad_check(i: int) -> None:
    raise RuntimeError(f"check failed at {i}")


def test_handler_errors_outside_evaluation_are_located_at_the_visited_node() -> None:
    table = DispatchTable()

    @table.register("toy", "FunctionDef")
    def visit_function(parser: Parser, node: doc.FunctionDef) -> None:
        parser.visit_body(node.body)

    @table.register("toy", "Assign")
    def visit_assign(parser: Parser, node: doc.Assign) -> None:
        raise KeyError("internal")

    with pytest.raises(DiagnosticError) as info:
        make_parser(table).parse("toy")
    assert info.value.message == "KeyError: 'internal'"
    assert info.value.span == Span(info.value.span.file, 2, 5, 2, 18)  # type: ignore[union-attr]


def test_user_facing_text_has_no_parser_internals() -> None:
    parser = make_parser(mini_dialect([]), extra_names={"check": bad_check})
    with pytest.raises(DiagnosticError) as info:
        try:
            parser.parse("toy")
        except DiagnosticError as err:
            raise err.detach() from None
    shown = "".join(traceback.format_exception(info.value))
    assert "check failed at 0" in shown and "check(i)" in shown
    assert "tvmscript/parser" not in shown and "RuntimeError:" not in shown
    # The helper's exception type and its own line are shown as a note (issue #16).
    assert "note: RuntimeError raised here, in host function 'bad_check'" in shown
    assert 'raise RuntimeError(f"check failed at {i}")' in shown


def test_debug_switch_lets_the_original_exception_through(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(DEBUG_ENV_VAR, "1")
    parser = make_parser(mini_dialect([]), extra_names={"check": bad_check})
    with pytest.raises(RuntimeError, match="check failed at 0"):
        parser.parse("toy")


def test_report_error() -> None:
    parser = make_parser(DispatchTable())
    func = parser.source.tree.body[0]
    with pytest.raises(DiagnosticError, match="custom") as info:
        parser.report_error(func, "custom")
    assert info.value.span == parser.span(func)


def test_token_stack_and_hooks() -> None:
    table = DispatchTable()
    events: list[str] = []
    table.register("toy", dispatch.ENTER_TOKEN)(lambda parser: events.append("enter"))
    table.register("toy", dispatch.EXIT_TOKEN)(lambda parser: events.append("exit"))
    parser = make_parser(table)
    assert parser.dispatch_token == dispatch.DEFAULT_TOKEN
    with parser.with_dispatch_token("toy"):
        assert parser.dispatch_token == "toy"
        with parser.with_dispatch_token("other"):
            assert parser.dispatch_token == "other"
        assert parser.dispatch_token == "toy"
    assert parser.dispatch_token == dispatch.DEFAULT_TOKEN
    assert events == ["enter", "exit"]


def test_span_context_wraps_every_handler() -> None:
    spans: list[tuple[int, int]] = []

    @contextmanager
    def record(span: Span) -> Iterator[None]:
        spans.append((span.line, span.col))
        yield

    table = DispatchTable()
    table.register("toy", "FunctionDef")(lambda p, n: p.visit_body(n.body[:1]))
    table.register("toy", "Assign")(lambda p, n: None)
    make_parser(table, span_context=record).parse("toy")
    assert spans == [(1, 1), (2, 5)]


def test_eval_assign_binds_and_rejects_redefinition_at_the_name() -> None:
    text = "i, j = pair\ni, k = pair\n"
    parser = make_parser(DispatchTable(), text, extra_names={"pair": (1, 2)})
    first, second = parser.source.tree.body
    assert isinstance(first, doc.Assign) and isinstance(second, doc.Assign)
    with parser.var_table.frame(FrameKind.LOOP):
        bound = parser.eval_assign(
            first.targets[0], (1, 2), bind_value=lambda p, t, name, v: f"{name}={v}"
        )
        assert bound == {"i": "i=1", "j": "j=2"}
        assert parser.var_table.get() == bound
        with pytest.raises(DiagnosticError, match="'i' is already defined in this loop") as info:
            parser.eval_assign(second.targets[0], (3, 4))
        assert info.value.span == Span(info.value.span.file, 2, 1, 2, 2)  # type: ignore[union-attr]
        assert parser.eval_assign(second.targets[0], (3, 4), allow_shadowing=True) == {
            "i": 3,
            "k": 4,
        }


def test_for_object_builds_source_and_environment() -> None:
    def kernel() -> int:
        return LIMIT

    parser = Parser.for_object(kernel, extra_names={"T": "namespace"})
    assert parser.captured.values == {"LIMIT": LIMIT}
    assert parser.extra_names == {"T": "namespace"}
    assert parser.source.filename == __file__


LIMIT = 16
