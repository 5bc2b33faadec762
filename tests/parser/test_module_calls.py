"""Module programs: ``@I.ir_module`` classes whose kernels call each other (issue #16 item 7).

Inside the class its name is the module (TVM's convention), so ``Module.f(A.data, n)`` and
``Module.f(A, B)`` call the module's function ``f``; the programs parse, print back as
``Module.f(...)``, round-trip, build and compute what the reference interpreter computes.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tvmscript
from irbuilder.ir import Call, CallKind, Evaluate, IRModule, SeqStmt
from lowering.target import Target
from tvmscript import DiagnosticError
from tvmscript import ir as I
from tvmscript import tir as T
from tvmscript.ir import assert_structural_equal


def roundtrip(mod: IRModule) -> str:
    text = mod.script()
    parsed = tvmscript.from_source(text)
    assert_structural_equal(mod, parsed)
    assert parsed.script() == text
    return text


def run_both(mod: IRModule, name: str, *args: Any) -> list[np.ndarray]:
    compiled = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    reference = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    tvmscript.build(mod)[name](*compiled)
    tvmscript.build(mod, target="interp")[name](*reference)
    for got, want in zip(compiled, reference):
        if isinstance(got, np.ndarray):
            np.testing.assert_array_equal(got, want)
    return [a for a in compiled if isinstance(a, np.ndarray)]


@I.ir_module
class PointerSubroutine:
    @T.prim_func
    def main(A: T.Buffer((2,), "float32")):
        PointerSubroutine.subroutine(A.data, 21.0)
        PointerSubroutine.subroutine(T.address_of(A[1]), 4.0)

    @T.prim_func
    def subroutine(A_data: T.handle("float32"), val: T.float32):
        A = T.decl_buffer([1], "float32", data=A_data)
        A[0] = 2 * val


def test_a_data_pointer_and_an_element_address_are_passed_to_a_subroutine() -> None:
    text = roundtrip(PointerSubroutine)
    assert "        Module.subroutine(A.data, T.float32(21))\n" in text
    assert "        Module.subroutine(T.address_of(A[1]), T.float32(4))\n" in text
    (out,) = run_both(PointerSubroutine, "main", np.zeros(2, "float32"))
    np.testing.assert_array_equal(out, [42.0, 8.0])


def test_the_call_is_a_kernel_call_in_the_ir() -> None:
    body = PointerSubroutine["main"].body
    assert isinstance(body, SeqStmt)
    first = body.seq[0]
    assert isinstance(first, Evaluate) and isinstance(first.value, Call)
    call = first.value
    assert (call.op, call.kind, str(call.dtype)) == ("subroutine", CallKind.EXTERN, "int32")
    assert (
        call.args[0]
        is PointerSubroutine["main"].buffer_map[PointerSubroutine["main"].params[0]].data
    )


@I.ir_module
class Mixed:
    @T.prim_func
    def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"), n: T.int32):
        Mixed.add_one(A, B)
        Mixed.scale(B.data, n)
        Mixed.scale(B, 2)

    @T.prim_func
    def add_one(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        for i in range(8):
            B[i] = A[i] + 1.0

    @T.prim_func
    def scale(B_data: T.handle("float32"), n: T.int32):
        B = T.Buffer((n,), "float32", data=B_data)
        for i in range(n):
            B[i] = B[i] * 3.0


def test_buffers_and_data_pointers_are_adapted_to_the_callee() -> None:
    text = roundtrip(Mixed)
    assert "        Module.add_one(A, B)\n" in text
    assert "        Module.scale(B.data, n)\n" in text and "Module.scale(B.data, 2)" in text
    a = np.arange(8, dtype="float32")
    _, out = run_both(Mixed, "main", a, np.zeros(8, "float32"), 5)
    expected = a + 1
    expected[:5] *= 3
    expected[:2] *= 3
    np.testing.assert_array_equal(out, expected)


def test_a_pointer_subroutine_has_no_python_entry() -> None:
    built = tvmscript.build(Mixed)
    assert "main" in built and "add_one" in built and "scale" not in built
    with pytest.raises(AttributeError, match="'scale' is a subroutine the module's kernels call"):
        built.scale  # noqa: B018


SOURCE_WITH_HANDLES = """
@I.ir_module
class Module:
    @T.prim_func
    def copy(a: T.handle, b: T.handle, n: T.int32):
        A = T.match_buffer(a, (n,), "int32")
        B = T.match_buffer(b, (n,), "int32")
        for i in range(n):
            B[i] = A[i]

    @T.prim_func
    def main(a: T.handle, b: T.handle):
        A = T.match_buffer(a, (4,), "int32")
        B = T.match_buffer(b, (4,), "int32")
        Module.copy(a, b, 4)
        Module.copy(A, B, T.int32(4))
"""


def test_a_callee_defined_first_takes_the_callers_handles_or_buffers() -> None:
    mod = tvmscript.from_source(SOURCE_WITH_HANDLES)
    assert isinstance(mod, IRModule) and list(mod.functions) == ["copy", "main"]
    roundtrip(mod)
    _, out = run_both(mod, "main", np.arange(4, dtype="int32"), np.zeros(4, "int32"))
    np.testing.assert_array_equal(out, [0, 1, 2, 3])


def test_a_kernel_may_call_itself_and_functions_keep_their_order() -> None:
    mod = tvmscript.from_source(
        """
@I.ir_module
class Module:
    @T.prim_func
    def countdown(A: T.Buffer((8,), "int32"), k: T.int32):
        if k > 0:
            A[k - 1] = k
            Module.countdown(A, k - 1)

    @T.prim_func
    def main(A: T.Buffer((8,), "int32")):
        Module.countdown(A, 8)
