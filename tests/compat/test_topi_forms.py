"""Forms of the PrimFuncs TVM's TOPI operators produce (``te.create_prim_func``) that
``tests/fuzz/topi_peer.py`` found we refused or computed wrong; small kernels of our own in
the same shapes, checked against numpy and the interpreter."""

from __future__ import annotations

import numpy as np
import pytest

import tvmscript
from tvmscript import tir as T

_TARGETS = ["interp", "llvm -mcpu=znver3", "llvm -mcpu=skylake-avx512"]


@pytest.mark.parametrize("target", _TARGETS)
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_truncmod_of_floats_is_c_fmod(target: str, dtype: str) -> None:
    # TOPI's float mod prints as T.truncmod: TVM's truncmod (unlike truncdiv) accepts
    # floats and computes C's fmod (the dividend's sign)
    @T.prim_func
    def rem(A: T.Buffer((9,), dtype), B: T.Buffer((9,), dtype), C: T.Buffer((9,), dtype)):
        for i in range(9):
            C[i] = T.truncmod(A[i], B[i])

    a = np.array([-7.5, 7.5, 3.25, -0.5, 5, 0.125, -6, 6.5, 0], dtype)
    b = np.array([2, -2, 1.5, 0.25, 5, 3, 4, -2.5, 1], dtype)
    c = np.zeros(9, dtype)
    tvmscript.build(rem, target=target)(a, b, c)
    np.testing.assert_array_equal(c, np.fmod(a, b))
    assert tvmscript.ir.structural_equal(rem, tvmscript.from_source(rem.script()))


def test_truncdiv_and_truncmod_refuse_bool_and_truncdiv_floats() -> None:
    with pytest.raises(TypeError, match="T.truncdiv needs integer operands"):
        T.truncdiv(T.float32(1), T.float32(2))
    with pytest.raises(TypeError, match="T.truncmod needs integer or float operands"):
        T.truncmod(T.bool(True), T.bool(True))
