"""Scheduled conv2d (NCHW, 3x3) and softmax: the same T.block programs and the same schedules
in tvmscript (``T.Schedule``) and in TVM 0.27 (``tvm.s_tir.Schedule``), side by side.

The kernels and schedules are one source text (``_SOURCE``); TVM's copy differs only in the
spellings TVM 0.27 renamed (``T.sblock``, ``T.sblock_alloc_buffer``, ``get_sblock``,
``prim_func(s_tir=True)``). TVM runs
in the peers' Python (``/work/peers/bin/python``, skipped when absent or when ``tvm`` does not
import), compiled for the host CPU. Each runner checks its result against numpy and reports
its best call over interleaved rounds.

    PYTHONPATH=. python benchmarks/schedule_ops.py [--rounds 10]
"""

# ruff: noqa: E501 - TVMScript sources: one statement per line
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

PEERS_PYTHON = "/work/peers/bin/python"

# Shapes: a ResNet-style 3x3 layer, and rows of a wide softmax.
N, CI, H, W, CO = 1, 64, 56, 56, 64
ROWS, COLS = 2048, 1024

_SOURCE = r'''
import numpy as np
from tvmscript import tir as T

N, CI, H, W, CO = {shapes}
ROWS, COLS = {softmax_shape}


@T.prim_func
def conv2d(
    data: T.Buffer((N, CI, H, W), "float32"),
    weight: T.Buffer((CO, CI, 3, 3), "float32"),
    out: T.Buffer((N, CO, H, W), "float32"),
):
    pad = T.alloc_buffer((N, CI, H + 2, W + 2), "float32")
    for n, c, y, x in T.grid(N, CI, H + 2, W + 2):
        with T.block("pad"):
            vn, vc, vy, vx = T.axis.remap("SSSS", [n, c, y, x])
            pad[vn, vc, vy, vx] = T.if_then_else(
                1 <= vy and vy < H + 1 and 1 <= vx and vx < W + 1,
                data[vn, vc, vy - 1, vx - 1],
                T.float32(0),
            )
    for n, f, y, x, rc, ry, rx in T.grid(N, CO, H, W, CI, 3, 3):
        with T.block("conv"):
            vn, vf, vy, vx, vc, vry, vrx = T.axis.remap("SSSSRRR", [n, f, y, x, rc, ry, rx])
            with T.init():
                out[vn, vf, vy, vx] = T.float32(0)
            out[vn, vf, vy, vx] = out[vn, vf, vy, vx] + pad[vn, vc, vy + vry, vx + vrx] * weight[vf, vc, vry, vrx]


def schedule_conv2d(sch):
    """Register tile of 4 output channels x 28 columns (vectorized along the row), the
    whole reduction inside it, a local write cache at the tile, parallel over channel
    blocks; the padding runs in parallel before it, its rows vectorized."""
    conv = sch.get_block("conv")
    n, f, y, x, rc, ry, rx = sch.get_loops(conv)
    f_o, f_i = sch.split(f, [None, 4])
    x_o, x_i = sch.split(x, [None, 28])
    sch.reorder(n, f_o, y, x_o, rc, ry, rx, f_i, x_i)
    local = sch.cache_write(conv, 0, "local")
    sch.reverse_compute_at(local, x_o)
    sch.vectorize(x_i)
    sch.unroll(f_i)
    sch.parallel(f_o)
    sch.vectorize(sch.get_loops(local)[-1])
    init = sch.decompose_reduction(conv, rc)
    sch.vectorize(sch.get_loops(init)[-1])
    pad = sch.get_block("pad")
    pn, pc, py, px = sch.get_loops(pad)
    sch.parallel(sch.fuse(pc, py))
    sch.vectorize(px)


@T.prim_func
def softmax(A: T.Buffer((ROWS, COLS), "float32"), out: T.Buffer((ROWS, COLS), "float32")):
    maxelem = T.alloc_buffer((ROWS,), "float32")
    expv = T.alloc_buffer((ROWS, COLS), "float32")
    expsum = T.alloc_buffer((ROWS,), "float32")
    for i, k in T.grid(ROWS, COLS):
        with T.block("maxelem"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                maxelem[vi] = T.float32(-3.4028234663852886e38)
            maxelem[vi] = T.max(maxelem[vi], A[vi, vk])
    for i, j in T.grid(ROWS, COLS):
        with T.block("exp"):
            vi, vj = T.axis.remap("SS", [i, j])
            expv[vi, vj] = T.exp(A[vi, vj] - maxelem[vi])
    for i, k in T.grid(ROWS, COLS):
        with T.block("expsum"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                expsum[vi] = T.float32(0)
            expsum[vi] = expsum[vi] + expv[vi, vk]
    for i, j in T.grid(ROWS, COLS):
        with T.block("norm"):
            vi, vj = T.axis.remap("SS", [i, j])
            out[vi, vj] = expv[vi, vj] / expsum[vi]


def schedule_softmax(sch):
    """One parallel loop over rows; every stage computed at it (a row of exponentials at a
    time), the elementwise stages vectorized."""
    norm = sch.get_block("norm")
    i, j = sch.get_loops(norm)
    sch.parallel(i)
    for name in ("expsum", "exp", "maxelem"):
        sch.compute_at(sch.get_block(name), i)
    sch.vectorize(sch.get_loops(sch.get_block("exp"))[-1])
    sch.vectorize(j)


def reference_conv2d(data, weight):
    padded = np.pad(data, ((0, 0), (0, 0), (1, 1), (1, 1)))
    out = np.zeros((N, CO, H, W), "float32")
    for ry in range(3):
        for rx in range(3):
            window = padded[:, :, ry : ry + H, rx : rx + W]
            out += np.einsum("nchw,fc->nfhw", window, weight[:, :, ry, rx])
    return out


def reference_softmax(a):
    e = np.exp(a - a.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def inputs():
    rng = np.random.default_rng(0)
    data = rng.standard_normal((N, CI, H, W)).astype("float32")
    weight = rng.standard_normal((CO, CI, 3, 3)).astype("float32")
    a = rng.standard_normal((ROWS, COLS)).astype("float32")
    return data, weight, a
'''

