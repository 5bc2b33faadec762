"""Accumulator tiles written as per-iteration ``T.alloc_buffer`` vs ``T.decl_buffer`` locals.

TVM users declare a tile with ``T.alloc_buffer`` at the top of the parallel loop's body
(``benchmarks/alloc_kernels.py``); the suite's kernels (``benchmarks/kernels.py``) use
``T.decl_buffer`` locals of the innermost tile loop. Allocation placement
(``plan_allocation_location`` + ``hoist_allocations``, docs/allocation.md) must make the two
forms one program: this script checks that their LLVM IR is the same up to the
function name, then times both next to TVM 0.27 (both forms) and numba (a per-tile
``np.zeros`` and a per-iteration ``np.empty`` of the prange body), interleaved over
``--rounds`` rounds, keeping each runner's best.

    python benchmarks/alloc_placement.py [--rounds 5] [--repeat 5] [--settle 0.25]

Run it with an interpreter where the peers are importable (``benchmarks/setup_peers.sh``
makes one); missing peers are skipped.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
import time
from collections.abc import Callable
from typing import Any

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import numpy as np

from benchmarks.peers import make_inputs
from benchmarks.schedule import host_has_avx512
from benchmarks.suite import best_time

NAMES = ("matmul_tiled", "conv2d")
Runner = Callable[[], Any]


def _machine_code(kernel: Any, name: str) -> str:
    """The kernel's optimised LLVM IR with its name (and string lengths) blanked out."""
    text = kernel.get_source("ll").replace(name, "F")
    return re.sub(r"\[\d+ x i8\]", "[N x i8]", text)


def ours(inputs: dict[str, dict[str, np.ndarray]]) -> dict[str, dict[str, Runner]]:
    import tvmscript
    from benchmarks.alloc_kernels import ALLOC_KERNELS
    from benchmarks.kernels import KERNELS

    out: dict[str, dict[str, Runner]] = {"ours locals": {}, "ours alloc": {}}
    for name in NAMES:
        local = tvmscript.build(KERNELS[name])
        alloc = tvmscript.build(ALLOC_KERNELS[name])
        same = _machine_code(local, local.name) == _machine_code(alloc, alloc.name)
        print(f"# {name}: LLVM IR of the two forms {'identical' if same else 'DIFFERS'}")
        args = tuple(inputs[name].values())
        out["ours locals"][name] = lambda k=local, a=args: k(*a)
        out["ours alloc"][name] = lambda k=alloc, a=args: k(*a)
    return out


def tvm_peers(inputs: dict[str, dict[str, np.ndarray]]) -> dict[str, dict[str, Runner]]:
    try:
        import tvm
        from tvm.script import tirx as T
    except ImportError:
        print("# tvm: not importable, skipped")
        return {}
    from benchmarks._tvm_alloc import build_tvm_alloc_suite
    from benchmarks._tvm_suite import build_tvm_suite

    return {
        "tvm locals": build_tvm_suite(tvm, T, inputs, names=NAMES),
        "tvm alloc": build_tvm_alloc_suite(tvm, T, inputs),
    }


