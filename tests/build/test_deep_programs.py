"""Programs that nest deeply: the compiler walks the IR recursively, so a long chain of
``let`` bindings (each binding nests the rest of the body) or a rewrite that nests on its
own needs more than Python's default 1000 frames (``lowering.pass_infra.room_for_deep_ir``).
Past what the raised limit allows, ``build`` says so instead of crashing in a pass."""

from __future__ import annotations

import numpy as np
import pytest

import lowering
import tvmscript
from lowering.target import Target
from tvmscript import tir as T

BASELINE = Target("llvm -mcpu=x86-64")
"""Code every x86-64 host runs."""


def _chain(n: int) -> str:
    """A kernel binding ``n`` values, each from the one before: ``n`` nested LetStmts."""
    lines = ["@T.prim_func",
             "def chain(A: T.Buffer((4,), 'float32'), B: T.Buffer((4,), 'float32')):",
             "    x0 = A[0]"]
    lines += [f"    x{i} = x{i - 1} * T.float32(0.5) + A[{i % 4}]" for i in range(1, n)]
    lines.append(f"    B[0] = x{n - 1}")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("target", [BASELINE, "interp"], ids=["llvm", "interp"])
def test_a_long_chain_of_bindings_builds(target: object) -> None:
    func = tvmscript.from_source(_chain(600))
    a = np.arange(4, dtype="float32")
    want = np.float32(a[0])
    for i in range(1, 600):
        want = np.float32(want * np.float32(0.5) + a[i % 4])
    b = np.zeros(4, "float32")
    tvmscript.build(func, target=target, cache=False)(a, b)
    assert b[0] == pytest.approx(float(want), rel=1e-6)


def test_past_the_limit_build_says_so() -> None:
    func = tvmscript.from_source(_chain(4000))
    with pytest.raises(RecursionError, match="nests too deeply for the compiler"):
        tvmscript.build(func, target=BASELINE, cache=False)


@T.prim_func
def cosine_rows(A: T.Buffer((8192, 64), "float32"), B: T.Buffer((8192, 64), "float32"),
                Out: T.Buffer((8192,), "float32")):
    acc = T.alloc_buffer((3,), "float32")
    for i in T.parallel(8192):
        acc[0] = T.float32(0)
        acc[1] = T.float32(0)
        acc[2] = T.float32(0)
        for j in range(64):
            a = A[i, j]
            b = B[i, j]
            acc[0] = acc[0] + a * b
            acc[1] = acc[1] + a * a
            acc[2] = acc[2] + b * b
        Out[i] = acc[0] / T.sqrt(T.max(acc[1] * acc[2], T.float32(1e-16)))


def test_row_lanes_that_nest_deeply_lower() -> None:
    """Two 16-row vectors of rows whose elements are bound by ``let``: a binding per row
    and element nests some 320 levels deep (a RecursionError in a late pass before)."""
    config = {"vectorize_row_reductions": {"vector_bits": 512, "blocks": 2}}
    with lowering.PassContext(config=config):
        lowered = lowering.lower(cosine_rows, target="llvm -mcpu=znver4")
    assert "A_flat_row" in lowered.script() or "T.Ramp" in lowered.script()
