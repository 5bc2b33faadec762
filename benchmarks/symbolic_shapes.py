"""Static vs symbolic shapes: each kernel of ``kernels.py`` and its twin with symbolic
dimensions (``symbolic_kernels.py``), at the static sizes, in one process.

Prints the host CPU, per kernel the best time of each and ``symbolic / static`` (1.0 means
symbolic shapes cost nothing), after checking both give the same result.

    python benchmarks/symbolic_shapes.py [--repeat 5] [--only matmul_naive,rowsum]
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
import time
from collections.abc import Callable
from typing import Any

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import numpy as np

from benchmarks.kernels import KERNELS
from benchmarks.peers import make_inputs
from benchmarks.symbolic_kernels import SYMBOLIC_KERNELS


def best_time(fn: Callable[[], Any], repeat: int) -> float:
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    import tvmscript
    from lowering.target import Target

    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--only", default="")
    args = parser.parse_args()
    names = [n for n in SYMBOLIC_KERNELS if not args.only or n in args.only.split(",")]
    print(f"# host CPU: {Target.host().mcpu}")
    print(f"{'kernel':14s} {'static ms':>10s} {'symbolic ms':>12s} {'sym/static':>10s}")
    all_inputs = make_inputs()
    for name in names:
        inputs = all_inputs[name]
        static = tvmscript.build(KERNELS[name])
        symbolic = tvmscript.build(SYMBOLIC_KERNELS[name])
        a = {k: v.copy() for k, v in inputs.items()}
        b = {k: v.copy() for k, v in inputs.items()}
        static(*a.values())
        symbolic(*b.values())
        out = list(a)[-1]
        same = np.allclose(a[out], b[out], rtol=1e-4, atol=1e-4)
        repeat = 1 if name == "matmul_naive" else args.repeat
        t_static = best_time(functools.partial(static, *a.values()), repeat)
        t_symbolic = best_time(functools.partial(symbolic, *b.values()), repeat)
        flag = "" if same else "  MISMATCH"
        print(
            f"{name:14s} {t_static * 1e3:10.2f} {t_symbolic * 1e3:12.2f} "
            f"{t_symbolic / t_static:10.2f}{flag}"
        )


if __name__ == "__main__":
    main()
