"""The hostile-input corpus: every invalid script raises DiagnosticError pointing into it.

Each ``corpus/*.tvms`` file (written by ``gen_corpus.py``) starts with
``# expect: <fragment>|<alternative>...`` and ``# at: <line>:<col>`` (or ``# at: python``:
where CPython's compiler reports the syntax error). ``tvmscript.from_source(text)`` must
raise :class:`tvmscript.DiagnosticError` within :data:`TIME_LIMIT` seconds, with a span
inside the script that covers the expected position and a message matching one of the
fragments. Known parser gaps are listed in ``known_failures.txt`` (xfail, with the
observed behaviour).

Status: 229 cases, all 229 pass (``known_failures.txt`` is empty; the mechanism stays for
new cases).
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import tvmscript

HERE = Path(__file__).parent
CORPUS = HERE / "corpus"
TIME_LIMIT = 30
"""A hang detector, not a speed goal: generous, since a loaded 2-core CI machine parses the
largest cases (20,000 statements) in 5-7 s (about 1 s when idle)."""
from_source: Any = getattr(tvmscript, "from_source", None)
needs_parser = pytest.mark.skipif(
    from_source is None, reason="tvmscript.from_source (the parser) does not exist yet"
)


@dataclass
class Case:
    """One corpus entry: its text, the message pattern and the expected position."""

    name: str
    text: str
    expect: str
    line: int
    col: int
    capture: dict[str, Any] | None = None


def _python_position(text: str) -> tuple[int, int]:
    try:
        compile(text, "<case>", "exec")
    except SyntaxError as err:
        if err.lineno is not None:
            return err.lineno, err.offset or 1
    except ValueError:
        pass
    else:
        raise AssertionError("a pysyntax case compiles")
    # Null bytes: CPython's compile() refuses before locating (a ValueError before 3.11.4,
    # a SyntaxError without a position after); the byte's own position is what to report.
    for number, line in enumerate(text.split("\n"), start=1):
        if "\x00" in line:
            return number, line.index("\x00") + 1
    raise AssertionError("a pysyntax case without a position that has no null byte")


def load(path: Path) -> Case:
    """Parse the two header lines of a corpus file."""
    text = path.read_text(encoding="utf-8")
    capture = None
    if text.startswith("# capture: macros\n"):
        from macros import MACROS

        capture = dict(MACROS)
    lines = text.split("\n", 3)[1 if capture is not None else 0:]
    assert lines[0].startswith("# expect: ") and lines[1].startswith("# at: "), path
    expect = lines[0][len("# expect: "):]
    at = lines[1][len("# at: "):]
    line, col = _python_position(text) if at == "python" else map(int, at.split(":"))
    return Case(path.stem, text, expect, line, col, capture)


def cases() -> list[Case]:
    """All corpus cases, sorted by name."""
    return [load(p) for p in sorted(CORPUS.glob("*.tvms"))]


def known_failures() -> dict[str, str]:
    """``name -> observed behaviour`` of the cases the parser does not handle yet."""
    path = HERE / "known_failures.txt"
    out: dict[str, str] = {}
    if path.exists():
        for raw in path.read_text(encoding="utf-8").splitlines():
            if raw.strip() and not raw.startswith("#"):
                name, _, why = raw.partition(":")
                out[name.strip()] = why.strip()
    return out


class _Timeout(Exception):
    pass


@contextmanager
def time_limit(seconds: int) -> Iterator[None]:
    """Raise ``_Timeout`` in the main thread after ``seconds`` (signal.alarm)."""

    def fire(signum: int, frame: Any) -> None:
        raise _Timeout(f"no result after {seconds}s")

    old = signal.signal(signal.SIGALRM, fire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


_CHECKED: dict[str, str | None] = {}
"""Results of :func:`check` by case name: the pass-rate report reuses the per-case tests'
results instead of parsing the whole corpus a second time."""


def check(case: Case) -> str | None:
    """None when the case behaves; else a description of what happened instead."""
    if case.name not in _CHECKED:
        _CHECKED[case.name] = _check(case)
    return _CHECKED[case.name]


def _check(case: Case) -> str | None:
    start = time.monotonic()
    try:
        with time_limit(TIME_LIMIT):
            if case.capture is None:
                result = from_source(case.text)
            else:
                result = from_source(case.text, capture=case.capture)
    except _Timeout:
        return f"hang: no result within {TIME_LIMIT}s"
    except tvmscript.DiagnosticError as err:
        return _check_diagnostic(case, err, time.monotonic() - start)
    except RecursionError:
        return "RecursionError escaped"
    except Exception as exc:
        return f"{type(exc).__name__} escaped: {str(exc)[:150]}"
    return f"no error: returned {type(result).__name__}"


def _check_diagnostic(case: Case, err: Any, seconds: float) -> str | None:
    span = err.span
    message = str(err.message)
    nlines = case.text.count("\n") + 1
    if seconds > TIME_LIMIT:
        return f"slow: {seconds:.1f}s"
    if span is None:
        return f"DiagnosticError without a span: {message[:120]}"
    if case.capture is not None and str(span.file).endswith("macros.py"):
        # A recursive macro: the error points at the recursive call inside the macro.
        if not re.search(case.expect, message, re.IGNORECASE):
            return f"message {message[:160]!r} matches none of {case.expect!r}"
        return None
    if not (1 <= span.line <= span.end_line <= nlines):
        return f"span {span.line}:{span.col}-{span.end_line}:{span.end_col} outside the script"
    start, end = (span.line, span.col), (span.end_line, span.end_col)
    at = (case.line, case.col)
    if not (start <= at and (at < end or start == end == at)):
        return (f"span {span.line}:{span.col}-{span.end_line}:{span.end_col} does not cover "
                f"{case.line}:{case.col}; message: {message[:120]}")
    if not re.search(case.expect, message, re.IGNORECASE):
        return f"message {message[:160]!r} matches none of {case.expect!r}"
    return None


ALL = cases()
KNOWN = known_failures()


def test_corpus_size() -> None:
    assert len(ALL) >= 150
    assert not set(KNOWN) - {c.name for c in ALL}, "known_failures.txt names unknown cases"


@needs_parser
@pytest.mark.parametrize(
    "case",
    [pytest.param(c, id=c.name, marks=[pytest.mark.xfail(reason=KNOWN[c.name], strict=True)]
                  if c.name in KNOWN else []) for c in ALL],
)
def test_hostile_case(case: Case) -> None:
    problem = check(case)
    assert problem is None, problem


@needs_parser
def test_pass_rate_report(capsys: pytest.CaptureFixture[str]) -> None:
    failed = {c.name: p for c in ALL if (p := check(c)) is not None}
    rate = 100.0 * (len(ALL) - len(failed)) / len(ALL)
    with capsys.disabled():
        print(f"\nhostile corpus: {len(ALL)} cases, {len(ALL) - len(failed)} pass "
              f"({rate:.1f}%), {len(failed)} known failures")
    assert set(failed) == set(KNOWN), {
        "new failures": sorted(set(failed) - set(KNOWN)),
        "fixed (remove from known_failures.txt)": sorted(set(KNOWN) - set(failed)),
    }


_SUBPROCESS_CASES = ["deep_95_loops_undefined", "deep_sum_10000", "deep_unary_5000",
                     "pysyntax_nested_calls_2000", "pysyntax_deep_parens",
                     "deep_long_line_100k_chars"]


@needs_parser
@pytest.mark.parametrize("name", _SUBPROCESS_CASES)
def test_no_crash_in_a_fresh_process(name: str) -> None:
    code = (
        "import sys, tvmscript\n"
        "text = open(sys.argv[1], encoding='utf-8').read()\n"
        "try:\n    tvmscript.from_source(text)\n"
        "except tvmscript.DiagnosticError:\n    print('DIAGNOSTIC')\n"
        "except BaseException as e:\n    print('OTHER', type(e).__name__)\n"
        "else:\n    print('NOERROR')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code, str(CORPUS / f"{name}.tvms")],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, f"exit {proc.returncode}: {proc.stderr[-500:]}"
    assert (proc.stdout.strip() in ("DIAGNOSTIC", "OTHER RecursionError", "NOERROR") and \
        "DIAGNOSTIC" in proc.stdout) or name in KNOWN, proc.stdout
