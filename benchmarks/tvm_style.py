"""TVM-style kernels, as a TVM user writes them, next to TVM 0.27 and numba.

Twenty-two kernels outside ``suite.py``'s set: plain nests with ``T.parallel`` and
per-iteration ``T.alloc_buffer`` scratch (layernorm, matvec, argmax, cumsum, max pool,
depthwise convolution, ...) and unscheduled ``T.block`` programs (a padded convolution with
a batch loop of one, a dense layer with its epilogue, column sums, average pool, batch
norm, casts, a 3-d permutation). Each runs three ways in one process:

* ours: ``tvmscript.build`` of the source, default options (strict floating-point order);
* ``tvm``: TVM 0.27 compiling the *same source* (``from tvm.script import tirx as T``,
  ``T.block`` spelled ``T.sblock``, target ``{"kind": "llvm", "mcpu": <host>}``, 64-byte
  aligned arrays) -- what a TVM user gets before writing a schedule;
* ``numba``: the fastest plain twin a numba user writes (``_numba_tvm_style.py``:
  ``prange``, ``fastmath``, loops reordered for contiguous inner loops).

Ratios are peer ms / our ms (> 1: we are faster); ``!`` marks an output that differs from
ours (``rtol=2e-3``, ``atol=2e-2``: fastmath reassociates). Run with the peers' interpreter
(``benchmarks/setup_peers.sh``); a peer that is not importable leaves its column empty::

    /work/peers/bin/python benchmarks/tvm_style.py [--rounds 3] [--only layernorm,conv_pad]
"""

# ruff: noqa: E501 - TVMScript sources and input tables
from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import numpy as np

from benchmarks.peers import aligned_copy
from benchmarks.suite import best_time, host_info

