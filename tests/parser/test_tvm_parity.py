"""Small behaviours TVM v0.16 programs and tests rely on: a private function refuses a
global symbol, ``@T.macro(True)`` is refused at decoration, ``T.reinterpret`` to the same
type is the value itself, ``T.meta_var`` of a list unpacks, ``PrimFunc.__name__`` and
``PointerType.element_type``/``storage_scope``."""

from __future__ import annotations

import pytest

from irbuilder import IRBuilder
from irbuilder import tir as B
from irbuilder.ir import Call, Evaluate, IntImm, PointerType, PrimFunc, as_dtype
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
