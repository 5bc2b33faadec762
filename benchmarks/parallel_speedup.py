"""``T.parallel`` speedup: each suite kernel with a parallel loop, on 1 thread and on all.

    python benchmarks/parallel_speedup.py [--repeat 7] [--rounds 10] [--min-time 0.2] [--only ...]

The thread count is switched with ``backend.runtime.set_num_threads`` between timings of the
same compiled kernel; rounds interleave the two settings (a shared machine's load comes in
bursts that can last a whole short run: with 3 rounds the same kernel's 2-thread time moved
by 10% between runs, so the default is 10), each round calls the kernel for at least
``--min-time`` seconds per setting, and each setting keeps its best time. Prints, per kernel,
both times and the speedup; the compute-bound kernels (goal >= 1.9x on 2 cores) are marked.
Memory-bound kernels are limited by DRAM bandwidth, which one core already nearly saturates.
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
import time
from typing import Any

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from backend.runtime import default_num_threads, set_num_threads
from benchmarks.kernels import KERNELS
from benchmarks.peers import make_inputs

PARALLEL = ("vadd", "fused", "rowsum", "softmax", "transpose", "matmul_tiled", "conv2d", "stencil")
COMPUTE_BOUND = {"matmul_tiled", "conv2d"}


def best_time(fn: Any, repeat: int, min_time: float) -> float:
    """Best of at least ``repeat`` calls, and of as many as fit in ``min_time`` seconds."""
    fn()
    best = float("inf")
    calls = 0
    begin = time.perf_counter()
    while calls < repeat or time.perf_counter() - begin < min_time:
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
        calls += 1
    return best


def main() -> None:
    import tvmscript

    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument(
        "--min-time", type=float, default=0.2,
        help="keep calling for at least this many seconds per round and setting: a short "
        "kernel's time varies by 30%% from call to call on a shared machine, and a 2-thread "
        "region needs both cores undisturbed at once, so it needs more calls to find its best",
    )
    parser.add_argument("--only", default="")
    args = parser.parse_args()
    only = set(args.only.split(",")) if args.only else set(PARALLEL)
    threads = default_num_threads()
    inputs = make_inputs()
    print(f"{'kernel':<14} {'1 thread ms':>12} {f'{threads} threads ms':>14} {'speedup':>8}")
    for name in PARALLEL:
        if name not in only:
            continue
        run = functools.partial(tvmscript.build(KERNELS[name]), *inputs[name].values())
        best = {1: float("inf"), threads: float("inf")}
        for _ in range(args.rounds):
            for n in best:
                set_num_threads(n)
                time.sleep(0.05)
                best[n] = min(best[n], best_time(run, args.repeat, args.min_time))
        set_num_threads(threads)
        mark = "  (compute-bound, goal >= 1.9x)" if name in COMPUTE_BOUND else ""
        print(f"{name:<14} {best[1] * 1e3:>12.2f} {best[threads] * 1e3:>14.2f} "
              f"{best[1] / best[threads]:>7.2f}x{mark}")


if __name__ == "__main__":
    main()
