"""A module's scalar function called for its value (``A[i] = Module.sq(x)``, ``sq`` a
private function ``-> T.float32`` returning with ``T.ret``): the call has the callee's
return type, as TVM types it, and gives the returned value compiled and interpreted alike
(it used to be an int32 call whose value was lost: 0 in the interpreter, a refused call in
the compiled code). A callee with more than ``let`` bindings, effect-free evaluations and
``if``s around its ``T.ret`` (a loop, a store, a call) is refused at build time with a
located error, never run with a lost value."""

from __future__ import annotations

import numpy as np
import pytest

import tvmscript
from irbuilder.ir import Call
from lowering.cpu.support import UnsupportedConstructError
from tvmscript.ir import assert_structural_equal

AVX2 = tvmscript.Target("llvm -mcpu=znver3")

SOURCE = '''
from tvm.script import ir as I
from tvm.script import tir as T

@I.ir_module
class Module:
    @T.prim_func
    def main(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "int32")):
        for i in range(4):
            A[i] = Module.sq(T.Cast("float32", i) + T.float32(0.5)) + Module.sq(A[i])
            B[i] = Module.clamp(i * 3 - 2, 0, 5)

    @T.prim_func(private=True)
    def sq(x: T.float32) -> T.float32:
        T.ret(x * x)

    @T.prim_func(private=True)
    def clamp(v: T.int32, lo: T.int32, hi: T.int32) -> T.int32:
        low: T.int32 = T.max(v, lo)
        T.ret(T.min(low, hi))
'''


@pytest.mark.parametrize("target", [AVX2, "interp"], ids=str)
def test_the_returned_values_are_used(target: object) -> None:
    mod = tvmscript.from_source(SOURCE)
    a = np.array([1.0, -2.0, 3.0, 0.5], "float32")
    b = np.zeros(4, "int32")
    want_a = (np.arange(4) + 0.5) ** 2 + a**2
    tvmscript.build(mod, target=target)["main"](a, b)
    np.testing.assert_allclose(a, want_a, rtol=1e-6)
    np.testing.assert_array_equal(b, np.clip(np.arange(4) * 3 - 2, 0, 5))


def test_the_call_has_the_callee_type_and_round_trips() -> None:
    mod = tvmscript.from_source(SOURCE)
    store = mod["main"].body.body.seq[0]  # type: ignore[attr-defined]
    calls: list[Call] = []
    from irbuilder.ir.functor import post_order_visit

    post_order_visit(store.value, lambda n: calls.append(n) if isinstance(n, Call) else None)
    assert [(c.op, str(c.dtype)) for c in calls] == [("sq", "float32"), ("sq", "float32")]
    text = mod.script()
    assert "Module.sq(T.Cast(\"float32\", i) + T.float32(0.5)) + Module.sq(A[i])" in text
    again = tvmscript.from_source(text)
    assert_structural_equal(mod, again)


LOOPING = '''
from tvm.script import ir as I
from tvm.script import tir as T

@I.ir_module
class Module:
    @T.prim_func
    def main(A: T.Buffer((4,), "float32")):
        A[0] = Module.total(A[1])

    @T.prim_func(private=True)
    def total(x: T.float32) -> T.float32:
        s = T.alloc_buffer((1,), "float32")
        s[0] = T.float32(0)
        for k in range(3):
            s[0] = s[0] + x
        T.ret(s[0])
'''


def test_a_callee_with_statements_is_refused_at_build() -> None:
    mod = tvmscript.from_source(LOOPING)
    with pytest.raises(UnsupportedConstructError, match="calling 'total' for its value") as info:
        tvmscript.build(mod, target=AVX2)
    assert "function 'main'" in str(info.value)
    # the interpreter runs the callee and uses its value
    a = np.array([0, 2, 0, 0], "float32")
    tvmscript.build(mod, target="interp")["main"](a)
    assert a[0] == 6


