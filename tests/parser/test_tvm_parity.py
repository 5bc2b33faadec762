"""Small behaviours TVM v0.16 programs and tests rely on: a private function refuses a
global symbol, ``@T.macro(True)`` is refused at decoration, ``T.reinterpret`` to the same
type is the value itself, ``T.meta_var`` of a list unpacks, ``PrimFunc.__name__`` and
``PointerType.element_type``/``storage_scope``; ``and``/``or`` of bool vectors build
``T.bitwise_and``/``T.bitwise_or`` (the bitwise calls take bools), computed right by the
compiled code and the interpreter."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tvmscript
from irbuilder import IRBuilder
from irbuilder import tir as B
from irbuilder.ir import (
    And,
    BufferStore,
    Call,
    Evaluate,
    IntImm,
    Or,
    PointerType,
    PrimFunc,
    as_dtype,
)
from tvmscript import DiagnosticError, from_source
from tvmscript import tir as T
from tvmscript.ir import structural_equal


def test_a_private_function_refuses_a_global_symbol_at_the_func_attr() -> None:
    text = (
        "@T.prim_func(private=True)\n"
        "def f(A: T.Buffer((4,), 'float32')):\n"
        '    T.func_attr({"global_symbol": "f"})\n'
        "    A[0] = T.float32(1)\n"
    )
    with pytest.raises(DiagnosticError) as info:
        from_source(text)
    assert info.value.message == (
        "T.func_attr: a private function (@T.prim_func(private=True)) cannot have a "
        "'global_symbol' attribute, got 'f'; drop private=True to export it under that name"
    )
    assert info.value.span is not None and info.value.span.line == 3


def test_a_public_function_still_takes_a_global_symbol() -> None:
    f = from_source(
        "@T.prim_func\ndef f(A: T.Buffer((4,), 'float32')):\n"
        '    T.func_attr({"global_symbol": "g"})\n    A[0] = T.float32(1)\n'
    )
    assert isinstance(f, PrimFunc) and f.attrs["global_symbol"] == "g"


def test_macro_with_a_positional_option_is_refused_at_decoration() -> None:
    with pytest.raises(ValueError, match=r"T\.macro takes only keyword options.*@T\.macro\(True\)"):

        @T.macro(True)  # type: ignore[arg-type]
        def body() -> None:
            T.evaluate(0)


def test_reinterpret_to_the_same_type_is_the_value() -> None:
    @T.prim_func
    def same(A: T.Buffer((4,), "float32"), C: T.Buffer((4,), "float32")) -> None:
        for i in range(4):
            C[i] = T.reinterpret("float32", A[i])

    @T.prim_func
    def plain(A: T.Buffer((4,), "float32"), C: T.Buffer((4,), "float32")) -> None:
        for i in range(4):
            C[i] = A[i]

    assert structural_equal(same, plain)
    assert "reinterpret" not in same.script()


def test_reinterpret_to_another_type_keeps_the_call() -> None:
    x = T.reinterpret("int32", T.float32(1))
    assert isinstance(x, Call) and x.op == "reinterpret" and str(x.dtype) == "int32"


def test_meta_var_of_a_list_unpacks_in_an_irbuilder_program() -> None:
    with IRBuilder() as ib:
        with B.prim_func():
            m, n = B.meta_var(1), B.meta_var(2)
            a, b = B.meta_var([3, 4])
            B.evaluate(m.value + n.value + a.value * b.value)
    func = ib.get()
    assert isinstance(func, PrimFunc) and isinstance(func.body, Evaluate)
    assert isinstance(func.body.value, IntImm) and func.body.value.value == 15


def test_meta_var_of_a_tuple_unpacks_in_a_kernel() -> None:
    @T.prim_func
    def f(A: T.Buffer((2,), "int32")) -> None:
        x, y = T.meta_var((5, 7))
        A[0] = x
        A[1] = y

    assert "A[0] = 5" in f.script() and "A[1] = 7" in f.script()


def test_a_prim_func_has_its_name() -> None:
    @T.prim_func
    def matmul(A: T.Buffer((4,), "float32")) -> None:
        A[0] = T.float32(0)

    assert matmul.__name__ == "matmul"


def test_pointer_type_answers_to_tvms_field_names() -> None:
    ptr = T.handle("float32", "shared")
    ann = ptr.type_annotation
    assert isinstance(ann, PointerType)
    assert ann.element_type == as_dtype("float32") and ann.storage_scope == "shared"
    assert (ann.element, ann.scope) == (ann.element_type, ann.storage_scope)


# ------------------------------------------------------------------ vector bool logic


@T.prim_func
def vector_logic(
    A: T.Buffer((8,), "float32"),
    n: T.int32,
    B: T.Buffer((8,), "bool"),
    C: T.Buffer((8,), "bool"),
    D: T.Buffer((8,), "bool"),
    E: T.Buffer((8,), "bool"),
    F: T.Buffer((8,), "bool"),
) -> None:
    B[0:8] = (A[0:8] < 0) and (A[0:8] > -2)
    C[0:8] = (A[0:8] > 0) or (n > 3)  # a scalar bool expression broadcast
    D[0:8] = T.bitwise_not(A[0:8] < 0)
    E[0:8] = T.bitwise_xor(A[0:8] < 0, A[0:8] < 1)
    F[0:8] = (A[0:8] < 0) and (1 > 0)  # a Python bool broadcast


def test_vector_and_or_build_tvms_bitwise_calls() -> None:
    # TVM's parser turns `and`/`or` of bool vectors into these calls: its expected programs
    # are written with them.
    @T.prim_func
    def expected(
        A: T.Buffer((8,), "float32"),
        n: T.int32,
        B: T.Buffer((8,), "bool"),
        C: T.Buffer((8,), "bool"),
        D: T.Buffer((8,), "bool"),
        E: T.Buffer((8,), "bool"),
        F: T.Buffer((8,), "bool"),
    ) -> None:
        B[0:8] = T.bitwise_and(
            A[0:8] < T.Broadcast(T.float32(0), 8), A[0:8] > T.Broadcast(T.float32(-2), 8)
        )
        C[0:8] = T.bitwise_or(A[0:8] > T.Broadcast(T.float32(0), 8), T.Broadcast(n > 3, 8))
        D[0:8] = T.bitwise_not(A[0:8] < T.Broadcast(T.float32(0), 8))
        E[0:8] = T.bitwise_xor(
            A[0:8] < T.Broadcast(T.float32(0), 8), A[0:8] < T.Broadcast(T.float32(1), 8)
        )
        F[0:8] = T.bitwise_and(A[0:8] < T.Broadcast(T.float32(0), 8), T.Broadcast(T.bool(1), 8))

    assert structural_equal(vector_logic, expected)
    assert structural_equal(from_source(vector_logic.script()), vector_logic)


def test_scalar_and_or_stay_logical_nodes() -> None:
    @T.prim_func
    def f(n: T.int32, B: T.Buffer((1,), "bool")) -> None:
        B[0] = ((n > 3) and (n < 9)) or (n == 0)

    assert "B[0] = n > 3 and n < 9 or n == 0" in f.script()
    assert isinstance(f.body, BufferStore) and isinstance(f.body.value, Or)
    assert isinstance(f.body.value.a, And)


@pytest.mark.parametrize("target", ["llvm -mcpu=znver3", "interp"])
@pytest.mark.parametrize("n", [0, 5])
def test_vector_bool_logic_computes_lane_by_lane(target: str, n: int) -> None:
    a = np.array([-3, -1.5, -0.5, 0, 0.5, 1, 2, -2.5], "float32")
    outs = [np.zeros(8, bool) for _ in range(5)]
    tvmscript.build(vector_logic, target=target)(a, n, *outs)
    want = [
        (a < 0) & (a > -2),
        (a > 0) | (n > 3),
        ~(a < 0),
        (a < 0) ^ (a < 1),
        a < 0,
    ]
    for got, expect in zip(outs, want):
        np.testing.assert_array_equal(got, expect)


@pytest.mark.parametrize("target", ["llvm -mcpu=znver3", "interp"])
@pytest.mark.parametrize("opt_level", [0, 2])
def test_bitwise_calls_on_scalar_bools_keep_one_bit(target: str, opt_level: int) -> None:
    @T.prim_func
    def g(n: T.int32, B: T.Buffer((6,), "bool")) -> None:
        B[0] = T.bitwise_not(n > 3)
        B[1] = T.bitwise_not(T.bool(True))
        B[2] = T.bitwise_not(T.bool(False))
        B[3] = T.bitwise_and(T.bool(True), n > 3)
        B[4] = T.bitwise_xor(T.bool(True), T.bool(True))
        B[5] = T.bitwise_or(T.bool(False), n > 3)

    kernel = tvmscript.build(g, target=target, opt_level=opt_level)
    for n in (0, 5):
        b = np.zeros(6, bool)
        kernel(n, b)
        big = n > 3
        np.testing.assert_array_equal(b, [not big, False, True, big, False, big])


def test_bitwise_calls_still_refuse_floats() -> None:
    message = r"T\.bitwise_and needs integer operands or bools, got float32"
    with pytest.raises(TypeError, match=message):
        T.bitwise_and(T.float32(1), T.float32(2))


# ------------------------------------------------------- closure helpers and method macros


def _kernel_with_a_local_helper_class() -> PrimFunc:
    class Staging:
        def __init__(self, x: Any) -> None:
            self.local_x = T.alloc_buffer(x.shape, x.dtype)

        @T.macro
        def load(self, x: Any) -> None:
            N, M = T.meta_var(self.local_x.shape)
            for i, j in T.grid(N, M):
                with T.block("update"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    self.local_x[vi, vj] = x[vi, vj] * T.float32(2)

    def twice(x: Any) -> Any:
        return x * 2

    @T.prim_func(private=True)
    def func(a: T.handle, b: T.handle) -> None:
        A = T.match_buffer(a, [8, 8])
        Bo = T.match_buffer(b, [8, 8])
        staged = T.meta_var(Staging(A))
        staged.load(A)
        for i, j in T.grid(8, 8):
            with T.block("out"):
                vi, vj = T.axis.remap("SS", [i, j])
                Bo[vi, vj] = twice(staged.local_x[vi, vj])

    return func


def test_a_helper_class_and_function_of_the_enclosing_function_resolve() -> None:
    # TVM's test_tir_macro_in_class: names the kernel body uses from the enclosing function
    # resolve from the closure without capture=, and a macro method binds self.
    func = _kernel_with_a_local_helper_class()
    text = func.script()
    assert 'with T.block("update")' in text and "A[vi, vj] * T.float32(2)" in text
    a = np.arange(64, dtype="float32").reshape(8, 8)
    for target in ("llvm -mcpu=znver3", "interp"):
        b = np.zeros((8, 8), "float32")
        tvmscript.build(func, target=target)(a, b)
        np.testing.assert_array_equal(b, a * 4)


def test_a_module_level_helper_is_captured_as_tvm_does() -> None:
    @T.prim_func
    def f(A: T.Buffer((1,), "int32")) -> None:
        A[0] = module_helper(A[0])

    a = np.array([41], "int32")
    tvmscript.build(f, target="interp")(a)
    assert a[0] == 42


def module_helper(x: Any) -> Any:
    return x + 1
