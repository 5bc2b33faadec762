"""The language reference (docs/reference/) names every public construct of ``T`` and ``I``,
and the docstrings behind ``help(T.<name>)`` document parameters and show an example."""

from __future__ import annotations

import pydoc
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tvmscript import ir as I
from tvmscript import tir as T

REFERENCE = Path(__file__).resolve().parents[2] / "docs" / "reference"

# Names T and I import for their own use: not constructs of the language.
NOT_CONSTRUCTS = {
    "Any": "typing.Any, imported for annotations",
    "Mapping": "collections.abc, imported for annotations",
    "Sequence": "collections.abc, imported for annotations",
    "TYPE_CHECKING": "typing flag, imported for annotations",
    "annotations": "the __future__ feature",
    "builtins": "the builtins module (tir.py names builtins.bool beside T.bool)",
    "inspect": "the inspect module, used by T.compute",
}

# T.float32x4 and friends: one family per scalar type, documented as `T.<type>x<lanes>`.
VECTOR_TYPE = re.compile(r"^(?P<base>[a-z0-9_]+?)x(?P<lanes>2|4|8|16|32|64)$")
SCHEDULE_NAMES = ("BlockRV", "ExprRV", "IndexMap", "LoopRV", "Schedule", "ScheduleError", "Trace")
AXIS_NAMES = ("spatial", "reduce", "scan", "opaque", "remap", "S", "R", "C", "O")


def reference_text() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in sorted(REFERENCE.glob("*.md")))


def mentioned(text: str, qualified: str) -> bool:
    return re.search(re.escape(qualified) + r"(?![\w])", text) is not None


def public(namespace: Any) -> list[str]:
    return sorted(n for n in dir(namespace) if not n.startswith("_") and n not in NOT_CONSTRUCTS)


def test_every_t_name_is_in_the_reference() -> None:
    text = reference_text()
    names = sorted(set(public(T)) | set(SCHEDULE_NAMES))
    missing = []
    for name in names:
        vector = VECTOR_TYPE.match(name)
        if vector and vector["base"] in names:
            covered = mentioned(text, f"T.{vector['base']}") and "T.<type>x<lanes>" in text
        else:
            covered = mentioned(text, f"T.{name}")
        if not covered:
            missing.append(f"T.{name}")
    missing += [f"T.axis.{n}" for n in AXIS_NAMES if not mentioned(text, f"T.axis.{n}")]
    assert not missing, f"not in docs/reference/: {', '.join(missing)}"


def test_every_i_name_is_in_the_reference() -> None:
    text = reference_text()
    missing = [f"I.{n}" for n in public(I) if not mentioned(text, f"I.{n}")]
    assert not missing, f"not in docs/reference/: {', '.join(missing)}"


def test_excluded_names_are_really_imports() -> None:
    for name in NOT_CONSTRUCTS:
        if hasattr(T, name):
            value = getattr(T, name)
            assert getattr(value, "__module__", "") not in ("tvmscript.tir", "irbuilder.tir"), name


def test_a_missing_name_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(T, "undocumented_construct", lambda: None, raising=False)
    with pytest.raises(AssertionError, match=r"T\.undocumented_construct"):
        test_every_t_name_is_in_the_reference()
