"""Every file or folder ARCHITECTURE.md names in backticks exists, so the map cannot go stale.

A token is a path when it has a ``/`` or ends in ``.py``/``.md`` (``::name`` suffixes are
dropped). Paths starting with a top-level folder are taken from the repository root; others
(``parser/core``, ``distribute.py`` after ``lowering/late/``) from the folder of the last
rooted path on the same line. ``*`` globs must match something.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "ARCHITECTURE.md"
TOP = (
    "irbuilder/", "lowering/", "backend/", "tvmscript/", "tests/", "docs/", "benchmarks/",
    "examples/", ".ci/",
)
TOKEN = re.compile(r"`([^`\s]+)`")
PATHLIKE = re.compile(r"^[\w.*/-]+$")


def _is_path(token: str) -> bool:
    if not PATHLIKE.match(token) or (token.startswith(("/", ".")) and not token.startswith(TOP)):
        return False
    return "/" in token or token.endswith((".py", ".md"))


def _exists(path: Path) -> bool:
    if "*" in path.name:
        return any(path.parent.glob(path.name))
    return path.exists()


def _named_paths() -> list[tuple[int, str, Path]]:
    found = []
    for number, line in enumerate(DOC.read_text().splitlines(), 1):
        base = ROOT
        for token in TOKEN.findall(line):
            token = token.split("::")[0]
            if not _is_path(token):
                continue
            if token.startswith(TOP):
                path = ROOT / token
                base = path if token.endswith("/") else path.parent
            else:
                path = base / token
            found.append((number, token, path))
    return found


def test_the_doc_names_paths() -> None:
    named = _named_paths()
    assert len(named) > 50
    for folder in ("lowering/transforms/", "lowering/late/", "lowering/abi/", "backend/abi/",
                   "tvmscript/compiler/"):
        assert any(token == folder for _, token, _ in named), folder


@pytest.mark.parametrize("line, token, path", _named_paths(), ids=lambda v: str(v))
def test_named_path_exists(line: int, token: str, path: Path) -> None:
    assert _exists(path), f"ARCHITECTURE.md:{line}: `{token}` ({path.relative_to(ROOT)}) missing"


def test_every_lowering_module_is_on_the_map() -> None:
    text = DOC.read_text()
    for module in sorted((ROOT / "lowering").glob("*/*.py")):
        if module.name == "__init__.py" or module.parent.name in ("analysis", "arith", "schedule"):
            continue
        assert f"`{module.name}`" in text or f"{module.relative_to(ROOT)}" in text, module


def test_the_pipeline_table_is_pipeline_order() -> None:
    from lowering.pipeline import PIPELINE_ORDER

    rows = re.findall(r"^\| \d+ \| `(\w+)` \|", DOC.read_text(), re.M)
    assert tuple(rows) == PIPELINE_ORDER
