"""Entry points, capture policy, verifier hook, and what a user-facing error shows."""

from __future__ import annotations

import traceback

import numpy as np
import pytest

import tvmscript
from irbuilder.ir import IRModule, PrimFunc
from tvmscript import ir as I
from tvmscript import tir as T


def helper(x):  # type: ignore[no-untyped-def]
    """A host function of the module: a kernel may call it (TVM evaluates module globals)."""
    return x + 1


def test_bare_and_keyword_decorators() -> None:
    @T.prim_func
    def a(A: T.Buffer((1,), "int32")):
        A[0] = 1

    @T.prim_func(capture=[helper], check_well_formed=True)
    def b(A: T.Buffer((1,), "int32")):
        A[0] = helper(A[0])

    assert isinstance(a, PrimFunc) and a.name == "a"
    assert isinstance(b, PrimFunc) and b.name == "b"


def test_module_level_function_is_captured_as_tvm_does() -> None:
    @T.prim_func
    def f(A: T.Buffer((1,), "int32")):
        A[0] = helper(A[0])

    a = np.array([4], "int32")
    tvmscript.build(f, target="interp")(a)
    assert a[0] == helper(4)


def test_uncaptured_function_diagnostic() -> None:
    def local_extent(n: int) -> int:
        return n

    with pytest.raises(tvmscript.DiagnosticError) as info:

        @T.prim_func
        def f(A: T.Buffer((local_extent(1),), "int32")):  # annotation only: no closure cell
            A[0] = 1

    assert "name 'local_extent' is a function from the enclosing scope; add it to capture=[...]" in (
        str(info.value)
    )


def test_unknown_option_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="unexpected keyword arguments"):

        @T.prim_func(fast=True)
        def f(A: T.Buffer((1,), "int32")):
            A[0] = 1


def test_from_source_function_and_module() -> None:
    func = tvmscript.from_source(
        '@T.prim_func\ndef g(A: T.Buffer((2,), "float32")):\n    A[0] = A[1]\n'
    )
    assert isinstance(func, PrimFunc) and func.name == "g"
    text = (
        "@I.ir_module\nclass Mod:\n    @T.prim_func\n"
        '    def main(A: T.Buffer((2,), "float32")):\n        A[0] = A[1]\n'
    )
    mod = tvmscript.from_source(text)
    assert isinstance(mod, IRModule) and list(mod.functions) == ["main"]
    two = tvmscript.from_source(
        '@T.prim_func\ndef p(A: T.Buffer((1,), "int32")):\n    A[0] = 1\n\n'
        '@T.prim_func\ndef q(A: T.Buffer((1,), "int32")):\n    A[0] = 2\n'
    )
    assert isinstance(two, IRModule) and sorted(two.functions) == ["p", "q"]


def test_ir_module_nested_in_function_and_indented_source() -> None:
    def make() -> IRModule:
        @I.ir_module
        class Mod:
            @T.prim_func
            def first(A: T.Buffer((4,), "float32")):
                for i in range(4):
                    A[i] = T.float32(1)

            @T.prim_func
            def second(A: T.Buffer((4,), "float32")):
                A[0] = T.float32(2)

        return Mod

    mod = make()
    assert sorted(mod.functions) == ["first", "second"]
    assert mod["first"].span is not None and mod["first"].span.line > 0


def test_check_well_formed_reports_at_source() -> None:
    text = (
        "@T.prim_func\n"
        'def f(A: T.Buffer((4,), "float32")):\n'
        "    i = T.int32()\n"
        "    A[i] = T.float32(0)\n"
    )
    assert isinstance(tvmscript.from_source(text), PrimFunc)  # fine without the check
    with pytest.raises(tvmscript.DiagnosticError) as info:
        tvmscript.from_source(text, filename="<wf>", check_well_formed=True)
    message = str(info.value)
    assert message.startswith("error: ill-formed TIR in 'f':")
    assert "<wf>:" in message


def test_no_parser_frames_in_user_facing_error() -> None:
    with pytest.raises(tvmscript.DiagnosticError) as info:

        @T.prim_func
        def f(A: T.Buffer((1,), "int32")):
            A[0] = undefined_name + 1  # noqa: F821

    err = info.value
    assert err.__cause__ is None and err.__suppress_context__
    frames = traceback.extract_tb(err.__traceback__)
    internal = [fr.filename for fr in frames if "/tvmscript/parser/" in fr.filename]
    # Only the entry point's own `raise` remains: no handler, evaluator or core frame.
    assert [name.rsplit("/", 1)[-1] for name in internal] == ["entry.py"]
    rendered = "".join(traceback.format_exception(type(err), err, err.__traceback__))
    assert "parser/core" not in rendered and "parser/tir" not in rendered
    assert "During handling" not in rendered and "direct cause" not in rendered
    assert f"{__file__}:" in str(err)  # file:line:col of the user's code


def test_debug_env_var_shows_the_raw_exception(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TVMSCRIPT_DEBUG_FRONTEND", "1")
    with pytest.raises(TypeError, match="takes 1 positional argument"):
        tvmscript.from_source(
            '@T.prim_func\ndef f(A: T.Buffer((1,), "float32")):\n    A[0] = T.exp(A[0], 2)\n'
        )


def test_namespaces_export_structural_helpers() -> None:
    assert tvmscript.ir.structural_equal is I.structural_equal
    assert callable(I.structural_hash) and callable(I.assert_structural_equal)
    assert tvmscript.tir is T
