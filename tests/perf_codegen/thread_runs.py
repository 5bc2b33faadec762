"""Run a snippet in fresh interpreters with different thread-pool sizes: reductions whose
order is fixed must print the same bits with 1 and 2 threads."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

_ROOT = str(Path(__file__).resolve().parent.parent.parent)
_HERE = str(Path(__file__).resolve().parent)


def printed_with_threads(snippet: str, threads: tuple[str, ...] = ("1", "2")) -> list[str]:
    """What ``snippet`` prints (stripped) under each ``TVMSCRIPT_NUM_THREADS``; it may
    import this folder's test modules."""
    script = f"import sys\nsys.path.insert(0, {_HERE!r})\n" + textwrap.dedent(snippet)
    outs = []
    for count in threads:
        env = {**os.environ, "TVMSCRIPT_NUM_THREADS": count, "PYTHONPATH": _ROOT}
        run = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                             text=True, timeout=120, check=True)
        outs.append(run.stdout.strip())
    return outs