_TVM_RUNNER = r"""
import json, sys, time
import numpy as np
import tvm
import llvmlite.binding as llvm
from tvm import s_tir
import ops_tvm as ops

rounds = int(sys.argv[1])


def aligned(values):
    raw = np.empty(values.nbytes + 64, np.uint8)
    offset = (-raw.ctypes.data) % 64
    out = raw[offset : offset + values.nbytes].view(np.float32).reshape(values.shape)
    out[...] = values
    return out

llvm.initialize_native_target()
target = {"kind": "llvm", "mcpu": llvm.get_host_cpu_name()}
data, weight, a = ops.inputs()
result = {}
for name, func, args, expected, out_shape in (
    ("conv2d", ops.conv2d, (data, weight), ops.reference_conv2d(data, weight),
     (ops.N, ops.CO, ops.H, ops.W)),
    ("softmax", ops.softmax, (a,), ops.reference_softmax(a), (ops.ROWS, ops.COLS)),
):
    sch = s_tir.Schedule(func)
    getattr(ops, "schedule_" + name)(sch)
    fn = tvm.compile(sch.mod, target=target)["main"]
    out = np.zeros(out_shape, "float32")
    call_args = [tvm.runtime.from_dlpack(aligned(x)) for x in (*args, out)]
    fn(*call_args)
    np.testing.assert_allclose(call_args[-1].numpy(), expected, rtol=1e-3, atol=1e-3)
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        fn(*call_args)
        best = min(best, time.perf_counter() - start)
    result[name] = best * 1e3
print(json.dumps(result))
"""


def _source() -> str:
    return _SOURCE.format(shapes=f"{N}, {CI}, {H}, {W}, {CO}", softmax_shape=f"{ROWS}, {COLS}")


def tvm_source() -> str:
    """The kernels and schedules in TVM 0.27's spelling (the same program otherwise)."""
    return (
        _source()
        .replace("from tvmscript import tir as T", "from tvm.script import tirx as T")
        .replace("@T.prim_func\n", "@T.prim_func(s_tir=True)\n")
        .replace("T.block(", "T.sblock(")
        .replace("T.alloc_buffer(", "T.sblock_alloc_buffer(")
        .replace("sch.get_block(", "sch.get_sblock(")
    )


def _load_ours(folder: Path) -> Any:
    path = folder / "ops_ours.py"  # the parser reads kernels from their source file
    path.write_text(_source())
    spec = importlib.util.spec_from_file_location("ops_ours", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_tvm(folder: Path, rounds: int) -> dict[str, float] | None:
    if not Path(PEERS_PYTHON).exists():
        return None
    (folder / "ops_tvm.py").write_text(tvm_source())
    runner = folder / "run_tvm.py"
    runner.write_text(_TVM_RUNNER)
    done = subprocess.run(
        [PEERS_PYTHON, str(runner), str(rounds)],
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
        cwd=folder,
    )
    if done.returncode != 0:
        print("TVM unavailable or failed:", done.stderr[-2000:], file=sys.stderr)
        return None
    parsed: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return parsed


def _time_ms(kernel: Any, args: tuple[np.ndarray, ...]) -> float:
    start = time.perf_counter()
    kernel(*args)
    return (time.perf_counter() - start) * 1e3


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args(argv)
    import tvmscript
    from tvmscript import tir as T

    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        ops = _load_ours(folder)
        data, weight, a = ops.inputs()
        runs: dict[str, tuple[Any, tuple[np.ndarray, ...], Any]] = {}
        for kernel_name, func, inputs, expected, out_shape in (
            ("conv2d", ops.conv2d, (data, weight), ops.reference_conv2d(data, weight),
             (N, CO, H, W)),
            ("softmax", ops.softmax, (a,), ops.reference_softmax(a), (ROWS, COLS)),
        ):
            sch = T.Schedule(func)
            getattr(ops, "schedule_" + kernel_name)(sch)
            kernel = tvmscript.build(sch.mod["main"])
            out = np.zeros(out_shape, "float32")
            kernel(*inputs, out)
            np.testing.assert_allclose(out, expected, rtol=1e-3, atol=1e-3)
            runs[kernel_name] = (kernel, (*inputs, out), None)
        ours = {k: float("inf") for k in runs}
        for _ in range(args.rounds):
            for kernel_name, (kernel, call_args, _) in runs.items():
                ours[kernel_name] = min(ours[kernel_name], _time_ms(kernel, call_args))
        tvm_ms = run_tvm(folder, args.rounds)
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"scheduled kernels, best of {args.rounds} rounds (load {load})")
    shapes = {"conv2d": f"{N}x{CI}x{H}x{W} -> {CO}, 3x3", "softmax": f"{ROWS}x{COLS}"}
    for kernel_name, ms in ours.items():
        line = f"  {kernel_name:8s} {shapes[kernel_name]:24s} tvmscript {ms:8.2f} ms"
        if tvm_ms is not None:
            theirs = tvm_ms[kernel_name]
            line += f"   TVM 0.27 {theirs:8.2f} ms   TVM / tvmscript = {theirs / ms:.2f}"
        else:
            line += "   TVM 0.27 unavailable"
        print(line)


if __name__ == "__main__":
    main()