SOURCE = r'''
@T.prim_func
def layernorm(A: T.Buffer((4096, 1024), "float32"), G: T.Buffer((1024,), "float32"),
              Bt: T.Buffer((1024,), "float32"), O: T.Buffer((4096, 1024), "float32")):
    for i in T.parallel(4096):
        s = T.alloc_buffer((2,), "float32")
        s[0] = T.float32(0)
        s[1] = T.float32(0)
        for j in range(1024):
            s[0] = s[0] + A[i, j]
            s[1] = s[1] + A[i, j] * A[i, j]
        for j in range(1024):
            O[i, j] = (A[i, j] - s[0] / T.float32(1024)) * T.rsqrt(s[1] / T.float32(1024) - (s[0] / T.float32(1024)) * (s[0] / T.float32(1024)) + T.float32(1e-5)) * G[j] + Bt[j]

@T.prim_func
def colsum(A: T.Buffer((4096, 4096), "float32"), B: T.Buffer((4096,), "float32")):
    for j in T.parallel(4096):
        B[j] = T.float32(0)
    for i in range(4096):
        for j in T.parallel(4096):
            B[j] = B[j] + A[i, j]

@T.prim_func
def colsum_block(A: T.Buffer((4096, 4096), "float32"), B: T.Buffer((4096,), "float32")):
    for j, i in T.grid(4096, 4096):
        with T.block("B"):
            vj, vi = T.axis.remap("SR", [j, i])
            with T.init():
                B[vj] = T.float32(0)
            B[vj] = B[vj] + A[vi, vj]

@T.prim_func
def maxpool(A: T.Buffer((64, 226, 226), "float32"), O: T.Buffer((64, 112, 112), "float32")):
    for c in T.parallel(64):
        for h, w in T.grid(112, 112):
            O[c, h, w] = T.float32(-3.4e38)
            for kh, kw in T.grid(3, 3):
                O[c, h, w] = T.max(O[c, h, w], A[c, h * 2 + kh, w * 2 + kw])

@T.prim_func
def batch_matmul(A: T.Buffer((16, 256, 256), "float32"), B: T.Buffer((16, 256, 256), "float32"),
                 C: T.Buffer((16, 256, 256), "float32")):
    for b in T.parallel(16):
        for i, j in T.grid(256, 256):
            C[b, i, j] = T.float32(0)
            for k in range(256):
                C[b, i, j] = C[b, i, j] + A[b, i, k] * B[b, k, j]

@T.prim_func
def depthwise(A: T.Buffer((64, 114, 114), "float32"), W: T.Buffer((64, 3, 3), "float32"),
              O: T.Buffer((64, 112, 112), "float32")):
    for c in T.parallel(64):
        for h, w in T.grid(112, 112):
            O[c, h, w] = T.float32(0)
            for kh, kw in T.grid(3, 3):
                O[c, h, w] = O[c, h, w] + A[c, h + kh, w + kw] * W[c, kh, kw]

@T.prim_func
def bias_relu(A: T.Buffer((4096, 1024), "float32"), b: T.Buffer((1024,), "float32"),
              O: T.Buffer((4096, 1024), "float32")):
    for i in T.parallel(4096):
        for j in T.vectorized(1024):
            O[i, j] = T.max(A[i, j] + b[j], T.float32(0))

@T.prim_func
def matvec(A: T.Buffer((4096, 4096), "float32"), x: T.Buffer((4096,), "float32"),
           y: T.Buffer((4096,), "float32")):
    for i in T.parallel(4096):
        acc = T.alloc_buffer((1,), "float32")
        acc[0] = T.float32(0)
        for j in range(4096):
            acc[0] = acc[0] + A[i, j] * x[j]
        y[i] = acc[0]

@T.prim_func
def dot_block(a: T.Buffer((16777216,), "float32"), b: T.Buffer((16777216,), "float32"),
              out: T.Buffer((1,), "float32")):
    for k in range(16777216):
        with T.block("dot"):
            vk = T.axis.reduce(16777216, k)
            with T.init():
                out[0] = T.float32(0)
            out[0] = out[0] + a[vk] * b[vk]

@T.prim_func
def cumsum(A: T.Buffer((4096, 1024), "float32"), O: T.Buffer((4096, 1024), "float32")):
    for i in T.parallel(4096):
        O[i, 0] = A[i, 0]
        for j in range(1, 1024):
            O[i, j] = O[i, j - 1] + A[i, j]

@T.prim_func
def argmax_rows(A: T.Buffer((4096, 1024), "float32"), O: T.Buffer((4096,), "int32")):
    for i in T.parallel(4096):
        best = T.alloc_buffer((1,), "float32")
        idx = T.alloc_buffer((1,), "int32")
        best[0] = A[i, 0]
        idx[0] = 0
        for j in range(1, 1024):
            if A[i, j] > best[0]:
                best[0] = A[i, j]
                idx[0] = j
        O[i] = idx[0]

@T.prim_func
def scale_cast(A: T.Buffer((16777216,), "float32"), O: T.Buffer((16777216,), "float16")):
    for i in T.parallel(16777216):
        O[i] = T.Cast("float16", A[i] * T.float32(0.5))

@T.prim_func
def add_nchw_bcast(A: T.Buffer((8, 64, 56, 56), "float32"), b: T.Buffer((64,), "float32"),
                   O: T.Buffer((8, 64, 56, 56), "float32")):
    for n, c in T.grid(8, 64):
        for h, w in T.grid(56, 56):
            O[n, c, h, w] = A[n, c, h, w] + b[c]

@T.prim_func
def block_matmul_plain(A: T.Buffer((512, 512), "float32"), B: T.Buffer((512, 512), "float32"),
                       C: T.Buffer((512, 512), "float32")):
    for i, j, k in T.grid(512, 512, 512):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]

@T.prim_func
def conv_pad(X: T.Buffer((1, 32, 56, 56), "float32"), W: T.Buffer((32, 32, 3, 3), "float32"),
             Y: T.Buffer((1, 32, 56, 56), "float32")):
    P = T.alloc_buffer((1, 32, 58, 58), "float32")
    for n, c, h, w in T.grid(1, 32, 58, 58):
        with T.block("pad"):
            vn, vc, vh, vw = T.axis.remap("SSSS", [n, c, h, w])
            P[vn, vc, vh, vw] = T.if_then_else(1 <= vh and vh < 57 and 1 <= vw and vw < 57,
                                               X[vn, vc, vh - 1, vw - 1], T.float32(0))
    for n, f, h, w, c, kh, kw in T.grid(1, 32, 56, 56, 32, 3, 3):
        with T.block("conv"):
            vn, vf, vh, vw, vc, vkh, vkw = T.axis.remap("SSSSRRR", [n, f, h, w, c, kh, kw])
            with T.init():
                Y[vn, vf, vh, vw] = T.float32(0)
            Y[vn, vf, vh, vw] = Y[vn, vf, vh, vw] + P[vn, vc, vh + vkh, vw + vkw] * W[vf, vc, vkh, vkw]

@T.prim_func
def mean_last(A: T.Buffer((4096, 1024), "float32"), B: T.Buffer((4096,), "float32")):
    S = T.alloc_buffer((4096,), "float32")
    for i, j in T.grid(4096, 1024):
        with T.block("sum"):
            vi, vj = T.axis.remap("SR", [i, j])
            with T.init():
                S[vi] = T.float32(0)
            S[vi] = S[vi] + A[vi, vj]
    for i in range(4096):
        with T.block("mean"):
            vi = T.axis.remap("S", [i])
            B[vi] = S[vi] / T.float32(1024)

@T.prim_func
def int8_add(A: T.Buffer((16777216,), "int8"), B: T.Buffer((16777216,), "int8"),
             C: T.Buffer((16777216,), "int8")):
    for i in range(16777216):
        with T.block("C"):
            vi = T.axis.remap("S", [i])
            C[vi] = A[vi] + B[vi]

@T.prim_func
def u8_to_f32(A: T.Buffer((4096, 4096), "uint8"), B: T.Buffer((4096, 4096), "float32")):
    for i, j in T.grid(4096, 4096):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = T.Cast("float32", A[vi, vj]) * T.float32(0.00392156863)

@T.prim_func
def permute3(A: T.Buffer((64, 128, 256), "float32"), B: T.Buffer((256, 64, 128), "float32")):
    for i, j, k in T.grid(256, 64, 128):
        with T.block("B"):
            vi, vj, vk = T.axis.remap("SSS", [i, j, k])
            B[vi, vj, vk] = A[vj, vk, vi]

@T.prim_func
def dense_bias_relu(X: T.Buffer((256, 512), "float32"), W: T.Buffer((1024, 512), "float32"),
                    b: T.Buffer((1024,), "float32"), Y: T.Buffer((256, 1024), "float32")):
    D = T.alloc_buffer((256, 1024), "float32")
    for i, j, k in T.grid(256, 1024, 512):
        with T.block("dense"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                D[vi, vj] = T.float32(0)
            D[vi, vj] = D[vi, vj] + X[vi, vk] * W[vj, vk]
    for i, j in T.grid(256, 1024):
        with T.block("out"):
            vi, vj = T.axis.remap("SS", [i, j])
            Y[vi, vj] = T.max(D[vi, vj] + b[vj], T.float32(0))

@T.prim_func
def avgpool(A: T.Buffer((64, 112, 112), "float32"), O: T.Buffer((64, 56, 56), "float32")):
    for c, h, w, kh, kw in T.grid(64, 56, 56, 2, 2):
        with T.block("pool"):
            vc, vh, vw, vkh, vkw = T.axis.remap("SSSRR", [c, h, w, kh, kw])
            with T.init():
                O[vc, vh, vw] = T.float32(0)
            O[vc, vh, vw] = O[vc, vh, vw] + A[vc, vh * 2 + vkh, vw * 2 + vkw] * T.float32(0.25)

@T.prim_func
def batchnorm(X: T.Buffer((8, 64, 56, 56), "float32"), M: T.Buffer((64,), "float32"),
              V: T.Buffer((64,), "float32"), Y: T.Buffer((8, 64, 56, 56), "float32")):
    for n, c, h, w in T.grid(8, 64, 56, 56):
        with T.block("bn"):
            vn, vc, vh, vw = T.axis.remap("SSSS", [n, c, h, w])
            Y[vn, vc, vh, vw] = (X[vn, vc, vh, vw] - M[vc]) * T.rsqrt(V[vc] + T.float32(1e-5))
'''


