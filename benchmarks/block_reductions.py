"""Block reductions (``T.init`` + ``T.axis.reduce``) vs numpy: a 16M float32 dot product
(``np.dot``) and a 4096x4096 float32 row sum (``A.sum(axis=1)``), with the default lane-split
order and with ``strict_reductions=True`` (source order), plus each one's relative error vs a
float64 reference.

    python benchmarks/block_reductions.py [--repeat 5]
"""


from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import numpy as np

import tvmscript
from lowering.target import Target
from tvmscript import tir as T

N = 1 << 24


@T.prim_func
def dot(a: T.Buffer((N,), "float32"), b: T.Buffer((N,), "float32"), c: T.Buffer((1,), "float32")):
    for k in range(N):
        with T.block("dot"):
            vk = T.axis.reduce(N, k)
            with T.init():
                c[0] = T.float32(0)
            c[0] = c[0] + a[vk] * b[vk]


@T.prim_func
def rowsum(A: T.Buffer((4096, 4096), "float32"), B: T.Buffer((4096,), "float32")):
    for i, k in T.grid(4096, 4096):
        with T.block("rs"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]


def best(fn: object, repeat: int) -> float:
    assert callable(fn)
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    repeat = parser.parse_args().repeat
    rng = np.random.default_rng(0)
    a, b = rng.random(N, dtype=np.float32), rng.random(N, dtype=np.float32)
    A = rng.random((4096, 4096), dtype=np.float32)
    cases = [
        ("dot 16M f32", dot, (a, b, np.zeros(1, np.float32)), lambda: np.dot(a, b),
         np.array([np.dot(a.astype(np.float64), b.astype(np.float64))])),
        ("rowsum 4096^2", rowsum, (A, np.zeros(4096, np.float32)), lambda: A.sum(axis=1),
         A.astype(np.float64).sum(axis=1)),
    ]
    print(f"# host CPU: {Target.host().mcpu}")
    print(f"{'kernel':14s} {'numpy ms':>9s} {'lanes ms':>9s} {'x numpy':>8s} {'rel err':>9s} "
          f"{'strict ms':>10s} {'x numpy':>8s} {'rel err':>9s}")
    for name, func, args, ref, exact in cases:
        t_np = best(ref, repeat)
        row = f"{name:14s} {t_np * 1e3:9.2f}"
        for strict in (False, True):
            kernel = tvmscript.build(func, strict_reductions=strict)
            t = best(lambda: kernel(*args), repeat)  # noqa: B023 - called right here
            err = float(np.max(np.abs(args[-1] - exact) / np.abs(exact)))
            row += f" {t * 1e3:9.2f} {t_np / t:8.2f} {err:9.1e}"
        print(row)


if __name__ == "__main__":
    main()
