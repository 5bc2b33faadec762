"""Golden tests of diagnostic rendering: message, location, source line, exact carets."""

from __future__ import annotations

import linecache
import pickle
import textwrap

import pytest

from irbuilder.ir.span import Span
from tvmscript.diagnostics import (
    DEBUG_ENV_VAR,
    DiagnosticError,
    debug_frontend,
    describe_exception,
    format_span,
)

from .helpers import unique_filename

KERNEL = textwrap.dedent(
    """\
    def kernel(A, B):
        x = a + b.c(1)
        for i in range(
                10,
                20):
            y = "é"; z = A[i]
    \tq = 1
    """
)


@pytest.fixture
def kernel_file() -> str:
    name = unique_filename("kernel")
    linecache.cache[name] = (len(KERNEL), None, KERNEL.splitlines(True), name)
    return name


def test_single_line_span(kernel_file: str) -> None:
    err = DiagnosticError("'B' object has no attribute 'c'", Span(kernel_file, 2, 13, 2, 16))
    assert str(err) == textwrap.dedent(
        f"""\
        error: 'B' object has no attribute 'c'
         --> {kernel_file}:2:13
          |
        2 |     x = a + b.c(1)
          |             ^^^"""
    )


def test_multi_line_span_is_underlined_on_every_line(kernel_file: str) -> None:
    err = DiagnosticError("bad range", Span(kernel_file, 3, 14, 5, 16))
    assert str(err) == textwrap.dedent(
        f"""\
        error: bad range
         --> {kernel_file}:3:14
          |
        3 |     for i in range(
          |              ^^^^^^
        4 |             10,
          |             ^^^
        5 |             20):
          |             ^^^"""
    )


def test_columns_count_characters_not_bytes(kernel_file: str) -> None:
    err = DiagnosticError("here", Span(kernel_file, 6, 22, 6, 26))
    assert str(err).splitlines()[-2:] == [
        '6 |         y = "é"; z = A[i]',
        "  |                      ^^^^",
    ]


def test_tabs_are_expanded_consistently_in_line_and_carets(kernel_file: str) -> None:
    err = DiagnosticError("tabbed", Span(kernel_file, 7, 2, 7, 3))
    assert str(err).splitlines()[-2:] == ["7 |     q = 1", "  |     ^"]


def test_long_spans_elide_their_middle(kernel_file: str) -> None:
    err = DiagnosticError("whole function", Span(kernel_file, 1, 1, 7, 7))
    assert str(err) == textwrap.dedent(
        f"""\
        error: whole function
         --> {kernel_file}:1:1
          |
        1 | def kernel(A, B):
          | ^^^^^^^^^^^^^^^^^
        2 |     x = a + b.c(1)
          |     ^^^^^^^^^^^^^^
        ...
        6 |         y = "é"; z = A[i]
          |         ^^^^^^^^^^^^^^^^^
        7 |     q = 1
          |     ^^^^^"""
    )


def test_gutter_widens_for_multi_digit_line_numbers() -> None:
    name = unique_filename("wide")
    text = "\n" * 9 + "value = 1\n"
    linecache.cache[name] = (len(text), None, text.splitlines(True), name)
    assert str(DiagnosticError("wide", Span(name, 10, 1, 10, 6))) == textwrap.dedent(
        f"""\
        error: wide
          --> {name}:10:1
           |
        10 | value = 1
           | ^^^^^"""
    )


def test_zero_width_span_gets_one_caret(kernel_file: str) -> None:
    err = DiagnosticError("here", Span(kernel_file, 2, 9, 2, 9))
    assert str(err).splitlines()[-1] == "  |         ^"


def test_notes_plain_and_located(kernel_file: str) -> None:
    err = DiagnosticError("boom", Span(kernel_file, 2, 13, 2, 16))
    err.add_note("the value came from here", Span(kernel_file, 6, 22, 6, 26))
    err.add_note("add it to capture=[...]")
    assert str(err) == textwrap.dedent(
        f"""\
        error: boom
         --> {kernel_file}:2:13
          |
        2 |     x = a + b.c(1)
          |             ^^^
          |
          = note: add it to capture=[...]
        note: the value came from here
         --> {kernel_file}:6:22
          |
        6 |         y = "é"; z = A[i]
          |                      ^^^^"""
    )


def test_without_span_or_source() -> None:
    assert str(DiagnosticError("no location")) == "error: no location"
    missing = Span("/nonexistent/file.py", 3, 1, 3, 4)
    assert str(DiagnosticError("gone", missing)) == (
        "error: gone\n --> /nonexistent/file.py:3:1"
    )


def test_format_span_severity_and_custom_lines() -> None:
    span = Span("virtual.py", 1, 5, 1, 8)
    text = format_span(span, "careful", "warning", getline=lambda _f, _n: "x = foo(1)\n")
    assert text == "warning: careful\n --> virtual.py:1:5\n  |\n1 | x = foo(1)\n  |     ^^^"


def test_error_keeps_lines_it_was_created_with() -> None:
    name = unique_filename("reused")
    linecache.cache[name] = (6, None, ["first\n"], name)
    err = DiagnosticError("old", Span(name, 1, 1, 1, 6))
    linecache.cache[name] = (7, None, ["second\n"], name)
    assert "1 | first" in str(err)


def test_pickle_round_trip_keeps_notes(kernel_file: str) -> None:
    err = DiagnosticError("boom", Span(kernel_file, 2, 13, 2, 16))
    err.add_note("note")
    copy = pickle.loads(pickle.dumps(err))
    assert str(copy) == str(err)


def test_detach_drops_chain_but_keeps_original() -> None:
    original = ValueError("internal")
    try:
        try:
            raise original
        except ValueError as inner:
            raise DiagnosticError("user-facing", original=inner) from inner
    except DiagnosticError as err:
        detached = err.detach()
    assert detached.__cause__ is None and detached.__traceback__ is None
    assert detached.__suppress_context__
    assert detached.original is original


def test_describe_exception() -> None:
    assert describe_exception(ValueError("bad value")) == "bad value"
    assert describe_exception(KeyError("x")) == "KeyError: 'x'"
    assert describe_exception(RuntimeError()) == "RuntimeError"


def test_debug_switch_is_read_at_call_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(DEBUG_ENV_VAR, raising=False)
    assert not debug_frontend()
    monkeypatch.setenv(DEBUG_ENV_VAR, "1")
    assert debug_frontend()
