"""The README's 20-line tour runs as written: extracted, saved to a file (``@T.prim_func``
reads its function's source) and run in a fresh interpreter."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOUR_HEADING = "## A 20-line tour"


def tour_code() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index(TOUR_HEADING):]
    match = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert match is not None, "the tour section has no ```python block"
    return match.group(1)


def test_the_readme_commands_come_first() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    first_blocks = re.findall(r"```\n(.*?)```", readme, re.DOTALL)[:2]
    assert "examples/quickstart.py" in first_blocks[0]
    assert "-m pytest" in first_blocks[1]
    assert readme.index(TOUR_HEADING) > readme.index(first_blocks[1])


def test_the_tour_is_at_most_20_lines() -> None:
    assert len(tour_code().strip().splitlines()) <= 20


def test_the_tour_runs_and_shows_each_step(tmp_path: Path) -> None:
    script = tmp_path / "tour.py"
    script.write_text(tour_code(), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
        timeout=120, check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "@T.prim_func\ndef scaled_add(" in out  # printed as TVMScript
    assert "T.func_attr({\"entry_checked\": True})" in out  # the lowered IR
    assert out.rstrip().endswith("C: expected shape[0] == 1024, got 1000")  # the checked call