BRANCHING = '''
from tvm.script import ir as I
from tvm.script import tir as T

@I.ir_module
class Module:
    @T.prim_func
    def main(A: T.Buffer((8,), "int32"), B: T.Buffer((8,), "float32")):
        for i in range(8):
            A[i] = Module.bucket(A[i]) * 10 + Module.status(i)
            B[i] = Module.safe_inverse(B[i])

    @T.prim_func(private=True)
    def bucket(v: T.int32) -> T.int32:
        if v < 0:
            T.ret(-1)
        half: T.int32 = v // 2
        if half < 3:
            T.evaluate(half)
            T.ret(half)
        else:
            T.ret(3)

    @T.prim_func(private=True)
    def status(k: T.int32) -> T.int32:
        T.evaluate(k)
        T.ret(T.Cast("int32", k % 3 == 0))

    @T.prim_func(private=True)
    def safe_inverse(x: T.float32) -> T.float32:
        if x == T.float32(0):
            T.ret(T.float32(0))
        T.ret(T.float32(1) / x)
'''


@pytest.mark.parametrize("target", [AVX2, "interp"], ids=str)
def test_callees_with_ifs_and_effect_free_evaluations_give_their_values(target: object) -> None:
    # TVM's SplitHostDevice leaves such callees (`T.evaluate(n)` then `T.ret(0)`); an early
    # `T.ret` under an `if` is the value of a lazy if_then_else
    mod = tvmscript.from_source(BRANCHING)
    a = np.array([-5, 0, 1, 4, 5, 6, 7, 100], "int32")
    b = np.array([0.0, 2.0, -4.0, 0.0, 0.5, 1.0, 8.0, -0.25], "float32")
    want_a = np.where(a < 0, -1, np.minimum(a // 2, 3)) * 10 + (np.arange(8) % 3 == 0)
    with np.errstate(divide="ignore"):
        want_b = np.where(b == 0, 0, 1 / b).astype("float32")
    tvmscript.build(mod, target=target)["main"](a, b)
    np.testing.assert_array_equal(a, want_a)
    np.testing.assert_array_equal(b, want_b)


def test_a_callee_evaluating_a_call_is_still_refused() -> None:
    source = BRANCHING.replace("T.evaluate(k)", 'T.evaluate(T.call_extern("int32", "tick", k))')
    with pytest.raises(UnsupportedConstructError, match="calling 'status' for its value"):
        tvmscript.build(tvmscript.from_source(source), target=AVX2)


STATEMENTS = '''
from tvm.script import ir as I
from tvm.script import tir as T

@I.ir_module
class Module:
    @T.prim_func
    def main(A: T.Buffer((6,), "int32"), S: T.Buffer((1,), "int32")):
        Module.ramp_up(A.data, 6)
        Module.count_positive(A, S)
        S[0] = S[0] * 100 + Module.count_positive(A, S)

    @T.prim_func(private=True)
    def ramp_up(A_data: T.handle("int32"), n: T.int32) -> T.int32:
        A = T.decl_buffer((6,), "int32", data=A_data)
        for i in range(n):
            if i == 4:
                T.ret(i)  # an early return: A[4], A[5] keep their values
            A[i] = i * 2 - 3
        T.ret(0)

    @T.prim_func
    def count_positive(A: T.Buffer((6,), "int32"), S: T.Buffer((1,), "int32")) -> T.int32:
        S[0] = 0
        for i in range(6):
            if A[i] > 0:
                S[0] = S[0] + 1
        T.ret(S[0])
'''


def test_a_scalar_function_called_as_a_statement_runs() -> None:
    # its value is discarded: no output array to pass (TVM's MakeUnpackedAPI output calls
    # `-> T.int32` subroutines so); calling such a function for its value stays refused
    mod = tvmscript.from_source(STATEMENTS.replace(
        "        S[0] = S[0] * 100 + Module.count_positive(A, S)\n", ""))
    for target in (AVX2, "interp"):
        a = np.array([0, 0, 0, 0, 7, -7], "int32")
        s = np.zeros(1, "int32")
        built = tvmscript.build(mod, target=target)
        built["main"](a, s)
        np.testing.assert_array_equal(a, [-3, -1, 1, 3, 7, -7])
        assert s[0] == 3
        assert built["count_positive"](a, s) == 3  # the public function keeps its entry
    with pytest.raises(UnsupportedConstructError, match="calling 'count_positive'.*for its value"):
        tvmscript.build(tvmscript.from_source(STATEMENTS), target=AVX2)
