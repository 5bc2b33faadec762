"""The driver shared by the sets of TVM-style kernels (``tvm_style2.py``, ``tvm_style3.py``):
build each side, ``--check`` every side against numpy, or time them side by side.

A set gives its TVMScript ``source``, its numba twins' module, ``inputs(seed)``, a numpy
``reference(name, args)``, ``agrees(name, got, want) -> (ok, err)``, how many trailing
arguments of a kernel are outputs (1 unless listed) and the kernels TVM 0.27 refuses
however they are written (their ``tvm`` cells stay empty).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from benchmarks.tvm_style import (
    numba_runners,
    ours_runners,
    print_host,
    time_and_print,
    tvm_runners,
)

Arrays = dict[str, list[np.ndarray]]


def agrees_closely(name: str, got: np.ndarray, want: np.ndarray) -> tuple[bool, float]:
    """Whether ``got`` matches ``want`` (exact for integers; floats within ``rtol=2e-3`` and an
    absolute slack of 1e-3 of the output's largest finite magnitude, equal infinities
    agreeing; a float16 output within its own precision), and the largest absolute error:
    the ``agrees`` of the third and fourth sets."""
    got64, want64 = got.astype("float64"), want.astype("float64")
    with np.errstate(invalid="ignore"):
        diff = np.where(got64 == want64, 0.0, np.abs(got64 - want64))
    err = float(np.max(diff)) if got.size else 0.0
    if got.dtype.kind in "iu":
        return bool(np.array_equal(got64, want64)), err
    finite = np.abs(want64[np.isfinite(want64)])
    scale = float(np.max(finite)) if finite.size else 1.0
    atol = 1e-3 * (scale or 1.0)
    rtol = 2e-3 if got.dtype != np.float16 else 2e-3 + 2.0**-10
    return bool(np.allclose(got64, want64, rtol=rtol, atol=atol)), err


@dataclass
class KernelSet:
    tag: str
    source: str
    numba_module: str
    inputs: Callable[[int], Arrays]
    reference: Callable[[str, list[np.ndarray]], list[np.ndarray]]
    agrees: Callable[[str, np.ndarray, np.ndarray], tuple[bool, float]]
    outputs: dict[str, int] = field(default_factory=dict)
    tvm_refuses: dict[str, str] = field(default_factory=dict)

    def tvm_source(self) -> str:
        """``source`` without the functions TVM refuses (they would fail the whole module)."""
        parts = self.source.split("@T.prim_func\n")
        kept = [p for p in parts[1:]
                if p.split("(", 1)[0].removeprefix("def ") not in self.tvm_refuses]
        return parts[0] + "".join("@T.prim_func\n" + p for p in kept)

    def builders(self) -> dict[str, Callable[[list[str], Arrays], dict[str, Any]]]:
        return {
            "ours": lambda names, args: ours_runners(names, args, self.source, self.tag),
            "tvm": lambda names, args: tvm_runners(
                [n for n in names if n not in self.tvm_refuses], args, self.tvm_source(),
                self.tag),
            "numba": lambda names, args: numba_runners(names, args, self.numba_module),
        }

    def outputs_agree(self, name: str, peer: list[np.ndarray], ours: list[np.ndarray]) -> bool:
        k = self.outputs.get(name, 1)
        return all(self.agrees(name, p, o)[0] for p, o in zip(peer[-k:], ours[-k:]))

    def check(self, names: list[str]) -> int:
        """Run every side once on fresh inputs and compare its outputs with numpy's; the
        number of disagreements (a side that fails to build or run counts as one)."""
        sides = {side: self.inputs(0) for side in ("ours", "tvm", "numba")}
        bad = 0
        for name in names:
            want = self.reference(name, self.inputs(0)[name])
            cells = [f"{name:20s}"]
            for side, build in self.builders().items():
                try:
                    runner = build([name], sides[side]).get(name)
                    if runner is None:
                        cells.append(f"{side}: -")
                        continue
                    runner()
                except Exception as exc:
                    cells.append(f"{side}: {type(exc).__name__}: {str(exc).splitlines()[0][:80]}")
                    bad += 1
                    continue
                outs = sides[side][name][-self.outputs.get(name, 1):]
                results = [self.agrees(name, g, w) for g, w in zip(outs, want)]
                ok = all(r[0] for r in results)
                bad += not ok
                err = max(r[1] for r in results)
                cells.append(f"{side}: {'ok ' if ok else 'BAD'} err {err:.2e}")
            print("  ".join(cells), flush=True)
        return bad

    def main(self, doc: str) -> None:
        parser = argparse.ArgumentParser(description=doc.split("\n")[0])
        parser.add_argument("--rounds", type=int, default=3)
        parser.add_argument("--repeat", type=int, default=5)
        parser.add_argument("--only", default="")
        parser.add_argument("--check", action="store_true", help="compare with numpy, no timing")
        opts = parser.parse_args()
        names = list(self.inputs(0))
        if opts.only:
            names = [n for n in names if n in opts.only.split(",")]
        if opts.check:
            sys.exit(1 if self.check(names) else 0)
        print_host()
        sides = {side: self.inputs(0) for side in ("ours", "tvm", "numba")}
        runners = {side: build(names, sides[side]) for side, build in self.builders().items()}
        time_and_print(names, sides, runners, opts.rounds, opts.repeat, self.outputs_agree)
