"""Differences from real TVM found by ``tests/fuzz/tvm_peer.py``, minimised; the expected
numbers are TVM v0.16's semantics (worked out by hand in each test)."""

from __future__ import annotations

import numpy as np
import pytest

import tvmscript
from irbuilder.ir import as_dtype, binary_dtype
from tvmscript import tir as T

_TARGETS = ["interp", "llvm -mcpu=x86-64-v3"]


@pytest.mark.parametrize("target", _TARGETS)
def test_signed_and_unsigned_of_one_width_compute_unsigned(target: str) -> None:
    # TVM's BinaryOpMatchTypes casts the signed operand to the unsigned type of the same
    # width: int8(-7) & uint8(200) is uint8(249) & uint8(200) = 200, -7 // 200 is
    # 249 // 200 = 1 and -7 < 3 is 249 < 3, false. We took the signed type (-56, -1, true).
    @T.prim_func
    def mixed(A: T.Buffer((4,), "int8"), U: T.Buffer((4,), "uint8"),
              AND: T.Buffer((4,), "int32"), DIV: T.Buffer((4,), "int32"),
              MOD: T.Buffer((4,), "int32"), LT: T.Buffer((4,), "int32")):
        for i in range(4):
            AND[i] = T.Cast("int32", T.bitwise_and(A[i], U[i]))
            DIV[i] = T.Cast("int32", A[i] // U[i])
            MOD[i] = T.Cast("int32", A[i] % U[i])
            LT[i] = T.Cast("int32", A[i] < U[i])

    a = np.array([-7, 7, -128, 100], "int8")
    u = np.array([200, 3, 255, 1], "uint8")
    outs = [np.zeros(4, "int32") for _ in range(4)]
    tvmscript.build(mixed, target=target)(a, u, *outs)
    wide = a.astype("uint8").astype("int64")  # the int8 values as uint8
    un = u.astype("int64")
    np.testing.assert_array_equal(outs[0], wide & un)
    np.testing.assert_array_equal(outs[1], wide // un)
    np.testing.assert_array_equal(outs[2], wide % un)
    np.testing.assert_array_equal(outs[3], (wide < un).astype("int32"))
    assert outs[0].tolist() == [200, 3, 128, 0] and outs[3].tolist() == [0, 0, 1, 0]


def test_promotion_of_one_width_is_unsigned_either_way() -> None:
    for signed, unsigned in (("int8", "uint8"), ("int32", "uint32"), ("int64", "uint64")):
        assert str(binary_dtype(as_dtype(signed), as_dtype(unsigned))) == unsigned
        assert str(binary_dtype(as_dtype(unsigned), as_dtype(signed))) == unsigned
    # a wider type still wins whatever its sign
    assert str(binary_dtype(as_dtype("uint8"), as_dtype("int16"))) == "int16"
    assert str(binary_dtype(as_dtype("int64"), as_dtype("uint32"))) == "int64"
