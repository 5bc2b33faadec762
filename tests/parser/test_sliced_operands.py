"""A buffer sliced ``A[lo:hi]`` where a value is expected -- an operand of an operator, a
comparison, ``and``/``or``, or a positional argument of a ``T.`` call other than
``T.reads``/``T.writes``/``T.match_buffer``/``T.realize`` -- is the vector load
``A[T.Ramp(lo, 1, hi - lo)]``, as TVM's parser reads it (TVM prints vector loads that way,
so its printed, vectorized functions read back); elsewhere it stays a region."""

from __future__ import annotations

import numpy as np
import pytest

import tvmscript
from irbuilder.ir import BufferLoad, BufferRegion, Ramp
from tvmscript import tir as T

TVM_TEXT = '''
from tvm.script import tir as T

@T.prim_func
def vectorized(A: T.Buffer((4, 16), "float32"), B: T.Buffer((4, 16), "float32"),
               C: T.Buffer((4, 8), "float32")):
    for i in range(4):
        with T.block("b"):
            vi = T.axis.spatial(4, i)
            T.reads(A[vi, 0:16])
            T.writes(B[vi, 0:16], C[vi, 0:8])
            B[vi, 0:4] = T.exp(A[vi, 0:4]) + T.Broadcast(T.float32(1), 4)
            B[vi, 4:8] = T.if_then_else(A[vi, 4:8] < A[vi, 8:12], A[vi, 4:8], -A[vi, 8:12])
            B[vi, 8:16] = T.max(A[vi, 8:16], T.Broadcast(T.float32(0), 8))
            C[vi, 0:8] = A[vi, 0:16:2]
'''


def _expected(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    b = np.concatenate([
        np.exp(a[:, :4]) + 1,
        np.where(a[:, 4:8] < a[:, 8:12], a[:, 4:8], -a[:, 8:12]),
        np.maximum(a[:, 8:16], 0),
    ], axis=1)
    return b, a[:, ::2]


@pytest.mark.parametrize("target", [tvmscript.Target("llvm -mcpu=znver3"), "interp"], ids=str)
def test_tvm_printed_vector_code_runs(target: object) -> None:
    func = tvmscript.from_source(TVM_TEXT)
    a = np.random.default_rng(0).standard_normal((4, 16)).astype("float32")
    b, c = np.zeros((4, 16), "float32"), np.zeros((4, 8), "float32")
    tvmscript.build(func, target=target)(a, b, c)
    want_b, want_c = _expected(a)
    np.testing.assert_allclose(b, want_b, rtol=1e-6)
    np.testing.assert_array_equal(c, want_c)


def test_operands_are_vector_loads_and_regions_stay_regions() -> None:
    func = tvmscript.from_source(TVM_TEXT)
    # The loop is below the implicit root block.
    block = func.body.block.body.body.block  # type: ignore[attr-defined]
    assert all(isinstance(r, BufferRegion) for r in (*block.reads, *block.writes))
    first = block.body.seq[0].value  # exp(A[vi, 0:4]) + Broadcast
    load = first.a.args[0]
    assert isinstance(load, BufferLoad) and isinstance(load.indices[1], Ramp)
    assert load.indices[1].lanes == 4
    again = tvmscript.from_source(func.script())
    assert tvmscript.ir.structural_equal(func, again)


def test_a_multiple_of_the_loop_variable_as_the_slice_start() -> None:
    @T.prim_func
    def add_one(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
        for i in range(4):
            B[i * 4 : i * 4 + 4] = A[i * 4 : i * 4 + 4] + T.Broadcast(T.float32(1), 4)

    a = np.arange(16, dtype="float32")
    b = np.zeros(16, "float32")
    tvmscript.build(add_one, target=tvmscript.Target("llvm -mcpu=znver3"))(a, b)
    np.testing.assert_array_equal(b, a + 1)


def test_a_symbolic_length_is_refused_at_the_operand() -> None:
    with pytest.raises(tvmscript.DiagnosticError) as info:
        tvmscript.from_source(
            "from tvm.script import tir as T\n"
            "@T.prim_func\n"
            "def f(A: T.Buffer((16,), 'float32'), B: T.Buffer((16,), 'float32'), n: T.int32):\n"
            "    B[0] = T.sum(A[0:n] * 2)\n"
        )
    text = str(info.value)
    assert "cannot read the region of 'A' with extent n" in text
    assert ":4:" in text  # the line of the operand


def test_two_sliced_dimensions_are_refused() -> None:
    with pytest.raises(tvmscript.DiagnosticError, match="more than one dimension is sliced"):
        tvmscript.from_source(
            "from tvm.script import tir as T\n"
            "@T.prim_func\n"
            "def f(A: T.Buffer((4, 4), 'float32'), B: T.Buffer((16,), 'float32')):\n"
            "    B[0:16] = A[0:4, 0:4] * T.float32(2)\n"
        )


def test_an_open_slice_stays_a_region_as_in_tvm() -> None:
    # TVM reads only slices with both bounds as vector loads: ``A[:4] * 2`` is arithmetic
    # on a region, refused where it is written
    with pytest.raises(tvmscript.DiagnosticError) as info:
        tvmscript.from_source(
            "from tvm.script import tir as T\n"
            "@T.prim_func\n"
            "def f(A: T.Buffer((16,), 'float32'), B: T.Buffer((16,), 'float32')):\n"
            "    B[0:4] = A[:4] * T.Broadcast(T.float32(2), 4)\n"
        )
    assert ":4:" in str(info.value)
