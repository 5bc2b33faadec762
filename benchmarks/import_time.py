"""Measure (and print, never assert) ``import tvmscript`` and the time to a first kernel.

    python benchmarks/import_time.py [--runs 9] [--root PATH]

Each run is a fresh interpreter. ``import`` is what ``python -X importtime -c "import
tvmscript"`` reports for the package (cumulative, so numpy is included; numpy alone is measured
the same way for reference). ``first kernel`` is wall time from interpreter start of the script
to the first result of a small kernel: import, parse, build (no disk cache) and call. Medians
are printed; the machine may be shared, so compare runs taken side by side.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import textwrap
import time
from pathlib import Path

_FIRST_KERNEL = textwrap.dedent(
    """
    import time
    t0 = time.perf_counter()
    import numpy as np
    import tvmscript
    from tvmscript import tir as T

    @T.prim_func
    def add(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32"),
            C: T.Buffer((64,), "float32")):
        for i in range(64):
            C[i] = A[i] + B[i]

    a = np.ones(64, "float32"); c = np.zeros(64, "float32")
    tvmscript.build(add, cache=False)(a, a, c)
    assert (c == 2).all()
    print(time.perf_counter() - t0)
    """
)


def _importtime(module: str, root: Path) -> float:
    env = {**os.environ, "PYTHONPATH": str(root)}
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", f"import {module}"],
        capture_output=True, text=True, env=env, check=True,
    )
    for line in done.stderr.splitlines():
        fields = line.split("|")
        # Match the name only: the nesting (and self times) printed while another thread
        # imports too (the JIT prewarm) are shifted, the cumulative time is right.
        if len(fields) == 3 and fields[2].strip() == module:
            return int(fields[1]) / 1e6
    raise RuntimeError(f"no importtime line for {module}")


def _first_kernel(root: Path, script: Path) -> float:
    env = {**os.environ, "PYTHONPATH": str(root), "TVMSCRIPT_CACHE": "0"}
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, env=env, check=True
    )
    return float(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[1])
    args = parser.parse_args()
    root = args.root.resolve()
    script = root / ".first_kernel_bench.py"  # the parser reads kernels from a real file
    script.write_text(_FIRST_KERNEL)
    samples: dict[str, list[float]] = {"numpy": [], "tvmscript": [], "first kernel": []}
    start = time.perf_counter()
    try:
        for _ in range(args.runs):  # interleaved, so a load burst hits all three alike
            samples["numpy"].append(_importtime("numpy", root))
            samples["tvmscript"].append(_importtime("tvmscript", root))
            samples["first kernel"].append(_first_kernel(root, script))
    finally:
        script.unlink()
    for label, values in samples.items():
        shown = ", ".join(f"{v:.3f}" for v in sorted(values))
        print(f"{label:14s} median {statistics.median(values):.3f} s   ({shown})")
    print(f"(root {root}, {args.runs} runs, {time.perf_counter() - start:.1f} s)")


if __name__ == "__main__":
    main()
