"""Minimal programs for every failure the differential fuzzer found (see the long run)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from differential import compare, run_both

import lowering
from irbuilder import IRBuilder
from irbuilder import tir as T
from irbuilder.ir import PrimFunc, post_order_visit


def _kernel(body: Any) -> PrimFunc:
    with IRBuilder() as b:
        with T.prim_func():
            T.func_name("regress")
            body()
    func = b.get()
    assert isinstance(func, PrimFunc)
    return func


def _div_by_loop_var_times_zero(dtype: str) -> PrimFunc:
    def body() -> None:
        out = T.arg("OUT", T.Buffer((4, 6), "float32"))
        with T.serial(4) as i:
            with T.serial(6) as j:
                quotient = T.truncdiv(T.cast(j, dtype), T.cast(i, dtype))  # i == 0 divides by 0
                T.buffer_store(out, T.cast(quotient * T.cast(0, dtype), "float32"), [i, j])

    return _kernel(body)


# Found by the long fuzz run (5 of 1000 programs with seed 2): simplify folded `x * 0`
# to 0 when x was an integer division whose divisor may be zero.
@pytest.mark.parametrize("dtype", ["uint8", "int32"])
def test_division_by_zero_is_not_simplified_away(dtype: str) -> None:
    func = _div_by_loop_var_times_zero(dtype)
    args = [np.zeros((4, 6), "float32")]
    want, got = run_both(func, args)
    assert want.error == "ZeroDivisionError"
    assert compare(want, got, inexact=False) is None


def test_simplify_keeps_the_trapping_division() -> None:
    # The diagnosis of the bug above: lowering must keep the division that can raise.
    lowered = lowering.lower(_div_by_loop_var_times_zero("int32"))
    divisions: list[Any] = []
    post_order_visit(lowered.body, lambda n: divisions.append(n)
                     if type(n).__name__ in ("Div", "FloorDiv") else None)
    assert divisions


def test_uninitialized_scratch_is_not_compared() -> None:
    # A generator bug found in the first run (not a compiler bug): a scratch allocation
    # filled under an `if` was read uninitialized. Scratch fills are now unconditional.
    import progen
    from hypothesis import given, settings

    seen: list[bool] = []

    @settings(max_examples=30, derandomize=True, deadline=None, database=None)
    @given(progen.programs())
    def run(prog: progen.Program) -> None:
        text = prog.func.script()
        seen.append("decl_buffer" in text or "alloc_buffer" in text)

    run()
    assert any(seen)


def test_constant_false_if_round_trips() -> None:
    import tvmscript
    from irbuilder.ir import IfThenElse, structural_equal

    def body() -> None:
        out = T.arg("OUT", T.Buffer((1,), "int8"))
        with T.serial(1) as i:
            with T.If(T.bool(False)):
                with T.Then():
                    T.buffer_store(out, T.int8(0), [i])

    func = _kernel(body)
    found: list[Any] = []
    post_order_visit(func.body, lambda n: found.append(n) if isinstance(n, IfThenElse) else None)
    assert found
    parsed = tvmscript.from_source(func.script())
    assert structural_equal(parsed, func)


def test_unit_parallel_loop_with_a_match_buffer_of_its_row_builds_and_runs() -> None:
    # Found by progen_parallel: simplify replaced a loop of extent one by its start in the
    # body but not in a DeclBuffer's elem_offset (the match_buffer of row i), so codegen
    # saw `i` used outside its loop ("variable 'i' is used but not defined").
    import tvmscript

    with IRBuilder() as b:
        with T.prim_func():
            T.func_name("unit_row")
            out = T.arg("OUT", T.Buffer((1, 5), "int32"))
            with T.parallel(1) as i:
                with T.block("row"):
                    row = T.match_buffer(out[i, 0:5], (5,))
                    with T.serial(5) as j:
                        T.buffer_store(row, j * 3 + i, [j])
    func = b.get()
    got = np.zeros((1, 5), "int32")
    tvmscript.build(func)(got)
    want = np.zeros((1, 5), "int32")
    tvmscript.build(func, target="interp")(want)
    assert got.tolist() == want.tolist() == [[0, 3, 6, 9, 12]]
