"""bfloat16 and the float8 types (TVM v0.16 spellings): parse, print, compare; the CPU build
refuses them naming the type (numpy has neither; see docs/tvm-compat.md)."""

from __future__ import annotations

import pytest
from surface_kit import round_trip

from irbuilder.ir import FloatImm, as_dtype
from lowering.cpu_support import UnsupportedConstructError
from tvmscript import build
from tvmscript import tir as T


@pytest.mark.parametrize("dtype", ["bfloat16", "e4m3_float8", "e5m2_float8"])
def test_low_precision_types_round_trip_and_are_refused_by_the_build(dtype: str) -> None:
    func = round_trip(f"""
        @T.prim_func
        def f(A: T.Buffer((4,), "{dtype}"), B: T.Buffer((4,), "float32")):
            for i in range(4):
                A[i] = A[i] + T.{dtype}(1.5)
                B[i] = T.Cast("float32", A[i])
        """)
    assert str(func.buffer_map[func.params[0]].dtype) == dtype
    for target in ("llvm", "interp"):
        with pytest.raises(UnsupportedConstructError, match=f"{dtype} \\(buffer 'A'\\)"):
            build(func, target=target)


def test_low_precision_dtype_facts() -> None:
    bf16 = as_dtype("bfloat16x8")
    assert bf16.is_float and bf16.is_low_precision_float and bf16.itemsize == 16
    assert str(bf16.numpy_dtype) == "uint16" and str(as_dtype("e4m3_float8").numpy_dtype) == "uint8"
    assert as_dtype("e4m3_float8").max_value == 448.0
    constant = T.bfloat16(2.5)
    assert isinstance(constant, FloatImm) and str(constant.dtype) == "bfloat16"
    with pytest.raises(ValueError, match="does not fit"):
        T.e4m3_float8(1000.0)


def test_void_handles_and_local_low_precision_values_are_refused_where_used() -> None:
    func = round_trip("""
        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            for i in range(4):
                x: T.bfloat16 = T.bfloat16(A[i])
                A[i] = T.Cast("float32", x)
        """)
    with pytest.raises(UnsupportedConstructError, match=r":7:\d+: bfloat16 is not supported"):
        build(func)
