"""Every example runs as ``python examples/NAME.py``, checks itself against numpy and reports
its time beside numpy's."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted(p for p in (ROOT / "examples").glob("*.py") if not p.name.startswith("_"))


def test_the_examples_are_found() -> None:
    names = {p.stem for p in EXAMPLES}
    assert {"vector_add", "matmul", "softmax", "layernorm", "conv2d", "pooling",
            "broadcast_add", "nms_boxes", "irbuilder_kernel", "compute_chain",
            "export_c"} <= names


@pytest.mark.parametrize("example", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_runs_and_checks_itself(example: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, str(example)], cwd=ROOT, env=env, capture_output=True, text=True,
        timeout=120, check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    if example.stem == "quickstart":
        assert "matmul matches numpy" in done.stdout
        return
    if done.stdout.startswith("skipped:"):
        pytest.skip(done.stdout.strip())
    assert "match" in done.stdout  # each example states what it checked against numpy
    assert "numpy" in done.stdout.splitlines()[-1]  # and ends with its time beside numpy's
