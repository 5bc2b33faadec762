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


# Found by the long fuzz run of 2026-11-29 (seed 8282, 4000 programs): two crashes. The
# column lanes of a parallel loop widened a per-iteration scratch that an inner
# T.vectorized loop already wrote as a vector (present before that session); the guarded
# vector form of a division (new that session) left a scalar under a Cast the vectorizer
# then widened. Both now build, on both pinned targets, and agree with the interpreter.
_SCRATCH_WRITTEN_AS_A_VECTOR = '\n@T.prim_func\ndef fuzz_parallel(A0: T.Buffer((32, 1), "int16"), A1: T.Buffer((32, 1), "int16"), OUT: T.Buffer((32, 1), "int64")):\n    with T.block("root"):\n        T.reads()\n        T.writes()\n        buffer = T.alloc_buffer((3,), "uint8")\n        buffer_1 = T.alloc_buffer((5,), "uint32")\n        for i in T.parallel(32):\n            for i_1 in T.vectorized(3):\n                buffer[i_1] = T.uint8(0)\n            for i_2 in range(2):\n                buffer[0] = T.max(buffer[0], T.Cast("uint8", A0[(7 + i * -1 + i_2 * -3) % 32, 0]))\n            with T.block("scratch1"):\n                buffer_2 = T.alloc_buffer((5,), "uint16")\n                for i_3 in T.vectorized(5):\n                    buffer_2[i_3] = T.Cast("uint16", i_3)\n                for i_4 in range(1):\n                    OUT[i, i_4] = T.min(T.Cast("int64", A1[(0 + T.Cast("int32", buffer[(6 + i * 1 + i_4 * 1) % 3])) % 32, 0]) - T.Cast("int64", buffer[(-2 + i * -3) // 2 % 3]), T.Cast("int64", A1[(6 + i * 0) % 32, 0]) * T.Cast("int64", buffer_2[3]))\n        for i_5 in T.parallel(32):\n            for i_6 in range(5):\n                buffer_1[i_6] = T.Cast("uint32", i_6)\n            with T.block("scratch2"):\n                T.reads(buffer_1[0:5], A1[4:8, 0])\n                T.writes(OUT[i_5, 0])\n                buffer_3 = T.alloc_buffer((4,), "int16")\n                for i_7 in T.vectorized(4):\n                    buffer_3[i_7] = T.bitwise_and(T.Cast("int16", buffer_1[(6 + i_7 * -3) // -3 % 5]), A1[(7 + i_7 * -1) % 32, 0])\n                for i_8 in range(1):\n                    OUT[i_5, i_8] = T.min(T.Cast("int64", i_5), T.shift_left(T.Cast("int64", buffer_3[(-6 + i_8 * 2) % 4]), T.int64(1)))\n'