def inputs(seed: int = 0) -> dict[str, list[np.ndarray]]:
    """Arguments of every kernel, 64-byte aligned (outputs last)."""
    rng = np.random.default_rng(seed)

    f = lambda *s: rng.standard_normal(s).astype("float32")  # noqa: E731
    z = lambda *s, dt="float32": np.zeros(s, dt)  # noqa: E731
    raw = {
        "layernorm": [f(4096, 1024), f(1024), f(1024), np.zeros((4096, 1024), "float32")],
        "colsum": [f(4096, 4096), np.zeros(4096, "float32")],
        "colsum_block": [f(4096, 4096), np.zeros(4096, "float32")],
        "maxpool": [f(64, 226, 226), np.zeros((64, 112, 112), "float32")],
        "batch_matmul": [f(16, 256, 256), f(16, 256, 256), np.zeros((16, 256, 256), "float32")],
        "depthwise": [f(64, 114, 114), f(64, 3, 3), np.zeros((64, 112, 112), "float32")],
        "bias_relu": [f(4096, 1024), f(1024), np.zeros((4096, 1024), "float32")],
        "matvec": [f(4096, 4096), f(4096), np.zeros(4096, "float32")],
        "dot_block": [f(16777216), f(16777216), np.zeros(1, "float32")],
        "cumsum": [f(4096, 1024), np.zeros((4096, 1024), "float32")],
        "argmax_rows": [f(4096, 1024), np.zeros(4096, "int32")],
        "scale_cast": [f(16777216), np.zeros(16777216, "float16")],
        "add_nchw_bcast": [f(8, 64, 56, 56), f(64), np.zeros((8, 64, 56, 56), "float32")],
    

        "block_matmul_plain": [f(512, 512), f(512, 512), z(512, 512)],
        "conv_pad": [f(1, 32, 56, 56), f(32, 32, 3, 3), z(1, 32, 56, 56)],
        "mean_last": [f(4096, 1024), z(4096)],
        "int8_add": [rng.integers(-100, 100, 16777216).astype("int8"), rng.integers(-100, 100, 16777216).astype("int8"), z(16777216, dt="int8")],
        "u8_to_f32": [rng.integers(0, 255, (4096, 4096)).astype("uint8"), z(4096, 4096)],
        "permute3": [f(64, 128, 256), z(256, 64, 128)],
        "dense_bias_relu": [f(256, 512), f(1024, 512), f(1024), z(256, 1024)],
        "avgpool": [f(64, 112, 112), z(64, 56, 56)],
        "batchnorm": [f(8, 64, 56, 56), f(64), np.abs(f(64)) + 0.1, z(8, 64, 56, 56)],
        }
    return {name: [aligned_copy(a) for a in args] for name, args in raw.items()}


