"""Round trip: ``from_source(f.script())`` is structurally equal to ``f``.

Walks the printer corpus (``CORPUS`` and ``MODULES``), the kernels marked in
:mod:`kernels` and :mod:`meta_kernels`, and every kernel recorded while the parser tests
ran (this file sorts last, so the others have run when the whole directory is tested).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest

import tvmscript
from irbuilder.ir import IRModule, PrimFunc
from tvmscript.ir import assert_structural_equal

from . import kernels, meta_kernels  # noqa: F401  (mark their kernels)
from .registry import MARKED, RECORDED


def _load_corpus() -> Any:
    # The printer's corpus lives in another test package; load it by path.
    name = "tests_printer_corpus"
    if name in sys.modules:
        return sys.modules[name]
    path = Path(__file__).resolve().parent.parent / "printer" / "corpus.py"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


_corpus = _load_corpus()
CORPUS: dict[str, Any] = _corpus.CORPUS
MODULES: dict[str, Any] = _corpus.MODULES

# Cases that cannot round-trip, each with the reason.
XFAIL: dict[str, str] = {}


def _check(node: PrimFunc | IRModule, *, map_free_vars: bool = False) -> None:
    text = node.script()
    parsed = tvmscript.from_source(text)
    assert_structural_equal(node, parsed, map_free_vars=map_free_vars)
    assert parsed.script() == text  # printing is stable across the round trip


def _params(table: dict[str, Any]) -> list[Any]:
    out = []
    for name in sorted(table):
        marks = [pytest.mark.xfail(reason=XFAIL[name], strict=True)] if name in XFAIL else []
        out.append(pytest.param(name, marks=marks, id=name))
    return out


@pytest.mark.parametrize("name", _params(CORPUS))
def test_corpus_roundtrip(name: str) -> None:
    _check(CORPUS[name]())


@pytest.mark.parametrize("name", _params(MODULES))
def test_module_corpus_roundtrip(name: str) -> None:
    _check(MODULES[name]())


@pytest.mark.parametrize("name", sorted(MARKED))
def test_marked_kernels_roundtrip(name: str) -> None:
    _check(MARKED[name])


def test_recorded_kernels_roundtrip() -> None:
    assert RECORDED, "no kernel was recorded"
    failures = []
    for label, node in RECORDED:
        try:
            # Kernels of other test directories may be deliberately ill-formed (a view over
            # a data pointer defined nowhere): their free variables are new after parsing.
            _check(node, map_free_vars=True)
        except Exception as err:  # collect all, report together
            failures.append(f"{label}: {type(err).__name__}: {str(err)[:300]}")
    assert not failures, "\n".join(failures)