_CAST_OF_A_GUARDED_DIVISION = '\n@T.prim_func\ndef fuzz(A0: T.Buffer((3, 4), "int16"), A1: T.Buffer((7,), "float32"), A2: T.Buffer((2, 3), "int8"), OUT: T.Buffer((4, 2), "uint8")):\n    with T.block("root"):\n        T.reads()\n        T.writes()\n        buffer = T.alloc_buffer((12,), "int64")\n        for i in T.unroll(3, 15):\n            buffer[i - 3] = T.if_then_else(T.if_then_else(True, T.truncdiv(T.Cast("uint16", A1[6]), T.uint16(54920)), T.Cast("uint16", A1[6])) == T.truncdiv(T.Cast("uint16", A1[1]), T.uint16(4)), T.truncmod(T.Cast("int64", A1[(-6 + (i - 3) * 3) % 7]), T.int64(-5)), T.Cast("int64", A0[(-1 + (i - 3) * 3) % 3, (-5 + (i - 3) * -1) % 4]) + T.Cast("int64", A0[(1 + (i - 3) * 3) % 3, (4 + (i - 3) * 0) % 4]))\n        for i_1 in T.unroll(3, 7):\n            for i_2 in T.vectorized(2):\n                OUT[i_1 - 3, i_2] = T.Select(T.max(T.Cast("uint8", i_1 - 3), T.Cast("uint8", A0[1, ((-3 + (i_1 - 3) * 1) // -3 + T.Cast("int32", A2[1, (1 + (i_1 - 3) * 2 + i_2 * 2 + T.Cast("int32", A1[(4 + i_2 * -2 + T.Cast("int32", A2[(0 + (i_1 - 3) * 0 + i_2 * 0) % 2, (2 + (i_1 - 3) * 1 + T.Cast("int32", buffer[(-7 + (i_1 - 3) * -2) % 12])) % 3])) % 7])) % 3])) % 4])) >= T.Cast("uint8", A0[((-6 + (i_1 - 3) * 0 + i_2 * -2) // 3 + T.Cast("int32", A0[(-3 + (i_1 - 3) * 3 + i_2 * 3 + T.Cast("int32", A0[(-7 + T.Cast("int32", A0[1, (7 + i_2 * 3 + T.Cast("int32", A0[(7 + (i_1 - 3) * 3) % 3, (1 + (i_1 - 3) * -3 + i_2 * 2) % 4])) % 4])) % 3, (-6 + i_2 * 3) % 4])) % 3, (-3 + T.Cast("int32", A0[(-5 + i_2 * -2) % 3, (4 + (i_1 - 3) * 2) % 4])) % 4])) % 3, 2]), T.uint8(0), T.bitwise_or(T.if_then_else(T.Cast("uint32", A0[(7 + (i_1 - 3) * -1 + i_2 * -1) % 3, (-6 + (i_1 - 3) * 1 + i_2 * 1 + T.Cast("int32", A1[(-1 + (i_1 - 3) * 2) % 7])) % 4]) == T.Cast("uint32", buffer[(1 + (i_1 - 3) * 3 + i_2 * 2) // 3 % 12]), T.Cast("uint8", i_1 - 3), T.Cast("uint8", A2[(-6 + (i_1 - 3) * 2 + i_2 * -2 + T.Cast("int32", A2[(2 + i_2 * -2 + T.Cast("int32", A0[(2 + i_2 * -1 + T.Cast("int32", A2[(2 + (i_1 - 3) * 2) % 2, (7 + (i_1 - 3) * -1 + i_2 * -1 + T.Cast("int32", A0[(4 + i_2 * -3) % 3, (3 + (i_1 - 3) * 0 + i_2 * 1 + T.Cast("int32", A2[0, (-2 + i_2 * 2) // -2 % 3])) % 4])) % 3])) % 3, (-5 + i_2 * -2) % 4])) % 2, (5 + (i_1 - 3) * 1 + i_2 * -1 + T.Cast("int32", buffer[(-5 + (i_1 - 3) * -2) // 2 % 12])) % 3])) % 2, 1])), T.uint8(150)))\n        for i_3, i_4, i_5 in T.grid(4, 2, 3):\n            with T.block("red"):\n                v, v_1, v_2 = T.axis.remap("SSR", [i_3, i_4, i_5])\n                with T.init():\n                    OUT[v, v_1] = T.uint8(236)\n                OUT[v, v_1] = T.min(OUT[v, v_1], T.Cast("uint8", A0[(-7 + v * -3 + v_1 * -1 + v_2 * 2 + T.Cast("int32", A2[(4 + v * 0) % 2, (-2 + v * -2 + v_1 * 1 + T.Cast("int32", A0[(2 + v * 2 + v_1 * -1) % 3, (5 + v_1 * 3) % 4])) % 3])) % 3, (-6 + v * 2 + v_2 * -2) % 4]) % T.Cast("uint8", v_2))\n'


@pytest.mark.parametrize("source", [_SCRATCH_WRITTEN_AS_A_VECTOR, _CAST_OF_A_GUARDED_DIVISION],
                         ids=["scratch_vector", "cast_of_division"])
@pytest.mark.parametrize("mcpu", ["znver3", "znver4"])
def test_fuzz_crashes_of_the_vector_rewrites(source: str, mcpu: str) -> None:
    import tvmscript
    from lowering.target import Target

    target = Target(f"llvm -mcpu={mcpu}")
    if target.missing_on_host():
        pytest.skip(f"the host cannot run {mcpu} code")
    func = tvmscript.from_source(source)
    kernel = tvmscript.build(func, target=target, cache=False)
    interp = tvmscript.build(func, target="interp")
    rng = np.random.default_rng(0)
    for _ in range(3):
        args = []
        for buffer in func.buffer_map.values():
            shape = tuple(int(d) for d in buffer.shape)
            dtype = str(buffer.dtype)
            if "float" in dtype:
                args.append(rng.standard_normal(shape).astype(dtype))
            else:
                args.append(rng.integers(-50, 50, shape).astype(dtype))
        want = [a.copy() for a in args]
        outcomes = []
        for run, arrays in ((interp, want), (kernel, args)):
            try:
                run(*arrays)
                outcomes.append(None)
            except ZeroDivisionError as exc:  # the program divides by a loop variable
                outcomes.append(type(exc).__name__)
        assert outcomes[0] == outcomes[1]
        if outcomes[0] is None:
            for g, w in zip(args, want):
                np.testing.assert_array_equal(g, w)
