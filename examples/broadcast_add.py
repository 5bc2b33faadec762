"""Rank polymorphism (seed F2): one generic broadcast add for inputs of rank 1 to 4.

``broadcast_add(a_shape, b_shape)`` returns a new kernel for those shapes. The parser runs
the Python around the TVMScript: ``T.grid(*c_shape)`` makes one loop per dimension,
``for *i in ...`` binds them all, and ``T.meta_var`` marks index tuples computed at parse
time (a broadcast dimension, extent 1, is indexed with 0).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from _timing import report

import tvmscript
from tvmscript import tir as T


def broadcast_add(a_shape: tuple[int, ...], b_shape: tuple[int, ...]) -> Any:
    c_shape = tuple(max(x, y) for x, y in zip(a_shape, b_shape))

    @T.prim_func
    def f(
        A: T.Buffer(a_shape, "float32"),
        B: T.Buffer(b_shape, "float32"),
        C: T.Buffer(c_shape, "float32"),
    ) -> None:
        for (*i,) in T.grid(*c_shape):
            ia = T.meta_var(tuple(0 if e == 1 else x for x, e in zip(i, a_shape)))
            ib = T.meta_var(tuple(0 if e == 1 else x for x, e in zip(i, b_shape)))
            C[tuple(i)] = A[ia] + B[ib]

    return f


CASES = [
    ((4096,), (1,)),
    ((64, 1), (1, 64)),
    ((8, 1, 32), (1, 16, 32)),
    ((4, 1, 8, 16), (1, 6, 8, 1)),
]


def main() -> None:
    rng = np.random.default_rng(0)
    for a_shape, b_shape in CASES:
        run_case(a_shape, b_shape, rng)


def run_case(a_shape: tuple[int, ...], b_shape: tuple[int, ...], rng: np.random.Generator) -> None:
    kernel = tvmscript.build(broadcast_add(a_shape, b_shape))
    a = rng.random(a_shape, dtype=np.float32)
    b = rng.random(b_shape, dtype=np.float32)
    c = np.empty(np.broadcast_shapes(a_shape, b_shape), np.float32)
    kernel(a, b, c)
    np.testing.assert_array_equal(c, a + b)
    print(f"rank {len(a_shape)}: {a_shape} + {b_shape} -> {c.shape} matches numpy")
    report(f"  broadcast_add rank {len(a_shape)}", lambda: kernel(a, b, c),
           lambda: np.add(a, b, out=c))


if __name__ == "__main__":
    main()