"""
    )
    assert isinstance(mod, IRModule) and list(mod.functions) == ["countdown", "main"]
    roundtrip(mod)
    (out,) = run_both(mod, "main", np.zeros(8, "int32"))
    np.testing.assert_array_equal(out, np.arange(1, 9))


BAD_CALLS = [
    ("Module.sub(A.data)", "argument 1 ('A') is an array parameter", "a data pointer"),
    ("Module.sub(A, A)", "takes 1 argument(s) (A), got 2", None),
    ("Module.sub(C)", "argument 1 ('A') is an array parameter", "buffer 'C'"),
    ("Module.ptr(T.int32(1))", "argument 1 ('p') is a pointer (T.handle)", None),
    ("Module.scalar(T.int64(1))", "argument 1 ('x') is int32, got a int64 expression", None),
    ("Module.nothing(A)", "module 'Module' has no function 'nothing'", None),
]


@pytest.mark.parametrize(("call", "message", "detail"), BAD_CALLS)
def test_a_wrong_argument_is_a_located_diagnostic(call: str, message: str, detail: str) -> None:
    text = f"""
@I.ir_module
class Module:
    @T.prim_func
    def sub(A: T.Buffer((4,), "float32")):
        A[0] = 1.0

    @T.prim_func
    def ptr(p: T.handle("float32")):
        T.evaluate(0)

    @T.prim_func
    def scalar(x: T.int32):
        T.evaluate(x)

    @T.prim_func
    def main(A: T.Buffer((4,), "float32")):
        C = T.alloc_buffer((4,), "float32")
        {call}
"""
    with pytest.raises(DiagnosticError) as info:
        tvmscript.from_source(text)
    err = info.value
    assert message in err.message
    if detail is not None:
        assert detail in err.message
    # Located at the call (the line of `{call}` in the text above), never at the class.
    assert err.span is not None and (err.span.line, err.span.col) == (19, 9)


def test_functions_calling_each_other_are_refused_at_the_call() -> None:
    text = """
@I.ir_module
class Module:
    @T.prim_func
    def a(A: T.Buffer((4,), "int32")):
        Module.b(A)

    @T.prim_func
    def b(A: T.Buffer((4,), "int32")):
        Module.a(A)
"""
    with pytest.raises(DiagnosticError) as info:
        tvmscript.from_source(text)
    assert "calls between functions that call each other are not supported" in info.value.message
    assert info.value.span is not None and info.value.span.line == 10


def test_a_buffer_named_like_the_module_does_not_hide_it() -> None:
    mod = tvmscript.from_source(
        """
@I.ir_module
class Kernels:
    @T.prim_func
    def fill(Module: T.Buffer((4,), "int32")):
        for i in range(4):
            Module[i] = i

    @T.prim_func
    def main(A: T.Buffer((4,), "int32")):
        Kernels.fill(A)
"""
    )
    assert isinstance(mod, IRModule)
    text = roundtrip(mod)
    assert "def fill(Module_1: T.Buffer" in text and "Module.fill(A)" in text


@I.ir_module
class PrivateSubroutine:
    @T.prim_func
    def main(A: T.Buffer(2, dtype="float32")):
        T.func_attr({"global_symbol": "main"})
        PrivateSubroutine.nothing()
        PrivateSubroutine.subroutine(A.data)
        A[1] = 7.0

    @T.prim_func(private=True)
    def subroutine(A_data: T.handle("float32")):
        A = T.decl_buffer(1, dtype="float32", data=A_data)
        A[0] = 42.0

    @T.prim_func(private=True)
    def nothing():
        T.evaluate(0)


def test_private_subroutines_are_built_by_their_module_name_and_not_exported() -> None:
    text = roundtrip(PrivateSubroutine)
    assert "    @T.prim_func(private=True)\n    def nothing():" in text
    built = tvmscript.build(PrivateSubroutine)
    assert list(built) == ["main"]
    with pytest.raises(AttributeError, match="'nothing' is a subroutine"):
        built.nothing  # noqa: B018
    (out,) = run_both(PrivateSubroutine, "main", np.zeros(2, "float32"))
    np.testing.assert_array_equal(out, [42.0, 7.0])


def test_an_untyped_handle_parameter_takes_a_data_pointer() -> None:
    mod = tvmscript.from_source(
        """
@I.ir_module
class Module:
    @T.prim_func
    def main(A: T.Buffer((4,), "float32")):
        Module.fill(A.data, 4)

    @T.prim_func
    def fill(a: T.handle, n: T.int32):
        A = T.decl_buffer((n,), "float32", data=a)
        for i in range(n):
            A[i] = T.Cast("float32", i) * 2.0
"""
    )
    assert isinstance(mod, IRModule)
    assert "Module.fill(A.data, 4)" in roundtrip(mod)
    (out,) = run_both(mod, "main", np.zeros(4, "float32"))
    np.testing.assert_array_equal(out, [0.0, 2.0, 4.0, 6.0])


def test_both_targets_name_a_kernel_by_its_global_symbol() -> None:
    @I.ir_module
    class Exported:
        @T.prim_func
        def main(A: T.Buffer((4,), "float32")) -> None:
            T.func_attr({"global_symbol": "func"})
            for i in range(4):
                A[i] = A[i] + T.float32(1)

    for target in ("llvm -mcpu=znver3", "interp"):
        if target != "interp" and Target(target).missing_on_host():
            continue
        built = tvmscript.build(Exported, target=target)
        with pytest.raises(KeyError):
            built["main"]
        a = np.zeros(4, "float32")
        built["func"](a)
        np.testing.assert_array_equal(a, np.ones(4, "float32"))
