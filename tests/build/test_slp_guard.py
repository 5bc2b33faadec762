"""LLVM's SLP vectorizer narrows the operand of an unsigned int-to-float conversion by counting
its sign bits (right only for signed ones): ``uitofp(or i64 %x, -4)``, about 2^64, became a
``uitofp`` of 32 bits (about 2^32) on AVX-512 targets. Modules converting unsigned integers to
floats are optimized without SLP (``backend.runtime.target.slp_is_safe``). The program is the
differential fuzzer's find, reduced."""

from __future__ import annotations

import numpy as np
import pytest

import tvmscript
from backend.runtime.target import slp_is_safe
from lowering.target import Target

SOURCE = '''
@T.prim_func
def high_bits(A: T.Buffer((2, 2), "float64"), OUT: T.Buffer((9,), "float32")):
    t = T.alloc_buffer((9,), "uint64")
    for i0 in range(9):
        with T.block("t"):
            v = T.axis.spatial(9, i0)
            t[v] = T.bitwise_or(T.Cast("uint64", T.int64(-4)), T.Cast("uint64", T.bitwise_or(
                T.Cast("uint16", A[1, (7 + v * -3) % 2]), T.Cast("uint16", v))))
    for i in range(9):
        OUT[i] = T.Cast("float32", t[i])
'''


@pytest.mark.parametrize("cpu", ["znver4", "skylake-avx512", "znver3"])
def test_unsigned_values_with_high_bits_convert_like_the_interpreter(cpu: str) -> None:
    target = Target(f"llvm -mcpu={cpu}")
    missing = target.missing_on_host()
    if missing:
        pytest.skip(f"the host lacks {', '.join(missing)} (target {cpu})")
    func = tvmscript.from_source(SOURCE)
    a = np.array([[0.5, -1.5], [2.7, -3.2]])
    want = np.zeros(9, "float32")
    tvmscript.build(func, target="interp")(a, want)
    got = np.zeros(9, "float32")
    tvmscript.build(func, target=target, cache=False)(a, got)
    np.testing.assert_array_equal(got, want)
    assert np.all(want == np.float32(2.0**64))


def test_which_modules_keep_slp() -> None:
    assert not slp_is_safe("  %c = uitofp i64 %x to float")
    assert not slp_is_safe("  %c = uitofp <8 x i16> %x to <8 x float>")
    assert slp_is_safe("  %c = sitofp i64 %x to float")
    assert slp_is_safe("  %c = uitofp i1 %b to float")  # a bool: nothing to narrow
    assert slp_is_safe("  %c = uitofp <4 x i1> %b to <4 x float>")
