"""Time every variant of the strong TVM and numba twins, check it against numpy, and say
which is fastest (the suite uses ``CHOICE`` in ``_tvm_strong.py`` / ``_numba_strong.py``).

    /work/peers/bin/python benchmarks/peer_variants.py [--rounds 3] [--only rowsum,gather]
        [--peer tvm|numba|both]

Variants of one kernel are timed interleaved, ``--rounds`` times, best kept, with a pause
before each so the previous runner's threads have gone idle.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from collections.abc import Callable
from typing import Any

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import numpy as np

from benchmarks.peers import make_inputs, numpy_kernels
from benchmarks.suite import best_time, check


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--only", default="")
    parser.add_argument("--peer", default="both", choices=("tvm", "numba", "both"))
    parser.add_argument("--settle", type=float, default=0.2)
    args = parser.parse_args()
    ref = make_inputs()
    numpy_run = numpy_kernels(ref)
    only = set(args.only.split(",")) if args.only else None
    tables: dict[str, tuple[dict[str, dict[str, Any]], dict[str, str], Callable[..., Any]]] = {}
    if args.peer in ("tvm", "both"):
        import tvm
        from tvm.script import tirx as T

        from benchmarks import _tvm_strong

        tables["tvm"] = (_tvm_strong.tvm_strong_variants(tvm, T), _tvm_strong.CHOICE,
                         lambda f, arrays: _tvm_strong.compile_runner(tvm, f, arrays))
    if args.peer in ("numba", "both"):
        from benchmarks import _numba_strong

        def numba_runner(fn: Any, arrays: dict[str, np.ndarray]) -> Callable[[], Any]:
            a = tuple(arrays.values())
            fn(*a)
            return lambda: fn(*a)

        tables["numba"] = (_numba_strong.numba_strong_variants(), _numba_strong.CHOICE, numba_runner)
    for peer, (variants, choice, make) in tables.items():
        for name, funcs in variants.items():
            if only is not None and name not in only:
                continue
            runners: dict[str, Callable[[], Any]] = {}
            inputs = make_inputs()
            for label, func in funcs.items():
                try:
                    runners[label] = make(func, inputs[name])
                except Exception as err:  # a variant the peer refuses is reported
                    print(f"{peer} {name} {label}: build failed: {str(err).splitlines()[0][:150]}")
            numpy_run[name]()
            best = {label: math.inf for label in runners}
            ok = {}
            for label, run in runners.items():
                run()
                ok[label] = check(name, inputs[name], ref[name])
            repeat = 1 if name == "matmul_naive" else args.repeat
            for _ in range(args.rounds):
                for label, run in runners.items():
                    time.sleep(args.settle)
                    best[label] = min(best[label], best_time(run, repeat))
            valid = [(t, label) for label, t in best.items() if ok[label]]
            fastest = min(valid)[1] if valid else "-"
            cells = "  ".join(f"{label}={best[label] * 1e3:.2f}{'' if ok[label] else '(WRONG)'}"
                              for label in runners)
            mark = "" if fastest == choice[name] else f"  <- CHOICE is {choice[name]}"
            print(f"{peer:<6} {name:<13} {cells}  fastest: {fastest}{mark}", flush=True)


if __name__ == "__main__":
    main()
