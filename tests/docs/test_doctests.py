"""Every example in the documentation runs: ``>>>`` lines in ``docs/**/*.md`` and in the
docstrings of the library's modules are doctests.

A Markdown file is one test (its ```python blocks, or blocks without a language, share one
namespace, in order; ```text/```console blocks are transcripts, not run); a module
with ``>>>`` examples in its docstrings is one test. Docstring examples may use ``np``,
``tvmscript``, ``T`` and ``I`` without importing them. A failure shows the file, the line
and the example, as ``python -m doctest`` does.
"""

from __future__ import annotations

import doctest
import importlib
import io
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PACKAGES = ("irbuilder", "tvmscript", "lowering", "backend")
OPTIONS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE

# Fenced blocks whose ``>>>`` lines run; a ```text or ```console block shows a transcript
# that is not run.
RUN_LANGUAGES = frozenset({"", "python", "py", "pycon", "python3", "doctest"})
_FENCE = re.compile(r"^\s*(```+|~~~+)\s*([\w+-]*)")


def markdown_files() -> list[Path]:
    return sorted(DOCS.rglob("*.md"))


def fenced_blocks(text: str) -> list[tuple[int, str, str]]:
    """(0-based line of the block's first line, info string, block text) of each fenced
    code block."""
    blocks: list[tuple[int, str, str]] = []
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        opening = _FENCE.match(lines[index])
        if opening is None:
            index += 1
            continue
        fence = opening.group(1)
        start = index + 1
        index = start
        while index < len(lines) and not lines[index].strip().startswith(fence):
            index += 1
        blocks.append((start, opening.group(2).lower(), "\n".join(lines[start:index]) + "\n"))
        index += 1
    return blocks


def markdown_doctest(path: Path) -> doctest.DocTest:
    parser = doctest.DocTestParser()
    examples: list[doctest.Example] = []
    for first_line, language, block in fenced_blocks(path.read_text(encoding="utf-8")):
        if language not in RUN_LANGUAGES or ">>>" not in block:
            continue
        for example in parser.get_examples(block, name=str(path)):
            example.lineno += first_line
            examples.append(example)
    name = str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else path.name
    return doctest.DocTest(examples, {"__name__": "__doctest__"}, name, str(path), 0, None)


def modules_with_examples() -> list[str]:
    names: list[str] = []
    for package in PACKAGES:
        for source in sorted((ROOT / package).rglob("*.py")):
            if ">>>" not in source.read_text(encoding="utf-8"):
                continue
            parts = list(source.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            names.append(".".join(parts))
    return names


def docstring_globals() -> dict[str, object]:
    """What every docstring example may use without importing it (as numpy's ``np``)."""
    import numpy as np

    import tvmscript
    from tvmscript import ir as I
    from tvmscript import tir as T

    return {"__name__": "__doctest__", "np": np, "tvmscript": tvmscript, "T": T, "I": I}


def run(tests: list[doctest.DocTest]) -> tuple[int, str]:
    """Run ``tests``; return the number of examples and the failure report ('' if none)."""
    out = io.StringIO()
    runner = doctest.DocTestRunner(optionflags=OPTIONS)
    attempted = 0
    for test in tests:
        result = runner.run(test, out=out.write, clear_globs=True)
        attempted += result.attempted
    return attempted, out.getvalue() if runner.failures else ""


@pytest.mark.parametrize(
    "path", markdown_files(), ids=lambda p: str(p.relative_to(DOCS))
)
def test_markdown_examples_run(path: Path) -> None:
    _, report = run([markdown_doctest(path)])
    if report:
        pytest.fail(f"doctest failures in {path.relative_to(ROOT)}:\n{report}", pytrace=False)


@pytest.mark.parametrize("module_name", modules_with_examples())
def test_docstring_examples_run(module_name: str) -> None:
    module = importlib.import_module(module_name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    tests = finder.find(module, module_name, globs=docstring_globals())
    attempted, report = run(tests)
    assert attempted > 0, f"{module_name} has '>>>' but no example was found in a docstring"
    if report:
        pytest.fail(f"doctest failures in {module_name}:\n{report}", pytrace=False)


def test_markdown_collector_sees_every_example(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "text\n```python\n>>> x = 2\n>>> x + 1\n3\n```\n\n```\n>>> x * 2\n5\n```\n"
        "```text\n>>> not run\n```\n",
        encoding="utf-8",
    )
    test = markdown_doctest(page)
    assert [e.source for e in test.examples] == ["x = 2\n", "x + 1\n", "x * 2\n"]
    assert [e.lineno for e in test.examples] == [2, 3, 8]
    attempted, report = run([test])
    assert attempted == 3
    assert f'File "{page}", line 9' in report and "Expected:\n    5\nGot:\n    4" in report
