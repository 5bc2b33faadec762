"""Compatibility corpus: TVMScript texts written in TVM 0.13-0.16 spellings.

Each ``programs/*.py`` is a self-contained text (with TVM's ``from tvm.script import
tir as T`` line); every one must parse with :func:`tvmscript.from_source`, print, parse
back to a structurally equal function or module, and print the same text again.
``KNOWN_GAPS`` lists the programs that use constructs we do not support (xfail, with
the reason); the pass rate over the corpus is printed and must stay at least 95%.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from irbuilder.ir import IRModule, PrimFunc, assert_structural_equal
from tvmscript import from_source

PROGRAMS = sorted((Path(__file__).parent / "programs").glob("p*.py"))

KNOWN_GAPS: dict[str, str] = {}


def _round_trip(path: Path) -> PrimFunc | IRModule:
    text = path.read_text()
    first = from_source(text, filename=str(path))
    printed = first.script()
    second = from_source(printed)
    assert_structural_equal(first, second)
    assert second.script() == printed, "printing is not stable"
    return first


def _cases() -> list[object]:
    cases: list[object] = []
    for path in PROGRAMS:
        reason = KNOWN_GAPS.get(path.stem)
        marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
        cases.append(pytest.param(path, id=path.stem, marks=marks))
    return cases


def test_corpus_is_large_enough() -> None:
    assert len(PROGRAMS) >= 60
    assert set(KNOWN_GAPS) <= {p.stem for p in PROGRAMS}


@pytest.mark.parametrize("path", _cases())
def test_round_trip(path: Path) -> None:
    result = _round_trip(path)
    assert isinstance(result, (PrimFunc, IRModule))


def test_pass_rate() -> None:
    passed, failures = 0, []
    for path in PROGRAMS:
        try:
            _round_trip(path)
            passed += 1
        except Exception as err:
            failures.append(f"{path.stem}: {type(err).__name__}: {str(err)[:200]}")
    rate = passed / len(PROGRAMS)
    print(f"\ncompat corpus: {passed}/{len(PROGRAMS)} round-trip ({rate:.1%})")
    for line in failures:
        print("  FAIL", line)
    assert {line.split(":")[0] for line in failures} <= set(KNOWN_GAPS)
    assert rate >= 0.95
