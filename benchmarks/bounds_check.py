"""The cost of ``bounds_check=True`` on the suite's kernels: checked time / unchecked time.

Both builds of each kernel run on the same inputs, interleaved over several rounds (best
of each kept), and their outputs are compared. The goal (issue: checked builds are cheap)
is a ratio of at most 1.5 on every kernel.

    python benchmarks/bounds_check.py [--rounds 5] [--repeat 3] [--only vadd,rowsum]
"""

from __future__ import annotations

import argparse
import functools
import math
import os
import platform
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import numpy as np

from benchmarks.kernels import KERNELS
from benchmarks.peers import make_inputs
from benchmarks.suite import best_time

SLOW = {"matmul_naive"}  # seconds per call unchecked: left out unless --only names it


def main() -> None:
    import llvmlite.binding as llvm

    import tvmscript

    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", default="")
    args = parser.parse_args()
    only = set(args.only.split(",")) if args.only else set(KERNELS) - SLOW
    print(f"# host CPU: {llvm.get_host_cpu_name()} ({platform.machine()}), "
          f"{os.cpu_count()} cores")
    print(f"{'kernel':<16} {'unchecked ms':>13} {'checked ms':>11} {'ratio':>7}")
    ratios = []
    for name, func in KERNELS.items():
        if name not in only:
            continue
        inputs = {label: make_inputs()[name] for label in ("plain", "checked")}
        runners = {
            label: functools.partial(tvmscript.build(func, bounds_check=label == "checked"),
                                     *inputs[label].values())
            for label in inputs
        }
        best = {label: math.inf for label in runners}
        for _ in range(args.rounds):
            for label, run in runners.items():
                time.sleep(0.1)
                best[label] = min(best[label], best_time(run, args.repeat))
        outs = [list(inputs[label].values())[-1] for label in inputs]
        same = np.allclose(outs[0], outs[1], rtol=1e-5, atol=1e-5, equal_nan=True)
        ratio = best["checked"] / best["plain"]
        ratios.append(ratio)
        print(f"{name:<16} {best['plain'] * 1e3:>13.2f} {best['checked'] * 1e3:>11.2f} "
              f"{ratio:>7.2f}{'' if same else '  OUTPUTS DIFFER'}")
    if ratios:
        geomean = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        print(f"worst ratio {max(ratios):.2f}, geomean {geomean:.2f} (goal: every ratio <= 1.5)")


if __name__ == "__main__":
    main()
