"""Rows in vector lanes (``vectorize_row_reductions``): elements per ns for each layout.

Four parallel row reductions of ``R x 1024`` float32 (a matvec, a sum and sum of squares, a
row sum, a row max), each built three ways with ``PassContext(config=
{"vectorize_row_reductions": {...}})``: 256-bit tiles with one vector of rows, with two
interleaved vectors, and 512-bit tiles with one (the last two need an AVX-512 host). ``R``
picks where the rows live: 256 rows (1 MiB, L2), 4096 (16 MiB, L3), 16384 (64 MiB, DRAM).
The default choice (``row_blocks``) follows this table; see docs/performance.md::

    python benchmarks/row_lanes.py [--rows 256] [--threads 1]
"""

# ruff: noqa: E501 - TVMScript sources
from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import numpy as np

from benchmarks.suite import best_time, host_info

VARIANTS = [("256 x1", 256, 1), ("256 x2", 256, 2), ("512 x1", 512, 1)]


def kernels(rows: int) -> dict[str, object]:
    from tvmscript import tir as T

    R, C = rows, 1024

    @T.prim_func
    def matvec(A: T.Buffer((R, C), "float32"), x: T.Buffer((C,), "float32"), y: T.Buffer((R,), "float32")):
        for i in T.parallel(R):
            acc = T.alloc_buffer((1,), "float32")
            acc[0] = T.float32(0)
            for j in range(C):
                acc[0] = acc[0] + A[i, j] * x[j]
            y[i] = acc[0]

    @T.prim_func
    def stats(A: T.Buffer((R, C), "float32"), x: T.Buffer((C,), "float32"), y: T.Buffer((R,), "float32")):
        for i in T.parallel(R):
            s = T.alloc_buffer((2,), "float32")
            s[0] = T.float32(0)
            s[1] = T.float32(0)
            for j in range(C):
                s[0] = s[0] + A[i, j]
                s[1] = s[1] + A[i, j] * A[i, j]
            y[i] = s[0] + s[1]

    @T.prim_func
    def rowsum(A: T.Buffer((R, C), "float32"), x: T.Buffer((C,), "float32"), y: T.Buffer((R,), "float32")):
        for i in T.parallel(R):
            acc = T.alloc_buffer((1,), "float32")
            acc[0] = T.float32(0)
            for j in range(C):
                acc[0] = acc[0] + A[i, j]
            y[i] = acc[0]

    @T.prim_func
    def rowmax(A: T.Buffer((R, C), "float32"), x: T.Buffer((C,), "float32"), y: T.Buffer((R,), "float32")):
        for i in T.parallel(R):
            acc = T.alloc_buffer((1,), "float32")
            acc[0] = T.float32(-3e38)
            for j in range(C):
                acc[0] = T.max(acc[0], A[i, j])
            y[i] = acc[0]

    return {"matvec": matvec, "sum+squares": stats, "rowsum": rowsum, "rowmax": rowmax}


def main() -> None:
    import tvmscript
    from backend.runtime import threadpool
    from lowering import PassContext
    from lowering.target import Target

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=256)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=100)
    args = parser.parse_args()
    host = host_info()
    print(f"# host {host['hostname']}: {host['cpu']}, {host['cores']} cores; "
          f"{args.rows} x 1024 float32 ({args.rows * 4096 >> 10} KiB), {args.threads} thread(s)")
    wide = not Target.host().missing_on_host() and Target.host().has_feature("avx512f")
    variants = [v for v in VARIANTS if wide or (v[1] == 256 and v[2] == 1)]
    rng = np.random.default_rng(0)
    A = rng.standard_normal((args.rows, 1024)).astype("float32")
    x = rng.standard_normal(1024).astype("float32")
    y = np.zeros(args.rows, "float32")
    built = {}
    for name, func in kernels(args.rows).items():
        for label, bits, blocks in variants:
            config = {"vectorize_row_reductions": {"vector_bits": bits, "blocks": blocks}}
            with PassContext(config=config):
                built[name, label] = tvmscript.build(func, cache=False)
    threadpool.set_num_threads(args.threads)
    print(f"{'kernel':<12}" + "".join(f"{label:>10}" for label, _, _ in variants) + "   (elements/ns)")
    for name in kernels(args.rows):
        cells = []
        for label, _, _ in variants:
            kernel = built[name, label]
            seconds = min(best_time(lambda k=kernel: k(A, x, y), args.repeat) for _ in range(3))
            cells.append(f"{args.rows * 1024 / seconds / 1e9:>10.1f}")
        print(f"{name:<12}" + "".join(cells))


if __name__ == "__main__":
    main()
