"""A kernel built imperatively with the IRBuilder: no parser, plain Python drives it.

Each ``with`` opens a frame (function, loop, block); statements made inside go into it.
Here Python decides how many taps a 1-d stencil has, and builds the sum of the taps as an
expression. The result is the same ``PrimFunc`` the parser would make from TVMScript.
"""

from __future__ import annotations

import numpy as np
from _timing import report

import tvmscript
from irbuilder import IRBuilder, def_
from irbuilder.ir import PrimFunc
from tvmscript import tir as T  # the same T namespace as irbuilder.tir, plus the parser's names

N = 4096


def stencil(weights: list[float]) -> PrimFunc:
    """``B[i] = sum_t weights[t] * A[i + t]`` over the valid positions."""
    taps = len(weights)
    with IRBuilder() as builder:
        with T.prim_func():
            T.func_name(f"stencil_{taps}")
            a = T.arg("A", T.Buffer((N,), "float32"))
            b = T.arg("B", T.Buffer((N - taps + 1,), "float32"))
            with T.serial(N - taps + 1) as i:
                def_("i", i)  # names the loop variable in the printed script
                total = a[i] * T.float32(weights[0])
                for t in range(1, taps):
                    total = total + a[i + t] * T.float32(weights[t])
                T.buffer_store(b, total, [i])
    func = builder.get()
    assert isinstance(func, PrimFunc)
    return func


def main() -> None:
    weights = [0.25, 0.5, 0.25, -0.125, 0.0625]
    func = stencil(weights)
    print(func.script())
    kernel = tvmscript.build(func)
    a = np.random.default_rng(0).random(N, dtype=np.float32)
    b = np.empty(N - len(weights) + 1, np.float32)
    kernel(a, b)
    want = np.convolve(a, weights[::-1], mode="valid").astype(np.float32)
    np.testing.assert_allclose(b, want, rtol=1e-5, atol=1e-6)
    print("IRBuilder stencil matches numpy")
    report(f"stencil {len(weights)} taps, n={N}", lambda: kernel(a, b),
           lambda: np.convolve(a, weights[::-1], mode="valid"))


if __name__ == "__main__":
    main()
