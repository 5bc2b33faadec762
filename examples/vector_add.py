"""Vector add: C = A + B on 1-d float32 arrays of a symbolic length."""

from __future__ import annotations

import numpy as np
from _timing import report

import tvmscript
from tvmscript import tir as T


@T.prim_func
def vector_add(
    n: T.int64,
    A: T.Buffer((n,), "float32"),  # noqa: F821  (n is the parameter above)
    B: T.Buffer((n,), "float32"),  # noqa: F821
    C: T.Buffer((n,), "float32"),  # noqa: F821
) -> None:
    for i in range(n):
        C[i] = A[i] + B[i]


def main() -> None:
    kernel = tvmscript.build(vector_add)
    n = 100_000
    rng = np.random.default_rng(0)
    a, b = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    c = np.empty(n, np.float32)
    kernel(n, a, b, c)
    np.testing.assert_array_equal(c, a + b)
    print("vector_add matches numpy")
    report(f"vector_add n={n}", lambda: kernel(n, a, b, c), lambda: np.add(a, b, out=c))


if __name__ == "__main__":
    main()
