"""A fact that reads memory (an ``if`` condition, ``T.assume``, an assert) dies at the first
store that may change that memory: compiled kernels agree with the interpreter on inputs
where the guarded element is overwritten."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tvmscript
from irbuilder.ir import PrimFunc
from tvmscript import ir as I
from tvmscript import tir as T


def _agree(func: PrimFunc, *arrays: np.ndarray, **options: Any) -> list[np.ndarray]:
    """Run ``func`` compiled and interpreted on copies of ``arrays``; both results."""
    native = [a.copy() for a in arrays]
    interp = [a.copy() for a in arrays]
    tvmscript.build(func, **options)(*native)
    tvmscript.build(func, target="interp")(*interp)
    for got, want in zip(native, interp):
        np.testing.assert_array_equal(got, want)
    return native


def _ints(*values: int) -> np.ndarray:
    return np.array(values, dtype="int32")


def test_straight_line_store_kills_the_if_condition() -> None:
    @T.prim_func
    def clamp_once(A: T.Buffer((4,), "int32"), out: T.Buffer((1,), "int32")):
        if A[2] < 0:
            A[2] = 0
            out[0] = T.if_then_else(A[2] < 0, -1, 1)

    _, out = _agree(clamp_once, _ints(1, 2, -3, 4), _ints(0))
    assert out[0] == 1


def test_store_in_one_branch_kills_the_fact_after_the_if() -> None:
    @T.prim_func
    def branchy(A: T.Buffer((4,), "int32"), c: T.int32, out: T.Buffer((2,), "int32")):
        if A[0] < 0:
            if c > 0:
                A[0] = 5
            else:
                out[1] = 7
            out[0] = T.if_then_else(A[0] < 0, -1, 1)

    _, _, out = _agree(branchy, _ints(-1, 0, 0, 0), np.int32(1), _ints(0, 0))
    assert out[0] == 1
    _, _, out = _agree(branchy, _ints(-1, 0, 0, 0), np.int32(0), _ints(0, 0))
    assert out[0] == -1


def test_store_later_in_a_loop_kills_the_fact_for_the_whole_body() -> None:
    @T.prim_func
    def loop_store(A: T.Buffer((4,), "int32"), out: T.Buffer((4,), "int32")):
        if A[0] < 0:
            for i in range(4):
                out[i] = T.if_then_else(A[0] < 0, -1, 1)  # the second iteration sees the store
                A[0] = 3

    _, out = _agree(loop_store, _ints(-1, 0, 0, 0), _ints(0, 0, 0, 0))
    assert list(out) == [-1, 1, 1, 1]


def test_assume_dies_at_a_store() -> None:
    @T.prim_func
    def assumed(A: T.Buffer((4,), "int32"), out: T.Buffer((1,), "int32")):
        T.evaluate(T.assume(A[1] >= 0))
        A[1] = -4
        out[0] = T.if_then_else(A[1] >= 0, 1, -1)

    _, out = _agree(assumed, _ints(0, 3, 0, 0), _ints(0))
    assert out[0] == -1


def test_assert_dies_at_a_store() -> None:
    @T.prim_func
    def checked(A: T.Buffer((4,), "int32"), out: T.Buffer((1,), "int32")):
        assert A[3] == 0, "A[3] must start at 0"
        A[3] = A[3] + 1
        out[0] = T.if_then_else(A[3] == 0, 10, 20)

    _, out = _agree(checked, _ints(0, 0, 0, 0), _ints(0))
    assert out[0] == 20


def test_second_assert_on_overwritten_memory_stays() -> None:
    @T.prim_func
    def rechecked(A: T.Buffer((2,), "int32")):
        assert A[0] >= 0, "first"
        A[0] = A[0] - 10
        assert A[0] >= 0, "second"

    kernel = tvmscript.build(rechecked)
    with pytest.raises(AssertionError, match="second"):
        kernel(_ints(3, 0))
    with pytest.raises(AssertionError, match="second"):
        tvmscript.build(rechecked, target="interp")(_ints(3, 0))


def test_store_through_a_decl_buffer_alias_kills_the_fact() -> None:
    @T.prim_func
    def aliased(A: T.Buffer((4,), "int32"), out: T.Buffer((1,), "int32")):
        A2 = T.decl_buffer((2, 2), "int32", data=A.data)
        if A[2] < 0:
            A2[1, 0] = 9  # the same element as A[2]
            out[0] = T.if_then_else(A[2] < 0, -1, 1)

    _, out = _agree(aliased, _ints(0, 0, -2, 0), _ints(0))
    assert out[0] == 1


def test_two_dimensional_fact_dies_after_flattening() -> None:
    @T.prim_func
    def grid(A: T.Buffer((2, 3), "int32"), out: T.Buffer((2,), "int32")):
        for i in range(2):
            if A[i, 1] < 0:
                A[i, 1] = 0
                out[i] = T.if_then_else(A[i, 1] < 0, -1, 1)

    a = np.array([[0, -1, 0], [0, -5, 0]], dtype="int32")
    _, out = _agree(grid, a, _ints(0, 0))
    assert list(out) == [1, 1]


def test_store_to_another_parameter_may_alias() -> None:
    @T.prim_func
    def two(A: T.Buffer((4,), "int32"), B: T.Buffer((4,), "int32"), out: T.Buffer((1,), "int32")):
        if A[1] < 0:
            B[1] = 6  # B may be the same array as A
            out[0] = T.if_then_else(A[1] < 0, -1, 1)

    a = _ints(0, -1, 0, 0)
    native, interp = a.copy(), a.copy()
    out_n, out_i = _ints(0), _ints(0)
    tvmscript.build(two)(native, native, out_n)
    tvmscript.build(two, target="interp")(interp, interp, out_i)
    assert out_n[0] == out_i[0] == 1


def test_store_to_a_local_allocation_keeps_parameter_facts() -> None:
    @T.prim_func
    def local(A: T.Buffer((4,), "int32"), out: T.Buffer((1,), "int32")):
        t = T.alloc_buffer((1,), "int32")
        if A[1] < 0:
            t[0] = A[1]
            out[0] = T.if_then_else(A[1] < 0, t[0], 1)

    _, out = _agree(local, _ints(0, -3, 0, 0), _ints(0))
    assert out[0] == -3
    # A local allocation never overlaps a parameter: the inner test is still decided.
    assert "if_then_else" not in tvmscript.build(local).get_source("tir")


def test_fact_survives_a_loop_storing_only_local_memory() -> None:
    @T.prim_func
    def read_only(A: T.Buffer((4,), "int32"), out: T.Buffer((1,), "int32")):
        t = T.alloc_buffer((1,), "int32")
        if A[0] < 0:
            t[0] = 0
            for i in range(4):
                t[0] = t[0] + T.if_then_else(A[0] < 0, i, -1)
            out[0] = t[0]

    _, out = _agree(read_only, _ints(-1, 0, 0, 0), _ints(9))
    assert out[0] == 6
    assert "if_then_else" not in tvmscript.build(read_only).get_source("tir")


# -- the codegen-time loop rewrites --------------------------------------------------


def test_distribute_keeps_a_reduction_whose_element_another_parameter_overwrites() -> None:
    @T.prim_func
    def two_outputs(
        A: T.Buffer((64,), "float32"),
        B: T.Buffer((64,), "float32"),
        C: T.Buffer((64,), "float32"),
        out: T.Buffer((1,), "float32"),
    ):
        s = T.alloc_buffer((1,), "float32")
        s[0] = T.float32(0)
        for j in range(64):
            B[j] = A[j] * T.float32(2)
            C[j] = A[j] + T.float32(100)  # with C = B shifted by one, overwrites B[j - 1]
            s[0] = s[0] + B[j]
        out[0] = s[0]

    a = np.arange(64, dtype="float32")
    results = []
    for target in ("llvm", "interp"):
        storage, out = np.zeros(65, "float32"), np.zeros(1, "float32")
        tvmscript.build(two_outputs, target=target)(a, storage[1:], storage[:64], out)
        results.append(out[0])
    assert results[0] == results[1] == float(2 * a.sum())


def test_interchange_keeps_a_nest_whose_start_reads_the_written_array() -> None:
    @T.prim_func
    def moving_start(A: T.Buffer((512,), "int32"), C: T.Buffer((64,), "int32")):
        for j in range(C[0], C[0] + 16):
            for k in range(16):
                C[j + 8] = C[j + 8] + A[k * 32 + j + 8]

    c = np.zeros(64, "int32")
    c[0] = -8  # the first j writes C[0], the loop's own start
    _, c = _agree(moving_start, np.ones(512, "int32"), c)
    assert c[0] == 8 and c[16] == 0


def test_call_to_another_kernel_kills_facts_on_the_arrays_it_gets() -> None:
    @I.ir_module
    class Calls:
        @T.prim_func
        def negate(a: T.handle):
            A = T.match_buffer(a, (4,), "int32")
            for i in range(4):
                A[i] = -A[i]

        @T.prim_func
        def caller(a: T.handle, o: T.handle):
            A = T.match_buffer(a, (4,), "int32")
            out = T.match_buffer(o, (1,), "int32")
            if A[0] > 0:
                T.evaluate(T.call_extern("int32", "negate", a))
                out[0] = T.if_then_else(A[0] > 0, 1, -1)

    # The interpreter runs no calls between kernels: numpy gives the expected values.
    a, out = _ints(3, 1, 2, 4), _ints(0)
    tvmscript.build(Calls).caller(a, out)
    assert list(a) == [-3, -1, -2, -4] and out[0] == -1


def test_store_to_an_allocation_inside_the_loop_keeps_parameter_facts() -> None:
    @T.prim_func
    def scratch(A: T.Buffer((4,), "int32"), out: T.Buffer((1,), "int32")):
        acc = T.alloc_buffer((1,), "int32")
        if A[0] < 0:
            acc[0] = 0
            for i in range(4):
                t = T.decl_buffer((1,), "int32")
                t[0] = T.if_then_else(A[0] < 0, i, -1)
                acc[0] = acc[0] + t[0]
            out[0] = acc[0]

    _, out = _agree(scratch, _ints(-1, 0, 0, 0), _ints(9))
    assert out[0] == 6
    assert "if_then_else" not in tvmscript.build(scratch).get_source("tir")