def numba_peers(inputs: dict[str, dict[str, np.ndarray]]) -> dict[str, dict[str, Runner]]:
    try:
        import numba
    except ImportError:
        print("# numba: not importable, skipped")
        return {}
    njp = numba.njit(cache=False, parallel=True, fastmath=False)
    prange = numba.prange

    @njp
    def matmul_local(a, b, c):  # type: ignore[no-untyped-def]
        for io in prange(32):
            for jo in range(16):
                for im in range(8):
                    acc = np.zeros((4, 64), np.float32)
                    for k in range(1024):
                        for ii in range(4):
                            av = a[io * 32 + im * 4 + ii, k]
                            for ji in range(64):
                                acc[ii, ji] += av * b[k, jo * 64 + ji]
                    for ii in range(4):
                        for ji in range(64):
                            c[io * 32 + im * 4 + ii, jo * 64 + ji] = acc[ii, ji]

    @njp
    def matmul_alloc(a, b, c):  # type: ignore[no-untyped-def]
        for io in prange(32):
            acc = np.empty((4, 64), np.float32)
            for jo in range(16):
                for im in range(8):
                    acc[:] = 0
                    for k in range(1024):
                        for ii in range(4):
                            av = a[io * 32 + im * 4 + ii, k]
                            for ji in range(64):
                                acc[ii, ji] += av * b[k, jo * 64 + ji]
                    for ii in range(4):
                        for ji in range(64):
                            c[io * 32 + im * 4 + ii, jo * 64 + ji] = acc[ii, ji]

    @njp
    def conv_local(x, w, y):  # type: ignore[no-untyped-def]
        for kb in prange(8):
            for i in range(56):
                for jb in range(7):
                    acc = np.zeros((8, 8), np.float32)
                    for c in range(64):
                        for di in range(3):
                            for dj in range(3):
                                for kk in range(8):
                                    wv = w[kb * 8 + kk, c, di, dj]
                                    for j in range(8):
                                        acc[kk, j] += wv * x[0, c, i + di, jb * 8 + j + dj]
                    for kk in range(8):
                        for j in range(8):
                            y[0, kb * 8 + kk, i, jb * 8 + j] = acc[kk, j]

    @njp
    def conv_alloc(x, w, y):  # type: ignore[no-untyped-def]
        for kb in prange(8):
            acc = np.empty((8, 8), np.float32)
            for i in range(56):
                for jb in range(7):
                    acc[:] = 0
                    for c in range(64):
                        for di in range(3):
                            for dj in range(3):
                                for kk in range(8):
                                    wv = w[kb * 8 + kk, c, di, dj]
                                    for j in range(8):
                                        acc[kk, j] += wv * x[0, c, i + di, jb * 8 + j + dj]
                    for kk in range(8):
                        for j in range(8):
                            y[0, kb * 8 + kk, i, jb * 8 + j] = acc[kk, j]

    out: dict[str, dict[str, Runner]] = {"numba locals": {}, "numba alloc": {}}
    forms = {"matmul_tiled": (matmul_local, matmul_alloc), "conv2d": (conv_local, conv_alloc)}
    for name, (local, alloc) in forms.items():
        args = tuple(inputs[name].values())
        local(*args)  # compile outside the timing
        alloc(*args)
        out["numba locals"][name] = lambda f=local, a=args: f(*a)
        out["numba alloc"][name] = lambda f=alloc, a=args: f(*a)
    if not host_has_avx512():
        print("# numba runs the in-place matmul nest (its fastest; see peers.PACKED_FOR_NUMBA)")
    return out


def _reference(name: str, v: dict[str, np.ndarray]) -> np.ndarray:
    if name == "matmul_tiled":
        return np.asarray(v["a"] @ v["b"])
    x, w = v["x"], v["w"]
    y = np.zeros_like(v["y"])
    for di in range(3):
        for dj in range(3):
            y[0] += np.einsum("kc,chw->khw", w[:, :, di, dj], x[0, :, di : di + 56, dj : dj + 56])
    return y


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--settle", type=float, default=0.25)
    args = parser.parse_args()

    inputs = make_inputs()
    runners: dict[str, dict[str, Runner]] = {}
    runners.update(ours(inputs))
    runners.update(tvm_peers(inputs))
    runners.update(numba_peers(inputs))
    labels = list(runners)
    print(f"{'kernel':<14}" + "".join(f"{label + ' ms':>18}" for label in labels))
    for name in NAMES:
        best = {label: math.inf for label in labels}
        for _ in range(max(1, args.rounds)):
            for label in labels:
                time.sleep(args.settle)
                best[label] = min(best[label], best_time(runners[label][name], args.repeat))
        wrong = []
        expected = _reference(name, inputs[name])
        for label in labels:
            runners[label][name]()
            if not np.allclose(list(inputs[name].values())[-1], expected, rtol=1e-3, atol=1e-3):
                wrong.append(label)
        row = f"{name:<14}" + "".join(f"{best[label] * 1e3:>18.2f}" for label in labels)
        ratio = best["ours alloc"] / best["ours locals"]
        mismatch = f"  MISMATCH: {wrong}" if wrong else ""
        print(row + f"   alloc/locals (ours) {ratio:.3f}" + mismatch)


if __name__ == "__main__":
    main()
