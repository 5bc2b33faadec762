"""The kernel suite, side by side in one process: tvmscript, numpy, TVM 0.27 and numba.

Run it with an interpreter where the peers are importable, e.g. a venv outside the
project made with ``pip install apache-tvm==0.27.0.post1 numba numpy llvmlite
typing_extensions`` (the project root is put on ``sys.path``); peers that are not
importable are skipped. Prints, per kernel, the best time of each and the ratio ``peer / ours`` (> 1
means we are faster), then the geomean of ``best peer / ours`` over the suite.

    python benchmarks/suite.py [--repeat 5] [--rounds 5] [--settle 0.25] [--only vadd,fused]
"""

from __future__ import annotations

import argparse
import functools
import math
import os
import sys
import time
from collections.abc import Callable
from typing import Any

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import numpy as np

try:  # the TVMScript sources; the IRBuilder twins while the parser is unfinished
    from benchmarks.kernels import KERNELS
except Exception as err:
    print(f"# benchmarks/kernels.py unavailable ({type(err).__name__}); using ib_kernels")
    from benchmarks.ib_kernels import KERNELS
from benchmarks.peers import make_inputs, numba_kernels, numpy_kernels, tvm_kernels
from benchmarks.schedule import benchmark_target

SLOW = {"matmul_naive"}


def best_time(fn: Callable[[], Any], repeat: int) -> float:
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def check(name: str, ours: dict[str, np.ndarray], ref: dict[str, np.ndarray]) -> bool:
    out = list(ours)[-1]
    a, b = ours[out], ref[out]
    if name == "stencil":
        a, b = a[1:-1, 1:-1], b[1:-1, 1:-1]
    return bool(np.allclose(a, b, rtol=1e-3, atol=1e-3))


def main() -> None:
    import tvmscript

    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--only", default="")
    parser.add_argument(
        "--rounds", type=int, default=5,
        help="interleave ours and every peer this many times and keep each one's best "
        "(evens out bursts of load on a shared machine)",
    )
    parser.add_argument(
        "--settle", type=float, default=0.25,
        help="seconds to pause before timing each runner, so the previous runner's thread "
        "pool (ours, TVM's, numba's, OpenBLAS's) has stopped spinning on the shared cores "
        "(OpenBLAS's spin for 0.1-0.2 s after a call: the tiled matmul run 0.05 s after "
        "numpy's sgemm measured 35%% slower than 0.2 s after it)",
    )
    args = parser.parse_args()
    only = set(args.only.split(",")) if args.only else set(KERNELS)

    ours_in = make_inputs()
    ref_in = make_inputs()
    peers: dict[str, dict[str, Callable[[], Any]]] = {"numpy": numpy_kernels(ref_in)}
    for label, factory in (("tvm", tvm_kernels), ("numba", numba_kernels)):
        try:
            peers[label] = factory(make_inputs())
        except Exception as err:  # a peer failing to build is reported, not fatal
            print(f"# {label} unavailable: {err!r}"[:200])
            peers[label] = {}
    for label, runners in peers.items():
        if not runners:
            print(f"# {label}: not importable, skipped")

    header = f"{'kernel':<14} {'ours ms':>9} " + " ".join(
        f"{p + ' ms':>10} {p + '/ours':>10}" for p in peers
    )
    print(header)
    ratios: list[float] = []
    for name in KERNELS:
        if name not in only:
            continue
        start = time.perf_counter()
        kernel = tvmscript.build(KERNELS[name], target=benchmark_target())
        build_s = time.perf_counter() - start
        arrays = ours_in[name]
        run = functools.partial(kernel, *arrays.values())
        repeat = 1 if name in SLOW else args.repeat
        rounds = max(1, args.rounds)
        runners_of: dict[str, Callable[[], Any]] = {"ours": run}
        runners_of.update({label: r[name] for label, r in peers.items() if name in r})
        best = {label: math.inf for label in runners_of}
        for _ in range(rounds):
            for label, runner in runners_of.items():
                time.sleep(args.settle)
                best[label] = min(best[label], best_time(runner, repeat))
        ours = best["ours"]
        peers["numpy"][name]()
        ok = check(name, arrays, ref_in[name])
        row = f"{name:<14} {ours * 1e3:>9.2f} "
        best_peer = math.inf
        for label in peers:
            if label in best:
                t = best[label]
                row += f"{t * 1e3:>10.2f} {t / ours:>10.2f} "
                if label != "numpy":
                    best_peer = min(best_peer, t)
            else:
                row += f"{'-':>10} {'-':>10} "
        if best_peer < math.inf:
            ratios.append(best_peer / ours)
        print(row + ("" if ok else " MISMATCH") + f"  (build {build_s * 1e3:.0f} ms)")
    if ratios:
        geomean = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        print(f"geomean best-peer/ours over {len(ratios)} kernels: {geomean:.2f}")


if __name__ == "__main__":
    main()
