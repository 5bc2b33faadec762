"""The 8-step elementwise chain: our fused kernel vs numpy's sequence of ufuncs (print only).

    python benchmarks/fused_chain.py [--n 16777216]

Reports wall time (best of repeats) and peak memory: numpy's temporaries via
tracemalloc (numpy reports its data allocations to it), our kernel's intermediate
allocations from the lowered IR (Allocate nodes; the fused chain has none -- only
the returned output array, allocated once per call like numpy's result).
Skips the native part when ``tvmscript.build`` is unavailable.
"""

from __future__ import annotations

import argparse
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import numpy as np

from irbuilder import IRBuilder
from irbuilder import tir as T
from irbuilder.ir import Allocate, Buffer, PrimFunc, post_order_visit
from lowering import lower

STEPS: list[tuple[Callable[[Any], Any], Callable[[Any], Any]]] = [
    (lambda x: x * 2.0, lambda x: x * np.float32(2)),
    (lambda x: x + 1.0, lambda x: x + np.float32(1)),
    (lambda x: x - 3.0, lambda x: x - np.float32(3)),
    (lambda x: T.max(x, 0.0), lambda x: np.maximum(x, np.float32(0))),
    (lambda x: x * 0.5, lambda x: x * np.float32(0.5)),
    (lambda x: x + 2.0, lambda x: x + np.float32(2)),
    (lambda x: T.min(x, 5.0), lambda x: np.minimum(x, np.float32(5))),
    (lambda x: x * 3.0, lambda x: x * np.float32(3)),
]


def _apply(step: Callable[[Any], Any], x: Buffer) -> Callable[[Any], Any]:
    return lambda i: step(x[i])


def chain(n: int) -> PrimFunc:
    """The chain as tensor-level IR returning the last tensor."""
    with IRBuilder() as b:
        with T.prim_func():
            T.func_name("chain")
            cur: Buffer = T.arg("A", T.Buffer((n,), "float32"))
            for s, (step, _) in enumerate(STEPS):
                cur = T.compute((n,), _apply(step, cur), name=f"D{s}")
            T.return_tensors(cur)
    func = b.get()
    assert isinstance(func, PrimFunc)
    return func


def numpy_chain(a: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """The same chain as numpy ufuncs (one temporary per step)."""
    for _, ref in STEPS:
        a = ref(a)
    return a


def _best(fn: Callable[[], Any], repeats: int = 5) -> float:
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def _peak(fn: Callable[[], Any]) -> int:
    tracemalloc.start()
    tracemalloc.reset_peak()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def _intermediate_bytes(func: PrimFunc) -> int:
    total = 0

    def visit(node: object) -> None:
        nonlocal total
        if isinstance(node, Allocate):
            extent = getattr(node.extent, "value", 0)
            total += int(extent) * node.dtype.itemsize
    post_order_visit(func.body, visit)
    return total


def main() -> None:
    """Run the comparison and print a small table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=16 * 1024 * 1024)
    args = parser.parse_args()
    n = args.n
    a = np.random.default_rng(0).standard_normal(n).astype("float32")
    mib = 1 / (1024 * 1024)
    print(f"8-step elementwise chain over {n} float32 ({n * 4 * mib:.0f} MiB)")
    t_np = _best(lambda: numpy_chain(a))
    p_np = _peak(lambda: numpy_chain(a))
    print(f"  numpy ufuncs        {t_np * 1e3:9.2f} ms   peak {p_np * mib:8.1f} MiB")
    func = chain(n)
    for opt in (2, 1):
        low = lower(func, opt_level=opt)
        inter = _intermediate_bytes(low)
        label = "fused" if opt == 2 else "in place"
        print(f"  ours ({label:8}) IR: intermediate allocations {inter * mib:.1f} MiB")
    try:
        from tvmscript.compiler.build import build
    except ImportError:
        print("  (tvmscript.build unavailable: native timing skipped)")
        return
    kernel = build(func, opt_level=3)

    def call() -> Any:
        return kernel(a)  # the kernel allocates and returns the result tensor

    out = call()
    err = float(np.max(np.abs(out - numpy_chain(a))))
    t_ours = _best(call)
    p_ours = _peak(call)
    print(f"  ours (native)       {t_ours * 1e3:9.2f} ms   peak {p_ours * mib:8.1f} MiB"
          f"   (output array only; max |diff| {err:.2g})")
    print(f"  speedup {t_np / t_ours:.2f}x, peak memory ratio {p_np / max(p_ours, 1):.1f}x")


if __name__ == "__main__":
    main()