def _load(source: str, header: str, name: str) -> Any:
    """The kernels' module, written with ``header`` as its import line (TVMScript reads the
    source text of each function, so they must live in a file)."""
    directory = Path(tempfile.mkdtemp(prefix="tvm_style_"))
    path = directory / f"{name}.py"
    path.write_text(header + "\n" + source)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


Agrees = Callable[[str, list[np.ndarray], list[np.ndarray]], bool]
"""Whether a peer's outputs of a kernel match ours (marks the peer's time with ``!``)."""


def ours_runners(names: list[str], args: dict[str, list[np.ndarray]], source: str = SOURCE,
                 tag: str = "tvm_style") -> dict[str, Any]:
    """Our builds of the kernels ``names`` of ``source``, each called on its ``args``."""
    import tvmscript
    from benchmarks.schedule import benchmark_target

    module = _load(source, "from tvmscript import tir as T", f"{tag}_ours")
    runners = {}
    for name in names:
        kernel = tvmscript.build(getattr(module, name), target=benchmark_target())
        runners[name] = lambda k=kernel, a=args[name]: k(*a)
    return runners


def tvm_runners(names: list[str], args: dict[str, list[np.ndarray]], source: str = SOURCE,
                tag: str = "tvm_style") -> dict[str, Any]:
    """TVM 0.27 compiling the same source for the host CPU, or ``TVMSCRIPT_BENCH_TARGET``'s
    (empty when TVM is missing)."""
    try:
        import tvm
    except ImportError:
        return {}
    from benchmarks.schedule import benchmark_target

    source = source.replace("T.block(", "T.sblock(").replace(
        "T.block_attr(", "T.sblock_attr("
    ).replace("@T.prim_func", "@T.prim_func(check_well_formed=False)")
    module = _load(source, "from tvm.script import tirx as T", f"{tag}_tvm")
    target = {"kind": "llvm", "mcpu": benchmark_target().mcpu}
    runners = {}
    for name in names:
        fn = tvm.compile(tvm.IRModule({"main": getattr(module, name)}), target=target)["main"]
        arrays = [tvm.runtime.from_dlpack(a) for a in args[name]]
        runners[name] = lambda f=fn, a=arrays: f(*a)
    return runners


