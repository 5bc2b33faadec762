"""Every corpus, example and benchmark kernel lowers with the verifier after every pass."""

from __future__ import annotations

import importlib
import importlib.util
import runpy
import sys
from pathlib import Path
from typing import Any

import pytest

import lowering
import tvmscript  # noqa: F401  (installs the parser for the example and benchmark kernels)
from irbuilder.ir import PrimFunc

ROOT = Path(__file__).resolve().parents[2]


def _load(path: Path, name: str) -> Any:
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


CORPUS: dict[str, Any] = _load(
    ROOT / "tests" / "printer" / "corpus.py", "tests_printer_corpus"
).CORPUS


def _example_kernels() -> dict[str, PrimFunc]:
    found: dict[str, PrimFunc] = {}
    examples = str(ROOT / "examples")
    sys.path.insert(0, examples)  # as when run as scripts: they import their helper module
    try:
        for path in sorted((ROOT / "examples").glob("*.py")):
            namespace = runpy.run_path(str(path), run_name="not_main")
            for key, value in namespace.items():
                if isinstance(value, PrimFunc):
                    found[f"{path.stem}.{key}"] = value
    finally:
        sys.path.remove(examples)
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    kernels = importlib.import_module("benchmarks.kernels")
    for key, value in kernels.KERNELS.items():
        found[f"benchmarks.{key}"] = value
    # Both host-dependent matmul schedules, whichever this host picks.
    found["benchmarks.matmul_tiled_in_place"] = kernels._matmul_tiled_in_place
    found["benchmarks.matmul_tiled_packed"] = kernels._matmul_tiled_packed
    return found


@pytest.mark.parametrize("name", sorted(CORPUS))
@pytest.mark.parametrize("opt_level", [0, 3])
def test_corpus_lowers_and_verifies_after_every_pass(name: str, opt_level: int) -> None:
    lowered = lowering.lower(CORPUS[name](), opt_level=opt_level, verify_each=True)
    lowering.verify_well_formed(lowered, lowered=True)


EXAMPLES = _example_kernels()


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_example_and_benchmark_kernels_lower_and_verify(name: str) -> None:
    lowered = lowering.lower(EXAMPLES[name], verify_each=True)
    lowering.verify_well_formed(lowered, lowered=True)
