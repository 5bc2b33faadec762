"""Forms that the before/after program pairs of TVM's transform and schedule tests use
(docs/tvm-compat.md, "Before/after pairs of TVM's transform tests") and that we refused or
computed wrong; small kernels of our own in the same shapes, checked against numpy and the
interpreter."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import tvmscript

sys.path.insert(0, str(Path(__file__).parent.parent / "perf_codegen"))
from pinned import runnable_targets

_TARGETS = runnable_targets("interp", "llvm -mcpu=znver3", "llvm -mcpu=skylake-avx512")

_UINT1 = """
from tvm.script import tir as T

@T.prim_func
def pick(M: T.Buffer((8,), "uint1"), B: T.Buffer((8,), "int32")):
    for i in range(2):
        B[i * 4:i * 4 + 4] = T.Select(
            T.Cast("uint1x4", M[i * 4:i * 4 + 4]), T.Broadcast(1, 4), T.Broadcast(2, 4))
"""


@pytest.mark.parametrize("target", _TARGETS)
def test_uint1_is_tvms_spelling_of_bool(target: str) -> None:
    # TVM's bool is the one-bit unsigned type, so "uint1" and "uint1x4" name bool and a
    # vector of it (the vectorizer tests' lane masks are "uint1x4")
    func = tvmscript.from_source(_UINT1)
    assert str(func.buffer_map[func.params[0]].dtype) == "bool"
    m = np.array([1, 0, 0, 1, 1, 1, 0, 0], bool)
    b = np.zeros(8, np.int32)
    tvmscript.build(func, target=target)(m, b)
    np.testing.assert_array_equal(b, np.where(m, 1, 2))
    assert tvmscript.ir.structural_equal(func, tvmscript.from_source(func.script()))