def numba_runners(names: list[str], args: dict[str, list[np.ndarray]],
                  twins_module: str = "benchmarks._numba_tvm_style") -> dict[str, Any]:
    """The numba twins of ``twins_module`` (``numba_twins()``; empty when numba is missing)."""
    from benchmarks.schedule import pin_numba_cpu

    pin_numba_cpu()
    try:
        twins = importlib.import_module(twins_module).numba_twins()
    except ImportError:
        return {}
    return {n: (lambda f=twins[n], a=args[n]: f(*a)) for n in names if n in twins}


def print_host() -> None:
    host = host_info()
    feats = " ".join(f for f, on in host["features"].items() if on)
    print(f"# host {host['hostname']}: {host['cpu']} ({feats}), {host['cores']} cores, "
          f"load {host['load'][0]:.1f} at {host['utc']} UTC")
    from benchmarks.schedule import benchmark_target

    target = benchmark_target()
    if os.environ.get("TVMSCRIPT_BENCH_TARGET", "").strip():
        print(f"# every side compiles for {target.mcpu} (TVMSCRIPT_BENCH_TARGET), not the host")


MIN_SIDE_TIME = 0.1
"""Seconds each side's kernel is timed for, per round, at least (``suite.best_time``: the
previous side's spinning threads must not decide a short kernel's time)."""


def time_and_print(names: list[str], sides: dict[str, dict[str, list[np.ndarray]]],
                   runners: dict[str, dict[str, Any]], rounds: int, repeat: int,
                   agrees: Agrees) -> None:
    """Time every side ``rounds`` times interleaved (best of ``repeat`` calls each), print
    one row per kernel with each peer's ratio to ours, then the geomean of the best peer's."""
    best: dict[str, dict[str, float]] = {side: {} for side in runners}
    for _ in range(rounds):
        for name in names:
            for side, table in runners.items():
                if name in table:
                    t = best_time(table[name], repeat, MIN_SIDE_TIME)
                    best[side][name] = min(best[side].get(name, t), t)
    print(f"{'kernel':20s}{'ours ms':>10s}{'tvm ms':>10s}{'/ours':>7s}{'numba ms':>10s}{'/ours':>7s}")
    ratios: list[float] = []
    for name in names:
        ours = best["ours"][name]
        cells = [f"{name:20s}{ours * 1e3:10.3f}"]
        row_best = None
        for side in ("tvm", "numba"):
            t = best[side].get(name)
            if t is None:
                cells.append(f"{'-':>10s}{'-':>7s}")
                continue
            same = agrees(name, sides[side][name], sides["ours"][name])
            cells.append(f"{t * 1e3:9.3f}{' ' if same else '!'}{t / ours:7.2f}")
            row_best = t if row_best is None else min(row_best, t)
        if row_best is not None:
            ratios.append(row_best / ours)
        print("".join(cells))
    if ratios:
        geo = float(np.exp(np.mean(np.log(ratios))))
        print(f"# geomean best-peer/ours over {len(ratios)} kernels: {geo:.2f}; "
              f"kernels behind the best peer: {sum(r < 1 for r in ratios)}")


def _last_output_agrees(name: str, peer: list[np.ndarray], ours: list[np.ndarray]) -> bool:
    return bool(np.allclose(peer[-1].astype("float64"), ours[-1].astype("float64"),
                            rtol=2e-3, atol=2e-2))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--only", default="")
    opts = parser.parse_args()
    print_host()
    names = list(inputs(0))
    if opts.only:
        names = [n for n in names if n in opts.only.split(",")]
    sides = {"ours": inputs(0), "tvm": inputs(0), "numba": inputs(0)}
    runners = {
        "ours": ours_runners(names, sides["ours"]),
        "tvm": tvm_runners(names, sides["tvm"]),
        "numba": numba_runners(names, sides["numba"]),
    }
    time_and_print(names, sides, runners, opts.rounds, opts.repeat, _last_output_agrees)


if __name__ == "__main__":
    main()
