"""A region as a call argument (``T.reinterpret("float32x8", A[0:8])``) is its vector load."""

from __future__ import annotations

import numpy as np
import pytest

import tvmscript
from irbuilder.ir import BufferLoad, Call, Ramp
from tvmscript import tir as T


@T.prim_func
def bits_of_region(A: T.Buffer((8,), "int32"), B: T.Buffer((8,), "float32")):
    B[0:8] = T.reinterpret("float32x8", A[0:8])


def test_region_operand_of_reinterpret_is_a_vector_load() -> None:
    store = bits_of_region.body
    call = store.value  # type: ignore[attr-defined]
    assert isinstance(call, Call) and str(call.dtype) == "float32x8"
    load = call.args[0]
    assert isinstance(load, BufferLoad) and isinstance(load.indices[0], Ramp)
    assert load.indices[0].lanes == 8


@pytest.mark.parametrize("target", [tvmscript.Target("llvm -mcpu=znver3"), "interp"], ids=str)
def test_region_operand_values(target: object) -> None:
    a = np.arange(-4, 4, dtype="int32") * 1000003
    b = np.zeros(8, "float32")
    tvmscript.build(bits_of_region, target=target)(a, b)
    np.testing.assert_array_equal(b.view("int32"), a)


def test_unit_extent_dimension_is_indexed_by_its_start() -> None:
    @T.prim_func
    def row(A: T.Buffer((4, 8), "int32"), B: T.Buffer((8,), "float32")):
        B[0:8] = T.reinterpret("float32x8", A[2, 0:8])

    load = row.body.value.args[0]  # type: ignore[attr-defined]
    assert isinstance(load, BufferLoad)
    assert load.indices[0].value == 2  # type: ignore[attr-defined]
    assert isinstance(load.indices[1], Ramp)


def test_symbolic_extent_is_refused_with_its_name() -> None:
    with pytest.raises(tvmscript.DiagnosticError, match="cannot read the region of 'A'"):

        @T.prim_func
        def bad(A: T.Buffer((8,), "int32"), n: T.int32):
            T.evaluate(T.call_extern("f", A[0:n], dtype="int32"))
