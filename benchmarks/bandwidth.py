"""Streaming memory bandwidth of this machine: read, write and copy, best of N.

Two probes, on arrays of 128 MiB (4x the 32 MiB L3 of the reference host, so every byte
comes from DRAM):

* numpy: ``np.copyto`` (copy, one thread), ``arr.fill`` (write, one thread), ``np.sum``
  (read, one thread, also does the adds);
* ours: tvmscript kernels with ``T.parallel`` over 64 KiB chunks and ``T.vectorized``
  bodies, on every core: read (a 64-lane sum per chunk), write (a constant) and copy;
* numba (when importable): the same three as ``prange`` loops with ``fastmath``, on every
  core (a third opinion: the machine's limit is the best any of them reaches).

Bandwidth is *bytes the program asks to move* / time: a copy of N bytes counts 2N (read +
write); the write-allocate reads the caches do behind a store are not counted, as
``STREAM`` does not count them. ``suite.py`` bounds each memory-bound kernel by the time the
best ``read`` and ``write`` figures need for its bytes (reads / read + writes / write) and
prints that bound / the kernel's time. ``copy`` is shown for reference only: on the
reference VM a copy (numpy's memcpy, ours, numba's) runs well below what the read and write
streams and even ``vadd`` reach, so it would flatter every kernel.

    python benchmarks/bandwidth.py [--mib 128] [--repeat 10]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from typing import Any

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import numpy as np

CHUNK = 16384  # floats per parallel task (64 KiB)


def _best(fn: Callable[[], Any], repeat: int) -> float:
    fn()
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def _our_kernels(n: int) -> dict[str, Any]:
    import tvmscript
    from benchmarks.schedule import benchmark_target
    from tvmscript import tir as T

    tasks = n // CHUNK

    @T.prim_func
    def read(A: T.Buffer((n,), "float32"), S: T.Buffer((tasks,), "float32")):
        for t in T.parallel(tasks):
            acc = T.decl_buffer((64,), "float32")
            for v in T.vectorized(64):
                acc[v] = T.float32(0)
            for jo in range(CHUNK // 64):
                for v in T.vectorized(64):
                    acc[v] = acc[v] + A[t * CHUNK + jo * 64 + v]
            s = T.decl_buffer((1,), "float32")
            s[0] = T.float32(0)
            for v in range(64):
                s[0] = s[0] + acc[v]
            S[t] = s[0]

    @T.prim_func
    def write(B: T.Buffer((n,), "float32")):
        for t in T.parallel(tasks):
            for jo in range(CHUNK // 64):
                for v in T.vectorized(64):
                    B[t * CHUNK + jo * 64 + v] = T.float32(1)

    @T.prim_func
    def copy(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32")):
        for t in T.parallel(tasks):
            for jo in range(CHUNK // 64):
                for v in T.vectorized(64):
                    B[t * CHUNK + jo * 64 + v] = A[t * CHUNK + jo * 64 + v]

    target = benchmark_target()
    return {name: tvmscript.build(f, target=target) for name, f in
            (("read", read), ("write", write), ("copy", copy))}


def _numba_kernels() -> dict[str, Any]:
    import numba

    njf = numba.njit(parallel=True, fastmath=True, cache=False)

    @njf
    def read(a):  # type: ignore[no-untyped-def]
        s = np.float32(0)
        for i in numba.prange(a.shape[0]):
            s += a[i]
        return s

    @njf
    def write(b):  # type: ignore[no-untyped-def]
        for i in numba.prange(b.shape[0]):
            b[i] = np.float32(1)

    @njf
    def copy(a, b):  # type: ignore[no-untyped-def]
        for i in numba.prange(a.shape[0]):
            b[i] = a[i]

    return {"read": read, "write": write, "copy": copy}


def measure(mib: int = 128, repeat: int = 10) -> dict[str, dict[str, float]]:
    """``{"numpy": {...}, "ours": {...}, "best": {...}}`` of GB/s (1e9 bytes/s) for
    ``read``, ``write`` and ``copy``; ``ours`` is missing when tvmscript cannot build."""
    n = (mib << 20) // 4
    n -= n % CHUNK
    nbytes = n * 4
    a = np.random.default_rng(0).random(n, dtype=np.float32)
    b = np.empty_like(a)
    b.fill(0)
    gbs = lambda moved, t: moved / t / 1e9  # noqa: E731
    result: dict[str, dict[str, float]] = {
        "numpy": {
            "read": gbs(nbytes, _best(lambda: np.sum(a), repeat)),
            "write": gbs(nbytes, _best(lambda: b.fill(1.0), repeat)),
            "copy": gbs(2 * nbytes, _best(lambda: np.copyto(b, a), repeat)),
        }
    }
    try:
        ours = _our_kernels(n)
    except Exception as err:  # the probe still has numpy's figures
        print(f"# bandwidth: our kernels unavailable ({type(err).__name__}: {err})"[:200])
    else:
        s = np.empty(n // CHUNK, np.float32)
        result["ours"] = {
            "read": gbs(nbytes, _best(lambda: ours["read"](a, s), repeat)),
            "write": gbs(nbytes, _best(lambda: ours["write"](b), repeat)),
            "copy": gbs(2 * nbytes, _best(lambda: ours["copy"](a, b), repeat)),
        }
    try:
        nb = _numba_kernels()
    except ImportError:
        pass
    else:
        result["numba"] = {
            "read": gbs(nbytes, _best(lambda: nb["read"](a), repeat)),
            "write": gbs(nbytes, _best(lambda: nb["write"](b), repeat)),
            "copy": gbs(2 * nbytes, _best(lambda: nb["copy"](a, b), repeat)),
        }
    result["best"] = {k: max(r[k] for r in result.values()) for k in ("read", "write", "copy")}
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mib", type=int, default=128, help="array size (MiB)")
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    res = measure(args.mib, args.repeat)
    print(f"streaming bandwidth, {args.mib} MiB arrays, best of {args.repeat} (GB/s = 1e9 B/s)")
    print(f"{'probe':<8} {'read':>8} {'write':>8} {'copy':>8}")
    for probe, row in res.items():
        print(f"{probe:<8} " + " ".join(f"{row[k]:>8.1f}" for k in ("read", "write", "copy")))


if __name__ == "__main__":
    main()
