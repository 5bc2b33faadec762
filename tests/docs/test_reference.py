"""The language reference (docs/reference/) names every public construct of ``T`` and ``I``,
and the docstrings behind ``help(T.<name>)`` document parameters and show an example."""

from __future__ import annotations

import inspect
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


# A sample of the T.*/I.* functions users reach first: ``help(T.<name>)`` shows a numpy-style
# docstring with parameters and a doctested example (run by tests/docs/test_doctests.py).
DOCUMENTED: dict[str, Callable[..., Any]] = {
    "T.prim_func": T.prim_func,
    "T.grid": T.grid,
    "T.serial": T.serial,
    "T.parallel": T.parallel,
    "T.vectorized": T.vectorized,
    "T.unroll": T.unroll,
    "T.thread_binding": T.thread_binding,
    "T.block": T.block,
    "T.axis.spatial": T.axis.spatial,
    "T.axis.reduce": T.axis.reduce,
    "T.axis.remap": T.axis.remap,
    "T.init": T.init,
    "T.reads": T.reads,
    "T.writes": T.writes,
    "T.where": T.where,
    "T.block_attr": T.block_attr,
    "T.Buffer": T.Buffer,
    "T.alloc_buffer": T.alloc_buffer,
    "T.match_buffer": T.match_buffer,
    "T.decl_buffer": T.decl_buffer,
    "T.allocate": T.allocate,
    "T.allocate_const": T.allocate_const,
    "T.If": T.If,
    "T.Assert": T.Assert,
    "T.LetStmt": T.LetStmt,
    "T.evaluate": T.evaluate,
    "T.buffer_store": T.buffer_store,
    "T.func_attr": T.func_attr,
    "T.compute": T.compute,
    "T.reduce_axis": T.reduce_axis,
    "T.sum": T.sum,
    "T.cast": T.cast,
    "T.if_then_else": T.if_then_else,
    "T.floordiv": T.floordiv,
    "T.call_extern": T.call_extern,
    "T.exp": T.exp,
    "T.popcount": T.popcount,
    "T.macro": T.macro,
    "T.meta_var": T.meta_var,
    "T.ret": T.ret,
    "I.ir_module": I.ir_module,
    "I.module_attrs": I.module_attrs,
}


@pytest.mark.parametrize("name", sorted(DOCUMENTED))
def test_help_shows_parameters_and_an_example(name: str) -> None:
    function = DOCUMENTED[name]
    text = pydoc.render_doc(function, renderer=pydoc.plaintext)
    takes_arguments = not callable(function) or bool(inspect.signature(function).parameters)
    section = "Parameters" if takes_arguments else "Returns"
    assert re.search(section + r"\n[ |]*-{7,}\n", text), f"help({name}) has no {section} section"
    assert ">>> " in text, f"help({name}) shows no example"


def _slug(heading: str) -> str:
    """GitHub's anchor of a Markdown heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    headings = re.findall(r"^#+ (.+)$", page.read_text(encoding="utf-8"), flags=re.MULTILINE)
    return {_slug(h) for h in headings}


def test_reference_links_resolve() -> None:
    broken = []
    for page in sorted(REFERENCE.glob("*.md")):
        text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.DOTALL)
        text = re.sub(r"`[^`\n]*`", "", text)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            linked = (page.parent / path).resolve() if path else page
            if not linked.exists():
                broken.append(f"{page.name}: {target} (no file)")
            elif anchor and linked.suffix == ".md" and anchor not in _anchors(linked):
                broken.append(f"{page.name}: {target} (no heading)")
    assert not broken, "broken links:\n" + "\n".join(broken)
