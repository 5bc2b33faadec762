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


@pytest.mark.parametrize("target", _TARGETS)
@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_parallel_column_scan_over_symbolic_rows(target: str, dtype: str) -> None:
    # TOPI's scans (cumsum, cumprod) run the columns in parallel and the rows serially,
    # indexing through the flat offset: with a symbolic row count, (c + 2*(r + 1)) % 2 could
    # only be proven to be c if the sum could not wrap, and the race check refused the loop
    @T.prim_func
    def scan(a: T.handle, b: T.handle):
        n = T.int32()
        A = T.match_buffer(a, (n, 2), dtype)
        B = T.match_buffer(b, (n, 2), dtype)
        for c in T.parallel(2):
            B[c // 2, c % 2] = A[c // 2, c % 2]
            for r in range(n - 1):
                B[(c + (r + 1) * 2) // 2, (c + (r + 1) * 2) % 2] = (
                    B[(c + r * 2) // 2, (c + r * 2) % 2] + A[(c + (r + 1) * 2) // 2,
                                                             (c + (r + 1) * 2) % 2])

    a = np.arange(14, dtype=dtype).reshape(7, 2) - 5
    b = np.zeros_like(a)
    tvmscript.build(scan, target=target)(a, b)
    np.testing.assert_array_equal(b, np.cumsum(a, axis=0))


def test_power_of_two_modulo_drops_multiples_even_if_the_sum_may_wrap() -> None:
    from irbuilder.ir import FloorMod, IntImm, Mod, Var
    from lowering.arith import Analyzer, simplify_expr

    v, k = Var("v", "int32"), Var("k", "int32")  # k unbounded: v + 4*k may wrap
    an = Analyzer()
    an.bind_range(v, IntImm("int32", 0), IntImm("int32", 4))
    four, three = IntImm("int32", 4), IntImm("int32", 3)
    assert simplify_expr(FloorMod(v + k * 4 + 8, four), an) is v
    # wrap-around shifts the sum by 2**32, a multiple of 4 but not of 3; C's % keeps the
    # dividend's sign, so neither may drop k*c
    kept = simplify_expr(FloorMod(v + k * 3, three), an)
    assert isinstance(kept, FloorMod)
    assert isinstance(simplify_expr(Mod(v + k * 4, four), an), Mod)
    # the wrapped values agree: int32 (v + 4k + 8) % 4 == v for k near the top of the range
    for kv in (2**29, 2**29 + 1, -(2**29) - 3):
        wrapped = np.int64(np.array([0 + 4 * kv + 8], "int64").astype("int32")[0])
        assert wrapped % 4 == 0
